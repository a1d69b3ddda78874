// SPDX-License-Identifier: GPL-2.0
/*
 * profile-dump: reads a profile file through the tool's reader
 * (tool/profile_file.c) and prints what the in-guest tests check.
 *
 *   profile-dump FILE
 *	key=value lines: samples, objects, vdso image bytes, mapping
 *	snapshots, processes and threads seen in samples, exits, execs,
 *	lost, kernel symbols, stop reasons.
 *   profile-dump --chain LIB ROOT,...,LEAF FILE
 *	symbolizes user frames with the objects' ELF symbol tables and, for
 *	the samples whose leaf lies in a function of the chain inside an
 *	object whose path contains LIB, counts those whose frames from the
 *	leaf up are a leaf-side part of the chain ending exactly at ROOT.
 *	Prints "leaf=N complete=M pids=P tids=T other=O window=W user=U" (O:
 *	samples in LIB outside the chain's functions, such as its
 *	constructors, which run outside main; W: incomplete chain leaves
 *	that are only their leaf, stopped at NO_MAP, and taken before every
 *	complete one of their process: the module had no mapping for LIB
 *	yet, as after a dlopen until the recorder uploads it; U: samples
 *	with user frames in the whole file, to tell a workload that got few
 *	samples from one whose samples seldom fell in the chain) and up to
 *	five incomplete stacks.
 *
 * Exit: 0, 1 on an unreadable or corrupt file (the reader's message).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_file.h"

struct sym {
	uint64_t	addr, size;
	char		*name;
};

struct symtab {
	uint64_t	object_id;
	struct sym	*v;
	size_t		n;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Function symbols of an ELF64 file (.symtab, else .dynsym). */
static void load_syms(const char *path, struct symtab *t)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), pass, i;

	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_shentsize != sizeof(*sh) ||
	    !eh.e_shnum)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
	    (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	for (pass = 0; pass < 2 && !t->n; pass++) {
		uint32_t want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		for (i = 0; i < eh.e_shnum; i++) {
			Elf64_Sym *syms;
			char *str;
			size_t k, ns;
			Elf64_Shdr *ss;

			if (sh[i].sh_type != want || sh[i].sh_link >= eh.e_shnum)
				continue;
			ss = &sh[sh[i].sh_link];
			ns = sh[i].sh_size / sizeof(Elf64_Sym);
			syms = malloc(sh[i].sh_size + 1);
			str = malloc(ss->sh_size + 1);
			if (!syms || !str ||
			    pread(fd, syms, sh[i].sh_size, (off_t)sh[i].sh_offset) !=
			    (ssize_t)sh[i].sh_size ||
			    pread(fd, str, ss->sh_size, (off_t)ss->sh_offset) !=
			    (ssize_t)ss->sh_size) {
				free(syms);
				free(str);
				continue;
			}
			str[ss->sh_size] = 0;
			t->v = realloc(t->v, (t->n + ns) * sizeof(*t->v));
			for (k = 0; t->v && k < ns; k++) {
				if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC ||
				    !syms[k].st_value ||
				    syms[k].st_name >= ss->sh_size)
					continue;
				t->v[t->n].addr = syms[k].st_value;
				t->v[t->n].size = syms[k].st_size;
				t->v[t->n].name = strdup(str + syms[k].st_name);
				t->n++;
			}
			free(syms);
			free(str);
		}
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), sym_cmp);
out:
	free(sh);
	close(fd);
}

struct syms {
	struct symtab	*t;
	size_t		n;
};

static const char *sym_name(const struct symtab *t, uint64_t a)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (t->v[lo - 1].size && a >= t->v[lo - 1].addr + t->v[lo - 1].size)
		return NULL;
	return t->v[lo - 1].name;
}

static const struct symtab *symtab_for(struct syms *s,
				       const struct uwprof_pf_object *o)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->t[i].object_id == o->object_id)
			return &s->t[i];
	s->t = realloc(s->t, (s->n + 1) * sizeof(*s->t));
	if (!s->t)
		exit(1);
	memset(&s->t[s->n], 0, sizeof(s->t[s->n]));
	s->t[s->n].object_id = o->object_id;
	if (!o->image)
		load_syms(o->path, &s->t[s->n]);
	return &s->t[s->n++];
}

/* Same function, ignoring compiler clone suffixes (".constprop.0"). */
static int same_fn(const char *sym, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(sym, want, n) && (sym[n] == 0 || sym[n] == '.');
}

/* Name of user frame i (return addresses are looked up at ip - 1). */
static const char *frame_name(const struct uwprof_pf *pf, struct syms *s,
			      const struct uwprof_pf_sample *sm, unsigned int i,
			      const struct uwprof_pf_object **objp)
{
	const struct uwprof_pf_object *o = NULL;
	const struct uwprof_pf_map *m;
	uint64_t ip = sm->ips[sm->nr_kernel + i];
	const char *n;

	if (i)
		ip--;
	m = uwprof_pf_resolve(pf, sm->pid, sm->time_ns, ip, &o);
	if (objp)
		*objp = o;
	if (!m || !o)
		return "[unknown]";
	n = sym_name(symtab_for(s, o), ip - m->bias);
	return n ? n : "[unknown]";
}

static int count_u32(uint32_t *v, size_t *n, uint32_t x)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (v[i] == x)
			return 0;
	v[(*n)++] = x;
	return 1;
}

enum chain_state { CH_NONE, CH_COMPLETE, CH_LEAF_ONLY };

/*
 * Leaf-only samples (only their leaf, stopped at NO_MAP) taken before
 * every complete sample of the same process, which must have one.
 */
static uint64_t count_window(const struct uwprof_pf *pf,
			     const unsigned char *state)
{
	uint64_t n = 0;
	size_t i, j;

	for (i = 0; i < pf->nr_samples; i++) {
		uint64_t first = UINT64_MAX;

		if (state[i] != CH_LEAF_ONLY)
			continue;
		for (j = 0; j < pf->nr_samples; j++)
			if (state[j] == CH_COMPLETE &&
			    pf->samples[j].pid == pf->samples[i].pid &&
			    pf->samples[j].time_ns < first)
				first = pf->samples[j].time_ns;
		n += pf->samples[i].time_ns < first && first != UINT64_MAX;
	}
	return n;
}

static int do_chain(const struct uwprof_pf *pf, const char *lib, char *chain)
{
	const char *rc[64];
	int nrc = 0, printed = 0;
	uint64_t leaf = 0, complete = 0, other = 0, window = 0, user = 0;
	unsigned char *state;
	struct syms s = { 0 };
	uint32_t *pids, *tids;
	size_t npids = 0, ntids = 0, i;
	char *tok, *save = NULL;

	/* Given root first; compared leaf first. */
	for (tok = strtok_r(chain, ",", &save); tok && nrc < 64;
	     tok = strtok_r(NULL, ",", &save))
		rc[nrc++] = tok;
	for (i = 0; i < (size_t)nrc / 2; i++) {
		const char *t = rc[i];

		rc[i] = rc[nrc - 1 - i];
		rc[nrc - 1 - i] = t;
	}
	pids = calloc(pf->nr_samples + 1, sizeof(*pids));
	tids = calloc(pf->nr_samples + 1, sizeof(*tids));
	state = calloc(pf->nr_samples + 1, sizeof(*state));
	if (!pids || !tids || !state)
		return 1;
	for (i = 0; i < pf->nr_samples; i++) {
		const struct uwprof_pf_sample *sm = &pf->samples[i];
		const struct uwprof_pf_object *o;
		const char *n0;
		int j = 0, k, ok;

		if (!sm->nr_user)
			continue;
		user++;
		n0 = frame_name(pf, &s, sm, 0, &o);
		if (!o || !strstr(o->path, lib))
			continue;
		while (j < nrc && !same_fn(n0, rc[j]))
			j++;
		if (j == nrc) {
			other++;
			continue;
		}
		leaf++;
		ok = j < nrc && sm->nr_user >= (unsigned int)(nrc - j);
		for (k = 1; ok && j + k < nrc; k++)
			ok = same_fn(frame_name(pf, &s, sm, (unsigned int)k, NULL),
				     rc[j + k]);
		if (ok) {
			complete++;
			count_u32(pids, &npids, sm->pid);
			count_u32(tids, &ntids, sm->tid);
			state[i] = CH_COMPLETE;
		} else if (sm->nr_user == 1 &&
			   (sm->flags & UWPROF_SAMPLE_STOP_MASK) ==
			   UWPROF_STOP_NO_MAP) {
			state[i] = CH_LEAF_ONLY;
		}
		if (!ok && printed++ < 5) {
			printf("# incomplete: pid %u stop %u frames %u:", sm->pid,
			       sm->flags & UWPROF_SAMPLE_STOP_MASK, sm->nr_user);
			for (k = 0; k < sm->nr_user && k < 8; k++)
				printf(" %s", frame_name(pf, &s, sm,
							 (unsigned int)k, NULL));
			printf("\n");
		}
	}
	window = count_window(pf, state);
	printf("leaf=%llu complete=%llu pids=%zu tids=%zu other=%llu window=%llu user=%llu\n",
	       (unsigned long long)leaf, (unsigned long long)complete, npids,
	       ntids, (unsigned long long)other, (unsigned long long)window,
	       (unsigned long long)user);
	free(state);
	return 0;
}

static void do_stats(const struct uwprof_pf *pf)
{
	uint64_t stops[UWPROF_STATS_STOPS] = { 0 }, execs = 0, vdso = 0;
	uint32_t *pids, *tids, deepest_ok = 0, deepest = 0;
	size_t npids = 0, ntids = 0, i;

	pids = calloc(pf->nr_samples + 1, sizeof(*pids));
	tids = calloc(pf->nr_samples + 1, sizeof(*tids));
	if (!pids || !tids)
		exit(1);
	for (i = 0; i < pf->nr_samples; i++) {
		uint32_t st = pf->samples[i].flags & UWPROF_SAMPLE_STOP_MASK;

		if (st < UWPROF_STATS_STOPS)
			stops[st]++;
		if (pf->samples[i].nr_user > deepest)
			deepest = pf->samples[i].nr_user;
		if (st == UWPROF_STOP_OK && pf->samples[i].nr_user > deepest_ok)
			deepest_ok = pf->samples[i].nr_user;
		count_u32(pids, &npids, pf->samples[i].pid);
		count_u32(tids, &ntids, pf->samples[i].tid);
	}
	for (i = 0; i < pf->nr_exits; i++)
		execs += pf->exits[i].exec;
	for (i = 0; i < pf->nr_objects; i++)
		if (pf->objects[i].flags & UWPROF_PF_OBJ_VDSO)
			vdso = pf->objects[i].image_size;
	printf("arch=%u\nfreq=%u\ncmdline=%s\nhostname=%s\n", pf->hdr.arch,
	       pf->hdr.freq_hz, pf->hdr.cmdline, pf->hdr.hostname);
	printf("samples=%zu\nobjects=%zu\nvdso_image=%llu\nmaps=%zu\n",
	       pf->nr_samples, pf->nr_objects, (unsigned long long)vdso,
	       pf->nr_maps);
	printf("pids=%zu\ntids=%zu\nexits=%zu\nexecs=%llu\nlost=%llu\n",
	       npids, ntids, pf->nr_exits, (unsigned long long)execs,
	       (unsigned long long)pf->lost);
	printf("threads=%zu\nksyms=%zu\nhas_stats=%d\n", pf->nr_threads,
	       pf->nr_ksyms, pf->has_stats);
	for (i = 0; i < UWPROF_STATS_STOPS; i++)
		printf("stop%zu=%llu\n", i, (unsigned long long)stops[i]);
	/* User frames of the deepest stack, and of the deepest whole one. */
	printf("deepest=%u\ndeepest_ok=%u\n", deepest, deepest_ok);
	free(pids);
	free(tids);
}

int main(int argc, char **argv)
{
	struct uwprof_pf *pf;
	char err[600];
	const char *file;
	int ret = 0;

	if (argc == 2)
		file = argv[1];
	else if (argc == 5 && !strcmp(argv[1], "--chain"))
		file = argv[4];
	else {
		fprintf(stderr, "usage: profile-dump [--chain LIB ROOT,...,LEAF] FILE\n");
		return 2;
	}
	if (uwprof_pf_open(file, &pf, err, sizeof(err))) {
		fprintf(stderr, "profile-dump: %s\n", err);
		return 1;
	}
	if (argc == 2)
		do_stats(pf);
	else
		ret = do_chain(pf, argv[2], argv[3]);
	uwprof_pf_close(pf);
	return ret;
}

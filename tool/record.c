// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof record': profiles a command, a set of processes or the whole
 * system into a profile file (profile_file.h).
 *
 * It compiles (or takes from the cache) the unwind table of every object
 * the profiled processes map, uploads tables and per-process mappings to
 * the module, starts sampling, and then follows the rings: samples go to
 * the file; UNKNOWN_MAP and EXIT records make it re-read a process's
 * mappings (dlopen, exec, new threads' first samples, new processes) and
 * upload what is missing. Everything the report needs after the processes
 * are gone (objects, build-ids, mapping snapshots, the vDSO image, kernel
 * symbols) goes into the file too.
 *
 * The module filters by a fixed pid list given at START, and a command's
 * children are not known then; so a command is profiled system-wide and
 * samples are kept only for the command's process tree (this process is
 * made a child subreaper so orphaned descendants stay in the tree).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exit_status.h"
#include "kallsyms.h"
#include "record.h"
#include "recorder.h"


static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void rec_usage(FILE *f)
{
	fprintf(f,
"usage: uwprof record [-F HZ] [-a | -p PID[,PID...]] [-d SECONDS] [-g|--kernel]\n"
"                     [-o FILE] [options] [--] [CMD ARGS...]\n"
"  Sample user call stacks (unwound in the kernel with DWARF tables) of a\n"
"  command and its children, of processes (-p), or of everything (-a).\n"
"  -F, --freq HZ       samples per second per CPU (default %u)\n"
"  -a, --all-cpus      every process on the system\n"
"  -p, --pid PIDS      these processes (comma separated; their threads too)\n"
"  -d, --duration S    stop after S seconds (default: until the command ends,\n"
"                      the processes exit, or SIGINT/SIGTERM)\n"
"  -g, --kernel        kernel frames too (and kernel symbols into the file)\n"
"  -o, --output FILE   profile file (default uwprof.data)\n"
"  -e, --event EV      cycles or cpu-clock (default: cycles when available)\n"
"  --depth N           user frames per sample, at most (default %u)\n"
"  --no-fp-fallback    tables only: never follow frame pointers\n"
"  --ring-pages N      data pages per CPU ring (power of two)\n"
"  --cache-dir DIR     table cache (default /var/cache/uwprof/tables, else\n"
"                      $XDG_CACHE_HOME/uwprof/tables or ~/.cache/uwprof/tables)\n"
"  --snapshot-size N   stack bytes copied from samples of code whose tables\n"
"                      are not uploaded yet, to finish their walks later\n"
"                      (default %u, multiple of 8, at most %u; 0: none)\n"
"  --hold-exec         stop (SIGSTOP) the command's processes at each exec and\n"
"                      new library until their tables are uploaded; they see\n"
"                      the stops (a parent waiting with WUNTRACED, a debugger)\n"
"  -q, --quiet         no progress line, no summary\n"
"  exit: 0 ok, 1 error, 2 usage, 3 /dev/uwprof missing (module not loaded),\n"
"        4 permission denied (needs root or CAP_PERFMON), 5 no such process\n"
"        or the command could not be started, 6 output file not written\n"
"        (directory not writable, disk full), 7 another session is sampling\n",
		REC_DEFAULT_FREQ, REC_DEFAULT_DEPTH, UWPROF_SNAPSHOT_DEFAULT,
		UWPROF_MAX_SNAPSHOT);
}

/* ------------------------------------------------------------ small sets */

static uint64_t set_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

/* Returns 1 when added, 0 when present, -ENOMEM. */
static int set_add(struct u64set *s, uint64_t k)
{
	size_t i;

	if (!k)
		k = 1;
	if ((s->n + 1) * 2 > s->cap) {
		struct u64set ns = { .cap = s->cap ? s->cap * 2 : 1024 };

		ns.v = calloc(ns.cap, sizeof(*ns.v));
		if (!ns.v)
			return -ENOMEM;
		for (i = 0; i < s->cap; i++)
			if (s->v[i])
				set_add(&ns, s->v[i]);
		free(s->v);
		*s = ns;
	}
	for (i = set_hash(k) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (s->v[i] == k)
			return 0;
		if (!s->v[i]) {
			s->v[i] = k;
			s->n++;
			return 1;
		}
	}
}

/* ---------------------------------------------------------- output file */

int rec_out(struct recorder *r, int ret)
{
	if (ret && !r->output_failed) {
		r->output_failed = 1;
		r->stop = 1;
		fprintf(stderr, "uwprof record: %s\n", r->w.err);
	}
	return ret;
}

/* ------------------------------------------------------------- records */

/*
 * The thread's name, stamped with the time it was read, not the sample's:
 * samples wait in the ring, and one taken before an exec is often read
 * after it, when the name is already the new program's. The reader names
 * a sample from the records between the execs around it (uwprof_pf_comm()).
 */
static void rec_thread(struct recorder *r, struct rec_proc *p, uint32_t tid)
{
	char comm[64];
	uint64_t t;

	if (set_add(&r->tids, ((uint64_t)p->pid << 32) | tid) != 1)
		return;
	t = rec_comm_at((pid_t)p->pid, (pid_t)tid, comm, sizeof(comm));
	if (!comm[0])
		return;
	rec_out(r, uwprof_pfw_thread(&r->w, t, p->pid, tid, comm));
	if (tid == p->pid && !p->first_name_ns)
		p->first_name_ns = t;
}

/*
 * A command's process whose first exec came before any record of its name
 * ran its parent's program until then, under the parent's name (a fork
 * keeps it; the command's processes all started after the recording did,
 * so this exec is their first): record that name just before the exec, so
 * that its samples from before it are not named after the new program.
 * Not when it was re-parented (its parent is gone).
 */
static void rec_name_before_exec(struct recorder *r, struct rec_proc *p,
				 uint64_t exec_ns)
{
	char comm[64];
	pid_t pp;

	if (r->o.mode != MODE_CMD || p->execs || !exec_ns ||
	    (p->first_name_ns && p->first_name_ns < exec_ns))
		return;
	pp = uwprof_pm_ppid((pid_t)p->pid);
	if (pp <= 1)
		return;
	uwprof_pm_comm(pp, pp, comm, sizeof(comm));
	if (comm[0])
		rec_out(r, uwprof_pfw_thread(&r->w, exec_ns - 1, p->pid, p->pid,
					     comm));
}

/*
 * A process forked from one the tool uploaded, and the module gave it a
 * copy of that list: it is the child's until it execs or is read itself,
 * so the file and the walks finished here use it too (a short-lived child
 * may be gone before the tool could read it).
 */
static void rec_fork(struct recorder *r, const struct uwprof_rec_fork *f)
{
	struct rec_proc *c = rec_proc_get(r, f->pid), *pp = rec_proc_find(r, f->ppid);

	if (!c || !pp || pp->ours != 1)
		return;
	c->ours = 1;
	if (!pp->pf_maps || c->pf_maps)
		return;
	rec_out(r, uwprof_pfw_maps(&r->w, f->time_ns, c->pid, pp->comm,
				   pp->pf_maps, pp->nr_pf_maps));
	if (r->o.snapshot_size && pp->maps)
		rec_proc_gen_push(c, pp->maps, pp->nr_maps, f->time_ns);
}

static int on_record(const struct uwprof_rec_hdr *h, uint32_t ring, void *priv)
{
	struct recorder *r = priv;
	struct rec_proc *p;

	switch (h->type) {
	case UWPROF_REC_SAMPLE: {
		const struct uwprof_rec_sample *s = (const void *)h;
		uint32_t stop = s->flags & UWPROF_SAMPLE_STOP_MASK, i;

		p = rec_proc_get(r, s->pid);
		if (!p || p->ours != 1) {
			r->filtered++;
			break;
		}
		rec_thread(r, p, s->tid);
		if (stop == UWPROF_STOP_NO_PROCESS || stop == UWPROF_STOP_NO_MAP)
			p->refresh = 1;
		if (r->o.kernel)
			for (i = 0; i < s->nr_kernel; i++)
				set_add(&r->kips, s->ips[i]);
		if (s->flags & UWPROF_SAMPLE_SNAPSHOT)
			rec_snapshot_sample(r, s);
		else
			rec_sample_out(r, s);
		break;
	}
	case UWPROF_REC_FORK:
		rec_fork(r, (const void *)h);
		break;
	case UWPROF_REC_LOST: {
		const struct uwprof_rec_lost *l = (const void *)h;

		r->lost += l->count;
		rec_out(r, uwprof_pfw_lost(&r->w, mono_ns(), ring, l->count));
		break;
	}
	case UWPROF_REC_UNKNOWN_MAP: {
		const struct uwprof_rec_unknown_map *u = (const void *)h;

		r->unknown++;
		p = rec_proc_get(r, u->pid);
		if (p && p->ours == 1 && !rec_proc_has_addr(p, u->addr)) {
			p->refresh = 1;
			p->urgent = 1;
		}
		break;
	}
	case UWPROF_REC_EXIT: {
		const struct uwprof_rec_exit *e = (const void *)h;

		/*
		 * An exec of a process not seen yet (a command's child that
		 * inherited its parent's mappings) is the earliest news of it.
		 */
		p = e->exec ? rec_proc_get(r, e->pid) : rec_proc_find(r, e->pid);
		if (!p || p->ours != 1)
			break;
		r->exits++;
		if (e->exec)
			rec_name_before_exec(r, p, e->time_ns);
		rec_out(r, uwprof_pfw_exit(&r->w, e->time_ns, e->pid, e->exec));
		/*
		 * The new name as the module saw it at the exec: names read
		 * from /proc race with it (one read just before the exec can
		 * be stamped just after it).
		 */
		if (e->exec && e->comm[0]) {
			char comm[sizeof(e->comm) + 1];

			memcpy(comm, e->comm, sizeof(e->comm));
			comm[sizeof(e->comm)] = 0;
			rec_out(r, uwprof_pfw_thread(&r->w, e->time_ns, e->pid,
						     e->pid, comm));
		}
		if (e->exec) {
			p->execs++;
			rec_proc_exec_seen(p, e->time_ns);
			/* The module dropped its mappings: the new image's. */
			free(p->maps);
			p->maps = NULL;
			p->nr_maps = 0;
			p->refresh = 1;
			p->last_read_ns = 0;
		} else {
			/*
			 * Kept (not forgotten) so that its samples still
			 * waiting in other CPUs' rings are attributed.
			 */
			free(p->maps);
			p->maps = NULL;
			p->nr_maps = 0;
			p->gone = 1;
		}
		break;
	}
	default:
		break;
	}
	return 0;
}

/*
 * Takes every record the ring reader copied out, then finishes the queued
 * walks whose process's uploads and execs are now all known.
 */
static void rec_drain(struct recorder *r)
{
	uint64_t start = mono_ns();

	uwprof_rreader_take(&r->rr, on_record, r);
	r->horizon_ns = start - REC_HORIZON_NS;
	if (r->snapq.n)
		rec_snapshots_flush(r, 0, 0);
}

/* ---------------------------------------------------------- kernel syms */

struct ksym_ent {
	uint64_t	addr;
	char		*name;		/* "name" or "name [module]" */
	size_t		name_len;	/* of the name alone */
};

/* By address; among aliases the one the report shows first. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return uwprof_kallsyms_alias_cmp(x->name, x->name_len, y->name,
					 y->name_len);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Stores the kallsyms entries that sampled kernel ips fall in. */
static void rec_ksyms(struct recorder *r)
{
	struct ksym_ent *v = NULL;
	struct uwprof_pf_ksym *out = NULL;
	size_t n = 0, cap = 0, nips = 0, nout = 0, i, j, first, len, pos = 0;
	struct uwprof_kallsym k;
	uint64_t *ips = NULL;
	char *text;
	int ret;

	if (!r->kips.n || uwprof_kallsyms_read(&text, &len))
		return;
	while (uwprof_kallsyms_next(text, len, &pos, &k)) {
		if (!k.addr)
			continue;
		if (n == cap) {
			struct ksym_ent *nv;

			cap = cap ? cap * 2 : 65536;
			nv = realloc(v, cap * sizeof(*nv));
			if (!nv)
				goto out;
			v = nv;
		}
		v[n].addr = k.addr;
		v[n].name_len = k.name_len;
		if (k.mod)
			ret = asprintf(&v[n].name, "%.*s [%.*s]", (int)k.name_len,
				       k.name, (int)k.mod_len, k.mod);
		else
			ret = asprintf(&v[n].name, "%.*s", (int)k.name_len,
				       k.name);
		if (ret < 0)
			goto out;
		n++;
	}
	if (!n) {
		if (!r->o.quiet)
			fprintf(stderr,
				"uwprof record: /proc/kallsyms shows no addresses (kptr_restrict): no kernel symbols stored\n");
		goto out;
	}
	qsort(v, n, sizeof(*v), ksym_cmp);
	ips = malloc(r->kips.n * sizeof(*ips));
	out = calloc(r->kips.n, sizeof(*out));
	if (!ips || !out)
		goto out;
	for (i = 0; i < r->kips.cap; i++)
		if (r->kips.v[i])
			ips[nips++] = r->kips.v[i];
	qsort(ips, nips, sizeof(*ips), u64_cmp);
	for (i = 0, j = 0; i < nips; i++) {
		/* j: the last entry at or below the ip, so j + 1 starts the next */
		while (j + 1 < n && v[j + 1].addr <= ips[i])
			j++;
		if (v[j].addr > ips[i])
			continue;
		if (nout && out[nout - 1].addr == v[j].addr)
			continue;
		for (first = j; first && v[first - 1].addr == v[j].addr; first--)
			;
		out[nout].addr = v[j].addr;
		out[nout].size = j + 1 < n ? v[j + 1].addr - v[j].addr : 0;
		out[nout].name = v[first].name;
		nout++;
	}
	rec_out(r, uwprof_pfw_ksyms(&r->w, out, nout));
out:
	free(text);
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(ips);
	free(out);
}

/* ------------------------------------------------------------- options */

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_pids(struct rec_opts *o, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	uint32_t pid;

	if (!dup)
		return -1;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t *nv;

		if (parse_u32(tok, 1, 4194304, &pid) || o->nr_pids >= UWPROF_MAX_PIDS) {
			free(dup);
			return -1;
		}
		nv = realloc(o->pids, (o->nr_pids + 1) * sizeof(*nv));
		if (!nv) {
			free(dup);
			return -1;
		}
		o->pids = nv;
		o->pids[o->nr_pids++] = pid;
	}
	free(dup);
	return o->nr_pids ? 0 : -1;
}

enum { OPT_DEPTH = 256, OPT_NO_FP, OPT_RING_PAGES, OPT_CACHE_DIR,
       OPT_SNAPSHOT_SIZE, OPT_HOLD_EXEC };

static const struct option rec_longopts[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "kernel", no_argument, NULL, 'g' },
	{ "output", required_argument, NULL, 'o' },
	{ "event", required_argument, NULL, 'e' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "no-fp-fallback", no_argument, NULL, OPT_NO_FP },
	{ "ring-pages", required_argument, NULL, OPT_RING_PAGES },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "snapshot-size", required_argument, NULL, OPT_SNAPSHOT_SIZE },
	{ "hold-exec", no_argument, NULL, OPT_HOLD_EXEC },
	{ NULL, 0, NULL, 0 },
};

static int set_mode(struct rec_opts *o, int mode)
{
	if (o->mode && o->mode != mode) {
		fprintf(stderr, "uwprof record: -a, -p and a command exclude each other\n");
		return -1;
	}
	o->mode = mode;
	return 0;
}

/* One option; returns -1 (message printed) on a bad value. */
static int parse_one(struct rec_opts *o, int c, const char *v)
{
	char *end;

	switch (c) {
	case 'F':
		return parse_u32(v, 1, UWPROF_MAX_FREQ, &o->freq);
	case 'a':
		return set_mode(o, MODE_ALL);
	case 'p':
		if (set_mode(o, MODE_PIDS))
			return -2;
		return parse_pids(o, v);
	case 'd':
		o->duration = strtod(v, &end);
		return end == v || *end || !(o->duration > 0) ||
		       o->duration > 1e7 ? -1 : 0;
	case 'g':
		o->kernel = 1;
		return 0;
	case 'o':
		o->output = v;
		return 0;
	case 'e':
		if (!strcmp(v, "cycles"))
			o->event = UWPROF_PF_EV_CYCLES;
		else if (!strcmp(v, "cpu-clock"))
			o->event = UWPROF_PF_EV_CPU_CLOCK;
		else
			return -1;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	case OPT_DEPTH:
		return parse_u32(v, 1, UWPROF_MAX_DEPTH, &o->depth);
	case OPT_NO_FP:
		o->no_fp = 1;
		return 0;
	case OPT_RING_PAGES:
		if (parse_u32(v, 1, UWPROF_MAX_RING_PAGES, &o->ring_pages))
			return -1;
		return o->ring_pages & (o->ring_pages - 1) ? -1 : 0;
	case OPT_CACHE_DIR:
		o->cache_dir = v;
		return 0;
	case OPT_SNAPSHOT_SIZE:
		if (parse_u32(v, 0, UWPROF_MAX_SNAPSHOT, &o->snapshot_size))
			return -1;
		return o->snapshot_size % 8 ? -1 : 0;
	case OPT_HOLD_EXEC:
		o->hold_exec = 1;
		return 0;
	default:
		return -2;
	}
}

/* Returns -1 on a usage error (message printed), 1 for --help, 0 ok. */
static int parse_opts(struct rec_opts *o, int argc, char **argv)
{
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->freq = REC_DEFAULT_FREQ;
	o->depth = REC_DEFAULT_DEPTH;
	o->snapshot_size = UWPROF_SNAPSHOT_DEFAULT;
	o->output = "uwprof.data";
	optind = 1;
	opterr = 1;
	/* '+': the command's own options are not ours. */
	while ((c = getopt_long(argc, argv, "+F:ap:d:go:e:qh", rec_longopts,
				NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?')
			return -1;
		ret = parse_one(o, c, optarg);
		/* The option is the word before a separate value. */
		if (ret == -1)
			fprintf(stderr, "uwprof record: bad value '%s' for %s\n",
				optarg, argv[optind - 1] == optarg ?
				argv[optind - 2] : argv[optind - 1]);
		if (ret)
			return -1;
	}
	if (optind < argc) {
		if (set_mode(o, MODE_CMD))
			return -1;
		o->cmd = argv + optind;
	}
	if (!o->mode) {
		fprintf(stderr,
			"uwprof record: nothing to profile: give a command, -p PID or -a\n");
		return -1;
	}
	return 0;
}

/* -------------------------------------------------------------- running */

static int exit_for_errno(int e)
{
	if (e == -ENOENT || e == -ENXIO || e == -ENODEV)
		return UWPROF_EX_NO_MODULE;
	if (e == -EPERM || e == -EACCES)
		return UWPROF_EX_PERM;
	if (e == -EBUSY)
		return UWPROF_EX_BUSY;
	return UWPROF_EX_ERROR;
}

static char *join_argv(char **argv)
{
	size_t n = 1, i;
	char *s;

	for (i = 0; argv && argv[i]; i++)
		n += strlen(argv[i]) + 1;
	s = calloc(1, n);
	if (!s)
		return NULL;
	for (i = 0; argv && argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int open_output(struct recorder *r, uint32_t start_flags)
{
	struct uwprof_pfw_header_in h;
	struct utsname u;
	char host[256] = "";
	char *cmdline;
	int ret;

	memset(&h, 0, sizeof(h));
	h.fixed.arch = r->arch;
	h.fixed.event = (uint16_t)r->o.event;
	h.fixed.freq_hz = r->o.freq;
	h.fixed.flags = (r->o.kernel ? UWPROF_PF_F_KERNEL : 0) |
			((start_flags & UWPROF_START_SYSTEM_WIDE) &&
			 r->o.mode == MODE_ALL ? UWPROF_PF_F_SYSTEM_WIDE : 0) |
			(r->o.no_fp ? UWPROF_PF_F_NO_FP : 0);
	h.fixed.max_depth = r->o.depth;
	h.fixed.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	h.fixed.abi_version = r->dev.ver.abi_version;
	h.fixed.start_mono_ns = mono_ns();
	h.fixed.start_realtime_ns = real_ns();
	gethostname(host, sizeof(host) - 1);
	h.hostname = host;
	h.release = uname(&u) ? "" : u.release;
	cmdline = join_argv(r->o.mode == MODE_CMD ? r->o.cmd : NULL);
	h.cmdline = cmdline ? cmdline : "";
	ret = uwprof_pfw_open(&r->w, r->o.output, &h);
	free(cmdline);
	if (ret)
		fprintf(stderr, "uwprof record: %s\n", r->w.err);
	return ret;
}

/* Forks the command, stopped before exec until 'go' is written. */
static int spawn_cmd(struct recorder *r, int *go_w, int *err_r)
{
	int go[2], ep[2];
	sigset_t none;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char c;
		int e;

		close(go[1]);
		close(ep[0]);
		/* The command runs at the priority it would have had. */
		setpriority(PRIO_PROCESS, 0, r->nice0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o.cmd[0], r->o.cmd);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	r->child = pid;
	*go_w = go[1];
	*err_r = ep[0];
	return 0;
}

static void reap(struct recorder *r)
{
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
		if (p == r->child) {
			r->child_status = status;
			r->child_done = 1;
		}
	}
}

/* Whether a process exists: kill(pid, 0), and /proc when that says no. */
static int pid_exists(uint32_t pid)
{
	char fn[32];

	if (!kill((pid_t)pid, 0) || errno != ESRCH)
		return 1;
	snprintf(fn, sizeof(fn), "/proc/%u/stat", pid);
	if (access(fn, F_OK))
		return 0;
	fprintf(stderr, "uwprof record: process %u: kill(0) says ESRCH but /proc/%u exists\n",
		pid, pid);
	return 1;
}

static int pids_alive(const struct recorder *r)
{
	uint32_t i;

	for (i = 0; i < r->o.nr_pids; i++)
		if (pid_exists(r->o.pids[i]))
			return 1;
	return 0;
}

static uint64_t unwind_errors(const struct recorder *r)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < UWPROF_PF_STOP__COUNT; i++)
		if (i != UWPROF_STOP_OK && i != UWPROF_STOP_FP_END &&
		    i != UWPROF_STOP_DEPTH)
			n += r->stops[i];
	return n;
}

static void progress(const struct recorder *r, int final)
{
	fprintf(stderr,
		"\r\033[Kuwprof: %llu samples, %llu lost, %llu unwind errors, %.1f s%s",
		(unsigned long long)r->samples, (unsigned long long)r->lost,
		(unsigned long long)unwind_errors(r),
		(double)(mono_ns() - r->t_start) / 1e9, final ? "\n" : "");
}

static void summary(const struct recorder *r, const struct uwprof_stats *st)
{
	double secs = (double)(r->t_end - r->t_start) / 1e9;
	int i;

	fprintf(stderr,
		"uwprof: %llu samples in %.2f s, %llu lost, %llu objects (%llu without unwind tables), %zu processes, %llu mapping uploads\n",
		(unsigned long long)r->samples, secs,
		(unsigned long long)r->lost, (unsigned long long)r->nr_objs,
		(unsigned long long)r->objects_no_table, r->nr_procs,
		(unsigned long long)r->maps_uploads);
	fprintf(stderr, "uwprof: stacks ended by:");
	for (i = 0; i < UWPROF_PF_STOP__COUNT; i++)
		if (r->stops[i])
			fprintf(stderr, " %s %llu", uwprof_pf_stop_name(i),
				(unsigned long long)r->stops[i]);
	fprintf(stderr, "\n");
	if (st->frames)
		fprintf(stderr,
			"uwprof: %llu frames, %llu by frame-pointer fallback; tables: %llu cached, %llu compiled in %.2f s\n",
			(unsigned long long)st->frames,
			(unsigned long long)st->fp_frames,
			(unsigned long long)r->cache.hits,
			(unsigned long long)r->cache.misses,
			(double)r->cache.compile_ns / 1e9);
	if (st->snapshots)
		fprintf(stderr,
			"uwprof: %llu samples with stack snapshots (%.1f KiB of stack each on average): %llu finished, %llu not (no tables for their code)\n",
			(unsigned long long)st->snapshots,
			(double)st->snapshot_bytes / 1024.0 / (double)st->snapshots,
			(unsigned long long)r->snap_finished,
			(unsigned long long)r->snap_unfinished);
	if (st->nmi_samples)
		fprintf(stderr, "uwprof: %llu samples taken in NMI context\n",
			(unsigned long long)st->nmi_samples);
	if (st->skipped_throttle)
		fprintf(stderr,
			"uwprof: %llu samples skipped: stack walks used their CPU share (/sys/module/uwprof/parameters/cpu_max_percent); lower -F or raise it\n",
			(unsigned long long)st->skipped_throttle);
	if (r->filtered)
		fprintf(stderr,
			"uwprof: %llu samples of other processes left out\n",
			(unsigned long long)r->filtered);
	if (r->bad_recs)
		fprintf(stderr, "uwprof: %llu malformed ring records skipped\n",
			(unsigned long long)r->bad_recs);
}

static void write_stats(struct recorder *r, const struct uwprof_stats *st)
{
	struct uwprof_pf_stats ps;
	int i;

	memset(&ps, 0, sizeof(ps));
	ps.end_mono_ns = r->t_end;
	ps.samples = r->samples;
	ps.lost = r->lost;
	ps.filtered = r->filtered;
	ps.events = st->events;
	ps.frames = st->frames;
	ps.fp_frames = st->fp_frames;
	ps.unknown_maps = st->unknown_maps;
	ps.skipped_throttle = st->skipped_throttle;
	for (i = 0; i < UWPROF_PF_STOP__COUNT; i++)
		ps.stop[i] = r->stops[i];
	ps.snapshots = st->snapshots;
	ps.snapshot_bytes = st->snapshot_bytes;
	ps.snapshots_finished = r->snap_finished;
	ps.objects = r->nr_objs;
	ps.objects_no_table = r->objects_no_table;
	ps.maps_uploads = r->maps_uploads;
	rec_out(r, uwprof_pfw_stats(&r->w, &ps));
}

static int setup_signals(struct recorder *r)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return r->sigfd < 0 ? -errno : 0;
}

static void read_signals(struct recorder *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(r);
		else
			r->stop = 1;
	}
}

/* Polls the device and the signals for up to 'ms'. */
static void wait_events(struct recorder *r, int ms)
{
	struct pollfd p[3] = {
		{ .fd = r->sigfd, .events = POLLIN },
		{ .fd = r->dev.fd, .events = POLLIN },
		{ .fd = uwprof_rreader_fd(&r->rr), .events = POLLIN },
	};

	if (poll(p, 3, ms) > 0 && (p[0].revents & POLLIN))
		read_signals(r);
}

static void rec_free(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nr_objs; i++)
		free(r->objs[i].path);
	free(r->objs);
	for (i = 0; i < r->nr_objs; i++)
		if (r->objs[i].tab) {
			uwprof_snap_table_free(r->objs[i].tab);
			free(r->objs[i].tab);
		}
	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];
		int g;

		free(p->maps);
		free(p->pf_maps);
		free(p->exec_ns);
		for (g = 0; g < REC_GENS; g++)
			free(p->gens[g].maps);
	}
	free(r->procs);
	uwprof_snap_queue_free(&r->snapq);
	uwprof_rreader_free(&r->rr);
	free(r->tids.v);
	free(r->kips.v);
	free(r->o.pids);
	if (r->sigfd >= 0)
		close(r->sigfd);
	uwprof_dev_close(&r->dev);
}

/* Uploads the -p processes before sampling starts. */
static int upload_pids(struct recorder *r)
{
	uint32_t i;

	for (i = 0; i < r->o.nr_pids; i++) {
		struct rec_proc *p;
		int ret;

		if (!pid_exists(r->o.pids[i])) {
			fprintf(stderr,
				"uwprof record: process %u: no such process\n",
				r->o.pids[i]);
			return UWPROF_EX_TARGET;
		}
		p = rec_proc_get(r, r->o.pids[i]);
		if (!p)
			return UWPROF_EX_ERROR;
		ret = rec_proc_upload(r, p);
		if (ret == -ESRCH) {
			fprintf(stderr,
				"uwprof record: process %u: no such process (its maps vanished)\n",
				r->o.pids[i]);
			return UWPROF_EX_TARGET;
		}
		if (ret) {
			fprintf(stderr,
				"uwprof record: process %u: reading its mappings: %s\n",
				r->o.pids[i], strerror(-ret));
			return ret == -EACCES || ret == -EPERM ?
			       UWPROF_EX_PERM : UWPROF_EX_ERROR;
		}
	}
	return 0;
}

/*
 * -a: every process that exists now gets its tables and mappings before
 * sampling starts (later ones are found through UNKNOWN_MAP).
 */
static void upload_all(struct recorder *r)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		struct rec_proc *p;

		if (*end || !pid || pid == (unsigned long)r->self)
			continue;
		p = rec_proc_get(r, (uint32_t)pid);
		if (p && p->ours == 1)
			rec_proc_upload(r, p);
	}
	closedir(d);
}

static int record_run(struct recorder *r)
{
	struct uwprof_stats st;
	struct rec_proc *p;
	char err[512];
	uint32_t flags = 0;
	uint64_t last_progress = 0, deadline = 0;
	int wait_ms;
	int go_w = -1, err_r = -1, ret, code = 0, tty;

	/*
	 * First of all, so that a SIGINT or SIGTERM during the set-up (which
	 * can take seconds on a loaded machine) stops the recording cleanly
	 * instead of killing the recorder.
	 */
	ret = setup_signals(r);
	if (ret) {
		fprintf(stderr, "uwprof record: signals: %s\n", strerror(-ret));
		return UWPROF_EX_ERROR;
	}
	ret = uwprof_dev_open(&r->dev, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "uwprof record: %s\n", err);
		return exit_for_errno(ret);
	}
	r->arch = (uint16_t)r->dev.ver.arch;
	r->elf_machine = r->arch == UWPROF_ARCH_ARM64 ? EM_AARCH64 : EM_X86_64;
	if (r->o.kernel && !(r->dev.ver.caps & UWPROF_CAP_KERNEL_STACK)) {
		fprintf(stderr,
			"uwprof record: --kernel: this user may not see kernel addresses (needs CAP_PERFMON or root)\n");
		return UWPROF_EX_PERM;
	}
	if (!r->o.event)
		r->o.event = (r->dev.ver.caps & UWPROF_CAP_HW_CYCLES) ?
			     UWPROF_PF_EV_CYCLES : UWPROF_PF_EV_CPU_CLOCK;
	if (r->o.event == UWPROF_PF_EV_CYCLES &&
	    !(r->dev.ver.caps & UWPROF_CAP_HW_CYCLES)) {
		fprintf(stderr,
			"uwprof record: -e cycles: no hardware cycles event on this machine (use -e cpu-clock)\n");
		return UWPROF_EX_ERROR;
	}
	flags |= r->o.event == UWPROF_PF_EV_CYCLES ? UWPROF_START_CYCLES :
						     UWPROF_START_CPU_CLOCK;
	if (r->o.kernel)
		flags |= UWPROF_START_KERNEL_STACK;
	if (r->o.no_fp)
		flags |= UWPROF_START_NO_FP_FALLBACK;
	if (r->o.mode != MODE_PIDS)
		flags |= UWPROF_START_SYSTEM_WIDE;
	/*
	 * Samples of code not uploaded yet carry stack snapshots, finished
	 * here once the tables are; --hold-exec instead stops the command's
	 * processes at each exec until their new image is uploaded.
	 */
	if (r->o.mode == MODE_CMD && r->o.hold_exec)
		flags |= UWPROF_START_HOLD_EXEC;
	if (!(r->dev.ver.caps & UWPROF_CAP_SNAPSHOT))
		r->o.snapshot_size = 0;
	if (r->o.snapshot_size)
		flags |= UWPROF_START_SNAPSHOT;
	r->snapq.max_bytes = REC_SNAPQ_MAX;
	uwprof_tcache_init(&r->cache, r->o.cache_dir);

	if (open_output(r, flags)) {
		uwprof_pfw_abort(&r->w);
		return UWPROF_EX_OUTPUT;
	}
	if (r->o.mode == MODE_PIDS) {
		code = upload_pids(r);
		if (code)
			goto abort;
	} else if (r->o.mode == MODE_ALL) {
		upload_all(r);
	} else if (r->o.mode == MODE_CMD) {
		rec_prewarm_cmd(r);
		/* Orphaned grandchildren stay in the tree, and get reaped. */
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		ret = spawn_cmd(r, &go_w, &err_r);
		if (ret) {
			fprintf(stderr, "uwprof record: fork: %s\n", strerror(-ret));
			code = UWPROF_EX_ERROR;
			goto abort;
		}
		/*
		 * Until its exec the child runs this program's code: its
		 * mappings go up now, while it waits for the go-ahead, so
		 * those first samples unwind like any other.
		 */
		p = rec_proc_get(r, (uint32_t)r->child);
		if (p)
			rec_proc_upload(r, p);
	}

	ret = uwprof_dev_start(&r->dev, flags, r->o.freq, r->o.depth,
			       r->o.ring_pages, r->o.snapshot_size,
			       r->o.mode == MODE_PIDS ?
			       r->o.pids : NULL,
			       r->o.mode == MODE_PIDS ? r->o.nr_pids : 0);
	if (ret) {
		if (ret == -EBUSY)
			fprintf(stderr, "uwprof record: another uwprof session is sampling\n");
		else
			fprintf(stderr, "uwprof record: starting to sample: %s\n",
				strerror(-ret));
		code = exit_for_errno(ret);
		goto abort;
	}
	ret = uwprof_dev_rings_map(&r->dev);
	if (!ret)
		ret = uwprof_rreader_start(&r->rr, &r->dev, REC_RING_BUFFER_MAX);
	if (ret) {
		fprintf(stderr, "uwprof record: reading the rings: %s\n",
			strerror(-ret));
		uwprof_dev_stop(&r->dev);
		code = UWPROF_EX_ERROR;
		goto abort;
	}
	r->t_start = mono_ns();
	if (r->o.duration > 0)
		deadline = r->t_start + (uint64_t)(r->o.duration * 1e9);
	if (r->o.mode == MODE_CMD) {
		int e = 0;
		ssize_t n;

		if (write(go_w, "g", 1) != 1)
			e = errno;
		close(go_w);
		go_w = -1;
		/* EOF: exec succeeded (the pipe is close-on-exec). */
		n = read(err_r, &e, sizeof(e));
		close(err_r);
		err_r = -1;
		if (n == (ssize_t)sizeof(e) || e) {
			fprintf(stderr, "uwprof record: cannot run '%s': %s\n",
				r->o.cmd[0], strerror(e));
			uwprof_dev_stop(&r->dev);
			code = UWPROF_EX_TARGET;
			goto abort;
		}
	}

	tty = isatty(2) && !r->o.quiet;
	/*
	 * On a busy machine the recorder must get the CPU soon after a ring
	 * wakes it, or a new process runs far before its mappings are
	 * uploaded. Best effort: needs CAP_SYS_NICE, which root has.
	 */
	setpriority(PRIO_PROCESS, 0, r->nice0 - 10 < -20 ? -20 : r->nice0 - 10);
	wait_ms = r->o.mode == MODE_CMD ? REC_CHECK_MS : 100;
	while (!r->stop) {
		uint64_t now;

		wait_events(r, wait_ms);
		rec_drain(r);
		wait_ms = rec_procs_refresh(r, 0,
					r->o.mode == MODE_CMD ? REC_CHECK_MS : 100);
		reap(r);
		now = mono_ns();
		if (r->o.mode == MODE_CMD && r->child_done)
			break;
		if (r->o.mode == MODE_PIDS && !pids_alive(r))
			break;
		if (deadline && now >= deadline)
			break;
		if (tty && now - last_progress >= 250000000ULL) {
			progress(r, 0);
			last_progress = now;
		}
	}
	r->t_end = mono_ns();
	uwprof_dev_stop(&r->dev);
	uwprof_rreader_finish(&r->rr);
	rec_drain(r);
	r->bad_recs += r->rr.bad;
	if (r->rr.dropped) {
		r->lost += r->rr.dropped;
		rec_out(r, uwprof_pfw_lost(&r->w, mono_ns(), 0, r->rr.dropped));
	}
	/* Samples taken before a late upload still need their snapshot. */
	rec_procs_refresh(r, 1, 0);
	rec_snapshots_flush(r, 0, 1);
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (uwprof_dev_stats(&r->dev, &st))
		memset(&st, 0, sizeof(st));
	if (r->o.kernel)
		rec_ksyms(r);
	write_stats(r, &st);
	if (r->o.mode == MODE_CMD && !r->child_done) {
		/* Stopped by a signal or -d: the command stays running. */
		if (!r->o.quiet)
			fprintf(stderr, "uwprof record: command %d still running\n",
				(int)r->child);
	}
	ret = uwprof_pfw_commit(&r->w);
	if (ret) {
		/* An earlier write failure was already reported. */
		if (!r->output_failed)
			fprintf(stderr, "uwprof record: %s\n", r->w.err);
		return UWPROF_EX_OUTPUT;
	}
	if (!r->o.quiet)
		summary(r, &st);
	if (r->o.mode == MODE_CMD && r->child_done && !r->o.quiet) {
		if (WIFEXITED(r->child_status) && WEXITSTATUS(r->child_status))
			fprintf(stderr, "uwprof: command exited with status %d\n",
				WEXITSTATUS(r->child_status));
		else if (WIFSIGNALED(r->child_status))
			fprintf(stderr, "uwprof: command killed by signal %d\n",
				WTERMSIG(r->child_status));
	}
	return r->output_failed ? UWPROF_EX_OUTPUT : UWPROF_EX_OK;

abort:
	if (go_w >= 0)
		close(go_w);
	if (err_r >= 0)
		close(err_r);
	if (r->child > 0 && !r->child_done) {
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
	}
	uwprof_pfw_abort(&r->w);
	return code;
}

int uwprof_cmd_record(int argc, char **argv)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int ret;

	if (!r) {
		fprintf(stderr, "uwprof record: out of memory\n");
		return UWPROF_EX_ERROR;
	}
	r->sigfd = -1;
	r->dev.fd = -1;
	r->self = getpid();
	errno = 0;
	r->nice0 = getpriority(PRIO_PROCESS, 0);
	if (errno)
		r->nice0 = 0;
	ret = parse_opts(&r->o, argc, argv);
	if (ret) {
		if (ret > 0)
			rec_usage(stdout);
		else
			fprintf(stderr, "(see 'uwprof record --help')\n");
		free(r->o.pids);
		free(r);
		return ret > 0 ? UWPROF_EX_OK : UWPROF_EX_USAGE;
	}
	ret = record_run(r);
	rec_free(r);
	free(r);
	return ret;
}


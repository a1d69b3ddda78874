// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's processes: which ones are profiled, their executable
 * mappings read from /proc, uploaded to the module and stored as MAPS
 * records, re-read when they change.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "recorder.h"

uint64_t rec_comm_at(pid_t pid, pid_t tid, char *comm, size_t len)
{
	char again[64];
	uint64_t t = 0;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		uwprof_pm_comm(pid, tid, comm, len);
		t = mono_ns();
		uwprof_pm_comm(pid, tid, again, sizeof(again));
		if (!strncmp(comm, again, len))
			break;
	}
	return t;
}

struct rec_proc *rec_proc_find(struct recorder *r, uint32_t pid)
{
	uint32_t idx;
	size_t i;

	if (r->last_proc < r->nr_procs && r->procs[r->last_proc].pid == pid)
		return &r->procs[r->last_proc];
	if (!r->proc_idx_bad) {
		if (!uwprof_u64map_get(&r->proc_idx, pid, &idx))
			return NULL;
		r->last_proc = idx;
		return &r->procs[idx];
	}
	for (i = 0; i < r->nr_procs; i++)
		if (r->procs[i].pid == pid) {
			r->last_proc = i;
			return &r->procs[i];
		}
	return NULL;
}

/*
 * The pid index after the array was compacted. Without memory for it,
 * processes are searched one by one until a later prune rebuilds it.
 */
static void proc_index_rebuild(struct recorder *r)
{
	size_t i;

	uwprof_u64map_free(&r->proc_idx);
	r->proc_idx_bad = 0;
	for (i = 0; i < r->nr_procs; i++)
		if (uwprof_u64map_put(&r->proc_idx, r->procs[i].pid, (uint32_t)i) < 0) {
			r->proc_idx_bad = 1;
			return;
		}
}

/* Every thread is named again in the file when next sampled. */
void rec_tids_forget(struct recorder *r)
{
	uwprof_u64map_free(&r->tids);
	r->last_tid = 0;
}

/* Whether 'pid' descends from this recorder (the command's tree). */
static int proc_in_tree(const struct recorder *r, uint32_t pid)
{
	pid_t p = (pid_t)pid;
	int depth;

	if (p == r->self)
		return 0;
	for (depth = 0; depth < 256 && p > 1; depth++) {
		if (p == r->self || p == r->child)
			return 1;
		p = uwprof_pm_ppid(p);
	}
	return 0;
}

static int proc_decide(const struct recorder *r, uint32_t pid)
{
	switch (r->o.mode) {
	case MODE_ALL:
		return pid != (uint32_t)r->self;
	case MODE_PIDS: {
		uint32_t i;

		for (i = 0; i < r->o.nr_pids; i++)
			if (r->o.pids[i] == pid)
				return 1;
		return 0;
	}
	default:
		return proc_in_tree(r, pid);
	}
}

struct rec_proc *rec_proc_get(struct recorder *r, uint32_t pid)
{
	struct rec_proc *p = rec_proc_find(r, pid);

	if (p)
		return p;
	if (VEC_RESERVE(r->procs, r->cap_procs, r->nr_procs + 1, 64))
		return NULL;
	if (!r->proc_idx_bad &&
	    uwprof_u64map_put(&r->proc_idx, pid, (uint32_t)r->nr_procs) < 0)
		return NULL;
	p = &r->procs[r->nr_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	rec_jit_init(p);
	p->ours = proc_decide(r, pid);
	r->last_proc = r->nr_procs++;
	return p;
}

int rec_maps_have(const struct uwprof_map *m, uint32_t nr, uint64_t addr)
{
	uint32_t lo = 0, hi = nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < m[mid].start)
			hi = mid;
		else if (addr >= m[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

int rec_proc_has_addr(const struct rec_proc *p, uint64_t addr)
{
	return rec_maps_have(p->maps, p->nr_maps, addr);
}

static int pm_same(pid_t pid, const struct uwprof_pm *pm)
{
	struct uwprof_pm now;
	int same;
	size_t i;

	if (uwprof_pm_read(pid, &now))
		return 1;	/* gone: its EXIT record will follow */
	same = now.n == pm->n;
	for (i = 0; same && i < pm->n; i++)
		same = now.v[i].start == pm->v[i].start &&
		       now.v[i].end == pm->v[i].end &&
		       now.v[i].offset == pm->v[i].offset &&
		       now.v[i].inode == pm->v[i].inode;
	uwprof_pm_free(&now);
	return same;
}

/* One mapping as the module gets it (km) and as the file stores it (fm). */
static void proc_map_entry(struct recorder *r, struct rec_proc *p,
			   const struct uwprof_pm_entry *e,
			   struct uwprof_map *km, struct uwprof_pf_map *fm)
{
	struct rec_obj *o = NULL;
	uint64_t bias = e->start - e->offset;
	int tab = 0;

	if (e->kind == UWPROF_PM_FILE)
		o = rec_obj_for_file(r, (pid_t)p->pid, e);
	else if (e->kind == UWPROF_PM_VDSO)
		o = rec_obj_for_vdso(r, (pid_t)p->pid, e);
	if (o && o->has_info) {
		if (o->vdso) {
			if (uwprof_elf_bias(&o->info, e->start, 0, e->pf,
					    &bias))
				bias = e->start;
			tab = !o->no_table;
		} else if (!uwprof_elf_bias(&o->info, e->start, e->offset,
					    e->pf, &bias)) {
			tab = !o->no_table;
		}
	}
	km->start = e->start;
	km->end = e->end;
	km->bias = bias;
	km->object_id = tab ? o->id : 0;
	km->flags = tab ? 0 : UWPROF_MAP_NO_TABLE;
	fm->start = e->start;
	fm->end = e->end;
	fm->offset = e->offset;
	fm->bias = bias;
	fm->object_id = o ? o->id : 0;
	fm->flags = km->flags;
}

/* Records the process's cgroup when first read and whenever it moved. */
static void proc_cgroup_look(struct recorder *r, struct rec_proc *p)
{
	char path[UWPROF_CGROUP_PATH_MAX];
	char *copy;

	if (uwprof_cgroup_of((pid_t)p->pid, path, sizeof(path)))
		return;
	if (p->cgroup && !strcmp(p->cgroup, path))
		return;
	copy = strdup(path);
	if (!copy)
		return;
	free(p->cgroup);
	p->cgroup = copy;
	rec_w_cgroup(r, p->last_read_ns, p->pid, path);
}

/*
 * The process's CPython, read with its mappings: recorded once per
 * process and interpreter, walked or not (rec_python.c).
 */
static void proc_python_look(struct recorder *r, struct rec_proc *p,
			     const struct uwprof_pm *pm)
{
	struct uwprof_py_proc now;

	if (r->o.no_python)
		return;
	uwprof_py_find(&r->py_cache, (pid_t)p->pid, pm, r->arch, &now);
	rec_py_found(r, p, p->last_read_ns, &now);
}

/* Uploads the list; a failure is said once per kind, then the walks go on. */
static void proc_maps_set(struct recorder *r, struct rec_proc *p,
			  const struct uwprof_map *km, uint32_t n)
{
	int ret = uwprof_dev_maps_set(&r->dev, p->pid, p->start_time, km, n,
				      p->py && p->py->found ? &p->py->desc :
							      NULL);

	/*
	 * The process read is gone: read again, which finds its number free
	 * (gone) or taken by a later process, whose own list is then sent.
	 */
	if (ret == -ESRCH) {
		p->refresh = 1;
		return;
	}
	if (ret == -ENOSPC && !r->warned_mem) {
		fprintf(stderr,
			"uwprof record: the module's table memory is full (parameter table_mem_max): process %u unwinds without mappings\n",
			p->pid);
		r->warned_mem = 1;
	} else if (ret && ret != -ENOSPC && !r->warned_maps) {
		fprintf(stderr,
			"uwprof record: uploading the mappings of process %u: %s\n",
			p->pid, strerror(-ret));
		r->warned_maps = 1;
	}
}

/* The module's (km) and the file's (fm) lists for 'pm'; -ENOMEM. */
static int proc_lists(struct recorder *r, struct rec_proc *p,
		      const struct uwprof_pm *pm, struct uwprof_map **km,
		      struct uwprof_pf_map **fm)
{
	size_t i, n = pm->n ? pm->n : 1;

	*km = calloc(n, sizeof(**km));
	*fm = calloc(n, sizeof(**fm));
	if (!*km || !*fm) {
		free(*km);
		free(*fm);
		return -ENOMEM;
	}
	for (i = 0; i < pm->n; i++)
		proc_map_entry(r, p, &pm->v[i], &(*km)[i], &(*fm)[i]);
	return 0;
}

/*
 * Makes sure every object of 'pm' (read from /proc just now) has an OBJECT
 * record and a table in the module, uploads the list and stores a MAPS
 * snapshot dated 'read_ns' with the name 'comm'. Returns 0, 1 when the
 * list is the one uploaded last, or -errno.
 */
static int proc_upload_pm(struct recorder *r, struct rec_proc *p,
			  const struct uwprof_pm *pm, uint64_t read_ns,
			  const char *comm)
{
	struct uwprof_map *km = NULL;
	struct uwprof_pf_map *fm = NULL;
	uint32_t n = (uint32_t)pm->n;
	int ret, stopped = 0;
	size_t i;

	/*
	 * With --hold-exec a command's process waits (SIGSTOP) while new
	 * objects are compiled; others are never ours to stop. Without it,
	 * samples taken meanwhile carry snapshots and are finished here.
	 */
	if (r->o.mode == MODE_CMD && r->o.hold_exec)
		for (i = 0; i < pm->n && !stopped; i++)
			if (pm->v[i].kind != UWPROF_PM_ANON &&
			    !rec_obj_lookup(r, &pm->v[i]))
				stopped = !kill((pid_t)p->pid, SIGSTOP);
	ret = proc_lists(r, p, pm, &km, &fm);
	if (ret)
		goto out;
	p->image_read = 1;
	if (p->maps && p->nr_maps == n &&
	    !memcmp(p->maps, km, n * sizeof(*km))) {
		ret = 1;	/* unchanged: nothing to upload or store */
		goto out;
	}
	proc_maps_set(r, p, km, n);
	p->uploaded = 1;
	rec_w_maps(r, read_ns, p->pid, comm, fm, n);
	free(p->pf_maps);
	p->pf_maps = fm;
	p->nr_pf_maps = n;
	fm = NULL;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	if (comm[0] && !p->first_name_ns)
		p->first_name_ns = read_ns;
	r->maps_uploads++;
	free(p->maps);
	p->maps = km;
	p->nr_maps = n;
	km = NULL;
	if (r->o.snapshot_size)
		rec_proc_gen_push(p, p->maps, n, read_ns);
out:
	if (stopped)
		kill((pid_t)p->pid, SIGCONT);
	free(km);
	free(fm);
	return ret;
}

int rec_proc_past_image(struct recorder *r, struct rec_proc *p,
			const struct uwprof_pm *pm, uint64_t read_ns,
			const char *comm)
{
	struct uwprof_map *km;
	struct uwprof_pf_map *fm;
	int ret = proc_lists(r, p, pm, &km, &fm);

	if (ret)
		return ret;
	rec_w_maps(r, read_ns, p->pid, comm, fm, (uint32_t)pm->n);
	if (r->o.snapshot_size)
		rec_proc_gen_push(p, km, (uint32_t)pm->n, read_ns);
	free(km);
	free(fm);
	return 0;
}

/*
 * Reads the process's executable mappings and uploads them. Returns 0, 1
 * when the mappings changed while they were uploaded (an exec between the
 * read and MAPS_SET leaves the module with the old image's list: read
 * again), -ESRCH when the process is gone, or -errno.
 */
static int proc_upload_once(struct recorder *r, struct rec_proc *p)
{
	struct uwprof_pm pm;
	char comm[64];
	int ret;

	/*
	 * The name is read next to the time the record carries: between this
	 * and the end of the upload the process may exec (and is then read
	 * again), and its new name must not be dated before the exec.
	 */
	p->last_read_ns = rec_comm_at((pid_t)p->pid, (pid_t)p->pid, comm,
				      sizeof(comm));
	p->refresh = 0;
	p->urgent = 0;
	/* Before the maps: they are then of this process or a later one. */
	p->start_time = uwprof_pm_start_time((pid_t)p->pid);
	ret = uwprof_pm_read((pid_t)p->pid, &pm);
	if (ret) {
		if (ret == -ESRCH)
			p->gone = 1;
		return ret;
	}
	if (!pm.n) {
		uwprof_pm_free(&pm);
		return 0;
	}
	rec_jit_look(r, p, &pm);
	proc_cgroup_look(r, p);
	proc_python_look(r, p, &pm);
	ret = proc_upload_pm(r, p, &pm, p->last_read_ns, comm);
	if (!ret)
		ret = pm_same((pid_t)p->pid, &pm) ? 0 : 1;
	else if (ret == 1)
		ret = 0;
	uwprof_pm_free(&pm);
	return ret;
}

int rec_proc_upload(struct recorder *r, struct rec_proc *p)
{
	int ret, tries = 0;

	do
		ret = proc_upload_once(r, p);
	while (ret == 1 && ++tries < 4);
	return ret == 1 ? 0 : ret;
}

/*
 * Adds the children of a command's processes as soon as they exist, before
 * any of their samples asks for them (/proc/PID/task/TID/children).
 */
static void procs_find_children(struct recorder *r)
{
	uint32_t found[256];
	size_t i, n = 0;

	for (i = 0; i < r->nr_procs && n < 256; i++) {
		const struct rec_proc *p = &r->procs[i];
		struct dirent *de;
		char fn[96];
		DIR *d;

		if (p->ours != 1 || p->gone)
			continue;
		snprintf(fn, sizeof(fn), "/proc/%u/task", p->pid);
		d = opendir(fn);
		if (!d)
			continue;
		while ((de = readdir(d)) && n < 256) {
			unsigned int c;
			int off = 0, k;
			char buf[512];
			FILE *f;

			if (de->d_name[0] == '.')
				continue;
			snprintf(fn, sizeof(fn), "/proc/%u/task/%.16s/children",
				 p->pid, de->d_name);
			f = fopen(fn, "re");
			if (!f)
				continue;
			k = (int)fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[k > 0 ? k : 0] = 0;
			while (n < 256 && sscanf(buf + off, "%u%n", &c, &k) == 1) {
				off += k;
				if (!rec_proc_find(r, c))
					found[n++] = c;
			}
		}
		closedir(d);
	}
	for (i = 0; i < n; i++) {
		struct rec_proc *p = rec_proc_get(r, found[i]);

		if (p && p->ours == 1)
			p->refresh = 1;
	}
}

/*
 * Re-reads the processes that asked for it (and a command's, every
 * REC_POLL_NS, REC_POLL_RECORDS_NS with MMAP records). Returns how long the recorder may sleep before a refresh
 * held back by REC_REFRESH_MIN_NS is due, in ms, at most 'max_ms': the
 * record that asked for it will not come again to wake the recorder.
 */
int rec_procs_refresh(struct recorder *r, int force, int max_ms)
{
	uint64_t now = mono_ns(), wait_ns = (uint64_t)max_ms * 1000000ULL;
	uint64_t poll = r->mmap_records_on ? REC_POLL_RECORDS_NS : REC_POLL_NS;
	size_t i;

	if (r->o.mode == MODE_CMD && !force &&
	    now - r->children_ns >= poll) {
		procs_find_children(r);
		r->children_ns = now;
	}

	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];

		if (p->ours != 1 || p->gone)
			continue;
		/* Without MMAP records, a changed size is the sign of an mmap. */
		if (r->o.mode == MODE_CMD && !force && !r->mmap_records_on) {
			uint64_t v = uwprof_pm_vsize((pid_t)p->pid);

			if (v && v != p->vsize) {
				p->vsize = v;
				p->refresh = 1;
			}
		}
		if (!p->refresh && !(r->o.mode == MODE_CMD &&
				     now - p->last_read_ns >= poll))
			continue;
		/*
		 * Re-reads come at most every REC_REFRESH_MIN_NS, unless code
		 * runs in a mapping the upload lacks: every sample until then
		 * is cut short, and the module reports that once per page.
		 */
		if (!force && !p->urgent &&
		    now - p->last_read_ns < REC_REFRESH_MIN_NS) {
			uint64_t due = p->last_read_ns + REC_REFRESH_MIN_NS - now;

			if (due < wait_ns)
				wait_ns = due;
			continue;
		}
		rec_proc_upload(r, p);
	}
	return (int)((wait_ns + 999999) / 1000000);
}


/* The mappings of every live profiled process into 'w' (an agent's window). */
void rec_procs_replay(struct recorder *r, struct uwprof_pfw *w)
{
	size_t i;

	for (i = 0; i < r->nr_procs; i++) {
		const struct rec_proc *p = &r->procs[i];

		if (p->ours != 1 || p->gone || !p->pf_maps)
			continue;
		uwprof_pfw_maps(w, p->last_read_ns, p->pid, p->comm,
				p->pf_maps, p->nr_pf_maps);
		if (p->cgroup)
			uwprof_pfw_cgroup(w, p->last_read_ns, p->pid, p->cgroup);
		rec_py_interp_replay(r, p, p->last_read_ns, w);
	}
}

static void proc_release(struct rec_proc *p)
{
	int g;

	rec_jit_close(p);
	rec_mm_free(p);
	free(p->cgroup);
	free(p->py);
	free(p->maps);
	free(p->pf_maps);
	free(p->exec_ns);
	for (g = 0; g < REC_GENS; g++)
		free(p->gens[g].maps);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t ids_add(uint64_t *ids, size_t n, const struct uwprof_map *m,
		      uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (m[i].object_id)
			ids[n++] = m[i].object_id;
	return n;
}

/* The ids of the objects the known processes map or may still walk with. */
static uint64_t *procs_object_ids(const struct recorder *r, size_t *nr)
{
	size_t i, n = 0, cap = 0;
	uint64_t *ids;
	int g;

	for (i = 0; i < r->nr_procs; i++) {
		cap += r->procs[i].nr_pf_maps;
		for (g = 0; g < REC_GENS; g++)
			cap += r->procs[i].gens[g].nr_maps;
	}
	ids = malloc((cap ? cap : 1) * sizeof(*ids));
	if (!ids)
		return NULL;
	for (i = 0; i < r->nr_procs; i++) {
		const struct rec_proc *p = &r->procs[i];
		uint32_t k;

		for (k = 0; k < p->nr_pf_maps; k++)
			if (p->pf_maps[k].object_id)
				ids[n++] = p->pf_maps[k].object_id;
		for (g = 0; g < REC_GENS; g++)
			n = ids_add(ids, n, p->gens[g].maps, p->gens[g].nr_maps);
	}
	qsort(ids, n, sizeof(*ids), u64_cmp);
	*nr = n;
	return ids;
}

/*
 * A process is gone. The module dropped its mapping list when it exited,
 * unless an upload read before the exit reached the module after it: that
 * list, and the tables it names, would stay for as long as the session.
 * Dropped here when no process has the pid now (ENOENT, the usual answer,
 * means there was none); a new process that took the pid in between
 * loses the list it inherited and is uploaded again when it is sampled.
 */
static void proc_list_drop(struct recorder *r, const struct rec_proc *p)
{
	if (p->uploaded && kill((pid_t)p->pid, 0) && errno == ESRCH)
		uwprof_dev_process_del(&r->dev, p->pid);
}

/*
 * Forgets the processes that are gone (their EXIT seen, or no longer in
 * /proc when the record was lost), so that a long-running agent's state
 * follows the live processes rather than every process it ever saw; the
 * objects none of the others maps any more, with their tables in the
 * module (an object mapped again later is compiled again, from the table
 * cache, under a new id); and the set of threads named, which is filled
 * again as threads are sampled.
 */
void rec_procs_prune(struct recorder *r)
{
	size_t i, n = 0, nr_ids;
	uint64_t *ids;

	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];

		if (p->gone || (kill((pid_t)p->pid, 0) && errno == ESRCH)) {
			rec_snapshots_flush(r, p->pid, 1);
			proc_list_drop(r, p);
			proc_release(p);
			continue;
		}
		if (n != i)
			r->procs[n] = *p;
		n++;
	}
	r->nr_procs = n;
	r->last_proc = 0;
	proc_index_rebuild(r);
	rec_tids_forget(r);
	ids = procs_object_ids(r, &nr_ids);
	if (ids)
		rec_objs_drop_unused(r, mono_ns(), ids, nr_ids);
	free(ids);
}

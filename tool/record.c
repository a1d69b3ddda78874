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

#include "device.h"
#include "procmaps.h"
#include "profile_file.h"
#include "record.h"
#include "ring_reader.h"
#include "snapshot.h"
#include "table.h"
#include "tablecache.h"

#define REC_DEFAULT_FREQ	999
#define REC_DEFAULT_DEPTH	4096
#define REC_REFRESH_MIN_NS	2000000ULL	/* per process, between re-reads */
/*
 * How often the mappings of a command's processes are re-read, and their
 * children looked for, without an UNKNOWN_MAP or EXIT record asking for it.
 * Those records wake the recorder at once; the poll is a safety net
 * (records lost to a full ring). Each pass costs the profiled machine about
 * 0.3 ms of /proc reads in the benchmark guest, hence not more often.
 */
#define REC_POLL_NS		200000000ULL
/*
 * How often a command's processes are checked for a changed size, the cheap
 * sign of an mmap: a library dlopen() maps is then usually uploaded while
 * the loader still relocates it, before its code runs (an UNKNOWN_MAP comes
 * only with a sample that could not be unwound).
 */
#define REC_CHECK_NS		10000000ULL
#define REC_CHECK_MS		((int)(REC_CHECK_NS / 1000000))

enum rec_mode { MODE_NONE, MODE_CMD, MODE_PIDS, MODE_ALL };

struct rec_opts {
	int		mode;
	uint32_t	freq;
	uint32_t	depth;
	uint32_t	ring_pages;
	double		duration;	/* seconds, 0: until stopped */
	int		kernel;
	int		no_fp;
	int		event;		/* enum uwprof_pf_event, 0: default */
	int		quiet;
	int		hold_exec;	/* stop the command's processes at exec */
	uint32_t	snapshot_size;	/* stack bytes per snapshot, 0: none */
	const char	*output;
	const char	*cache_dir;
	uint32_t	*pids;
	uint32_t	nr_pids;
	char		**cmd;
};

struct rec_obj {
	uint64_t	id;
	uint32_t	dev_major, dev_minor;
	uint64_t	inode;
	int		vdso;
	int		no_table;
	struct uwprof_elf_info info;
	int		has_info;
	char		*path;
	struct uwprof_snap_table *tab;	/* for finishing walks, or NULL */
};

/* Uploads of a process kept to finish its samples' walks with. */
#define REC_GENS		4
/*
 * Records reach the rings within microseconds of their time stamps: once
 * a drain started this much later, every exec before that time was seen.
 */
#define REC_HORIZON_NS		5000000ULL
/* Bytes of snapshot samples waiting for tables, at most. */
#define REC_SNAPQ_MAX		(256ULL << 20)
/* Bytes of records read out of the rings and not processed yet, at most. */
#define REC_RING_BUFFER_MAX	(512ULL << 20)

struct rec_proc {
	uint32_t	pid;
	int		ours;		/* 1 profiled, 0 not, -1 not decided */
	int		refresh;	/* re-read and upload its mappings */
	int		urgent;		/* ... at once: code runs in a mapping it lacks */
	int		gone;
	uint64_t	last_read_ns;
	uint64_t	first_name_ns;	/* its earliest name record, 0: none */
	uint32_t	execs;		/* exec records seen */
	uint64_t	vsize;		/* size at the last check, in pages */
	struct uwprof_map *maps;	/* as last uploaded (kept after exit) */
	uint32_t	nr_maps;
	/*
	 * For finishing walks from snapshots: the last uploads, newest
	 * first, with the times they were read, and every exec seen, which
	 * tell which upload describes the image a sample ran in.
	 */
	struct rec_gen {
		struct uwprof_map *maps;
		uint32_t	nr_maps;
		uint64_t	read_ns;
	} gens[REC_GENS];
	uint64_t	*exec_ns;
	uint32_t	nr_execs;
	uint64_t	gen_serial;	/* uploads kept so far */
	/* The last MAPS record written, for children that inherit it. */
	struct uwprof_pf_map *pf_maps;
	uint32_t	nr_pf_maps;
	char		comm[64];
};

/* Open-addressing set of 64-bit keys (tids seen, kernel ips hit). */
struct u64set {
	uint64_t	*v;		/* 0 marks a free slot; keys are never 0 */
	size_t		cap, n;
};

struct recorder {
	struct rec_opts	o;
	struct uwprof_dev dev;
	struct uwprof_rreader rr;
	struct uwprof_pfw w;
	struct uwprof_tcache cache;
	uint16_t	arch;
	uint16_t	elf_machine;
	pid_t		self;
	pid_t		child;
	int		child_status;
	int		nice0;		/* our nice value before raising it */
	int		child_done;
	int		sigfd;
	int		stop;
	int		output_failed;
	uint64_t	t_start, t_end;
	struct rec_obj	*objs;
	size_t		nr_objs, cap_objs;
	struct rec_obj	*vdso;
	struct rec_proc	*procs;
	size_t		nr_procs, cap_procs;
	size_t		last_proc;
	uint64_t	children_ns;	/* last look for a command's children */
	struct u64set	tids;
	struct u64set	kips;
	/* Counters for the summary and the STATS record. */
	uint64_t	samples, lost, filtered, unknown, exits, bad_recs;
	uint64_t	stops[UWPROF_PF_STOP__COUNT];
	/* Samples with snapshots: waiting, finished, written as they came. */
	struct uwprof_snap_queue snapq;
	uint64_t	snap_finished, snap_unfinished;
	uint64_t	horizon_ns;	/* every exec before it was seen */
	uint64_t	maps_uploads, objects_no_table;
	int		warned_mem, warned_maps;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

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

static int rec_out(struct recorder *r, int ret)
{
	if (ret && !r->output_failed) {
		r->output_failed = 1;
		r->stop = 1;
		fprintf(stderr, "uwprof record: %s\n", r->w.err);
	}
	return ret;
}

/* ------------------------------------------------------------- objects */

static struct rec_obj *obj_new(struct recorder *r)
{
	struct rec_obj *o;

	if (r->nr_objs == r->cap_objs) {
		size_t cap = r->cap_objs ? r->cap_objs * 2 : 64;
		struct rec_obj *nv = realloc(r->objs, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		/* r->vdso points into the array. */
		if (r->vdso)
			r->vdso = nv + (r->vdso - r->objs);
		r->objs = nv;
		r->cap_objs = cap;
	}
	o = &r->objs[r->nr_objs];
	memset(o, 0, sizeof(*o));
	o->id = r->nr_objs + 1;
	return o;
}

/* Keeps an uploaded blob to finish walks from snapshots with. */
static void obj_keep_table(struct rec_obj *o, struct uwprof_blob *b)
{
	o->tab = malloc(sizeof(*o->tab));
	if (!o->tab)
		return;
	if (uwprof_snap_table_init(o->tab, b->data, b->size, o->id)) {
		free(o->tab);
		o->tab = NULL;
		return;
	}
	b->data = NULL;		/* the table owns it now */
}

/*
 * Compiles (or finds in the cache) and uploads an object's table; on any
 * failure the object is used without a table (frame-pointer fallback) and
 * the reason is said once.
 */
static void obj_table(struct recorder *r, struct rec_obj *o, const char *open_path,
		      const void *image, size_t image_size)
{
	struct uwprof_blob b;
	int ret;

	if (o->has_info && o->info.machine != r->elf_machine) {
		if (!r->o.quiet)
			fprintf(stderr,
				"uwprof record: %s: not an object of this machine's architecture; no table\n",
				o->path);
		o->no_table = 1;
		return;
	}
	ret = uwprof_tcache_get(&r->cache, open_path, image, image_size,
				r->arch, o->has_info ? o->info.build_id : NULL,
				o->has_info ? o->info.build_id_size : 0, &b);
	if (ret) {
		if (!r->o.quiet) {
			if (ret == -ENODATA)
				fprintf(stderr,
					"uwprof record: %s: no unwind information; its frames use frame pointers\n",
					o->path);
			else
				fprintf(stderr,
					"uwprof record: %s; its frames use frame pointers\n",
					b.err);
		}
		uwprof_blob_free(&b);
		o->no_table = 1;
		return;
	}
	ret = uwprof_dev_table_add(&r->dev, o->id, b.data, b.size);
	if (!ret && r->o.snapshot_size)
		obj_keep_table(o, &b);
	uwprof_blob_free(&b);
	if (ret) {
		if (ret == -ENOSPC && !r->warned_mem) {
			fprintf(stderr,
				"uwprof record: the module's table memory is full (parameter table_mem_max): further objects use frame pointers\n");
			r->warned_mem = 1;
		} else if (ret != -ENOSPC) {
			fprintf(stderr,
				"uwprof record: %s: uploading its table: %s\n",
				o->path, strerror(-ret));
		}
		o->no_table = 1;
	}
}

static void obj_write(struct recorder *r, const struct rec_obj *o,
		      const void *image, uint64_t image_size)
{
	struct uwprof_pf_obj_fixed f = {
		.object_id = o->id,
		.arch = r->arch,
		.flags = (uint16_t)((o->vdso ? UWPROF_PF_OBJ_VDSO : 0) |
				    (o->no_table ? UWPROF_PF_OBJ_NO_TABLE : 0)),
	};

	if (o->has_info) {
		f.build_id_size = o->info.build_id_size;
		memcpy(f.build_id, o->info.build_id, o->info.build_id_size);
	}
	if (o->no_table)
		r->objects_no_table++;
	rec_out(r, uwprof_pfw_object(&r->w, &f, o->path, image, image_size));
}

/* The object already known for a mapping, or NULL. */
static struct rec_obj *obj_lookup(struct recorder *r,
				  const struct uwprof_pm_entry *e)
{
	struct rec_obj *o;
	size_t i;

	if (e->kind == UWPROF_PM_VDSO)
		return r->vdso;
	for (i = 0; i < r->nr_objs; i++) {
		o = &r->objs[i];
		if (o->vdso)
			continue;
		if (e->inode ? (o->inode == e->inode &&
				o->dev_major == e->dev_major &&
				o->dev_minor == e->dev_minor) :
			       !strcmp(o->path, e->path))
			return o;
	}
	return NULL;
}

static struct rec_obj *obj_for_file(struct recorder *r, pid_t pid,
				    const struct uwprof_pm_entry *e)
{
	char open_path[PATH_MAX + 64];
	struct uwprof_elf_info info;
	struct rec_obj *o;
	size_t i;
	int have;

	o = obj_lookup(r, e);
	if (o)
		return o;
	have = !uwprof_pm_object_path(pid, e, open_path, sizeof(open_path)) &&
	       !uwprof_elf_info_file(open_path, &info);
	/* A copy of an object already loaded (same build-id) shares its table. */
	if (have && info.build_id_size) {
		for (i = 0; i < r->nr_objs; i++) {
			o = &r->objs[i];
			if (o->has_info && !o->vdso &&
			    o->info.build_id_size == info.build_id_size &&
			    !memcmp(o->info.build_id, info.build_id,
				    info.build_id_size) &&
			    !strcmp(o->path, e->path)) {
				/* Found under the identity the maps show now. */
				o->dev_major = e->dev_major;
				o->dev_minor = e->dev_minor;
				o->inode = e->inode;
				return o;
			}
		}
	}
	o = obj_new(r);
	if (!o)
		return NULL;
	o->path = strdup(e->path);
	if (!o->path)
		return NULL;
	o->dev_major = e->dev_major;
	o->dev_minor = e->dev_minor;
	o->inode = e->inode;
	if (have) {
		o->info = info;
		o->has_info = 1;
		obj_table(r, o, open_path, NULL, 0);
	} else {
		if (!r->o.quiet)
			fprintf(stderr,
				"uwprof record: %s: cannot read it; its frames use frame pointers\n",
				e->path);
		o->no_table = 1;
	}
	r->nr_objs++;
	obj_write(r, o, NULL, 0);
	return o;
}

/*
 * Every 64-bit process of one kernel maps the same vDSO, so it is read,
 * compiled and stored once.
 */
static struct rec_obj *obj_for_vdso(struct recorder *r, pid_t pid,
				    const struct uwprof_pm_entry *e)
{
	struct rec_obj *o;
	void *img = NULL;
	size_t size = (size_t)(e->end - e->start);

	if (r->vdso)
		return r->vdso;
	if (uwprof_pm_read_mem(pid, e->start, e->end, &img))
		return NULL;
	o = obj_new(r);
	if (!o) {
		free(img);
		return NULL;
	}
	o->path = strdup("[vdso]");
	if (!o->path) {
		free(img);
		return NULL;
	}
	o->vdso = 1;
	if (!uwprof_elf_info_mem(img, size, &o->info)) {
		o->has_info = 1;
		obj_table(r, o, "[vdso]", img, size);
	} else {
		o->no_table = 1;
	}
	r->nr_objs++;
	r->vdso = o;
	obj_write(r, o, img, size);
	free(img);
	return o;
}

/* ----------------------------------------------------- command prewarm */

/* Resolves the command the way execvp() will. */
static int find_in_path(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *q;

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(out, X_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *q ? q + 1 : q) {
		q = strchrnul(p, ':');
		snprintf(out, len, "%.*s/%s", (int)(q - p), p, cmd);
		if (!access(out, X_OK))
			return 0;
	}
	return -1;
}

/* The program interpreter (PT_INTERP) of an ELF executable. */
static int elf_interp(const char *path, char *out, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i, ret = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(ph)) {
		for (i = 0; i < eh.e_phnum && i < 256; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    sizeof(ph))
				break;
			if (ph.p_type != PT_INTERP || !ph.p_filesz || ph.p_filesz >= len)
				continue;
			if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) ==
			    (ssize_t)ph.p_filesz) {
				out[ph.p_filesz] = 0;
				ret = 0;
			}
			break;
		}
	}
	close(fd);
	return ret;
}

static void prewarm_one(struct recorder *r, const char *path)
{
	struct uwprof_pm_entry e = { .kind = UWPROF_PM_FILE };
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISREG(st.st_mode))
		return;
	e.path = real;
	e.inode = st.st_ino;
	e.dev_major = major(st.st_dev);
	e.dev_minor = minor(st.st_dev);
	obj_for_file(r, r->self, &e);
}

/*
 * Compiles and uploads the tables of the command's program, its loader,
 * the libraries the loader lists for it ('ld.so --list', which does not
 * run the program) and the vDSO before the command starts, so the process
 * never runs while its tables are being compiled.
 */
static void prewarm_cmd(struct recorder *r)
{
	char exe[PATH_MAX], interp[PATH_MAX], line[PATH_MAX + 128];
	struct uwprof_pm pm;
	int fds[2], status;
	size_t i;
	pid_t pid;
	FILE *f;

	if (!uwprof_pm_read(r->self, &pm)) {
		for (i = 0; i < pm.n; i++)
			if (pm.v[i].kind == UWPROF_PM_VDSO)
				obj_for_vdso(r, r->self, &pm.v[i]);
		uwprof_pm_free(&pm);
	}
	if (find_in_path(r->o.cmd[0], exe, sizeof(exe)))
		return;
	prewarm_one(r, exe);
	if (elf_interp(exe, interp, sizeof(interp)))
		return;
	prewarm_one(r, interp);
	if (pipe2(fds, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(fds[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "=> "), *end;

		p = p ? p + 3 : line + strspn(line, " \t");
		if (*p != '/')
			continue;
		end = strstr(p, " (");
		if (end)
			*end = 0;
		p[strcspn(p, "\n")] = 0;
		prewarm_one(r, p);
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	waitpid(pid, &status, 0);
}

/* ----------------------------------------------------------- processes */

static struct rec_proc *proc_find(struct recorder *r, uint32_t pid)
{
	size_t i;

	if (r->last_proc < r->nr_procs && r->procs[r->last_proc].pid == pid)
		return &r->procs[r->last_proc];
	for (i = 0; i < r->nr_procs; i++)
		if (r->procs[i].pid == pid) {
			r->last_proc = i;
			return &r->procs[i];
		}
	return NULL;
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

static struct rec_proc *proc_get(struct recorder *r, uint32_t pid)
{
	struct rec_proc *p = proc_find(r, pid);

	if (p)
		return p;
	if (r->nr_procs == r->cap_procs) {
		size_t cap = r->cap_procs ? r->cap_procs * 2 : 64;
		struct rec_proc *nv = realloc(r->procs, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		r->procs = nv;
		r->cap_procs = cap;
	}
	p = &r->procs[r->nr_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ours = proc_decide(r, pid);
	r->last_proc = r->nr_procs++;
	return p;
}

static int maps_have(const struct uwprof_map *m, uint32_t nr, uint64_t addr)
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

static int proc_has_addr(const struct rec_proc *p, uint64_t addr)
{
	return maps_have(p->maps, p->nr_maps, addr);
}

/* ------------------------------------------------------------ snapshots */

/* A sample as it goes into the file, counted by how its stack ended. */
static void rec_sample_out(struct recorder *r, const struct uwprof_rec_sample *s)
{
	uint32_t stop = s->flags & UWPROF_SAMPLE_STOP_MASK;

	if (stop < UWPROF_PF_STOP__COUNT)
		r->stops[stop]++;
	r->samples++;
	rec_out(r, uwprof_pfw_sample(&r->w, s));
}

/* The process's code, for the instructions the core inspects at a pc. */
struct rec_code {
	pid_t			pid;
	const struct uwprof_map	*maps;
	uint32_t		nr_maps;
};

static int rec_read_code(void *arg, void *dst, uint64_t addr, size_t n)
{
	const struct rec_code *c = arg;
	struct iovec local = { .iov_base = dst, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	uint32_t i;

	for (i = 0; i < c->nr_maps; i++)
		if (addr >= c->maps[i].start && n <= c->maps[i].end - addr)
			return process_vm_readv(c->pid, &local, 1, &remote, 1, 0) ==
			       (ssize_t)n ? 0 : -EFAULT;
	return -EFAULT;
}

/* Whether a sample at 't' ran in the image whose maps were read at 'm'. */
static int proc_same_image(const struct rec_proc *p, uint64_t t, uint64_t m)
{
	uint32_t i;

	for (i = 0; i < p->nr_execs; i++)
		if ((t < p->exec_ns[i]) != (m < p->exec_ns[i]))
			return 0;
	return 1;
}

/*
 * The upload that describes the image the process ran at 'time_ns' and
 * holds 'pc', once every exec around both times has been seen; NULL when
 * the tool has none (yet).
 */
static const struct rec_gen *proc_gen_at(const struct rec_proc *p,
					 uint64_t time_ns, uint64_t pc,
					 uint64_t horizon)
{
	const struct rec_gen *g;
	int i;

	for (i = 0; i < REC_GENS; i++) {
		g = &p->gens[i];
		if (!g->maps || time_ns >= horizon || g->read_ns >= horizon)
			continue;
		if (proc_same_image(p, time_ns, g->read_ns) &&
		    maps_have(g->maps, g->nr_maps, pc))
			return g;
	}
	return NULL;
}

/* Keeps a copy of an upload for finishing walks. */
static void proc_gen_push(struct rec_proc *p, const struct uwprof_map *km,
			  uint32_t nr, uint64_t read_ns)
{
	struct uwprof_map *c = malloc((nr ? nr : 1) * sizeof(*c));

	if (!c)
		return;
	memcpy(c, km, nr * sizeof(*c));
	free(p->gens[REC_GENS - 1].maps);
	memmove(&p->gens[1], &p->gens[0], (REC_GENS - 1) * sizeof(p->gens[0]));
	p->gens[0].maps = c;
	p->gens[0].nr_maps = nr;
	p->gens[0].read_ns = read_ns;
	p->gen_serial++;
}

static void proc_exec_seen(struct rec_proc *p, uint64_t time_ns)
{
	uint64_t *nv = realloc(p->exec_ns, (p->nr_execs + 1) * sizeof(*nv));

	if (!nv)
		return;
	p->exec_ns = nv;
	nv[p->nr_execs++] = time_ns;
}

/* Resumes the walk of 's' over its snapshot with these mappings. */
static struct uwprof_rec_sample *rec_finish(struct recorder *r, uint32_t pid,
					    const struct uwprof_map *km,
					    uint32_t nr,
					    const struct uwprof_rec_sample *s)
{
	struct rec_code code = { .pid = (pid_t)pid, .maps = km, .nr_maps = nr };
	struct uwprof_snap_req req = {
		.nr_maps = nr,
		.max_depth = r->o.depth,
		.no_fp = r->o.no_fp,
		.read_code = rec_read_code,
		.read_code_arg = &code,
	};
	struct uwprof_unwind_map *um = calloc(nr ? nr : 1, sizeof(*um));
	struct uwprof_rec_sample *out;
	uint32_t i;

	if (!um)
		return NULL;
	for (i = 0; i < nr; i++) {
		const struct rec_obj *o = km[i].object_id ?
					  &r->objs[km[i].object_id - 1] : NULL;

		um[i].start = km[i].start;
		um[i].end = km[i].end;
		um[i].bias = km[i].bias;
		um[i].flags = km[i].flags;
		if (o && o->tab)
			um[i].table = &o->tab->t;
		else
			um[i].flags |= UWPROF_MAP_NO_TABLE;
	}
	req.maps = um;
	out = uwprof_snap_finish(s, &req);
	free(um);
	return out;
}

/*
 * Writes a sample that carries a snapshot: finished with the mappings it
 * was taken under once the tool has them; as it came when 'final' and it
 * has none. Else it is kept waiting (returns 1), also when the finished
 * walk left those mappings: an upload read later may hold the rest
 * (*tag: the uploads already tried).
 */
static int rec_snapshot_out(struct recorder *r, const struct uwprof_rec_sample *s,
			    uint64_t *tag, int final)
{
	const struct rec_proc *p = proc_find(r, s->pid);
	struct uwprof_rec_sample *out = NULL;
	const struct rec_gen *g = NULL;
	struct uwprof_snap_view v;
	int ok = !uwprof_snap_parse(s, &v);

	if (ok && p)
		g = proc_gen_at(p, s->time_ns, v.sn->pc,
				final ? UINT64_MAX : r->horizon_ns);
	if (ok && !g && !final)
		return 1;
	if (g && !final && *tag == p->gen_serial)
		return 1;
	if (g)
		out = rec_finish(r, s->pid, g->maps, g->nr_maps, s);
	if (out && !final &&
	    (out->flags & UWPROF_SAMPLE_STOP_MASK) == UWPROF_STOP_NO_MAP) {
		*tag = p->gen_serial;
		free(out);
		return 1;
	}
	if (out) {
		r->snap_finished++;
	} else {
		r->snap_unfinished++;
		out = uwprof_snap_strip(s);
	}
	rec_sample_out(r, out ? out : s);
	free(out);
	return 0;
}

struct rec_take {
	struct recorder	*r;
	int		final;
};

static int rec_take_queued(void *arg, struct uwprof_snap_queued *e)
{
	struct rec_take *t = arg;

	if (rec_snapshot_out(t->r, e->s, &e->tag, t->final))
		return 1;
	free(e->s);
	return 0;
}

/* Finishes the queued samples of 'pid' (0: all) that now can be. */
static void rec_snapshots_flush(struct recorder *r, uint32_t pid, int final)
{
	struct rec_take t = { .r = r, .final = final };

	uwprof_snap_queue_take(&r->snapq, pid, rec_take_queued, &t);
}

/* A sample with a snapshot: out now if it can be finished, else queued. */
static void rec_snapshot_sample(struct recorder *r,
				const struct uwprof_rec_sample *s)
{
	uint64_t tag = 0;

	if (!rec_snapshot_out(r, s, &tag, 0))
		return;
	if (uwprof_snap_queue_add(&r->snapq, s))
		rec_snapshot_out(r, s, &tag, 1);	/* queue full: as it is */
}

/* Whether the process's executable mappings still are those in 'pm'. */
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

/*
 * Reads the process's executable mappings, makes sure every object has an
 * OBJECT record (and a table in the module), uploads the list and stores
 * a MAPS snapshot. Returns 0, 1 when the mappings changed while they were
 * uploaded (an exec between the read and MAPS_SET leaves the module with
 * the old image's list: read again), -ESRCH when the process is gone, or
 * -errno.
 */
static int proc_upload_once(struct recorder *r, struct rec_proc *p)
{
	struct uwprof_map *km = NULL;
	struct uwprof_pf_map *fm = NULL;
	struct uwprof_pm pm;
	char comm[64];
	uint32_t n = 0;
	size_t i;
	int ret, stopped = 0;

	/*
	 * The name is read next to the time the record carries: between this
	 * and the end of the upload the process may exec (and is then read
	 * again), and its new name must not be dated before the exec.
	 */
	uwprof_pm_comm((pid_t)p->pid, (pid_t)p->pid, comm, sizeof(comm));
	p->last_read_ns = mono_ns();
	p->refresh = 0;
	p->urgent = 0;
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
	/*
	 * With --hold-exec a command's process waits (SIGSTOP) while new
	 * objects are compiled; others are never ours to stop. Without it,
	 * samples taken meanwhile carry snapshots and are finished here.
	 */
	if (r->o.mode == MODE_CMD && r->o.hold_exec)
		for (i = 0; i < pm.n && !stopped; i++)
			if (pm.v[i].kind != UWPROF_PM_ANON && !obj_lookup(r, &pm.v[i]))
				stopped = !kill((pid_t)p->pid, SIGSTOP);
	km = calloc(pm.n, sizeof(*km));
	fm = calloc(pm.n, sizeof(*fm));
	if (!km || !fm) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < pm.n; i++) {
		const struct uwprof_pm_entry *e = &pm.v[i];
		struct rec_obj *o = NULL;
		uint64_t bias = e->start - e->offset;
		int tab = 0;

		if (e->kind == UWPROF_PM_FILE)
			o = obj_for_file(r, (pid_t)p->pid, e);
		else if (e->kind == UWPROF_PM_VDSO)
			o = obj_for_vdso(r, (pid_t)p->pid, e);
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
		km[n].start = e->start;
		km[n].end = e->end;
		km[n].bias = bias;
		km[n].object_id = tab ? o->id : 0;
		km[n].flags = tab ? 0 : UWPROF_MAP_NO_TABLE;
		fm[n].start = e->start;
		fm[n].end = e->end;
		fm[n].offset = e->offset;
		fm[n].bias = bias;
		fm[n].object_id = o ? o->id : 0;
		fm[n].flags = km[n].flags;
		n++;
	}
	if (p->maps && p->nr_maps == n && !memcmp(p->maps, km, n * sizeof(*km))) {
		ret = 0;	/* unchanged: nothing to upload or store */
		goto out;
	}
	ret = uwprof_dev_maps_set(&r->dev, p->pid, km, n);
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
	rec_out(r, uwprof_pfw_maps(&r->w, p->last_read_ns, p->pid, comm, fm, n));
	free(p->pf_maps);
	p->pf_maps = fm;
	p->nr_pf_maps = n;
	fm = NULL;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	if (comm[0] && !p->first_name_ns)
		p->first_name_ns = p->last_read_ns;
	r->maps_uploads++;
	free(p->maps);
	p->maps = km;
	p->nr_maps = n;
	km = NULL;
	if (r->o.snapshot_size)
		proc_gen_push(p, p->maps, n, p->last_read_ns);
	ret = pm_same((pid_t)p->pid, &pm) ? 0 : 1;
out:
	if (stopped)
		kill((pid_t)p->pid, SIGCONT);
	free(km);
	free(fm);
	uwprof_pm_free(&pm);
	return ret;
}

static int proc_upload(struct recorder *r, struct rec_proc *p)
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
				if (!proc_find(r, c))
					found[n++] = c;
			}
		}
		closedir(d);
	}
	for (i = 0; i < n; i++) {
		struct rec_proc *p = proc_get(r, found[i]);

		if (p && p->ours == 1)
			p->refresh = 1;
	}
}

/*
 * Re-reads the processes that asked for it (and a command's, every
 * REC_POLL_NS). Returns how long the recorder may sleep before a refresh
 * held back by REC_REFRESH_MIN_NS is due, in ms, at most 'max_ms': the
 * record that asked for it will not come again to wake the recorder.
 */
static int procs_refresh(struct recorder *r, int force, int max_ms)
{
	uint64_t now = mono_ns(), wait_ns = (uint64_t)max_ms * 1000000ULL;
	size_t i;

	if (r->o.mode == MODE_CMD && !force &&
	    now - r->children_ns >= REC_POLL_NS) {
		procs_find_children(r);
		r->children_ns = now;
	}

	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];

		if (p->ours != 1 || p->gone)
			continue;
		if (r->o.mode == MODE_CMD && !force) {
			uint64_t v = uwprof_pm_vsize((pid_t)p->pid);

			if (v && v != p->vsize) {
				p->vsize = v;
				p->refresh = 1;
			}
		}
		if (!p->refresh && !(r->o.mode == MODE_CMD &&
				     now - p->last_read_ns >= REC_POLL_NS))
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
		proc_upload(r, p);
	}
	return (int)((wait_ns + 999999) / 1000000);
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
	uwprof_pm_comm((pid_t)p->pid, (pid_t)tid, comm, sizeof(comm));
	t = mono_ns();
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
	struct rec_proc *c = proc_get(r, f->pid), *pp = proc_find(r, f->ppid);

	if (!c || !pp || pp->ours != 1)
		return;
	c->ours = 1;
	if (!pp->pf_maps || c->pf_maps)
		return;
	rec_out(r, uwprof_pfw_maps(&r->w, f->time_ns, c->pid, pp->comm,
				   pp->pf_maps, pp->nr_pf_maps));
	if (r->o.snapshot_size && pp->maps)
		proc_gen_push(c, pp->maps, pp->nr_maps, f->time_ns);
}

static int on_record(const struct uwprof_rec_hdr *h, uint32_t ring, void *priv)
{
	struct recorder *r = priv;
	struct rec_proc *p;

	switch (h->type) {
	case UWPROF_REC_SAMPLE: {
		const struct uwprof_rec_sample *s = (const void *)h;
		uint32_t stop = s->flags & UWPROF_SAMPLE_STOP_MASK, i;

		p = proc_get(r, s->pid);
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
		p = proc_get(r, u->pid);
		if (p && p->ours == 1 && !proc_has_addr(p, u->addr)) {
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
		p = e->exec ? proc_get(r, e->pid) : proc_find(r, e->pid);
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
			proc_exec_seen(p, e->time_ns);
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
	char		*name;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
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
	size_t n = 0, cap = 0, nips = 0, nout = 0, i, j;
	uint64_t *ips = NULL;
	char line[512];
	FILE *f;

	if (!r->kips.n)
		return;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256], mod[128];
		int k;

		mod[0] = 0;
		k = sscanf(line, "%llx %c %255s %127s", &a, &type, name, mod);
		if (k < 3 || !a)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (n == cap) {
			struct ksym_ent *nv;

			cap = cap ? cap * 2 : 65536;
			nv = realloc(v, cap * sizeof(*nv));
			if (!nv)
				goto out;
			v = nv;
		}
		v[n].addr = a;
		if (k == 4)
			k = asprintf(&v[n].name, "%s %s", name, mod);
		else
			k = asprintf(&v[n].name, "%s", name);
		if (k < 0)
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
		while (j + 1 < n && v[j + 1].addr <= ips[i])
			j++;
		if (v[j].addr > ips[i])
			continue;
		if (nout && out[nout - 1].addr == v[j].addr)
			continue;
		out[nout].addr = v[j].addr;
		out[nout].size = j + 1 < n ? v[j + 1].addr - v[j].addr : 0;
		out[nout].name = v[j].name;
		nout++;
	}
	rec_out(r, uwprof_pfw_ksyms(&r->w, out, nout));
out:
	fclose(f);
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
		return UWPROF_REC_EXIT_NO_MODULE;
	if (e == -EPERM || e == -EACCES)
		return UWPROF_REC_EXIT_PERM;
	if (e == -EBUSY)
		return UWPROF_REC_EXIT_BUSY;
	return UWPROF_REC_EXIT_ERROR;
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
	struct pollfd p[2] = {
		{ .fd = uwprof_rreader_fd(&r->rr), .events = POLLIN },
		{ .fd = r->sigfd, .events = POLLIN },
	};

	if (poll(p, 2, ms) > 0 && (p[1].revents & POLLIN))
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
			return UWPROF_REC_EXIT_TARGET;
		}
		p = proc_get(r, r->o.pids[i]);
		if (!p)
			return UWPROF_REC_EXIT_ERROR;
		ret = proc_upload(r, p);
		if (ret == -ESRCH) {
			fprintf(stderr,
				"uwprof record: process %u: no such process (its maps vanished)\n",
				r->o.pids[i]);
			return UWPROF_REC_EXIT_TARGET;
		}
		if (ret) {
			fprintf(stderr,
				"uwprof record: process %u: reading its mappings: %s\n",
				r->o.pids[i], strerror(-ret));
			return ret == -EACCES || ret == -EPERM ?
			       UWPROF_REC_EXIT_PERM : UWPROF_REC_EXIT_ERROR;
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
		p = proc_get(r, (uint32_t)pid);
		if (p && p->ours == 1)
			proc_upload(r, p);
	}
	closedir(d);
}

static int record_run(struct recorder *r)
{
	struct uwprof_stats st;
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
		return UWPROF_REC_EXIT_ERROR;
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
		return UWPROF_REC_EXIT_PERM;
	}
	if (!r->o.event)
		r->o.event = (r->dev.ver.caps & UWPROF_CAP_HW_CYCLES) ?
			     UWPROF_PF_EV_CYCLES : UWPROF_PF_EV_CPU_CLOCK;
	if (r->o.event == UWPROF_PF_EV_CYCLES &&
	    !(r->dev.ver.caps & UWPROF_CAP_HW_CYCLES)) {
		fprintf(stderr,
			"uwprof record: -e cycles: no hardware cycles event on this machine (use -e cpu-clock)\n");
		return UWPROF_REC_EXIT_ERROR;
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
		return UWPROF_REC_EXIT_OUTPUT;
	}
	if (r->o.mode == MODE_PIDS) {
		code = upload_pids(r);
		if (code)
			goto abort;
	} else if (r->o.mode == MODE_ALL) {
		upload_all(r);
	} else if (r->o.mode == MODE_CMD) {
		prewarm_cmd(r);
		/* Orphaned grandchildren stay in the tree, and get reaped. */
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		ret = spawn_cmd(r, &go_w, &err_r);
		if (ret) {
			fprintf(stderr, "uwprof record: fork: %s\n", strerror(-ret));
			code = UWPROF_REC_EXIT_ERROR;
			goto abort;
		}
		proc_get(r, (uint32_t)r->child);
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
		code = UWPROF_REC_EXIT_ERROR;
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
			code = UWPROF_REC_EXIT_TARGET;
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
		wait_ms = procs_refresh(r, 0,
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
	procs_refresh(r, 1, 0);
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
		return UWPROF_REC_EXIT_OUTPUT;
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
	return r->output_failed ? UWPROF_REC_EXIT_OUTPUT : UWPROF_REC_EXIT_OK;

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
		return UWPROF_REC_EXIT_ERROR;
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
		return ret > 0 ? UWPROF_REC_EXIT_OK : UWPROF_REC_EXIT_USAGE;
	}
	ret = record_run(r);
	rec_free(r);
	free(r);
	return ret;
}

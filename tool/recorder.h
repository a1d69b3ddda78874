/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's own parts, shared by the files of 'uwprof record':
 *
 *	record.c	options, the run loop, summary
 *	rec_drain.c	ring records: samples to the file, process events
 *	rec_launch.c	targets made ready: -p/-a uploads, the command
 *			forked and let go
 *	rec_output.c	the profile file's header, kernel symbols, stats
 *	rec_objects.c	objects: tables compiled or cached, uploaded, stored
 *	rec_procs.c	processes: which are profiled, their mappings read,
 *			uploaded and stored
 *	rec_snapshots.c	walks finished from stack snapshots
 *	rec_jit.c	JIT symbols (perf maps, jitdump files) stored
 *	rec_python.c	Python frames' code objects read and stored
 *	rec_sink.c	where records go: the file, the agent's windows
 *	rec_session.c	the session: signals, device, START, the rings,
 *			the loop's wait (record and agent share them)
 *
 * Not an interface of the tool: everything here belongs to one recording
 * (or the agent's one continuous session).
 */
#ifndef UWPROF_TOOL_RECORDER_H
#define UWPROF_TOOL_RECORDER_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "device.h"
#include "elf_file.h"
#include "jitmap.h"
#include "procmaps.h"
#include "profile_file.h"
#include "python.h"
#include "ring_reader.h"
#include "snapshot.h"
#include "table.h"
#include "tablecache.h"
#include "u64map.h"
#include "vec.h"

#define REC_DEFAULT_FREQ	999
#define REC_DEFAULT_DEPTH	4096
/*
 * Stack bytes a sample of not yet uploaded code carries. The copy ends at
 * the stack's last readable page, so most cost a few KiB whatever the
 * bound; a compiler's recursion (cc1's gimplifier) needs more than 16 KiB
 * while its large table is being compiled.
 */
#define REC_DEFAULT_SNAPSHOT	UWPROF_MAX_SNAPSHOT
/* --off-cpu-min: waits shorter than a scheduler tick are rarely the story */
#define REC_DEFAULT_OFF_CPU_MIN_NS	1000000ULL
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
 * The same with MMAP records, which tell of new mappings (and EXIT and FORK
 * records of new processes) as they happen: only lost records are left to
 * catch.
 */
#define REC_POLL_RECORDS_NS	2000000000ULL
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
	int		no_python;	/* walk no CPython frames */
	int		event;		/* enum uwprof_pf_event, 0: default */
	int		quiet;
	int		hold_exec;	/* stop the command's processes at exec */
	uint32_t	snapshot_size;	/* stack bytes per snapshot, 0: none */
	int		off_cpu;	/* off-CPU samples too */
	/* agent: its profiles keep the eval loop's frame before Python's */
	int		python_native;
	uint64_t	off_cpu_min_ns;	/* shorter blocks leave no sample */
	const char	*output;
	const char	*cache_dir;
	const char	*cgroup;	/* --cgroup: the module's filter, or NULL */
	const char	*comm;		/* --comm: likewise, 1 to 15 bytes */
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
	uint64_t	unused_ns;	/* first prune no process mapped it, 0 */
	int		stale;		/* its file is not the one mapped now */
	/*
	 * The file's ctime and size when it was read: once no process maps
	 * it, its inode number may be given to another file.
	 */
	struct timespec	ctime;
	uint64_t	size;
};

/* A JIT symbol file of a process: open while it lives, read to its end later. */
struct rec_jit {
	int		fd;		/* -1: not open */
	int		dump;		/* jitdump, else perf map */
	int		refused;	/* not the owner's, or a symlink: never */
	int		warned;
	struct uwprof_jit_pos pos;
};

/*
 * How long the agent keeps an object no process maps: a program run again
 * and again (a build's compiler, a cron job, a health check) finds its
 * tables still uploaded instead of reading, compiling or uploading them
 * anew each time; what is gone for good still leaves within a minute or
 * two.
 */
#define REC_OBJ_KEEP_NS		(60ULL * 1000000000ULL)
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

/* An executable mapping from an MMAP record (rec_mmaps.c). */
struct rec_mm {
	struct uwprof_pm_entry e;
	uint64_t	time_ns;
	int		exec;		/* made while an exec loaded its image */
};

struct rec_proc {
	uint32_t	pid;
	int		ours;		/* 1 profiled, 0 not, -1 not decided */
	int		refresh;	/* re-read and upload its mappings */
	int		uploaded;	/* MAPS_SET was called for it */
	int		urgent;		/* ... at once: code runs in a mapping it lacks */
	int		gone;
	uint64_t	last_read_ns;
	uint64_t	first_name_ns;	/* its earliest name record, 0: none */
	uint32_t	execs;		/* exec records seen */
	uint64_t	vsize;		/* size at the last check, in pages */
	uint64_t	start_time;	/* ticks since boot, read before its maps */
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
	struct rec_jit	jit_map;
	struct rec_jit	jit_dump;
	struct uwprof_jit_owner jit_owner;	/* read while it lived */
	int		jit_owner_ok;
	int		jit_done;	/* exited: its files read to the end */
	char		comm[64];
	char		*cgroup;	/* cgroup v2 path last recorded, or NULL */
	struct uwprof_py_proc *py;	/* its CPython as last read, or NULL */
	/* MMAP records of it, and whether /proc was read since its exec */
	struct rec_mm	*mm;
	size_t		nr_mm, cap_mm;
	int		image_read;
	/* execs that ended an image never read, and an exit: rebuilt at the
	 * end of the drain */
	uint64_t	*mm_unread;
	size_t		nr_mm_unread, cap_mm_unread;
	int		mm_exit;
};

struct rec_pycache;

struct recorder {
	struct rec_opts	o;
	struct uwprof_dev dev;
	struct uwprof_rreader rr;
	struct uwprof_pfw w;
	struct uwprof_tcache cache;
	struct uwprof_py_cache py_cache;	/* CPython and C library files */
	const char	*name;		/* "uwprof record", for messages */
	int		no_file;	/* agent: records go to the tees only */
	struct uwprof_pfw **tees;	/* agent: the open windows */
	size_t		nr_tees;
	void		*vdso_image;	/* agent: kept to open windows with */
	size_t		vdso_size;
	uint16_t	arch;
	uint16_t	elf_machine;
	pid_t		self;
	pid_t		child;
	int		cgroup_fd;	/* --cgroup until START, else -1 */
	char		cgroup_path[1024];	/* --cgroup as /proc/PID/cgroup says */
	int		child_status;
	int		nice0;		/* our nice value before raising it */
	int		child_done;
	int		sigfd;
	int		stop;
	int		hup_reload;	/* agent --config: SIGHUP sets reload, not stop */
	int		reload;
	int		output_failed;
	uint64_t	t_start, t_end;
	struct rec_obj	*objs;		/* in order of id */
	size_t		nr_objs, cap_objs;
	uint64_t	last_obj_id;	/* ids are never used twice */
	uint64_t	objects_dropped;
	struct rec_obj	*vdso;
	struct rec_proc	*procs;
	size_t		nr_procs, cap_procs;
	size_t		last_proc;
	struct uwprof_u64map proc_idx;	/* pid -> index in procs */
	int		proc_idx_bad;	/* out of memory: search procs */
	uint64_t	children_ns;	/* last look for a command's children */
	struct uwprof_u64map tids;	/* pid << 32 | tid named in the file */
	uint64_t	last_tid;	/* the last key found in tids, or 0 */
	struct uwprof_u64map kips;	/* kernel ips sampled (a set) */
	/* Counters for the summary and the STATS record. */
	uint64_t	samples, lost, filtered, unknown, exits, bad_recs;
	uint64_t	stops[UWPROF_PF_STOP__COUNT];
	uint64_t	off_cpu_samples, off_cpu_ns;	/* of them in 'samples' */
	/* Samples with snapshots: waiting, finished, written as they came. */
	struct uwprof_snap_queue snapq;
	uint64_t	snap_finished, snap_unfinished;
	uint64_t	horizon_ns;	/* every exec before it was seen */
	uint64_t	maps_uploads, objects_no_table;
	/* UWPROF_START_MMAP is on; MMAP records read; images rebuilt */
	int		mmap_records_on;
	int		mm_pending;	/* some rec_proc has images to rebuild */
	uint64_t	mmap_records, mm_images;
	uint64_t	jit_syms;	/* JIT symbols stored */
	/* Python code objects read per process (rec_python.c) */
	struct rec_pycache **pycs;
	size_t		nr_pycs, cap_pycs;
	/* ... stored; not read (gone, garbage, limit); reused by another */
	uint64_t	py_codes, py_failed, py_stale;
	/* quiet (the agent): interpreters said not walked, by (path, why) */
	struct uwprof_u64map py_said;
	int		warned_mem, warned_maps;
};

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* rec_output.c */
/* Notes a write error of the profile file (said once); returns 'ret'. */
int rec_out(struct recorder *r, int ret);
int rec_output_open(struct recorder *r, uint32_t start_flags);
void rec_ksyms_out(struct recorder *r);
void rec_stats_out(struct recorder *r, const struct uwprof_stats *st);

/* record.c: option values both front-ends take (-1: bad) */
int rec_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
int rec_parse_pids(struct rec_opts *o, const char *arg);
/* --cgroup (a path from the root, 'cgroup' set) or --comm, into 'o'. */
int rec_parse_filter(struct rec_opts *o, int cgroup, const char *v);

/* rec_sink.c: a record to the file (unless no_file) and to every tee */
void rec_w_object(struct recorder *r, const struct uwprof_pf_obj_fixed *f,
		  const char *path, const void *image, uint64_t image_size);
void rec_w_maps(struct recorder *r, uint64_t time_ns, uint32_t pid,
		const char *comm, const struct uwprof_pf_map *maps, uint32_t nr);
void rec_w_sample(struct recorder *r, const struct uwprof_rec_sample *s);
void rec_w_lost(struct recorder *r, uint64_t time_ns, uint32_t cpu,
		uint64_t count);
void rec_w_exit(struct recorder *r, uint64_t time_ns, uint32_t pid,
		uint32_t exec);
void rec_w_cgroup(struct recorder *r, uint64_t time_ns, uint32_t pid,
		  const char *path);
void rec_w_pyinterp(struct recorder *r, const struct uwprof_pf_pyinterp *p);
void rec_w_thread(struct recorder *r, uint64_t time_ns, uint32_t pid,
		  uint32_t tid, const char *comm);
void rec_w_jitsyms(struct recorder *r, uint64_t time_ns, uint32_t pid,
		   uint32_t source, const struct uwprof_pf_jitsym *syms,
		   uint64_t nr);
void rec_w_pycode(struct recorder *r, const struct uwprof_pf_pycode *c);

/* rec_session.c */
/* Signals, the device, the START flags. Returns 0 or the exit status. */
int rec_setup(struct recorder *r, uint32_t *flagsp);
/* START, the rings mapped and their reader running; 0 or exit status. */
int rec_sampling_start(struct recorder *r, uint32_t flags);
/* kernel.perf_event_max_sample_rate in Hz; 0 when it cannot be read. */
unsigned long rec_kernel_max_rate(void);
/* Polls the device and the signals for up to 'ms' (extra: one more fd). */
void rec_wait_events(struct recorder *r, int ms, int extra_fd);
void rec_free(struct recorder *r);

/* rec_output.c: a HEADER record's fields for this session (no cmdline) */
struct rec_hdr {
	struct uwprof_pfw_header_in h;
	char		host[256];
	char		release[65];
};

void rec_header_fill(struct recorder *r, uint32_t start_flags,
		     struct rec_hdr *hd);

/* rec_drain.c */
void rec_drain(struct recorder *r);

/* rec_launch.c */
/* The command's pipes: the go-ahead to exec, and exec's errno back. */
struct rec_launch {
	int	go_w;
	int	err_r;
};

int rec_targets_ready(struct recorder *r, struct rec_launch *l);
int rec_cmd_go(struct recorder *r, struct rec_launch *l);
void rec_targets_abort(struct recorder *r, struct rec_launch *l);
void rec_reap(struct recorder *r);
int rec_pids_alive(const struct recorder *r);

/* rec_objects.c */
struct rec_obj *rec_obj_lookup(struct recorder *r,
			       const struct uwprof_pm_entry *e);
struct rec_obj *rec_obj_for_file(struct recorder *r, pid_t pid,
				 const struct uwprof_pm_entry *e);
struct rec_obj *rec_obj_for_vdso(struct recorder *r, pid_t pid,
				 const struct uwprof_pm_entry *e);
void rec_prewarm_cmd(struct recorder *r);
void rec_objs_replay(struct recorder *r, struct uwprof_pfw *w);
struct rec_obj *rec_obj_by_id(struct recorder *r, uint64_t id);
void rec_obj_tables_free(struct rec_obj *o);
/*
 * Drops the objects no known process has mapped for REC_OBJ_KEEP_NS
 * (their tables from the module and from memory); 'used' holds the ids
 * mapped now, sorted.
 */
void rec_objs_drop_unused(struct recorder *r, uint64_t now_ns,
			  const uint64_t *used, size_t nr_used);

/* rec_procs.c */
/*
 * A thread's name and a time it had it: read on both sides of the time
 * stamp, since an exec may rename it in between (empty when gone).
 */
uint64_t rec_comm_at(pid_t pid, pid_t tid, char *comm, size_t len);
struct rec_proc *rec_proc_find(struct recorder *r, uint32_t pid);
struct rec_proc *rec_proc_get(struct recorder *r, uint32_t pid);
void rec_tids_forget(struct recorder *r);
int rec_maps_have(const struct uwprof_map *m, uint32_t nr, uint64_t addr);
int rec_proc_has_addr(const struct rec_proc *p, uint64_t addr);
int rec_proc_upload(struct recorder *r, struct rec_proc *p);
int rec_procs_refresh(struct recorder *r, int force, int max_ms);
void rec_procs_replay(struct recorder *r, struct uwprof_pfw *w);
void rec_procs_prune(struct recorder *r);

/* rec_snapshots.c */
void rec_sample_out(struct recorder *r, const struct uwprof_rec_sample *s);
/*
 * An image the process ran but /proc was never read for ('pm', from MMAP
 * records): its MAPS record dated 'read_ns', a time inside that image,
 * and a generation to finish its samples' walks with. 0 or -ENOMEM.
 */
int rec_proc_past_image(struct recorder *r, struct rec_proc *p,
			const struct uwprof_pm *pm, uint64_t read_ns,
			const char *comm);

/* rec_mmaps.c */
void rec_mmap_record(struct recorder *r, const struct uwprof_rec_mmap *m);
/* An exec of p at exec_ns, its exit: images to rebuild by rec_mm_flush(). */
void rec_mm_exec(struct recorder *r, struct rec_proc *p, uint64_t exec_ns);
void rec_mm_exit(struct recorder *r, struct rec_proc *p);
void rec_mm_flush(struct recorder *r);
void rec_mm_free(struct rec_proc *p);

void rec_proc_gen_push(struct rec_proc *p, const struct uwprof_map *km,
		       uint32_t nr, uint64_t read_ns);
void rec_proc_exec_seen(struct rec_proc *p, uint64_t time_ns);
void rec_snapshot_sample(struct recorder *r, const struct uwprof_rec_sample *s);
void rec_snapshots_flush(struct recorder *r, uint32_t pid, int final);

/* rec_jit.c */
void rec_jit_init(struct rec_proc *p);
/*
 * Opens the process's JIT symbol files not open yet ('pm': its mappings,
 * where a jitdump file shows; NULL: the perf map only).
 */
void rec_jit_look(struct recorder *r, struct rec_proc *p,
		  const struct uwprof_pm *pm);
/* Stores the symbols added to them since the last read. */
void rec_jit_read(struct recorder *r, struct rec_proc *p);
void rec_jit_close(struct rec_proc *p);
/* Its EXIT record: read what it published; after an exit, close for good. */
void rec_jit_exit(struct recorder *r, struct rec_proc *p, int exec);
/* End of recording: every profiled process's files read and closed. */
void rec_jit_finish(struct recorder *r);

/* rec_python.c */
/*
 * The code objects of a drained sample's Python frames not read yet for
 * its process (p->py found) read now and stored as PYCODE records.
 */
void rec_py_sample(struct recorder *r, struct rec_proc *p,
		   const struct uwprof_rec_sample *s);
/* Its EXIT record: what was read is forgotten (an exec: a new image). */
void rec_py_exit(struct recorder *r, uint32_t pid, uint64_t time_ns, int exec);
/* Frees what is kept of processes that exited and are forgotten. */
void rec_py_prune(struct recorder *r);
/* A new window gets the PYCODE records of the processes alive. */
void rec_py_replay(struct recorder *r, struct uwprof_pfw *w);
/*
 * What uwprof_py_find() says of p's interpreter ('now'), read with its
 * mappings at 'time_ns': kept in p->py, and stored as a PYINTERP record
 * (and said on stderr when it cannot be walked) when p had none or
 * another before.
 */
void rec_py_found(struct recorder *r, struct rec_proc *p, uint64_t time_ns,
		  const struct uwprof_py_proc *now);
/* A new window gets p's PYINTERP record, if it runs CPython. */
void rec_py_interp_replay(struct recorder *r, const struct rec_proc *p,
			  uint64_t time_ns, struct uwprof_pfw *w);
void rec_py_free(struct recorder *r);

#endif /* UWPROF_TOOL_RECORDER_H */

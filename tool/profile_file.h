/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The uwprof profile file ("uwprof.data"): its on-disk format, the writer
 * used by 'uwprof record' and the reader used by every command that reports
 * from a file. Owns the format; nothing else writes or parses these bytes.
 *
 * Layout. Little-endian, 8-byte aligned, versioned:
 *
 *	struct uwprof_pf_file_hdr	(16 bytes: magic, version, hdr_size)
 *	record, record, ...		until end of file
 *
 * Every record starts with struct uwprof_pf_rec (type, size) where 'size'
 * is the whole record including that header, a multiple of 8. Readers skip
 * record types they do not know (newer writers may add types; a change to
 * an existing record's layout bumps UWPROF_PF_VERSION). The first record is
 * always UWPROF_PF_HEADER. Inside a record, a "string" is a __u32 byte
 * count followed by that many bytes (no NUL, no alignment); a "blob" is a
 * __u64 byte count followed by the bytes. The record ends with zero padding
 * to its 'size'. Fixed parts below are naturally aligned from the record
 * start.
 *
 * Records (payload after the 8-byte record header):
 *
 *  HEADER	struct uwprof_pf_hdr_fixed, then strings hostname, kernel
 *		release (uname -r), command line (the profiled command's
 *		argv joined by single spaces; empty for -a / -p).
 *  OBJECT	struct uwprof_pf_obj_fixed, then string path, then blob image
 *		(the whole ELF image for the vDSO, which is not on disk; empty
 *		for objects on disk).
 *  MAPS	struct uwprof_pf_maps_fixed, then nr_maps struct uwprof_pf_map
 *		(8-byte aligned: the fixed part is 24 bytes), then string comm.
 *		A process's executable mappings as read from /proc/PID/maps at
 *		'time_ns'; later MAPS of the same pid replace earlier ones
 *		(dlopen, exec). See uwprof_pf_maps_for() for which applies to a
 *		sample.
 *  SAMPLES	struct uwprof_pf_samples_fixed, then nr_samples + nr_stacks
 *		entries of variable length (below) in any order, then zero
 *		padding: the samples, and the definitions of the stacks they
 *		are the first to have. Version 2.
 *  SAMPLE	struct uwprof_pf_sample_fixed, then (nr_kernel + nr_user)
 *		__u64 ips: kernel frames first, then user frames leaf first,
 *		exactly as the module's UWPROF_REC_SAMPLE. One sample with its
 *		whole stack. Version 1 (still read in version 2; no longer
 *		written).
 *  LOST	struct uwprof_pf_lost_rec: samples (or other module records)
 *		the kernel dropped because a ring was full.
 *  EXIT	struct uwprof_pf_exit_rec: a process exited or exec'd.
 *  THREAD	struct uwprof_pf_thread_fixed, then string comm: a thread's
 *		name as seen at 'time_ns'.
 *  KSYMS	__u64 count, then per symbol: __u64 addr, __u64 size, string
 *		name ("name" or "name [module]"), each entry padded to 8 bytes.
 *		Only the kernel symbols that sampled kernel ips fall in; only
 *		with 'record --kernel' and a readable /proc/kallsyms.
 *  JITSYMS	struct uwprof_pf_jit_fixed, then 'count' entries: __u64 start,
 *		__u64 size, string name, each entry padded to 8 bytes. Symbols
 *		of JIT-compiled code that process 'pid' published (perf map or
 *		jitdump), in the order it published them: a later symbol over
 *		an earlier one's range replaces it there. Added without a
 *		version bump: older readers skip the record (their reports
 *		leave JIT frames unnamed).
 *  CGROUP	struct uwprof_pf_cgroup_fixed, then string path: the cgroup v2
 *		path of process 'pid' (the "0::" line of /proc/PID/cgroup) as
 *		read at 'time_ns', written when the recorder first reads the
 *		process and whenever it finds it moved. Added without a
 *		version bump: older readers skip the record.
 *  PYCODE	struct uwprof_pf_pycode_fixed, then strings qualname and
 *		filename (UTF-8), then blob linetable: a CPython code object
 *		of process 'pid' that samples' Python frames (UWPROF_IP_PYTHON
 *		pairs) name by its address and fingerprint (the low 24 bits
 *		of its size in code units), read from the live process at
 *		'time_ns', soon after the samples: the line of a frame's
 *		instruction comes from the location table (co_linetable,
 *		CPython 3.11 to 3.14 format) when reporting. The same address
 *		and fingerprint may name another object later (freed and
 *		reused, or after an exec): a sample takes the first record
 *		at or after its time, else the last before. Added without a
 *		version bump: older readers skip the record (their reports
 *		leave Python frames unnamed).
 *  PYINTERP	struct uwprof_pf_pyinterp_fixed, then strings path and
 *		reason: an interpreter the recorder found in process 'pid'
 *		when it read its mappings at 'time_ns' (at attach, exec or
 *		dlopen), whether its frames are walked and, if not, why
 *		(the version is not supported, the build is free-threaded,
 *		its C library does not describe its threads, ...). Written
 *		once per process and interpreter, again only when what was
 *		found changes (an exec into another interpreter). 'path' is
 *		the interpreter's file as the process maps it. Added
 *		without a version bump: older readers skip the record.
 *  STATS	struct uwprof_pf_stats: totals at the end of recording.
 *  END		no payload; always the last record, written by the commit,
 *		so a file cut at a record boundary is still seen as truncated.
 *  OFF_CPU	an off-CPU sample (record --off-cpu): laid out as SAMPLE, with
 *		UWPROF_SAMPLE_OFF_CPU in its flags and the nanoseconds the
 *		thread was off CPU as its period. A type of its own, so that
 *		readers older than it skip these samples instead of counting
 *		them as CPU time; a SAMPLE record never carries the flag.
 *		Version 1, like SAMPLE; in version 2 an off-CPU sample is a
 *		SAMPLES entry whose stack has UWPROF_SAMPLE_OFF_CPU.
 *
 * SAMPLES entries. Each starts with one byte of UWPROF_PF_SMP_* bits,
 * UWPROF_PF_SMP_ENTRY always among them (so that padding is never taken
 * for an entry); the numbers after it are unsigned LEB128, and a "delta"
 * is the zigzag-coded signed difference of two 64-bit values (modulo 2^64).
 *
 *  sample (UWPROF_PF_SMP_STACK clear): the stack id; the time as a delta
 *	from the previous sample entry's; then, each only when its bit is
 *	set, tid, pid, cpu and period. A field without its bit keeps the
 *	previous sample entry's value. Each SAMPLES record starts from time,
 *	tid, pid, cpu and period all zero.
 *  stack (UWPROF_PF_SMP_STACK set, no other field bit): id, flags (as
 *	uwprof_pf_sample_fixed.flags), nr_kernel, nr_user, parent (0: none,
 *	else the parent's id + 1), shared; then n - shared ips, where n is
 *	nr_kernel + nr_user. The stack's ips (kernel first, then user leaf
 *	first, as in SAMPLE) are those n - shared ips, followed by the last
 *	'shared' ips of the parent: the root side a stack has in common with
 *	an earlier one is not repeated. The own ips are stored from the root
 *	side toward the leaf, each as a delta from the ip after it (the
 *	first of the shared ones, or 0 when none).
 *
 * A stack id is defined once in a file, before (in file order) any entry
 * that names it, as a sample's stack or as a parent; ids need not be
 * dense. A number wider than its field (16 bits for nr_kernel and
 * nr_user, 32 for ids, flags, tid, pid, cpu and shared, 33 for parent,
 * 64 otherwise), an
 * id defined twice or named before its definition, or 'shared' beyond
 * either stack makes the file corrupt. A steady profile repeats a few
 * hundred stacks, so a sample costs a few bytes instead of its whole
 * stack, and a new stack that differs from the previous sample's near
 * the leaf only a few bytes more.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (the module's sample clock), except
 * uwprof_pf_hdr_fixed.start_realtime_ns, which lets a report print wall
 * time: wall = start_realtime_ns + (t - start_mono_ns).
 *
 * The writer writes to a temporary file next to the final name, then
 * fsyncs and renames it into place, so a reader never sees a partial file
 * under the final name. The reader maps the whole file, bounds-checks every
 * record and field, and fails with one message naming the file, the record
 * and its byte offset.
 */
#ifndef UWPROF_TOOL_PROFILE_FILE_H
#define UWPROF_TOOL_PROFILE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/uwprof.h>

#include "atomic_file.h"
#include "u64map.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the uwprof profile file is read and written on little-endian hosts only"
#endif

/* ---------------------------------------------------------------------
 * On-disk format
 * ------------------------------------------------------------------- */

#define UWPROF_PF_MAGIC		"UWPROF\x01\x00"	/* 8 bytes */
#define UWPROF_PF_VERSION	2	/* written; 1 is still read */
#define UWPROF_PF_VERSION_MIN	1

struct uwprof_pf_file_hdr {
	char		magic[8];	/* UWPROF_PF_MAGIC */
	uint32_t	version;	/* UWPROF_PF_VERSION */
	uint32_t	hdr_size;	/* sizeof(struct uwprof_pf_file_hdr) */
};

enum uwprof_pf_type {
	UWPROF_PF_HEADER	= 1,
	UWPROF_PF_OBJECT	= 2,
	UWPROF_PF_MAPS		= 3,
	UWPROF_PF_SAMPLE	= 4,
	UWPROF_PF_LOST		= 5,
	UWPROF_PF_EXIT		= 6,
	UWPROF_PF_THREAD	= 7,
	UWPROF_PF_KSYMS		= 8,
	UWPROF_PF_STATS		= 9,
	UWPROF_PF_END		= 10,
	UWPROF_PF_JITSYMS	= 11,
	UWPROF_PF_OFF_CPU	= 12,
	UWPROF_PF_SAMPLES	= 13,
	UWPROF_PF_CGROUP	= 14,
	UWPROF_PF_PYCODE	= 15,
	UWPROF_PF_PYINTERP	= 16,
};

struct uwprof_pf_rec {
	uint32_t	type;		/* enum uwprof_pf_type */
	uint32_t	size;		/* whole record, multiple of 8 */
};

/* The sampling event (uwprof_pf_hdr_fixed.event). */
enum uwprof_pf_event {
	UWPROF_PF_EV_CPU_CLOCK	= 1,	/* period in ns */
	UWPROF_PF_EV_CYCLES	= 2,	/* period in cycles */
};

/* uwprof_pf_hdr_fixed.flags */
#define UWPROF_PF_F_KERNEL	(1U << 0)	/* kernel frames were asked for */
#define UWPROF_PF_F_SYSTEM_WIDE	(1U << 1)	/* -a */
#define UWPROF_PF_F_NO_FP	(1U << 2)	/* no frame-pointer fallback */
#define UWPROF_PF_F_OFF_CPU	(1U << 3)	/* record --off-cpu */

struct uwprof_pf_hdr_fixed {
	uint16_t	arch;		/* enum uwprof_arch of the profiled machine */
	uint16_t	event;		/* enum uwprof_pf_event */
	uint32_t	freq_hz;
	uint32_t	flags;		/* UWPROF_PF_F_* */
	uint32_t	max_depth;	/* user frames per sample, at most */
	uint64_t	start_realtime_ns;	/* CLOCK_REALTIME at start */
	uint64_t	start_mono_ns;		/* CLOCK_MONOTONIC at the same moment */
	uint32_t	page_size;
	uint32_t	abi_version;	/* the module's UWPROF_ABI_VERSION */
};

/* uwprof_pf_obj_fixed.flags */
#define UWPROF_PF_OBJ_VDSO	(1U << 0)	/* image stored in the record */
#define UWPROF_PF_OBJ_NO_TABLE	(1U << 1)	/* no unwind info: fp fallback */
#define UWPROF_PF_OBJ_HASH_KEY	(1U << 2)	/* no build-id: key is a file hash */

#define UWPROF_PF_BUILD_ID_MAX	20

struct uwprof_pf_obj_fixed {
	uint64_t	object_id;	/* the id maps refer to (and TABLE_ADD used) */
	uint16_t	arch;		/* enum uwprof_arch */
	uint16_t	flags;		/* UWPROF_PF_OBJ_* */
	uint32_t	build_id_size;	/* 0 .. UWPROF_PF_BUILD_ID_MAX */
	uint8_t		build_id[UWPROF_PF_BUILD_ID_MAX];
	uint32_t	reserved;	/* zero */
};

/* One executable mapping: the same fields as struct uwprof_map, plus offset. */
struct uwprof_pf_map {
	uint64_t	start;		/* runtime [start, end) */
	uint64_t	end;
	uint64_t	offset;		/* file offset of 'start' (/proc/PID/maps) */
	uint64_t	bias;		/* object vaddr = ip - bias */
	uint64_t	object_id;	/* an OBJECT record's id; 0: anonymous code */
	uint32_t	flags;		/* UWPROF_MAP_* as uploaded */
	uint32_t	reserved;	/* zero */
};

struct uwprof_pf_maps_fixed {
	uint64_t	time_ns;	/* when /proc/PID/maps was read */
	uint32_t	pid;		/* thread-group id */
	uint32_t	nr_maps;	/* sorted by start, non-overlapping */
	uint32_t	reserved[2];	/* zero */
};

/*
 * Stop reasons in a sample's low flags byte: the module's first ten
 * (enum uwprof_stop, up to UWPROF_STATS_STOPS) as they are, then the
 * tool's own, then the module's later ones at numbers of the file's own
 * (the recorder translates them). SNAPSHOT_SHORT: a walk the tool
 * finished from the sample's stack snapshot needed stack beyond the copy.
 */
#define UWPROF_PF_STOP_SNAPSHOT_SHORT	10
/*
 * The sample was taken inside execve between the release of the old
 * image's address space and the new image's first instruction
 * (UWPROF_SAMPLE_EXEC): the module recorded no user frames, since the
 * registers and the mappings belong to different images.
 */
#define UWPROF_PF_STOP_EXEC		11
/* The module's UWPROF_STOP_TIME: the walk reached its time limit. */
#define UWPROF_PF_STOP_TIME		12
/* The module's UWPROF_STOP_PYTHON: the interpreter's chain did not read. */
#define UWPROF_PF_STOP_PYTHON		13
#define UWPROF_PF_STOP__COUNT		14

/*
 * uwprof_pf_sample_fixed.flags, besides the module's UWPROF_SAMPLE_*: the
 * module's walk stopped at code not uploaded yet, and the tool finished it
 * from the sample's stack snapshot (the snapshot itself is not stored).
 */
#define UWPROF_PF_SAMPLE_FINISHED	(1U << 16)

struct uwprof_pf_sample_fixed {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	cpu;
	uint32_t	flags;		/* UWPROF_SAMPLE_*: stop reason in the low byte */
	uint64_t	period;
	uint16_t	nr_kernel;
	uint16_t	nr_user;
	uint32_t	reserved;	/* zero */
};

struct uwprof_pf_samples_fixed {
	uint32_t	nr_samples;	/* sample entries that follow */
	uint32_t	nr_stacks;	/* stack entries among them */
};

/* A SAMPLES entry's first byte. */
#define UWPROF_PF_SMP_TID	(1U << 0)	/* sample: a tid follows */
#define UWPROF_PF_SMP_PID	(1U << 1)	/* sample: a pid follows */
#define UWPROF_PF_SMP_CPU	(1U << 2)	/* sample: a cpu follows */
#define UWPROF_PF_SMP_PERIOD	(1U << 3)	/* sample: a period follows */
#define UWPROF_PF_SMP_STACK	(1U << 6)	/* a stack definition */
#define UWPROF_PF_SMP_ENTRY	(1U << 7)	/* always set */

struct uwprof_pf_lost_rec {
	uint64_t	time_ns;	/* when the reader saw the count */
	uint32_t	cpu;
	uint32_t	reserved;	/* zero */
	uint64_t	count;
};

struct uwprof_pf_exit_rec {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	exec;		/* 1: exec'd, 0: exited */
};

struct uwprof_pf_thread_fixed {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	tid;
};

struct uwprof_pf_cgroup_fixed {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	reserved;	/* zero */
};

/* uwprof_pf_pyinterp_fixed.kind */
#define UWPROF_PF_INTERP_CPYTHON	1
/* uwprof_pf_pyinterp_fixed.flags */
#define UWPROF_PF_INTERP_WALKED	(1U << 0)	/* its frames are walked */

struct uwprof_pf_pyinterp_fixed {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	hexversion;	/* PY_VERSION_HEX (Py_Version); 0: not known */
	uint16_t	kind;		/* UWPROF_PF_INTERP_* */
	uint16_t	flags;		/* UWPROF_PF_INTERP_WALKED */
	uint32_t	reserved;	/* zero */
};

/* uwprof_pf_jit_fixed.source: where the symbols were read. */
#define UWPROF_PF_JIT_PERF_MAP	1	/* /tmp/perf-PID.map */
#define UWPROF_PF_JIT_DUMP	2	/* jit-PID.dump */

struct uwprof_pf_jit_fixed {
	uint64_t	time_ns;	/* when the file was read */
	uint64_t	count;		/* entries that follow */
	uint32_t	pid;
	uint32_t	source;		/* UWPROF_PF_JIT_* */
};

/* A location table larger than this makes a PYCODE record corrupt. */
#define UWPROF_PF_PYCODE_TABLE_MAX	(1U << 20)

struct uwprof_pf_pycode_fixed {
	uint64_t	time_ns;	/* when it was read */
	uint64_t	addr;		/* the code object in the process */
	uint32_t	pid;
	uint32_t	fingerprint;	/* UWPROF_IP_PY_FP of its frames */
	uint32_t	size;		/* ob_size: code units */
	int32_t		firstlineno;	/* co_firstlineno */
	int32_t		firsttraceable;	/* co_firsttraceable: code units */
	uint32_t	reserved;	/* zero */
};

/* Totals at the end of recording (from the module's STATS and the tool). */
struct uwprof_pf_stats {
	uint64_t	end_mono_ns;
	uint64_t	samples;	/* samples in the file */
	uint64_t	lost;		/* sum of the LOST records */
	uint64_t	filtered;	/* samples of processes not profiled (-- CMD) */
	uint64_t	events;		/* module: overflow-handler calls */
	uint64_t	frames;		/* module: user frames in samples */
	uint64_t	fp_frames;	/* module: frames found by fp fallback */
	uint64_t	unknown_maps;	/* module: UNKNOWN_MAP records */
	uint64_t	stop[16];	/* module: samples by enum uwprof_stop */
	uint64_t	objects;	/* OBJECT records */
	uint64_t	objects_no_table;
	uint64_t	maps_uploads;	/* MAPS records */
	uint64_t	skipped_throttle; /* module: over the walks' CPU budget */
	uint64_t	snapshots;	/* module: samples with stack snapshots */
	uint64_t	snapshot_bytes;	/* module: stack bytes in them */
	uint64_t	snapshots_finished; /* walks the tool finished from them */
	/* module: events stopped by the kernel's sample rate limit */
	uint64_t	kernel_throttles;
	uint64_t	reserved[3];	/* zero */
};

/* ---------------------------------------------------------------------
 * Reader: uwprof_pf_open() maps and checks the whole file and fills the
 * arrays of struct uwprof_pf; pointers (strings, ips, images) point into
 * the mapping, or for a version 2 file's ips into the stacks the reader
 * made whole, and stay valid until uwprof_pf_close(). Samples of the same
 * stack share its ips. Strings are NUL-terminated copies.
 * ------------------------------------------------------------------- */

struct uwprof_pf_header {
	uint16_t	arch;
	uint16_t	event;
	uint32_t	freq_hz;
	uint32_t	flags;
	uint32_t	max_depth;
	uint64_t	start_realtime_ns;
	uint64_t	start_mono_ns;
	uint32_t	page_size;
	uint32_t	abi_version;
	uint32_t	version;	/* the file's UWPROF_PF_VERSION */
	const char	*hostname;
	const char	*release;
	const char	*cmdline;
};

struct uwprof_pf_object {
	uint64_t	object_id;
	uint16_t	arch;
	uint16_t	flags;		/* UWPROF_PF_OBJ_* */
	uint32_t	build_id_size;
	uint8_t		build_id[UWPROF_PF_BUILD_ID_MAX];
	const char	*path;		/* "[vdso]" for the vDSO */
	const void	*image;		/* vDSO image, else NULL */
	uint64_t	image_size;
};

struct uwprof_pf_maps {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	nr_maps;
	const struct uwprof_pf_map *maps;	/* sorted by start */
	const char	*comm;
};

struct uwprof_pf_sample {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	cpu;
	uint32_t	flags;		/* UWPROF_SAMPLE_* */
	uint64_t	period;
	uint16_t	nr_kernel;
	uint16_t	nr_user;
	const uint64_t	*ips;		/* nr_kernel kernel ips, then nr_user user ips */
};

struct uwprof_pf_thread {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	tid;
	const char	*comm;
};

struct uwprof_pf_cgroup {
	uint64_t	time_ns;
	uint32_t	pid;
	const char	*path;
};

/* A PYINTERP record: read from the file, or handed to the writer. */
struct uwprof_pf_pyinterp {
	uint64_t	time_ns;
	uint32_t	pid;
	uint32_t	hexversion;
	uint16_t	kind;
	uint16_t	flags;
	const char	*path;		/* NUL-terminated */
	const char	*reason;	/* empty when walked */
};

struct uwprof_pf_ksym {
	uint64_t	addr;
	uint64_t	size;
	const char	*name;
};

/* One JIT symbol: read from a JITSYMS record, or handed to the writer. */
struct uwprof_pf_jitsym {
	uint64_t	start;
	uint64_t	size;
	const char	*name;		/* 'len' bytes, not NUL-terminated */
	uint32_t	len;
	uint32_t	pid;
};

/* A PYCODE record: read from the file, or handed to the writer. */
struct uwprof_pf_pycode {
	uint64_t	time_ns;
	uint64_t	addr;
	uint32_t	pid;
	uint32_t	fingerprint;
	uint32_t	size;
	int32_t		firstlineno;
	int32_t		firsttraceable;
	const char	*qualname;	/* NUL-terminated */
	const char	*filename;
	const uint8_t	*linetable;	/* in the mapping */
	uint32_t	linetable_len;
};

struct uwprof_pf {
	char		*path;
	const uint8_t	*data;		/* the mapped file */
	size_t		size;
	struct uwprof_pf_header hdr;
	struct uwprof_pf_object *objects;	/* file order */
	size_t		nr_objects;
	struct uwprof_pf_maps *maps;	/* sorted by (pid, time_ns), stable */
	size_t		nr_maps;
	struct uwprof_pf_sample *samples;	/* file order */
	size_t		nr_samples;
	struct uwprof_pf_exit_rec *exits;	/* file order */
	size_t		nr_exits;
	struct uwprof_pf_thread *threads;	/* file order */
	size_t		nr_threads;
	struct uwprof_pf_cgroup *cgroups;	/* file order */
	size_t		nr_cgroups;
	struct uwprof_pf_ksym *ksyms;	/* sorted by addr */
	size_t		nr_ksyms;
	struct uwprof_pf_jitsym *jitsyms;	/* every JITSYMS entry, file order */
	size_t		nr_jitsyms;
	struct uwprof_pf_pycode *pycodes;	/* file order */
	size_t		nr_pycodes;
	struct uwprof_pf_pyinterp *pyinterps;	/* file order */
	size_t		nr_pyinterps;
	uint64_t	lost;		/* sum of the LOST records */
	size_t		nr_lost_recs;
	struct uwprof_pf_stats stats;
	int		has_stats;
	uint64_t	skipped_recs;	/* records of unknown type */
};

/*
 * Open and check a profile file. Returns 0, or a negative errno with one
 * line in 'err' naming the file (and the record and byte offset for a
 * corrupt or truncated file: -EINVAL). *out is NULL on failure.
 */
int uwprof_pf_open(const char *path, struct uwprof_pf **out, char *err,
		   size_t errlen);
void uwprof_pf_close(struct uwprof_pf *pf);

/* The object with this id, or NULL. */
const struct uwprof_pf_object *uwprof_pf_object_find(const struct uwprof_pf *pf,
						     uint64_t object_id);

/*
 * The mapping snapshot that applies to process 'pid' at 'time_ns': the
 * latest one taken at or before that time, unless the process exec'd in
 * between; failing that the first one taken after it, unless an exec lies
 * in between (samples taken before the tool could read a new process's or
 * library's mappings). NULL when none applies.
 */
const struct uwprof_pf_maps *uwprof_pf_maps_for(const struct uwprof_pf *pf,
						uint32_t pid, uint64_t time_ns);

/*
 * As uwprof_pf_maps_for(), but when that snapshot lacks one of the n ips
 * (a walk the recorder finished with mappings it read after the sample),
 * the first later snapshot of the same image that holds them all.
 */
const struct uwprof_pf_maps *uwprof_pf_maps_for_ips(const struct uwprof_pf *pf,
						    uint32_t pid,
						    uint64_t time_ns,
						    const uint64_t *ips, size_t n);

/* The mapping of a snapshot that contains 'ip', or NULL. */
const struct uwprof_pf_map *uwprof_pf_map_find(const struct uwprof_pf_maps *m,
					       uint64_t ip);

/*
 * Convenience: the object and mapping that 'ip' of process 'pid' fell in
 * at 'time_ns' (see uwprof_pf_maps_for_ips()). Returns the mapping (and
 * *obj, possibly NULL) or NULL.
 */
const struct uwprof_pf_map *uwprof_pf_resolve(const struct uwprof_pf *pf,
					      uint32_t pid, uint64_t time_ns,
					      uint64_t ip,
					      const struct uwprof_pf_object **obj);

/*
 * The name of thread 'tid' (else of its process) at 'time_ns', or NULL:
 * the program it ran then, so after an exec the new program's name (from
 * the records taken between the execs around that time).
 */
const char *uwprof_pf_comm(const struct uwprof_pf *pf, uint32_t pid,
			   uint32_t tid, uint64_t time_ns);

/*
 * The cgroup v2 path of process 'pid' at 'time_ns': the latest CGROUP
 * record at or before that time, else the first after it; NULL when the
 * file has none for the process.
 */
const char *uwprof_pf_cgroup(const struct uwprof_pf *pf, uint32_t pid,
			     uint64_t time_ns);

/*
 * The name of a stop reason (enum uwprof_stop: how a sample's stack
 * ended) as every output prints it: "complete", "fp-chain-end",
 * "max-depth", ...; "unknown" for a value this tool does not know.
 * The only table of these names: every command's output uses it, uwprof(1)
 * documents it, and python/test_reader_abi.py holds the Python reader's
 * copy to it.
 */
const char *uwprof_pf_stop_name(unsigned int stop);

/* The file's number of a module stop reason (enum uwprof_stop). */
unsigned int uwprof_pf_stop_of_module(unsigned int stop);

/* The kernel symbol containing 'addr', or NULL. */
const struct uwprof_pf_ksym *uwprof_pf_ksym_find(const struct uwprof_pf *pf,
						 uint64_t addr);

/* ---------------------------------------------------------------------
 * Writer. Errors are sticky: after the first failure every call returns
 * the same negative errno and uwprof_pfw_commit() removes the temporary
 * file. 'err' holds one line naming the path.
 * ------------------------------------------------------------------- */

/* A stack the writer has defined: its ips are at ips_off in st_ips. */
struct uwprof_pfw_stack {
	uint64_t	ips_off;
	uint32_t	id;
	uint32_t	flags;
	uint16_t	nr_kernel;
	uint16_t	nr_user;
};

struct uwprof_pfw {
	struct uwprof_afile out;	/* temporary file, renamed at commit */
	int		error;		/* first negative errno, sticky */
	uint8_t		*buf;
	size_t		len;
	size_t		cap;
	uint64_t	written;	/* bytes handed to the file so far */
	char		err[512];
	/* Stacks written so far: content hash (+ probe) -> index in stacks. */
	struct uwprof_u64map st_map;
	struct uwprof_pfw_stack *stacks;
	size_t		nr_stacks, cap_stacks;
	uint64_t	*st_ips;
	size_t		nr_st_ips, cap_st_ips;
	uint64_t	next_stack_id;
	uint64_t	nr_stack_defs;	/* stack entries written */
	size_t		last_stack;	/* the previous sample's, in stacks */
	int		has_last;
	/* The SAMPLES record being built, and the values its entries follow. */
	uint8_t		*sb;
	size_t		sb_len, sb_cap;
	uint32_t	sb_count, sb_stacks;
	uint32_t	sb_tid, sb_pid, sb_cpu;
	uint64_t	sb_time, sb_period;
};

struct uwprof_pfw_header_in {
	struct uwprof_pf_hdr_fixed fixed;
	const char	*hostname;
	const char	*release;
	const char	*cmdline;
};

/* Creates the temporary file and writes the file header and HEADER record. */
int uwprof_pfw_open(struct uwprof_pfw *w, const char *path,
		    const struct uwprof_pfw_header_in *h);

int uwprof_pfw_object(struct uwprof_pfw *w, const struct uwprof_pf_obj_fixed *o,
		      const char *path, const void *image, uint64_t image_size);
int uwprof_pfw_maps(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		    const char *comm, const struct uwprof_pf_map *maps,
		    uint32_t nr_maps);
/*
 * A module sample record, copied out of a ring and already checked. It
 * joins the SAMPLES record being built, after its stack's definition when
 * no sample before had that stack.
 */
int uwprof_pfw_sample(struct uwprof_pfw *w, const struct uwprof_rec_sample *s);
int uwprof_pfw_lost(struct uwprof_pfw *w, uint64_t time_ns, uint32_t cpu,
		    uint64_t count);
int uwprof_pfw_exit(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		    uint32_t exec);
int uwprof_pfw_thread(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		      uint32_t tid, const char *comm);
int uwprof_pfw_cgroup(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		      const char *path);
int uwprof_pfw_ksyms(struct uwprof_pfw *w, const struct uwprof_pf_ksym *syms,
		     uint64_t nr);
/* One JITSYMS record of process 'pid' (each entry's own pid is ignored). */
int uwprof_pfw_jitsyms(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		       uint32_t source, const struct uwprof_pf_jitsym *syms,
		       uint64_t nr);
/* One PYCODE record (-EINVAL for a table beyond the format's bound). */
int uwprof_pfw_pycode(struct uwprof_pfw *w, const struct uwprof_pf_pycode *c);
/* One PYINTERP record (-EINVAL for an unknown kind or flag). */
int uwprof_pfw_pyinterp(struct uwprof_pfw *w,
			const struct uwprof_pf_pyinterp *p);
int uwprof_pfw_stats(struct uwprof_pfw *w, const struct uwprof_pf_stats *st);

/*
 * Flushes, fsyncs, renames the temporary file to the final name and fsyncs
 * the directory. On any failure (now or earlier) removes the temporary file
 * and returns the negative errno with 'err' set. Frees the writer's memory
 * either way.
 */
int uwprof_pfw_commit(struct uwprof_pfw *w);

/* Gives up: removes the temporary file, frees memory. */
void uwprof_pfw_abort(struct uwprof_pfw *w);

#endif /* UWPROF_TOOL_PROFILE_FILE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The symbolized sample model the reporting commands share: a profile file
 * (profile_file.h) read, every sampled address resolved once to a frame
 * (symbol, object, offset, optional file:line), and every sample turned
 * into a leaf-first list of frame indexes. The output writers (report
 * table, perf-script text, folded stacks, pprof, SVG) only read it.
 * CPython's frames (the samples' UWPROF_IP_PYTHON pairs) become frames of
 * their own, named from the profile's PYCODE records (report_python.c).
 * Also the output-file helper that writes to a temporary name and
 * renames, so a failed write never leaves a partial file under the final
 * name (report_out.c).
 * Called from the report and script commands, which print what it reports:
 * nothing here writes to stderr. Single-threaded.
 */
#ifndef UWPROF_TOOL_REPORT_MODEL_H
#define UWPROF_TOOL_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/uwprof.h>

#include "atomic_file.h"
#include "profile_file.h"

struct uwprof_syms;

/* A mapping, for pprof's mapping table. */
struct uwprof_rep_map {
	uint64_t	start;
	uint64_t	end;
	uint64_t	offset;		/* file offset of start */
	const char	*path;		/* NULL: anonymous code */
	uint8_t		build_id[20];
	uint32_t	build_id_size;
};

struct uwprof_rep_frame {
	uint64_t	ip;		/* runtime address as sampled */
	uint64_t	vaddr;		/* object address (ip - bias); ip for kernel */
	uint64_t	sym_start;	/* runtime address of the symbol */
	const char	*sym;		/* demangled name, NULL: unresolved */
	/* object path, "[kernel.kallsyms]", "[vdso]"; NULL: in no mapping */
	const char	*dso;
	const char	*file;		/* with --lines */
	unsigned int	line;
	int		kernel;
	int		map;		/* index into maps[], -1: none */
	/* report/pprof name: sym, or dso+0xoff, or [unknown] */
	char		*label;
	/*
	 * folded/SVG name: sym without ';' and line breaks, or [dso
	 * basename], or [unknown]; kernel ones end in _[k]
	 */
	char		*folded;
	/*
	 * A Python frame: ip is its code object's address, sym its
	 * qualified name, file and dso its file name, line the line of its
	 * instruction (0: none), start_line the code's first line; label
	 * and folded "qualname (file basename:line)". Unnamed (no PYCODE
	 * record): sym NULL, label "[python code 0x...]".
	 */
	int		python;
	unsigned int	start_line;
};

struct uwprof_rep_sample {
	uint64_t	time_ns;
	uint64_t	period;
	/*
	 * Nanoseconds it stands for: an off-CPU sample's period, a cpu-clock
	 * sample's period, 1 s / freq for a cycles sample (an estimate)
	 */
	uint64_t	weight_ns;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	cpu;
	uint32_t	flags;
	uint32_t	nr_kernel;
	uint32_t	nr_user;
	const char	*comm;		/* never NULL */
	const char	*cgroup;	/* cgroup v2 path, or NULL: not recorded */
	/* nr_kernel + nr_user, leaf first, kernel ones first (as in the file) */
	uint32_t	*frames;
};

struct uwprof_rep_hash;
struct rep_jit;

struct uwprof_rep {
	const char	*path;		/* the profile, for messages */
	struct uwprof_pf *pf;
	struct uwprof_syms *syms;
	int		lines;
	int		verbose;
	const char	*event;		/* "cpu-clock" or "cycles" */
	struct uwprof_rep_sample *samples;
	size_t		nr_samples;
	struct uwprof_rep_frame *frames;
	size_t		nr_frames;
	size_t		cap_frames;
	struct uwprof_rep_map *maps;
	size_t		nr_maps;
	size_t		cap_maps;
	uint32_t	*chains;	/* storage of every sample's frames[] */
	char		**pool;		/* owned strings: names, ":tid" comms */
	size_t		nr_pool;
	size_t		cap_pool;
	struct uwprof_rep_hash *frame_hash;
	struct uwprof_rep_hash *map_hash;
	uint64_t	total_period;
	uint64_t	total_weight_ns;
	/* off-CPU samples in the file, kept or not by uwprof_rep_select() */
	size_t		file_off_cpu;
	size_t		nr_off_cpu;	/* of them in samples[] */
	int		have_ksyms;	/* 1: file's KSYMS, 2: /proc/kallsyms */
	/* folded and SVG output: a root-side frame naming the stop reason */
	int		mark_incomplete;
	/* "[incomplete: <stop>]" by stop reason, then for an unknown one */
	const char	*marks[UWPROF_PF_STOP__COUNT + 1];
	/* lines for the command to show as warnings, in the order found */
	char		**warnings;
	size_t		nr_warnings;
	size_t		cap_warnings;
	/* lines to show as notes: debug files fetched from debuginfod */
	char		**notes;
	size_t		nr_notes;
	size_t		cap_notes;
	/* JIT symbols by pid, from the profile's JITSYMS records */
	struct rep_jit	*jits;
	size_t		nr_jits;
	/* UWPROF_REP_PYTHON_NATIVE */
	int		python_native;
	/* The profile's PYCODE records by (pid, addr, fingerprint, time) */
	const struct uwprof_pf_pycode **pycodes;
	size_t		nr_pycodes;
};

/* uwprof_rep_load()'s flags */
#define UWPROF_REP_LINES		(1 << 0)	/* file:line from DWARF */
/*
 * Keep the native frame of CPython's eval function that each run of
 * Python frames follows (dropped by default: the Python frames say what
 * it ran).
 */
#define UWPROF_REP_PYTHON_NATIVE	(1 << 1)

/* Which samples uwprof_rep_select() keeps. */
enum uwprof_rep_show {
	UWPROF_REP_ALL,
	UWPROF_REP_ON_CPU,
	UWPROF_REP_OFF_CPU,
};

/* The root-side frame of every off-CPU sample in folded stacks and SVG. */
#define UWPROF_REP_OFF_CPU_MARK	"[off-cpu]"

/* Keeps only the samples 'show' asks for, and their totals. */
void uwprof_rep_select(struct uwprof_rep *r, enum uwprof_rep_show show);

/*
 * Whether the folded and SVG outputs weigh samples by the nanoseconds
 * they stand for (a profile with off-CPU samples, where counts of on- and
 * off-CPU samples say nothing together) rather than count them.
 */
static inline int uwprof_rep_by_time(const struct uwprof_rep *r)
{
	return r->file_off_cpu > 0;
}

/* A sample's weight in folded stacks and the SVG (see above). */
static inline uint64_t uwprof_rep_weight(const struct uwprof_rep *r,
					 const struct uwprof_rep_sample *s)
{
	return uwprof_rep_by_time(r) ? s->weight_ns : 1;
}

static inline int uwprof_rep_off_cpu(const struct uwprof_rep_sample *s)
{
	return !!(s->flags & UWPROF_SAMPLE_OFF_CPU);
}

/*
 * The root-side frame --mark-incomplete gives a sample whose stack did not
 * reach its outermost frame ("[incomplete: no-table-row]"), or NULL.
 */
const char *uwprof_rep_incomplete_mark(const struct uwprof_rep *r,
				       const struct uwprof_rep_sample *s);

/*
 * Open the profile at 'path' and symbolize it as 'flags' (UWPROF_REP_*)
 * say. A sample's nr_user then counts its frames in the model, a Python
 * pair being one frame or none. Returns 0, or a negative
 * errno with one line in 'err' (naming the file, and for a corrupt file the
 * record and byte offset). Objects whose symbols cannot be read leave a
 * line each in r->warnings, also when loading fails later; debug files
 * fetched from debuginfod (or failed fetches) a line each in r->notes.
 * Either way, release 'r' with uwprof_rep_free().
 */
int uwprof_rep_load(struct uwprof_rep *r, const char *path, int flags,
		    char *err, size_t errlen);
void uwprof_rep_free(struct uwprof_rep *r);

/* report_python.c: the PYCODE records sorted for uwprof_rep_py_find(). */
int uwprof_rep_py_load(struct uwprof_rep *r);
/*
 * The code object a Python frame of process 'pid' at 'time_ns' names: the
 * first PYCODE record of that address and fingerprint at or after that
 * time (the recorder reads code objects soon after their samples), else
 * the last before it; NULL when there is none.
 */
const struct uwprof_pf_pycode *uwprof_rep_py_find(const struct uwprof_rep *r,
						  uint32_t pid, uint64_t addr,
						  uint32_t fingerprint,
						  uint64_t time_ns);
/*
 * The interpreters of the profile's PYINTERP records, the last of each
 * process, as lines starting with 'prefix' on 'f': for CPython, one line
 * "python: N processes walked (3.11), M not: pid P python3.10: REASON;
 * ..." (at most 16 listed); kinds this reader does not know, counted on
 * another line. Nothing when the profile has none. Returns 0 or -ENOMEM.
 */
int uwprof_rep_py_interps(const struct uwprof_pf *pf, FILE *f,
			  const char *prefix);
/*
 * Names the Python frame of code object 'c' (NULL: unknown) at 'addr'
 * running code unit 'lasti'. Returns 0 or -ENOMEM.
 */
int uwprof_rep_py_frame(struct uwprof_rep_frame *f,
			const struct uwprof_pf_pycode *c, uint64_t addr,
			int32_t lasti);

/* The basename of a path (the part after the last '/'). */
const char *uwprof_rep_basename(const char *path);

/*
 * Output to a named file, all or nothing (atomic_file.h): written to a
 * temporary file in the same directory, flushed, synced and renamed over
 * 'path' by uwprof_rep_out_commit(); on any failure the temporary file is
 * removed and a negative errno returned with one line naming 'path' in
 * 'msg'.
 */
struct uwprof_rep_out {
	FILE		*f;
	struct uwprof_afile file;
};

int uwprof_rep_out_open(struct uwprof_rep_out *o, const char *path,
			mode_t mode, char *msg, size_t msglen);
int uwprof_rep_out_commit(struct uwprof_rep_out *o, char *msg, size_t msglen);
void uwprof_rep_out_abort(struct uwprof_rep_out *o);

/*
 * Flush stdout. Returns 0, or a negative errno for a write error (disk
 * full, closed pipe) with one line naming 'what' in 'msg'.
 */
int uwprof_rep_stdout_done(const char *what, char *msg, size_t msglen);

#endif /* UWPROF_TOOL_REPORT_MODEL_H */

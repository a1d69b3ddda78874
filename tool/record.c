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
 * --cgroup and --comm are filters the module applies on top of any mode;
 * alone they mean everything that passes them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exit_status.h"
#include "record.h"
#include "recorder.h"

static void rec_usage(FILE *f)
{
	fprintf(f,
"usage: uwprof record [-F HZ] [-a | -p PID[,PID...]] [-d SECONDS] [-g|--kernel]\n"
"                     [--cgroup PATH] [--comm NAME] [-o FILE] [options]\n"
"                     [--] [CMD ARGS...]\n"
"  Sample user call stacks (unwound in the kernel with DWARF tables) of a\n"
"  command and its children, of processes (-p), or of everything (-a).\n"
"  -F, --freq HZ       samples per second per CPU (default %u)\n"
"  -a, --all-cpus      every process on the system (with a command: while it\n"
"                      runs)\n"
"  -p, --pid PIDS      these processes (comma separated; their threads too)\n"
"  --cgroup PATH       only tasks in this cgroup v2 directory or below it\n"
"                      (/system.slice/x.service, or /sys/fs/cgroup/...);\n"
"                      without a command or -p: all of them\n"
"  --comm NAME         only threads named NAME (at most 15 bytes); without\n"
"                      a command or -p: all of them\n"
"  -d, --duration S    stop after S seconds (default: until the command ends,\n"
"                      the processes exit, or SIGINT/SIGTERM)\n"
"  -g, --kernel        kernel frames too (and kernel symbols into the file)\n"
"  -o, --output FILE   profile file (default uwprof.data)\n"
"  -e, --event EV      cycles or cpu-clock (default: cycles when available)\n"
"  --depth N           user frames per sample, at most (default %u)\n"
"  --no-fp-fallback    tables only: never follow frame pointers\n"
"  --no-python         CPython's own frames are not walked: the interpreter's\n"
"                      C frames only\n"
"  --ring-pages N      data pages per CPU ring (power of two)\n"
"  --cache-dir DIR     table cache (default /var/cache/uwprof/tables, else\n"
"                      $XDG_CACHE_HOME/uwprof/tables or ~/.cache/uwprof/tables)\n"
"  --snapshot-size N   stack bytes copied from samples of code whose tables\n"
"                      are not uploaded yet, to finish their walks later\n"
"                      (default %u, multiple of 8, at most %u; 0: none)\n"
"  --hold-exec         stop (SIGSTOP) the command's processes at each exec and\n"
"                      new library until their tables are uploaded; they see\n"
"                      the stops (a parent waiting with WUNTRACED, a debugger)\n"
"  --off-cpu           also where threads wait: a sample of each block (sleep,\n"
"                      lock, I/O) weighed by the time until the thread ran again\n"
"  --off-cpu-min DUR   blocks shorter than DUR leave no sample (default 1ms;\n"
"                      DUR: a number with ns, us, ms or s; implies --off-cpu)\n"
"  -q, --quiet         no progress line, no summary\n"
"  exit: 0 ok, 1 error, 2 usage, 3 /dev/uwprof missing (module not loaded),\n"
"        4 permission denied (needs root or CAP_PERFMON), 5 no such process\n"
"        or cgroup, or the command could not be started, 6 output file not\n"
"        written (directory not writable, disk full), 7 another session is\n"
"        sampling and the loaded module samples one at a time\n",
		REC_DEFAULT_FREQ, REC_DEFAULT_DEPTH, REC_DEFAULT_SNAPSHOT,
		UWPROF_MAX_SNAPSHOT);
}

/* ------------------------------------------------------------- options */

int rec_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
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

int rec_parse_pids(struct rec_opts *o, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	uint32_t pid;

	if (!dup)
		return -1;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t *nv;

		if (rec_parse_u32(tok, 1, 4194304, &pid) || o->nr_pids >= UWPROF_MAX_PIDS) {
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

int rec_parse_filter(struct rec_opts *o, int cgroup, const char *v)
{
	size_t n = strlen(v);

	if (cgroup) {
		o->cgroup = v;
		return v[0] == '/' ? 0 : -1;
	}
	o->comm = v;
	/* A task's name is at most 15 bytes: a longer one never matches. */
	return n >= 1 && n <= 15 ? 0 : -1;
}

/* A duration with its unit ("1ms", "500us", "0"), in ns. */
static int parse_dur(const char *s, uint64_t *out)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			break;
	if (i == sizeof(units) / sizeof(units[0]) && !(v == 0 && !*end))
		return -1;
	v *= i < sizeof(units) / sizeof(units[0]) ? units[i].ns : 0;
	if (v > 3600e9)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

enum { OPT_DEPTH = 256, OPT_NO_FP, OPT_RING_PAGES, OPT_CACHE_DIR,
       OPT_SNAPSHOT_SIZE, OPT_HOLD_EXEC, OPT_OFF_CPU, OPT_OFF_CPU_MIN,
       OPT_CGROUP, OPT_COMM, OPT_NO_PYTHON };

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
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
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
		return rec_parse_u32(v, 1, UWPROF_MAX_FREQ, &o->freq);
	case 'a':
		return set_mode(o, MODE_ALL);
	case 'p':
		if (set_mode(o, MODE_PIDS))
			return -2;
		return rec_parse_pids(o, v);
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
		return rec_parse_u32(v, 1, UWPROF_MAX_DEPTH, &o->depth);
	case OPT_NO_PYTHON:
		o->no_python = 1;
		return 0;
	case OPT_NO_FP:
		o->no_fp = 1;
		return 0;
	case OPT_RING_PAGES:
		if (rec_parse_u32(v, 1, UWPROF_MAX_RING_PAGES, &o->ring_pages))
			return -1;
		return o->ring_pages & (o->ring_pages - 1) ? -1 : 0;
	case OPT_CACHE_DIR:
		o->cache_dir = v;
		return 0;
	case OPT_SNAPSHOT_SIZE:
		if (rec_parse_u32(v, 0, UWPROF_MAX_SNAPSHOT, &o->snapshot_size))
			return -1;
		return o->snapshot_size % 8 ? -1 : 0;
	case OPT_HOLD_EXEC:
		o->hold_exec = 1;
		return 0;
	case OPT_OFF_CPU:
		o->off_cpu = 1;
		return 0;
	case OPT_OFF_CPU_MIN:
		o->off_cpu = 1;
		return parse_dur(v, &o->off_cpu_min_ns);
	case OPT_CGROUP:
	case OPT_COMM:
		return rec_parse_filter(o, c == OPT_CGROUP, v);
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
	o->snapshot_size = REC_DEFAULT_SNAPSHOT;
	o->off_cpu_min_ns = REC_DEFAULT_OFF_CPU_MIN_NS;
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
	/* -a with a command: the whole system, for as long as it runs. */
	if (optind < argc) {
		if (o->mode != MODE_ALL && set_mode(o, MODE_CMD))
			return -1;
		o->cmd = argv + optind;
	}
	if (!o->mode && (o->cgroup || o->comm))
		o->mode = MODE_ALL;
	if (!o->mode) {
		fprintf(stderr,
			"uwprof record: nothing to profile: give a command, -p PID, -a, --cgroup or --comm\n");
		return -1;
	}
	return 0;
}

/* -------------------------------------------------------------- running */

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
	if (st->samples && st->unwind_ns)
		fprintf(stderr,
			"uwprof: stack walks took %.2f us per sample on average, in the sampled threads' time\n",
			(double)st->unwind_ns / 1e3 / (double)st->samples);
	if (st->snapshots)
		fprintf(stderr,
			"uwprof: %llu samples with stack snapshots (%.1f KiB of stack each on average): %llu finished, %llu not (no tables for their code)\n",
			(unsigned long long)st->snapshots,
			(double)st->snapshot_bytes / 1024.0 / (double)st->snapshots,
			(unsigned long long)r->snap_finished,
			(unsigned long long)r->snap_unfinished);
	if (r->mm_images)
		fprintf(stderr,
			"uwprof: %llu processes gone before their mappings were read: mappings from the module's records\n",
			(unsigned long long)r->mm_images);
	if (r->jit_syms)
		fprintf(stderr, "uwprof: %llu JIT symbols stored (perf maps, jitdump files)\n",
			(unsigned long long)r->jit_syms);
	if (r->py_codes || r->py_failed || r->py_stale)
		fprintf(stderr,
			"uwprof: %llu Python code objects stored; %llu not read (process gone, memory not a code object, or the process past its limit), %llu already replaced by another: their frames stay unnamed\n",
			(unsigned long long)r->py_codes,
			(unsigned long long)r->py_failed,
			(unsigned long long)r->py_stale);
	if (st->nmi_samples)
		fprintf(stderr, "uwprof: %llu samples taken in NMI context\n",
			(unsigned long long)st->nmi_samples);
	if (r->o.off_cpu)
		fprintf(stderr,
			"uwprof: %llu off-CPU samples (%.3f s off CPU) of %llu blocks seen, %llu shorter than the minimum, %llu dropped\n",
			(unsigned long long)r->off_cpu_samples,
			(double)r->off_cpu_ns / 1e9,
			(unsigned long long)st->off_cpu_blocks,
			(unsigned long long)st->off_cpu_short,
			(unsigned long long)st->off_cpu_dropped);
	if (st->skipped_throttle)
		fprintf(stderr,
			"uwprof: %llu samples skipped: stack walks used their CPU share (/sys/module/uwprof/parameters/cpu_max_percent); lower -F or raise it\n",
			(unsigned long long)st->skipped_throttle);
	if (st->kernel_throttles)
		fprintf(stderr,
			"uwprof: the kernel throttled sampling %llu times (kernel.perf_event_max_sample_rate, now %lu Hz): each time one CPU took no sample until its next tick, so samples came in bursts, not evenly; lower -F\n",
			(unsigned long long)st->kernel_throttles,
			rec_kernel_max_rate());
	if (st->mmap_throttled)
		fprintf(stderr,
			"uwprof: %llu MMAP records not written: a process mapped code faster than %d a second per CPU; its mappings were read from /proc instead\n",
			(unsigned long long)st->mmap_throttled, UWPROF_MMAP_RATE);
	if (st->lifecycle_lost)
		fprintf(stderr,
			"uwprof: %llu exits, execs or forks of profiled processes found the module's pending-work pool full: those processes' samples lost their frames until their mappings were uploaded again\n",
			(unsigned long long)st->lifecycle_lost);
	if (r->filtered)
		fprintf(stderr,
			"uwprof: %llu samples of other processes left out\n",
			(unsigned long long)r->filtered);
	if (r->bad_recs)
		fprintf(stderr, "uwprof: %llu malformed ring records skipped\n",
			(unsigned long long)r->bad_recs);
}

/*
 * The loop's sleep when nothing is due: the module wakes the recorder for
 * every record it must act on and as rings fill, so a timeout only lets
 * it see to what is due at a time (-d, the progress line, re-reads held
 * back), and each wakeup takes the CPU from the profiled program.
 */
#define REC_IDLE_MS	1000
#define REC_PROGRESS_NS	250000000ULL

/* How long the loop may sleep: at most 'ms', and until -d or progress. */
static int rec_wait_ms(int ms, uint64_t deadline, int tty,
		       uint64_t last_progress)
{
	uint64_t now = mono_ns(), due = deadline, left;

	if (tty && (!due || last_progress + REC_PROGRESS_NS < due))
		due = last_progress + REC_PROGRESS_NS;
	if (!due)
		return ms;
	left = due > now ? (due - now + 999999) / 1000000 : 0;
	return left < (uint64_t)ms ? (int)left : ms;
}

/* Until the command ends, the processes exit, -d passes or a signal. */
static void rec_loop(struct recorder *r, int tty)
{
	uint64_t last_progress = 0, deadline = 0;
	int wait_ms;

	if (r->o.duration > 0)
		deadline = r->t_start + (uint64_t)(r->o.duration * 1e9);
	/*
	 * On a busy machine the recorder must get the CPU soon after a ring
	 * wakes it, or a new process runs far before its mappings are
	 * uploaded. Best effort: needs CAP_SYS_NICE, which root has.
	 */
	setpriority(PRIO_PROCESS, 0, r->nice0 - 10 < -20 ? -20 : r->nice0 - 10);
	wait_ms = r->o.mode == MODE_CMD ? REC_CHECK_MS : 100;
	while (!r->stop) {
		uint64_t now;

		rec_wait_events(r, rec_wait_ms(wait_ms, deadline, tty,
					       last_progress), -1);
		rec_drain(r);
		/* A command's mmaps are polled for unless records tell. */
		wait_ms = rec_procs_refresh(r, 0, r->o.mode == MODE_CMD &&
					    !r->mmap_records_on ?
					    REC_CHECK_MS : REC_IDLE_MS);
		rec_reap(r);
		now = mono_ns();
		if (r->o.cmd && r->child_done)
			break;
		if (r->o.mode == MODE_PIDS && !rec_pids_alive(r))
			break;
		if (deadline && now >= deadline)
			break;
		if (tty && now - last_progress >= REC_PROGRESS_NS) {
			progress(r, 0);
			last_progress = now;
		}
	}
}

/*
 * Sampling stopped: the last records drained, the queued walks finished,
 * kernel symbols and statistics written and the file committed.
 */
static int rec_finish(struct recorder *r, int tty)
{
	struct uwprof_stats st;
	int ret;

	r->t_end = mono_ns();
	uwprof_dev_stop(&r->dev);
	uwprof_rreader_finish(&r->rr);
	rec_drain(r);
	r->bad_recs += r->rr.bad;
	if (r->rr.dropped) {
		r->lost += r->rr.dropped;
		rec_w_lost(r, mono_ns(), 0, r->rr.dropped);
	}
	/* Samples taken before a late upload still need their snapshot. */
	rec_procs_refresh(r, 1, 0);
	rec_snapshots_flush(r, 0, 1);
	rec_jit_finish(r);
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (uwprof_dev_stats(&r->dev, &st))
		memset(&st, 0, sizeof(st));
	if (r->o.kernel)
		rec_ksyms_out(r);
	rec_stats_out(r, &st);
	if (r->o.cmd && !r->child_done) {
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
	if (r->o.cmd && r->child_done && !r->o.quiet) {
		if (WIFEXITED(r->child_status) && WEXITSTATUS(r->child_status))
			fprintf(stderr, "uwprof: command exited with status %d\n",
				WEXITSTATUS(r->child_status));
		else if (WIFSIGNALED(r->child_status))
			fprintf(stderr, "uwprof: command killed by signal %d\n",
				WTERMSIG(r->child_status));
	}
	return r->output_failed ? UWPROF_EX_OUTPUT : UWPROF_EX_OK;
}

static int record_run(struct recorder *r)
{
	struct rec_launch l = { .go_w = -1, .err_r = -1 };
	uint32_t flags;
	int code, tty;

	code = rec_setup(r, &flags);
	if (code)
		return code;
	if (rec_output_open(r, flags)) {
		uwprof_pfw_abort(&r->w);
		return UWPROF_EX_OUTPUT;
	}
	code = rec_targets_ready(r, &l);
	if (!code)
		code = rec_sampling_start(r, flags);
	if (!code && r->o.cmd)
		code = rec_cmd_go(r, &l);
	if (code) {
		rec_targets_abort(r, &l);
		uwprof_pfw_abort(&r->w);
		return code;
	}
	tty = isatty(2) && !r->o.quiet;
	rec_loop(r, tty);
	return rec_finish(r, tty);
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
	r->cgroup_fd = -1;
	r->name = "uwprof record";
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


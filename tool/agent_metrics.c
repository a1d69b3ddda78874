// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's /metrics page: its own memory and CPU, what it tracks
 * (processes, objects, the module's table memory) and what it sampled, in
 * Prometheus' text format, so that an always-on agent can be watched for
 * growth like any other service. The recorder's counters are copied under
 * the windows' lock by the recorder's thread (agent_wins_tick()); the
 * module's are read here with the STATS ioctl, which the module serialises
 * against the recorder's own ioctls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent.h"
#include "recorder.h"

struct metric {
	const char	*name;
	const char	*type;
	const char	*help;
	double		value;
};

static long rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void metrics_put(FILE *f, const struct metric *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", m[i].name,
			m[i].help, m[i].name, m[i].type, m[i].name, m[i].value);
}

/* --output-dir, --push and --otlp: what was written, pushed, dropped. */
static void metrics_out(FILE *f, const struct agent_out_counts *c)
{
	const struct metric m[] = {
		{ "uwprof_agent_intervals_total", "counter",
		  "Consecutive windows whose profile was built.",
		  (double)c->windows },
		{ "uwprof_agent_interval_errors_total", "counter",
		  "Consecutive windows whose profile could not be built.",
		  (double)c->windows_failed },
		{ "uwprof_agent_files_written_total", "counter",
		  "Profiles written to --output-dir.", (double)c->files_written },
		{ "uwprof_agent_files_removed_total", "counter",
		  "Oldest profiles removed from --output-dir to stay within --keep-files and --keep-bytes.",
		  (double)c->files_removed },
		{ "uwprof_agent_file_errors_total", "counter",
		  "Profiles that could not be written to --output-dir.",
		  (double)c->file_errors },
		{ "uwprof_agent_pushes_total", "counter",
		  "Profiles pushed (answered 2xx).", (double)c->pushed },
		{ "uwprof_agent_push_errors_total", "counter",
		  "Profiles not pushed after their tries.", (double)c->push_failed },
		{ "uwprof_agent_push_retries_total", "counter",
		  "Push tries after a failed one.", (double)c->push_retries },
		{ "uwprof_agent_push_dropped_total", "counter",
		  "Profiles dropped unpushed: the queue was full.",
		  (double)c->push_dropped },
		{ "uwprof_agent_otlp_pushes_total", "counter",
		  "Profiles pushed to --otlp (answered 2xx, partial answers included).",
		  (double)c->otlp_pushed },
		{ "uwprof_agent_otlp_push_errors_total", "counter",
		  "Profiles not pushed to --otlp after their tries.",
		  (double)c->otlp_failed },
		{ "uwprof_agent_otlp_push_retries_total", "counter",
		  "OTLP push tries after a failed one.", (double)c->otlp_retries },
		{ "uwprof_agent_otlp_push_dropped_total", "counter",
		  "Profiles dropped unpushed to --otlp: the queue was full.",
		  (double)c->otlp_dropped },
		{ "uwprof_agent_otlp_partial_successes_total", "counter",
		  "OTLP 2xx answers with a partial_success.",
		  (double)c->otlp_partial },
		{ "uwprof_agent_otlp_rejected_profiles_total", "counter",
		  "Profiles the OTLP receiver's partial_success answers rejected.",
		  (double)c->otlp_rejected },
	};

	metrics_put(f, m, sizeof(m) / sizeof(m[0]));
}

static int metrics_write(FILE *f, const struct agent_state *a,
			 const struct uwprof_stats *st, struct agent_out *out)
{
	/* In use and free are what tell a leak from a fragmented heap. */
	struct mallinfo2 mi = mallinfo2();
	struct agent_out_counts c;
	const struct metric m[] = {
		{ "process_resident_memory_bytes", "gauge",
		  "Resident memory size in bytes.", (double)rss_bytes() },
		{ "uwprof_agent_heap_bytes", "gauge",
		  "Bytes of the agent's heap in use (malloc, every arena).",
		  (double)(mi.uordblks + mi.hblkhd) },
		{ "uwprof_agent_heap_free_bytes", "gauge",
		  "Bytes free in the agent's heap, not returned to the system.",
		  (double)mi.fordblks },
		{ "process_cpu_seconds_total", "counter",
		  "Total user and system CPU time spent in seconds.",
		  cpu_seconds() },
		{ "uwprof_agent_processes", "gauge",
		  "Processes the agent tracks.", (double)a->processes },
		{ "uwprof_agent_python_processes", "gauge",
		  "Tracked processes running a CPython whose frames are walked.",
		  (double)a->py_walked },
		{ "uwprof_agent_python_unwalked_processes", "gauge",
		  "Tracked processes running a CPython whose frames cannot be walked (unsupported version or build; the agent's log says why).",
		  (double)a->py_not },
		{ "uwprof_agent_objects", "gauge",
		  "Objects (executables, libraries) the agent keeps tables of.",
		  (double)a->objects },
		{ "uwprof_agent_objects_dropped_total", "counter",
		  "Objects dropped when no process mapped them any more.",
		  (double)a->objects_dropped },
		{ "uwprof_agent_samples_total", "counter",
		  "Samples read from the module.", (double)a->samples },
		{ "uwprof_agent_lost_total", "counter",
		  "Records the module dropped because a ring was full.",
		  (double)a->lost },
		{ "uwprof_agent_windows_open", "gauge",
		  "Profile requests being recorded.", (double)a->windows },
		{ "uwprof_agent_windows_cancelled_total", "counter",
		  "Profile requests dropped because their client went away.",
		  (double)a->cancelled },
		{ "uwprof_module_table_bytes", "gauge",
		  "Bytes of tables and mappings this agent holds in the module.",
		  (double)st->table_bytes },
		{ "uwprof_module_tables", "gauge",
		  "Tables this agent holds in the module.", (double)st->tables },
		{ "uwprof_module_skipped_throttle_total", "counter",
		  "Samples the module skipped: the walks had used their CPU share.",
		  (double)st->skipped_throttle },
		{ "uwprof_module_kernel_throttles_total", "counter",
		  "Times the kernel stopped a sampling event until its next tick (kernel.perf_event_max_sample_rate).",
		  (double)st->kernel_throttles },
	};

	metrics_put(f, m, sizeof(m) / sizeof(m[0]));
	if (out) {
		agent_out_counts(out, &c);
		metrics_out(f, &c);
	}
	return ferror(f) ? -EIO : 0;
}

int agent_wins_metrics(void *ctx, char **text)
{
	struct agent_wins *ws = ctx;
	struct uwprof_stats st = { .size = sizeof(st) };
	struct agent_state a;
	size_t len = 0;
	FILE *f;
	int ret;

	pthread_mutex_lock(&ws->lock);
	a = ws->state;
	pthread_mutex_unlock(&ws->lock);
	if (uwprof_dev_stats(&ws->r->dev, &st))
		memset(&st, 0, sizeof(st));
	*text = NULL;
	f = open_memstream(text, &len);
	if (!f)
		return -errno;
	ret = metrics_write(f, &a, &st, ws->out);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret) {
		free(*text);
		*text = NULL;
	}
	return ret;
}

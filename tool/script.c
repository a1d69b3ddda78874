// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof script': one block per sample, as 'perf script' prints a
 * call-graph profile:
 *
 *	comm tid [cpu] sec.usec: period event:
 *	\t<ip, %16llx> sym+0xoff (dso)
 *	...				(leaf first, kernel frames first)
 *	<blank line>
 *
 * An unresolved frame prints "[unknown]" for the symbol, and for the dso
 * when no mapping holds the address. A sample whose stack did not end at
 * its outermost frame, or that the frame-pointer fallback walked, has a
 * comment line right after its header, which perf-script readers skip:
 *
 *	# stop: <reason>[, fp-fallback]
 *
 * After the header, not before it: a reader that recognizes the format by
 * the first line of the output (the Firefox Profiler) would otherwise turn
 * away a profile whose first sample is incomplete.
 */
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "exit_status.h"
#include "profile_file.h"
#include "recorder.h"
#include "report.h"
#include "report_model.h"
#include "script.h"

static void script_usage(FILE *f)
{
	fprintf(f,
		"usage: uwprof script [-i FILE] [--lines] [--max-stack N]\n"
		"                     [--python-native]\n"
		"  Print every sample of a profile in 'perf script' layout:\n"
		"  'comm tid [cpu] sec.usec: period event:', then one line per\n"
		"  frame, leaf first: tab, ip, sym+0xoff, (dso); a blank line\n"
		"  ends each sample. A sample whose stack ended early or used\n"
		"  the frame-pointer fallback has a line '# stop: REASON' after\n"
		"  its header. Off-CPU samples (record --off-cpu) name the event\n"
		"  'offcpu-time', as perf does, their period the ns off CPU.\n"
		"  A Python frame is 'qualname (file.py:line)' in its source file,\n"
		"  its ip the code object's address; one that was not named\n"
		"  '[python code 0xADDR] ([python])'. The interpreters found\n"
		"  (walked or not, and why) go to standard error, one line per\n"
		"  kind: 'uwprof script: python: ...'.\n"
		"  -i, --input FILE  the profile (default uwprof.data)\n"
		"  --lines           add ' file:line' to frames with line info\n"
		"  --python-native   keep CPython's eval-loop frame that each run\n"
		"                    of Python frames follows\n"
		"  --max-stack N     print at most N frames of each sample, from\n"
		"                    the leaf (kernel frames count)\n"
		"  exit: 0 ok, 1 unreadable or corrupt input or write error,\n"
		"        2 usage\n");
}

static int script_print(const struct uwprof_rep *r, FILE *f, int lines,
			uint32_t max_stack)
{
	const struct uwprof_rep_sample *s;
	const struct uwprof_rep_frame *fr;
	unsigned int st;
	size_t i;
	uint32_t j, n;

	for (i = 0; i < r->nr_samples; i++) {
		s = &r->samples[i];
		fprintf(f, "%s %u [%03u] %llu.%06llu: %llu %s:\n", s->comm,
			s->tid, s->cpu,
			(unsigned long long)(s->time_ns / 1000000000ULL),
			(unsigned long long)(s->time_ns % 1000000000ULL / 1000),
			(unsigned long long)s->period,
			uwprof_rep_off_cpu(s) ? "offcpu-time" : r->event);
		st = s->flags & UWPROF_SAMPLE_STOP_MASK;
		if (st != UWPROF_STOP_OK || (s->flags & UWPROF_SAMPLE_FP_USED))
			fprintf(f, "# stop: %s%s\n", uwprof_pf_stop_name(st),
				(s->flags & UWPROF_SAMPLE_FP_USED) ?
				", fp-fallback" : "");
		n = s->nr_kernel + s->nr_user;
		if (n > max_stack)
			n = max_stack;
		for (j = 0; j < n; j++) {
			fr = &r->frames[s->frames[j]];
			fprintf(f, "\t%16llx ", (unsigned long long)fr->ip);
			if (fr->python) {
				fprintf(f, "%s (%s)\n", fr->label,
					fr->dso ? fr->dso : "[python]");
				continue;
			}
			if (fr->sym)
				fprintf(f, "%s+0x%llx", fr->sym,
					(unsigned long long)(fr->ip - fr->sym_start));
			else
				fputs("[unknown]", f);
			fprintf(f, " (%s)", fr->dso ? fr->dso : "[unknown]");
			if (lines && fr->file)
				fprintf(f, " %s:%u", fr->file, fr->line);
			fputc('\n', f);
		}
		if (fputc('\n', f) == EOF)
			return -1;
	}
	return 0;
}

int uwprof_cmd_script(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "lines", no_argument, NULL, 'l' },
		{ "max-stack", required_argument, NULL, 'm' },
		{ "python-native", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "uwprof.data";
	char msg[PATH_MAX + 256];
	struct uwprof_rep r;
	uint32_t max_stack = UINT32_MAX;
	int c, lines = 0, py_native = 0, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'l':
			lines = 1;
			break;
		case 'P':
			py_native = UWPROF_REP_PYTHON_NATIVE;
			break;
		case 'm':
			if (rec_parse_u32(optarg, 0, UINT32_MAX, &max_stack)) {
				fprintf(stderr, "uwprof script: bad --max-stack '%s'\n",
					optarg);
				return UWPROF_EX_USAGE;
			}
			break;
		case 'h':
			script_usage(stdout);
			return UWPROF_EX_OK;
		default:
			script_usage(stderr);
			return UWPROF_EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uwprof script: unexpected argument '%s'\n",
			argv[optind]);
		script_usage(stderr);
		return UWPROF_EX_USAGE;
	}
	ret = uwprof_cmd_load_profile(&r, input,
				      (lines ? UWPROF_REP_LINES : 0) | py_native);
	if (ret)
		return ret;
	/* Not in the output: perf-script readers take no header. */
	uwprof_rep_py_interps(r.pf, stderr, "uwprof script: ");
	script_print(&r, stdout, lines, max_stack);
	ret = uwprof_rep_stdout_done("script", msg, sizeof(msg));
	if (ret)
		fprintf(stderr, "uwprof: %s\n", msg);
	uwprof_rep_free(&r);
	return ret ? UWPROF_EX_ERROR : UWPROF_EX_OK;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof report': reads a profile, symbolizes it and prints the functions
 * with the most samples (self and children percentages), or writes it as
 * folded stacks, a pprof profile, an OTLP profiles message or an SVG
 * flamegraph. Options follow 'perf report' where it has them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_status.h"
#include "folded.h"
#include "otlp.h"
#include "pprof.h"
#include "profile_file.h"
#include "report.h"
#include "report_model.h"
#include "svg.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: uwprof report [-i FILE] [--sort sym|dso,sym] [--lines]\n"
		"                     [--folded] [--pprof OUT] [--otlp OUT] [--svg OUT]\n"
		"                     [--mark-incomplete] [--on-cpu-only | --off-cpu-only]\n"
		"                     [--python-native]\n"
		"  Print the functions sorted by self samples: self and children\n"
		"  (self plus callees) percentages of the sampled period, and the\n"
		"  self sample count; --folded prints folded stacks instead.\n"
		"  -i, --input FILE  the profile (default uwprof.data)\n"
		"  -s, --sort KEYS   sym (default): one row per function name;\n"
		"                    dso,sym: one per object and function\n"
		"  --lines           file:line through DWARF: a row's hottest line,\n"
		"                    and per location in --pprof and --otlp\n"
		"  --folded          folded stacks to stdout (FlameGraph input):\n"
		"                    comm;root;...;leaf[;kernel_[k]...] count\n"
		"  --pprof OUT       gzipped pprof profile ('go tool pprof OUT')\n"
		"  --otlp OUT        gzipped OTLP ExportProfilesServiceRequest\n"
		"                    (opentelemetry-proto " UWPROF_OTLP_PROTO_VERSION "): a resource per\n"
		"                    process, a profile per sample type (cpu, off_cpu)\n"
		"  --svg OUT         interactive SVG flamegraph\n"
		"  --mark-incomplete in --folded and --svg, put a stack that did not\n"
		"                    reach its outermost frame under a root-side\n"
		"                    frame '[incomplete: REASON]'\n"
		"  -n, --max N       at most N rows in the table (0: all)\n"
		"  --python-native   keep CPython's eval-loop frame\n"
		"                    (_PyEval_EvalFrameDefault) that each run of\n"
		"                    Python frames follows; by default the Python\n"
		"                    frames, shown as 'qualname (file.py:line)',\n"
		"                    stand in its place\n"
		"  A profile recorded with --off-cpu is weighed by time in every\n"
		"  output: on-CPU samples by their period, off-CPU ones by the\n"
		"  time the thread was off CPU, under a root-side frame '[off-cpu]'\n"
		"  in --folded and --svg (whose counts are then nanoseconds).\n"
		"  --on-cpu-only     only the on-CPU samples\n"
		"  --off-cpu-only    only the off-CPU samples\n"
		"  Output files are written to a temporary name and renamed:\n"
		"  never half-written.\n"
		"  exit: 0 ok, 1 unreadable or corrupt input or write error,\n"
		"        2 usage\n");
}

struct fn_row {
	uint32_t	frame;		/* a representative frame */
	uint64_t	self;		/* period */
	uint64_t	total;		/* period of samples it is on */
	uint64_t	self_samples;
	uint32_t	hot;		/* its frame with the most self samples */
	uint64_t	hot_samples;
	uint64_t	last;		/* 1 + last sample counted in total */
};

struct report_opts {
	const char	*input;
	int		by_dso;
	int		lines;
	int		python_native;
	int		folded;
	const char	*pprof;
	const char	*otlp;
	const char	*svg;
	long		max_rows;
	int		mark_incomplete;
	enum uwprof_rep_show show;
};

struct sort_ctx {
	const struct uwprof_rep *r;
	int		by_dso;
};

static int key_cmp(const struct uwprof_rep *r, uint32_t a, uint32_t b,
		   int by_dso)
{
	const struct uwprof_rep_frame *x = &r->frames[a], *y = &r->frames[b];
	int c;

	if (by_dso) {
		c = strcmp(x->dso ? x->dso : "", y->dso ? y->dso : "");
		if (c)
			return c;
	}
	return strcmp(x->label, y->label);
}

static int frame_key_cmp(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;

	return key_cmp(c->r, *(const uint32_t *)a, *(const uint32_t *)b,
		       c->by_dso);
}

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct fn_row *x = a, *y = b;
	const struct sort_ctx *c = arg;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return key_cmp(c->r, x->frame, y->frame, c->by_dso);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* On- and off-CPU time of the samples shown; percentages are of both. */
static void print_split(const struct uwprof_rep *r, FILE *f)
{
	uint64_t off = 0;
	size_t i;

	for (i = 0; i < r->nr_samples; i++)
		if (uwprof_rep_off_cpu(&r->samples[i]))
			off += r->samples[i].weight_ns;
	fprintf(f, "# on-CPU %.3f s (%.1f%%), off-CPU %.3f s (%.1f%%) in %zu off-CPU samples\n",
		(r->total_weight_ns - off) / 1e9,
		pct(r->total_weight_ns - off, r->total_weight_ns), off / 1e9,
		pct(off, r->total_weight_ns), r->nr_off_cpu);
}

static void print_header(const struct uwprof_rep *r, FILE *f)
{
	const struct uwprof_pf_header *h = &r->pf->hdr;
	/* [UWPROF_PF_STOP__COUNT]: values this tool has no name for */
	uint64_t stops[UWPROF_PF_STOP__COUNT + 1] = { 0 };
	unsigned int st;
	size_t i;
	int first = 1;

	fprintf(f, "# uwprof report: %s\n", r->path);
	if (h->cmdline && *h->cmdline)
		fprintf(f, "# command: %s\n", h->cmdline);
	uwprof_rep_py_interps(r->pf, f, "# ");
	fprintf(f, "# %zu samples of %s at %u Hz, %llu lost", r->nr_samples,
		r->event, h->freq_hz, (unsigned long long)r->pf->lost);
	if (r->pf->has_stats && r->pf->stats.skipped_throttle)
		fprintf(f, ", %llu skipped over the CPU budget",
			(unsigned long long)r->pf->stats.skipped_throttle);
	fputc('\n', f);
	if (r->pf->has_stats && r->pf->stats.kernel_throttles)
		fprintf(f, "# the kernel throttled sampling %llu times (kernel.perf_event_max_sample_rate): samples came in bursts at the tick, not evenly\n",
			(unsigned long long)r->pf->stats.kernel_throttles);
	if (uwprof_rep_by_time(r))
		print_split(r, f);
	for (i = 0; i < r->nr_samples; i++) {
		st = r->samples[i].flags & UWPROF_SAMPLE_STOP_MASK;
		stops[st < UWPROF_PF_STOP__COUNT ? st : UWPROF_PF_STOP__COUNT]++;
	}
	fprintf(f, "# stacks:");
	for (st = 0; st <= UWPROF_PF_STOP__COUNT; st++) {
		if (!stops[st])
			continue;
		fprintf(f, "%s %s %llu (%.1f%%)", first ? "" : ",",
			uwprof_pf_stop_name(st), (unsigned long long)stops[st],
			pct(stops[st], r->nr_samples));
		first = 0;
	}
	fprintf(f, "%s\n#\n", first ? " none" : "");
}

/*
 * Self and total weight per row (fid: a frame's row), self samples per
 * frame. Weighs by period; a file without periods (whole 0) counts
 * samples; with off-CPU samples, by the time each stands for.
 */
static void tally_rows(const struct uwprof_rep *r, struct fn_row *rows,
		       const uint32_t *fid, uint32_t *fself, uint64_t whole)
{
	const struct uwprof_rep_sample *s;
	uint32_t j, id;
	uint64_t w;
	size_t i;

	for (i = 0; i < r->nr_samples; i++) {
		s = &r->samples[i];
		w = uwprof_rep_by_time(r) ? s->weight_ns : whole ? s->period : 1;
		if (s->nr_kernel + s->nr_user) {
			id = fid[s->frames[0]];
			rows[id].self += w;
			rows[id].self_samples++;
			fself[s->frames[0]]++;
		}
		for (j = 0; j < s->nr_kernel + s->nr_user; j++) {
			id = fid[s->frames[j]];
			if (rows[id].last == i + 1)
				continue;	/* recursion: once per sample */
			rows[id].last = i + 1;
			rows[id].total += w;
		}
	}
}

static int print_table(const struct uwprof_rep *r, const struct report_opts *o,
		       FILE *f)
{
	uint32_t *order = NULL, *fid = NULL, *fself = NULL, j, id;
	struct fn_row *rows = NULL;
	size_t i, nr_rows = 0, shown, dso_w = 13;
	uint64_t whole = uwprof_rep_by_time(r) ? r->total_weight_ns :
			 r->total_period;
	const struct uwprof_rep_frame *fr;
	struct sort_ctx ctx = { r, o->by_dso };
	int ret = -ENOMEM;

	order = malloc((r->nr_frames + 1) * sizeof(*order));
	fid = malloc((r->nr_frames + 1) * sizeof(*fid));
	rows = calloc(r->nr_frames + 1, sizeof(*rows));
	fself = calloc(r->nr_frames + 1, sizeof(*fself));
	if (!order || !fid || !rows || !fself)
		goto free;
	/* One row per distinct key: sort the frames, number the runs. */
	for (j = 0; j < r->nr_frames; j++)
		order[j] = j;
	qsort_r(order, r->nr_frames, sizeof(*order), frame_key_cmp, &ctx);
	for (j = 0; j < r->nr_frames; j++) {
		if (!j || key_cmp(r, order[j - 1], order[j], o->by_dso)) {
			rows[nr_rows].hot = order[j];
			rows[nr_rows++].frame = order[j];
		}
		fid[order[j]] = (uint32_t)(nr_rows - 1);
	}
	tally_rows(r, rows, fid, fself, whole);
	if (!whole)
		whole = r->nr_samples;
	/* With --lines a row shows the line of its hottest address. */
	for (j = 0; j < r->nr_frames; j++) {
		id = fid[j];
		if (fself[j] > rows[id].hot_samples ||
		    (!rows[id].hot_samples && r->frames[j].file &&
		     !r->frames[rows[id].hot].file)) {
			rows[id].hot = j;
			rows[id].hot_samples = fself[j];
		}
	}
	qsort_r(rows, nr_rows, sizeof(*rows), row_cmp, &ctx);
	/* Functions only on samples --on/--off-cpu-only left out. */
	while (nr_rows && !rows[nr_rows - 1].total)
		nr_rows--;
	for (i = 0; i < nr_rows && o->by_dso; i++) {
		fr = &r->frames[rows[i].frame];
		if (fr->dso && strlen(uwprof_rep_basename(fr->dso)) > dso_w)
			dso_w = strlen(uwprof_rep_basename(fr->dso));
	}
	print_header(r, f);
	if (o->by_dso)
		fprintf(f, "#    Self  Children   Samples  %-*s  Symbol\n",
			(int)dso_w, "Shared Object");
	else
		fprintf(f, "#    Self  Children   Samples  Symbol\n");
	shown = o->max_rows > 0 && (size_t)o->max_rows < nr_rows ?
		(size_t)o->max_rows : nr_rows;
	for (i = 0; i < shown; i++) {
		fr = &r->frames[rows[i].frame];
		fprintf(f, "  %6.2f%%  %7.2f%%  %8llu  ", pct(rows[i].self, whole),
			pct(rows[i].total, whole),
			(unsigned long long)rows[i].self_samples);
		if (o->by_dso)
			fprintf(f, "%-*s  ", (int)dso_w,
				fr->dso ? uwprof_rep_basename(fr->dso) :
					  "[unknown]");
		fprintf(f, "%s%s", fr->kernel ? "[k] " : "", fr->label);
		if (o->lines && r->frames[rows[i].hot].file)
			fprintf(f, "  %s:%u", r->frames[rows[i].hot].file,
				r->frames[rows[i].hot].line);
		fputc('\n', f);
	}
	if (shown < nr_rows)
		fprintf(f, "# %zu more rows (--max 0 shows all)\n",
			nr_rows - shown);
	ret = 0;
free:
	free(order);
	free(fid);
	free(fself);
	free(rows);
	return ret;
}

/*
 * A pprof keeps each frame's address, a kernel frame's included: the
 * outputs of a profile with kernel frames are the owner's only, as the
 * profile is, or they would hand KASLR's offset to any local reader.
 * Others are 0666 less the umask, as any file a command writes.
 */
static mode_t out_mode(const struct uwprof_rep *r)
{
	size_t i;

	for (i = 0; i < r->nr_frames; i++)
		if (r->frames[i].kernel)
			return 0600;
	return 0666;
}

/* Returns 0, or a negative errno with one line naming 'path' in 'msg'. */
static int write_named(const struct uwprof_rep *r, const char *path,
		       int (*fn)(const struct uwprof_rep *, FILE *,
				 const char *),
		       const char *title, char *msg, size_t msglen)
{
	struct uwprof_rep_out out;
	int ret;

	ret = uwprof_rep_out_open(&out, path, out_mode(r), msg, msglen);
	if (ret)
		return ret;
	ret = fn(r, out.f, title);
	if (ret) {
		snprintf(msg, msglen, "%s: %s, nothing written", path,
			 strerror(-ret));
		uwprof_rep_out_abort(&out);
		return ret;
	}
	return uwprof_rep_out_commit(&out, msg, msglen);
}

static int pprof_fn(const struct uwprof_rep *r, FILE *f, const char *title)
{
	(void)title;
	return uwprof_pprof_write(r, f);
}

static int otlp_fn(const struct uwprof_rep *r, FILE *f, const char *title)
{
	(void)title;
	return uwprof_otlp_write(r, f);
}

static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "lines", no_argument, NULL, 'l' },
		{ "folded", no_argument, NULL, 'f' },
		{ "pprof", required_argument, NULL, 'p' },
		{ "otlp", required_argument, NULL, 'o' },
		{ "svg", required_argument, NULL, 'g' },
		{ "max", required_argument, NULL, 'n' },
		{ "mark-incomplete", no_argument, NULL, 'm' },
		{ "on-cpu-only", no_argument, NULL, 'O' },
		{ "off-cpu-only", no_argument, NULL, 'F' },
		{ "python-native", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:s:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 's':
			if (!strcmp(optarg, "sym")) {
				o->by_dso = 0;
			} else if (!strcmp(optarg, "dso,sym")) {
				o->by_dso = 1;
			} else {
				fprintf(stderr, "uwprof report: --sort takes sym or dso,sym, not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			o->lines = 1;
			break;
		case 'f':
			o->folded = 1;
			break;
		case 'P':
			o->python_native = 1;
			break;
		case 'p':
			o->pprof = optarg;
			break;
		case 'o':
			o->otlp = optarg;
			break;
		case 'g':
			o->svg = optarg;
			break;
		case 'm':
			o->mark_incomplete = 1;
			break;
		case 'O':
		case 'F':
			if (o->show != UWPROF_REP_ALL) {
				fprintf(stderr, "uwprof report: --on-cpu-only and --off-cpu-only exclude each other\n");
				return -EINVAL;
			}
			o->show = c == 'O' ? UWPROF_REP_ON_CPU : UWPROF_REP_OFF_CPU;
			break;
		case 'n':
			errno = 0;
			o->max_rows = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->max_rows < 0) {
				fprintf(stderr, "uwprof report: --max takes a count, not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uwprof report: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int uwprof_cmd_load_profile(struct uwprof_rep *r, const char *input, int flags)
{
	char msg[PATH_MAX + 256];
	size_t i;
	int ret;

	ret = uwprof_rep_load(r, input, flags, msg, sizeof(msg));
	for (i = 0; i < r->nr_notes; i++)
		fprintf(stderr, "uwprof: note: %s\n", r->notes[i]);
	for (i = 0; i < r->nr_warnings; i++)
		fprintf(stderr, "uwprof: warning: %s\n", r->warnings[i]);
	if (!ret)
		return 0;
	fprintf(stderr, "uwprof: %s\n", msg);
	uwprof_rep_free(r);
	return UWPROF_EX_ERROR;
}

int uwprof_cmd_report(int argc, char **argv)
{
	struct report_opts o = { .input = "uwprof.data", .max_rows = 0 };
	char msg[PATH_MAX + 256];
	struct uwprof_rep r;
	int ret, err = 0;

	ret = parse_opts(argc, argv, &o);
	if (ret) {
		report_usage(ret > 0 ? stdout : stderr);
		return ret > 0 ? UWPROF_EX_OK : UWPROF_EX_USAGE;
	}
	ret = uwprof_cmd_load_profile(&r, o.input,
				      (o.lines ? UWPROF_REP_LINES : 0) |
				      (o.python_native ?
				       UWPROF_REP_PYTHON_NATIVE : 0));
	if (ret)
		return ret;
	r.mark_incomplete = o.mark_incomplete;
	uwprof_rep_select(&r, o.show);
	if (o.pprof && write_named(&r, o.pprof, pprof_fn, NULL, msg,
				   sizeof(msg))) {
		fprintf(stderr, "uwprof: %s\n", msg);
		err = 1;
	}
	if (o.otlp && write_named(&r, o.otlp, otlp_fn, NULL, msg,
				  sizeof(msg))) {
		fprintf(stderr, "uwprof: %s\n", msg);
		err = 1;
	}
	if (o.svg && write_named(&r, o.svg, uwprof_svg_write, o.input, msg,
				 sizeof(msg))) {
		fprintf(stderr, "uwprof: %s\n", msg);
		err = 1;
	}
	if (o.folded) {
		ret = uwprof_folded_write(&r, stdout);
		if (ret == -ENOMEM)
			fprintf(stderr, "uwprof: %s: out of memory\n", o.input);
		err |= ret != 0;
	} else {
		if (print_table(&r, &o, stdout)) {
			fprintf(stderr, "uwprof: %s: out of memory\n", o.input);
			err = 1;
		}
	}
	if (uwprof_rep_stdout_done("report", msg, sizeof(msg))) {
		fprintf(stderr, "uwprof: %s\n", msg);
		err = 1;
	}
	uwprof_rep_free(&r);
	return err ? UWPROF_EX_ERROR : UWPROF_EX_OK;
}

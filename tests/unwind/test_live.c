// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder against gdb on live processes. For each workload of the
 * target (built -O2 -fomit-frame-pointer, with its own shared library):
 * stop it at random moments with SIGSTOP, unwind the stopped state with the
 * core (registers by ptrace, memory by process_vm_readv, tables compiled by
 * libuwtable from every mapped object), then let gdb attach to the very
 * same stopped state and list its frames, and compare frame by frame.
 *
 * usage: test_live TARGET GDB_SCRIPT [STOPS [SEED]]
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "testlib.h"

/* Above the deepest workload (recurse 1000 is about 2700 frames). */
#define MAX_FRAMES	4096

struct frames {
	u64 pc[MAX_FRAMES];
	char name[MAX_FRAMES][48];
	u32 nr;
	u32 inlined;		/* inline and tail-call frames left out */
	bool truncated;		/* more than MAX_FRAMES: not comparable */
	u32 sigframes;		/* signal trampolines gdb listed */
	u64 sp;
};

/* gdb.INLINE_FRAME, gdb.TAILCALL_FRAME (gdb/frame.h: enum frame_type). */
#define GDB_INLINE_FRAME	2
#define GDB_TAILCALL_FRAME	3
#define GDB_SIGTRAMP_FRAME	4

/*
 * A stop lands in the signal handler about a third of the time, so a fixed
 * number of stops misses it now and then; the signal workloads keep
 * stopping until one stack crosses a signal frame, within this many times
 * STOPS.
 */
#define SIGNAL_MAX_STOPS	10

struct totals {
	u32 stops;
	u32 samples_equal;
	u64 frames;		/* frames compared */
	u32 mismatches;		/* samples that differ */
	u32 stop_reason[UWPROF_STOP__COUNT];
	u32 fp_frames;
	u32 reg_mismatch;
	u64 inlined;		/* gdb inline / tail-call frames left out */
	u32 through_signal;	/* stacks crossing a signal frame */
};

/* Run gdb on the stopped pid; fill f from the script's UWSP/UWF lines. */
static int gdb_frames(pid_t pid, const char *script, struct frames *f)
{
	char cmd[1024], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "gdb -p %d -batch -nx -iex 'set debuginfod enabled off' -x %s 2>/dev/null",
		 (int)pid, script);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	f->nr = 0;
	f->sp = 0;
	f->inlined = 0;
	f->truncated = false;
	f->sigframes = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long v;
		char name[48] = "?";
		int type;

		if (sscanf(line, "UWSP %llx", &v) == 1) {
			f->sp = v;
		} else if (sscanf(line, "UWF %llx %d %47s", &v, &type, name) >= 2) {
			/*
			 * Inlined calls and tail calls (reconstructed by gdb from
			 * DWARF call-site data) are frames to gdb but leave nothing
			 * on the stack: no unwinder of the stack can see them.
			 */
			if (type == GDB_INLINE_FRAME || type == GDB_TAILCALL_FRAME) {
				f->inlined++;
				continue;
			}
			if (type == GDB_SIGTRAMP_FRAME)
				f->sigframes++;
			if (f->nr == MAX_FRAMES) {
				f->truncated = true;
				continue;
			}
			f->pc[f->nr] = v;
			snprintf(f->name[f->nr], sizeof(f->name[0]), "%s", name);
			f->nr++;
		}
	}
	return pclose(p) == 0 && f->nr && !f->truncated ? 0 : -EIO;
}

static const char *stop_name(u32 s)
{
	static const char *const n[] = {
		"OK", "FP_END", "DEPTH", "NO_MAP", "NO_ROW", "UNSUPPORTED",
		"READ", "BAD_SP", "BAD_PC", "NO_PROCESS", "TIME",
	};

	return s < UWPROF_STOP__COUNT ? n[s] : "?";
}

static void show(const struct frames *g, const u64 *ips, u32 nr, u32 first_diff)
{
	u32 i, lo = first_diff > 3 ? first_diff - 3 : 0;

	for (i = lo; i < lo + 8 && (i < g->nr || i < nr); i++)
		tap_diag("   #%u ours %#llx gdb %#llx %s%s", i,
			 (unsigned long long)(i < nr ? ips[i] : 0),
			 (unsigned long long)(i < g->nr ? g->pc[i] : 0),
			 i < g->nr ? g->name[i] : "", i == first_diff ? "  <==" : "");
}

static int run_workload(struct tap *t, const char *target, const char *script,
			char *const args[], u32 stops, u64 *seed)
{
	static struct frames g;
	static u64 ips[MAX_FRAMES], ips_cached[MAX_FRAMES];
	/* One per target: its mapping lists' ids are only unique within it. */
	struct uwprof_rule_cache *cache = calloc(1, sizeof(*cache));
	u32 cache_diffs = 0;
	char *argv[8] = { (char *)target };
	struct totals tot = { 0 };
	char desc[128] = "";
	bool sig_workload = !strcmp(args[0], "signal") || !strcmp(args[0], "sigalt");
	struct live l;
	u32 i, s;
	int err;

	for (i = 0; args[i] && i < 6; i++) {
		argv[i + 1] = args[i];
		snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), "%s%s",
			 i ? " " : "", args[i]);
	}
	if (!cache)
		return -ENOMEM;
	err = live_start(&l, argv);
	if (err) {
		tap_ok(t, false, "%s: target starts (%d)", desc, err);
		free(cache);
		return err;
	}

	for (s = 0; s < stops || (sig_workload && !tot.through_signal &&
				  s < SIGNAL_MAX_STOPS * stops); s++) {
		struct uwprof_host_env env = {
			.pid = l.pid, .user_limit = 1ULL << 47, .va_bits = 48,
		};
		struct uwprof_unwind_req req = {
			.ips = ips, .max_depth = MAX_FRAMES, .env = &env,
		};
		struct uwprof_unwind_res res;
		u32 nr, k, diff;

		*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
		usleep(2000 + (useconds_t)((*seed >> 33) % 18000));
		if (live_stop(&l) || live_regs(&l, &req.regs)) {
			tap_ok(t, false, "%s: stop %u: target stops, registers read", desc, s);
			break;
		}
		err = live_maps(&l);
		if (err) {
			tap_ok(t, false, "%s: %s", desc, l.err);
			break;
		}
		req.maps = l.maps;
		req.nr_maps = l.nr_maps;
		nr = uwprof_unwind_user(&req, &res);
		tot.stop_reason[res.stop]++;

		/* Through the cache kept across stops, cold, then warm. */
		for (k = 0; k < 2; k++) {
			struct uwprof_unwind_req creq = req;
			struct uwprof_unwind_res cres;
			u32 cnr;

			creq.cache = cache;
			/* The list is read again at every stop: a new name. */
			creq.maps_id = s + 1;
			creq.ips = ips_cached;
			cnr = uwprof_unwind_user(&creq, &cres);
			if (cnr != nr || memcmp(&cres, &res, sizeof(res)) ||
			    memcmp(ips_cached, ips, nr * sizeof(*ips)))
				cache_diffs++;
		}
		tot.fp_frames += res.fp_frames;

		if (gdb_frames(l.pid, script, &g)) {
			tap_ok(t, false, "%s: gdb lists frames of pid %d", desc, (int)l.pid);
			break;
		}
		if (g.sp != req.regs.sp)
			tot.reg_mismatch++;
		tot.inlined += g.inlined;
		tot.through_signal += g.sigframes > 0;

		tot.stops++;
		for (k = 0, diff = ~0U; k < nr || k < g.nr; k++) {
			if (k < nr && k < g.nr && ips[k] == g.pc[k]) {
				tot.frames++;
				continue;
			}
			if (diff == ~0U)
				diff = k;
		}
		if (diff == ~0U) {
			tot.samples_equal++;
		} else {
			tot.mismatches++;
			if (tot.mismatches <= 3) {
				tap_diag("%s: stop %u differs at frame %u: ours %u frames (%s), gdb %u",
					 desc, s, diff, nr, stop_name(res.stop), g.nr);
				show(&g, ips, nr, diff);
			}
		}
		if (live_cont(&l))
			break;
	}

	tap_diag("%s: stops %u, frames compared %llu, samples differing %u, "
		 "fp frames %u, sp differing from gdb %u, gdb inline/tail-call frames left out %llu, "
		 "stacks through a signal frame %u",
		 desc, tot.stops, (unsigned long long)tot.frames, tot.mismatches,
		 tot.fp_frames, tot.reg_mismatch, (unsigned long long)tot.inlined,
		 tot.through_signal);
	for (i = 0; i < UWPROF_STOP__COUNT; i++)
		if (tot.stop_reason[i])
			tap_diag("%s:   stop reason %s: %u", desc, stop_name(i), tot.stop_reason[i]);
	tap_ok(t, tot.stops == s && tot.stops >= stops && tot.mismatches == 0 &&
	       tot.reg_mismatch == 0,
	       "%s: %u stops, %llu frames agree with gdb, %u samples differ",
	       desc, tot.stops, (unsigned long long)tot.frames, tot.mismatches);
	tap_ok(t, tot.stops && !cache_diffs,
	       "%s: walks through the rule cache equal the uncached ones (%u of %u differ)",
	       desc, cache_diffs, 2 * tot.stops);
	if (sig_workload)
		tap_ok(t, tot.through_signal > 0,
		       "%s: %u of %u stacks cross a signal frame (stopped until one did, at most %u stops)",
		       desc, tot.through_signal, tot.stops, SIGNAL_MAX_STOPS * stops);
	if (!strcmp(args[0], "recurse")) {
		u32 depth = (u32)atoi(args[1]);

		tap_ok(t, tot.stop_reason[UWPROF_STOP_OK] == tot.stops && tot.stops &&
		       tot.frames >= (u64)tot.stops * 3,
		       "%s: every stack complete (stop OK), %.1f frames per stack (depth %u)",
		       desc, tot.stops ? (double)tot.frames / tot.stops : 0.0, depth);
	}
	for (i = 0; i < l.nr_objs; i++)
		tap_diag("%s: object %s: %s, %llu rows", desc, l.objs[i].path,
			 l.objs[i].err ? "no table" : "table", (unsigned long long)l.objs[i].rows);
	live_free(&l);
	free(cache);
	return 0;
}

int main(int argc, char **argv)
{
	static char *const workloads[][3] = {
		{ "recurse", "50", NULL },
		{ "recurse", "200", NULL },
		{ "recurse", "1000", NULL },
		{ "qsort", NULL, NULL },
		{ "signal", NULL, NULL },
		{ "sigalt", NULL, NULL },
	};
	struct tap t = { 0 };
	u32 stops, i;
	u64 seed;

	if (argc < 3) {
		fprintf(stderr, "usage: %s TARGET GDB_SCRIPT [STOPS [SEED]]\n", argv[0]);
		return 2;
	}
	stops = argc > 3 ? (u32)atoi(argv[3]) : 25;
	seed = argc > 4 ? strtoull(argv[4], NULL, 0) : (u64)time(NULL);
	tap_diag("live comparison with gdb: %u stops per workload, seed %llu",
		 stops, (unsigned long long)seed);
	if (system("gdb --version >/dev/null 2>&1")) {
		tap_skip(&t, "gdb not installed", "live comparison with gdb");
		return tap_done(&t);
	}
	if (geteuid() != 0 && access("/proc/sys/kernel/yama/ptrace_scope", F_OK) == 0) {
		FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
		int scope = 0;

		if (f) {
			if (fscanf(f, "%d", &scope) != 1)
				scope = 0;
			fclose(f);
		}
		if (scope > 0) {
			tap_skip(&t, "yama ptrace_scope > 0 and not root",
				 "live comparison with gdb");
			return tap_done(&t);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		run_workload(&t, argv[1], argv[2], workloads[i], stops, &seed);
	return tap_done(&t);
}

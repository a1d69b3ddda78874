// SPDX-License-Identifier: GPL-2.0
/*
 * Micro-benchmark of the unwinder core: ns per frame on a real stack. The
 * target recurses about 100 frames deep; it is stopped at its deepest, its
 * registers and stack (sp to the top of [stack]) are copied once, and the
 * core then unwinds that snapshot in a loop with the memcpy reader, so the
 * figure measures table lookup and frame steps, not system calls.
 *
 * Two figures: without a rule cache (every row found by index and binary
 * search), and with one kept across walks, as the module keeps one per CPU
 * across samples (a hot stack's rows are then found by one hashed load).
 *
 * usage: bench TARGET [LEVELS [SECONDS]]   (SECONDS per figure, default 2)
 *
 * With BENCH_DEADLINE=1 in the environment every walk has a deadline it
 * never reaches, as the module's walks do: the figures then include the
 * clock reads (every 64 cached frames or 8 general steps).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "testlib.h"

#define MAX_FRAMES	512

/*
 * Thread CPU time: the machine is shared, and time spent descheduled is
 * not the core's.
 */
static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static u64 deadline;

static u32 unwind(const struct live *l, struct uwprof_host_env *env,
		  const struct uwprof_regs *regs, u64 *ips, struct uwprof_unwind_res *res,
		  struct uwprof_rule_cache *cache)
{
	struct uwprof_unwind_req req = {
		.maps = l->maps, .nr_maps = l->nr_maps, .regs = *regs,
		.ips = ips, .max_depth = MAX_FRAMES, .env = env, .cache = cache,
		.maps_id = 1, .deadline = deadline,
	};

	return uwprof_unwind_user(&req, res);
}

/*
 * Unwind the snapshot for 'seconds' of CPU; ns per stack, 0 on a miscount.
 * At 0 seconds, exactly 1000 stacks. Not inlined, so that callgrind can
 * count each call alone (bench-runs: --toggle-collect, --dump-after).
 */
static __attribute__((noinline))
double timed(const struct live *l, struct uwprof_host_env *env,
	     const struct uwprof_regs *regs, u32 nr_want,
	     struct uwprof_rule_cache *cache, double seconds, u64 *stacks)
{
	static u64 ips[MAX_FRAMES];
	struct uwprof_unwind_res res;
	u64 iters = 0, t0, t1;
	u32 i;

	t0 = now_ns();
	do {
		for (i = 0; i < 1000; i++)
			if (unwind(l, env, regs, ips, &res, cache) != nr_want)
				return 0;
		iters += i;
		t1 = now_ns();
	} while (t1 - t0 < (u64)(seconds * 1e9));
	*stacks = iters;
	return (double)(t1 - t0) / (double)iters;
}

/*
 * Whether pc lies in the object at path 'exe'. The recursion's bottom spins
 * in the executable or in the library, two stacks of one depth that cost a
 * little differently: the bench keeps the executable's, so that its
 * instruction counts repeat.
 */
static bool pc_in(const struct live *l, u64 pc, const char *exe)
{
	const struct uwprof_unwind_map *m = uwprof_maps_find(l->maps, l->nr_maps, pc);
	u32 i;

	if (!m || !m->table || !exe)
		return false;
	for (i = 0; i < l->nr_objs; i++)
		if (m->table == &l->objs[i].table)
			return !strcmp(l->objs[i].path, exe);
	return false;
}

int main(int argc, char **argv)
{
	static u64 ips[MAX_FRAMES], ips_live[MAX_FRAMES];
	char *targv[] = { argc > 1 ? argv[1] : NULL, "recurse",
			  argc > 2 ? argv[2] : "37", NULL };
	double seconds = argc > 3 ? atof(argv[3]) : 2.0;
	struct uwprof_host_env env = { .user_limit = 1ULL << 47, .va_bits = 48 };
	struct uwprof_unwind_res res, res_live;
	struct uwprof_regs regs, best_regs;
	u32 nr_live = 0, nr, tries;
	char *exe = argc > 1 ? realpath(argv[1], NULL) : NULL;
	bool live_in_exe = false, in_exe;
	u8 *snap = NULL;
	u64 snap_lo = 0, snap_size = 0, cold = 0, warm = 0, reads;
	struct uwprof_rule_cache *cache = calloc(1, sizeof(*cache));
	double ns_cold, ns_warm;
	struct tap t = { 0 };
	struct live l;
	int err;

	if (getenv("BENCH_DEADLINE") && atoi(getenv("BENCH_DEADLINE")))
		deadline = ~0ULL;
	if (!cache)
		return 2;
	if (argc < 2) {
		fprintf(stderr, "usage: %s TARGET [LEVELS [SECONDS]]\n", argv[0]);
		return 2;
	}
	err = live_start(&l, targv);
	if (err) {
		tap_ok(&t, false, "target %s starts (%d)", argv[1], err);
		return tap_done(&t);
	}

	/*
	 * Keep the deepest of a few stops, the recursion's bottom, in the
	 * executable if a stop lands there.
	 */
	for (tries = 0; tries < 40 && (nr_live < 100 || !live_in_exe); tries++) {
		struct uwprof_host_env penv = env;

		usleep(3000 + 997 * tries % 7000);
		if (live_stop(&l) || live_regs(&l, &regs) || live_maps(&l)) {
			tap_ok(&t, false, "stop target and read its state");
			live_free(&l);
			return tap_done(&t);
		}
		penv.pid = l.pid;
		nr = unwind(&l, &penv, &regs, ips, &res, NULL);
		in_exe = pc_in(&l, regs.pc, exe);
		if ((nr > nr_live || (nr == nr_live && in_exe && !live_in_exe)) &&
		    res.stop == UWPROF_STOP_OK) {
			struct iovec lio, rio;

			nr_live = nr;
			live_in_exe = in_exe;
			res_live = res;
			best_regs = regs;
			memcpy(ips_live, ips, sizeof(ips));
			free(snap);
			snap_lo = regs.sp & ~4095ULL;
			snap_size = l.stack_hi - snap_lo;
			snap = malloc(snap_size);
			lio = (struct iovec){ snap, snap_size };
			rio = (struct iovec){ (void *)(uintptr_t)snap_lo, snap_size };
			if (!snap || process_vm_readv(l.pid, &lio, 1, &rio, 1, 0) != (ssize_t)snap_size) {
				tap_ok(&t, false, "copy the target's stack");
				live_free(&l);
				return tap_done(&t);
			}
		}
		live_cont(&l);
	}
	/* Tables and mappings stay; the process is no longer needed. */
	live_kill(&l);

	if (!tap_ok(&t, nr_live >= 100, "live stack of %u frames (stop %u%s)", nr_live,
		    nr_live ? res_live.stop : 0,
		    live_in_exe ? ", pc in the executable" : "")) {
		live_free(&l);
		free(snap);
		return tap_done(&t);
	}

	env.nr_regions = 1;
	env.region[0] = (struct uwprof_host_region){ snap_lo, snap_size, snap };
	nr = unwind(&l, &env, &best_regs, ips, &res, NULL);
	tap_ok(&t, nr == nr_live && res.stop == res_live.stop &&
	       !memcmp(ips, ips_live, nr * sizeof(u64)),
	       "snapshot unwind equals the live unwind (%u frames, %llu KiB of stack)",
	       nr, (unsigned long long)(snap_size >> 10));

	nr = unwind(&l, &env, &best_regs, ips, &res, cache);
	tap_ok(&t, nr == nr_live && res.stop == res_live.stop &&
	       !memcmp(ips, ips_live, nr * sizeof(u64)),
	       "snapshot unwind through the rule cache equals the live unwind");
	/* Reads are counted off the inline path: the snapshot as region 1. */
	{
		struct uwprof_host_env cenv = env;

		cenv.region[1] = env.region[0];
		cenv.region[0] = (struct uwprof_host_region){ 0 };
		cenv.nr_regions = 2;
		cenv.reads = 0;
		unwind(&l, &cenv, &best_regs, ips, &res, cache);
		reads = cenv.reads;
	}

	ns_cold = timed(&l, &env, &best_regs, nr_live, NULL, seconds, &cold);
	ns_warm = timed(&l, &env, &best_regs, nr_live, cache, seconds, &warm);
	tap_ok(&t, ns_cold > 0 && ns_warm > 0, "every iteration gives the same frame count");

	printf("# bench: %.2f ns/frame, %.0f ns per %u-frame stack, %llu stacks in %.2f s of CPU, "
	       "%llu reads per stack (rule cache warm)\n",
	       ns_warm / nr_live, ns_warm, nr_live, (unsigned long long)warm,
	       ns_warm * (double)warm / 1e9, (unsigned long long)reads);
	printf("# bench: %.2f ns/frame, %.0f ns per %u-frame stack, %llu stacks in %.2f s of CPU "
	       "(no rule cache)\n",
	       ns_cold / nr_live, ns_cold, nr_live, (unsigned long long)cold,
	       ns_cold * (double)cold / 1e9);
	live_free(&l);
	free(snap);
	free(cache);
	free(exe);
	return tap_done(&t);
}

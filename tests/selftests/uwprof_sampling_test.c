// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling suite: a program built -O2 -fomit-frame-pointer (uwprof_chain,
 * call chain main -> chain_a -> chain_b -> chain_c -> chain_leaf) is
 * sampled with its table blob uploaded, and at least 99% of the samples
 * taken in chain_leaf must carry exactly that chain up to main. Also:
 * kernel frames come first when asked for, processes without mappings
 * produce UNKNOWN_MAP records, and exit and exec drop a process's mappings
 * with an EXIT record. Several sessions sample at once, each complete and
 * with its own exact accounting, within one CPU budget; the cgroup and
 * comm filters leave out every task outside them.
 *
 * Run from the directory holding uwprof_chain, uwprof_chain.blob and
 * uwprof_chain.syms (the build's OUT).
 */
#include "uwprof_test.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "uwprof_harness.h"

#define CHAIN		"./uwprof_chain"
#define CHAIN_BLOB	"./uwprof_chain.blob"
#define CHAIN_SYMS	"./uwprof_chain.syms"
#define KERNEL_HALF	0xffff000000000000ULL

enum { F_LEAF, F_C, F_B, F_A, F_MAIN, F_NR };

static const char *const chain_names[F_NR] = {
	"chain_leaf", "chain_c", "chain_b", "chain_a", "main",
};

struct range {
	uint64_t start, end;
};

/* Collected from the rings. */
struct tally {
	struct range fn[F_NR];
	uint32_t pid;
	uint64_t samples, leaf, exact;
	uint64_t other_pid, in_kernel, with_kernel, bad_kernel, bad_user;
	uint64_t kframes, kwalked;	/* kernel frames; samples with callers */
	uint64_t stops[UWPROF_STOP__COUNT];
	uint32_t exits[2];	/* by 'exec' */
	uint32_t exit_pid_bad;
	uint32_t exec_comm_bad;	/* EXIT(exec) not naming the chain */
	uint32_t printed;
};

/* Names may carry a compiler suffix (chain_c.constprop.0). */
static int load_syms(struct range *fn)
{
	char name[256], type[8];
	unsigned long long a, s;
	int found = 0, i;
	FILE *f = fopen(CHAIN_SYMS, "re");

	if (!f)
		return -errno;
	while (fscanf(f, "%llx %llx %7s %255s", &a, &s, type, name) == 4) {
		for (i = 0; i < F_NR; i++) {
			size_t n = strlen(chain_names[i]);

			if (strncmp(name, chain_names[i], n) ||
			    (name[n] && name[n] != '.'))
				continue;
			if (!fn[i].end)
				found++;
			fn[i].start = a;
			fn[i].end = a + s;
		}
	}
	fclose(f);
	return found == F_NR ? 0 : -ENOENT;
}

static bool in(const struct range *r, uint64_t a)
{
	return a >= r->start && a < r->end;
}

static void on_sample(const struct uwprof_rec_sample *s, uint32_t ring,
		      void *priv)
{
	const __u64 *u = s->ips + s->nr_kernel;
	struct tally *t = priv;
	uint32_t i;

	(void)ring;
	t->samples++;
	if (s->pid != t->pid || s->tid != t->pid) {
		t->other_pid++;
		return;
	}
	if ((s->flags & UWPROF_SAMPLE_STOP_MASK) < UWPROF_STOP__COUNT)
		t->stops[s->flags & UWPROF_SAMPLE_STOP_MASK]++;
	if (s->flags & UWPROF_SAMPLE_IN_KERNEL)
		t->in_kernel++;
	if (s->nr_kernel)
		t->with_kernel++;
	if (s->nr_kernel > 1)
		t->kwalked++;
	t->kframes += s->nr_kernel;
	for (i = 0; i < s->nr_kernel; i++)
		if (s->ips[i] < KERNEL_HALF)
			t->bad_kernel++;
	for (i = 0; i < s->nr_user; i++)
		if (u[i] >= KERNEL_HALF)
			t->bad_user++;
	if (!s->nr_user || !in(&t->fn[F_LEAF], u[0]))
		return;
	t->leaf++;
	for (i = 1; i < F_NR; i++)
		if (i >= s->nr_user || !in(&t->fn[i], u[i]))
			break;
	if (i == F_NR) {
		t->exact++;
		return;
	}
	if ((s->flags & UWPROF_SAMPLE_STOP_MASK) != UWPROF_STOP_NO_PROCESS &&
	    t->printed++ < 5) {
		fprintf(stderr, "# incomplete chain, stop %u, %u frames:",
			s->flags & UWPROF_SAMPLE_STOP_MASK, s->nr_user);
		for (i = 0; i < s->nr_user && i < 8; i++)
			fprintf(stderr, " %#llx", (unsigned long long)u[i]);
		fprintf(stderr, "\n");
	}
}

static void on_exit_rec(const struct uwprof_rec_exit *e, void *priv)
{
	struct tally *t = priv;

	if (e->pid != t->pid || e->exec > 1)
		t->exit_pid_bad++;
	else
		t->exits[e->exec]++;
	if (e->exec && strncmp(e->comm, "uwprof_chain", sizeof(e->comm)))
		t->exec_comm_bad++;
}

FIXTURE(sampling) {
	int fd;
	pid_t child;
	struct uwt_rings r;
	struct uwt_reader rd;
	struct tally t;
	struct uwt_blob blob;
	unsigned long long saved_pct;	/* cpu_max_percent to restore, or 0 */
	unsigned long long saved_rate;	/* UWT_MAX_RATE to restore, or 0 */
	unsigned long long saved_walk;	/* walk_max_us to restore, or 0 */
	/* A second session and more processes, for the tests that use them. */
	int fd2;
	struct uwt_rings r2;
	pid_t more[3];
	char cgroup[PATH_MAX];		/* to remove at the end, or "" */
};

FIXTURE_SETUP(sampling)
{
	const char *why = NULL;
	int i;

	self->fd2 = -1;
	self->r2.base = NULL;
	for (i = 0; i < 3; i++)
		self->more[i] = -1;
	self->cgroup[0] = 0;
	self->child = -1;
	self->r.base = NULL;
	self->blob.data = NULL;
	self->saved_pct = 0;
	self->saved_walk = 0;
	memset(&self->rd, 0, sizeof(self->rd));
	memset(&self->t, 0, sizeof(self->t));
	self->rd.on_sample = on_sample;
	self->rd.on_exit = on_exit_rec;
	self->rd.priv = &self->t;
	self->fd = uwt_open(&why);
	if (self->fd < 0)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, load_syms(self->t.fn))
		TH_LOG("%s: missing or incomplete (run from the build's OUT)",
		       CHAIN_SYMS);
	ASSERT_EQ(0, uwt_blob_read(CHAIN_BLOB, &self->blob));
}

FIXTURE_TEARDOWN(sampling)
{
	int i;

	if (self->saved_pct)
		uwt_param("cpu_max_percent", &self->saved_pct, true);
	if (self->saved_rate)
		uwt_knob(UWT_MAX_RATE, &self->saved_rate, true);
	if (self->saved_walk)
		uwt_param("walk_max_us", &self->saved_walk, true);
	uwt_rings_unmap(&self->r);
	uwt_rings_unmap(&self->r2);
	uwt_reap(self->child);
	for (i = 0; i < 3; i++)
		uwt_reap(self->more[i]);
	if (self->fd >= 0)
		close(self->fd);
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->cgroup[0])
		uwt_cgroup_remove(self->cgroup);
	free(self->blob.data);
}

/* Uploads the chain's table and the child's executable mappings. */
static int upload_chain(int fd, pid_t pid, struct uwt_blob *b)
{
	struct uwprof_map maps[8];
	int n, ret;

	ret = uwt_table_add(fd, 1, b->data, b->size);
	if (ret && ret != -EEXIST)
		return ret;
	n = uwt_proc_maps(pid, CHAIN, 1, maps, 8);
	if (n <= 0)
		return n ? n : -ENOENT;
	return uwt_maps_set(fd, pid, maps, n);
}

/* Reads the rings for 'ms' milliseconds, then stops and drains. */
static int run_for(int fd, struct uwt_rings *r, struct uwt_reader *rd, long ms)
{
	struct timespec t0, t;
	struct pollfd p;
	int ret;

	ret = uwt_rings_map(fd, r);
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		p.fd = fd;
		p.events = POLLIN;
		poll(&p, 1, 100);
		uwt_rings_drain(r, rd);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	ret = uwt_ioctl(fd, UWPROF_IOC_STOP, NULL);
	uwt_rings_drain(r, rd);
	return ret;
}

static void log_stats(struct __test_metadata *_metadata, int fd,
		      const struct tally *t)
{
	struct uwprof_stats st;
	char buf[512];
	int i, n = 0;

	if (uwt_stats(fd, &st))
		return;
	for (i = 0; i < UWPROF_STATS_STOPS; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %llu",
			      (unsigned long long)st.stop[i]);
	n += snprintf(buf + n, sizeof(buf) - n, " %llu",
		      (unsigned long long)st.stop_time);
	TH_LOG("samples %llu frames %llu fp_frames %llu lost %llu stops:%s",
	       st.samples, st.frames, st.fp_frames, st.lost, buf);
	n = 0;
	for (i = 0; i < UWPROF_HIST_BUCKETS; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %llu",
			      (unsigned long long)st.unwind_ns_hist[i]);
	TH_LOG("unwind time histogram (x64ns, log2 buckets):%s", buf);
	TH_LOG("read %llu samples, %llu of the target in chain_leaf, %llu exact",
	       (unsigned long long)t->samples, (unsigned long long)t->leaf,
	       (unsigned long long)t->exact);
}

TEST_F(sampling, exact_chain)
{
	uint32_t pid;

	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));
	ASSERT_EQ(0, uwt_start(self->fd, 0, 1000, 64, 0, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 4000));
	log_stats(_metadata, self->fd, &self->t);

	EXPECT_EQ(0, self->rd.c.bad);
	EXPECT_EQ(0, self->t.other_pid);
	EXPECT_EQ(0, self->t.bad_user);
	EXPECT_EQ(0, self->t.with_kernel);
	ASSERT_GE(self->t.leaf, 100)
		TH_LOG("too few samples in chain_leaf to judge");
	EXPECT_GE(self->t.exact * 100, self->t.leaf * 99);
}

/* Same, tables only (no frame-pointer fallback), at a higher rate. */
TEST_F(sampling, exact_chain_tables_only)
{
	unsigned long long old, cap = 1;
	uint32_t pid;

	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_NO_FP_FALLBACK |
			       UWPROF_START_CPU_CLOCK, 4000, 1024, 0, &pid, 1));
	/* Hitting the table memory cap fails that upload; sampling goes on. */
	if (!uwt_param("table_mem_max", &old, false)) {
		ASSERT_EQ(0, uwt_param("table_mem_max", &cap, true));
		EXPECT_EQ(-ENOSPC, uwt_table_add(self->fd, 2, self->blob.data,
						 self->blob.size));
		ASSERT_EQ(0, uwt_param("table_mem_max", &old, true));
	}
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 3000));
	log_stats(_metadata, self->fd, &self->t);
	ASSERT_GE(self->t.leaf, 100);
	EXPECT_GE(self->t.exact * 100, self->t.leaf * 99);
}

/* Time the samples' walks took at most, from the histogram's upper bounds. */
static uint64_t walk_ns_upper(const struct uwprof_stats *st)
{
	uint64_t ns = 0;
	int i;

	for (i = 0; i < UWPROF_HIST_BUCKETS; i++)
		ns += st->unwind_ns_hist[i] * (64ULL << (i + 1));
	return ns;
}

static uint64_t elapsed_ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

/*
 * The walks' CPU budget (module parameter cpu_max_percent): at 1% and a
 * high rate samples are skipped and counted, the walks' time stays near 1%
 * of every CPU's time, and every handler call is accounted for; at 100%
 * nothing is skipped. How many are skipped depends on how fast the walks
 * are, so only the time is held to the budget.
 */
TEST_F(sampling, cpu_budget)
{
	unsigned long long pct, bad[] = { 0, 101 };
	uint64_t ms, upper, allowed;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct uwprof_stats st;
	struct timespec t0;
	uint32_t pid;
	int i;

	ASSERT_EQ(0, uwt_param("cpu_max_percent", &self->saved_pct, false));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(-EINVAL, uwt_param("cpu_max_percent", &bad[i], true));
	ASSERT_EQ(0, uwt_param("cpu_max_percent", &pct, false));
	EXPECT_EQ(self->saved_pct, pct);

	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));

	pct = 1;
	ASSERT_EQ(0, uwt_param("cpu_max_percent", &pct, true));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, uwt_start(self->fd, 0, 20000, 64, 0, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 2000));
	ms = elapsed_ms(&t0);
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	upper = walk_ns_upper(&st);
	allowed = cpus * (ms / 10 + 1) * 100000ULL;
	TH_LOG("1%%: events %llu samples %llu skipped_throttle %llu; walks <= %llu ns of %llu allowed in %llu ms",
	       st.events, st.samples, st.skipped_throttle,
	       (unsigned long long)upper, (unsigned long long)allowed,
	       (unsigned long long)ms);
	EXPECT_EQ(0, self->rd.c.bad);
	EXPECT_EQ(st.events, st.samples + st.lost_samples +
		  uwt_events_skipped(&st));
	EXPECT_EQ(st.samples, self->rd.c.samples);
	EXPECT_GT(st.samples, 0);
	EXPECT_GT(st.skipped_throttle, 0);
	/* Each window may overrun by one walk; the bounds are up to 2x. */
	EXPECT_LE(upper, 4 * allowed);

	uwt_rings_unmap(&self->r);
	pct = 100;
	ASSERT_EQ(0, uwt_param("cpu_max_percent", &pct, true));
	ASSERT_EQ(0, uwt_start(self->fd, 0, 20000, 64, 0, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 2000));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	TH_LOG("100%%: events %llu samples %llu skipped_throttle %llu",
	       st.events, st.samples, st.skipped_throttle);
	EXPECT_EQ(0, st.skipped_throttle);
	EXPECT_GT(st.samples, 0);
	EXPECT_EQ(st.events, st.samples + st.lost_samples +
		  uwt_events_skipped(&st));
}

/* Samples of the deep chain, by how their walks ended. */
struct deep_tally {
	const struct range *fn;
	uint32_t pid;
	uint64_t samples, time, time_leaf, time_leaf_ok, depth_max;
};

static void on_deep_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			   void *priv)
{
	const __u64 *u = s->ips + s->nr_kernel;
	struct deep_tally *t = priv;
	uint32_t i;

	(void)ring;
	if (s->pid != t->pid)
		return;
	t->samples++;
	if ((s->flags & UWPROF_SAMPLE_STOP_MASK) != UWPROF_STOP_TIME)
		return;
	t->time++;
	if (s->nr_user > t->depth_max)
		t->depth_max = s->nr_user;
	if (!s->nr_user || !in(&t->fn[F_LEAF], u[0]))
		return;
	t->time_leaf++;
	/* The frames kept are the stack's own, innermost first. */
	for (i = 1; i < F_MAIN; i++)
		if (i >= s->nr_user || !in(&t->fn[i], u[i]))
			return;
	t->time_leaf_ok++;
}

/* Samples whose walks took at least 'ns', by the histogram's buckets. */
static uint64_t walks_over(const struct uwprof_stats *st, uint64_t ns)
{
	uint64_t n = 0;
	int i;

	/* Bucket i holds [64 << i, 64 << (i + 1)) ns. */
	for (i = 0; i < UWPROF_HIST_BUCKETS; i++)
		if (64ULL << i >= ns)
			n += st->unwind_ns_hist[i];
	return n;
}

/*
 * A walk's time limit (module parameter walk_max_us): the chain runs under
 * 8200 frames that each need a table search (chain.c "deep"), a stack that
 * takes far longer to walk than the 20 us the limit is set to here. Walks
 * stop with UWPROF_STOP_TIME, the frames they kept are the innermost ones
 * of the stack, and they do not take much longer than the limit: the
 * module reads the clock every few frames, and the histogram's buckets are
 * powers of two, so the bound is the bucket above 4 times the limit. The
 * clock is the guest's wall clock, which goes on while the host runs
 * something else than the vCPU (under TCG about 1 in 300 walks of the
 * chain's 8 frames took over 65 us, and 2% of this test's walks over 131
 * us in one run), so a few walks may be over; without the limit, all are.
 */
TEST_F(sampling, walk_time_limit)
{
	unsigned long long us = 20, bad[] = { 0, 100001 }, got;
	struct deep_tally dt = { .fn = self->t.fn };
	struct uwprof_stats st;
	uint64_t over;
	uint32_t pid;
	int i;

	ASSERT_EQ(0, uwt_param("walk_max_us", &self->saved_walk, false));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(-EINVAL, uwt_param("walk_max_us", &bad[i], true));
	self->child = uwt_spawn2(CHAIN, "60", "deep");
	ASSERT_GT(self->child, 0);
	pid = dt.pid = self->child;
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));
	ASSERT_EQ(0, uwt_param("walk_max_us", &us, true));
	ASSERT_EQ(0, uwt_param("walk_max_us", &got, false));
	ASSERT_EQ(us, got);
	self->rd.on_sample = on_deep_sample;
	self->rd.on_exit = NULL;
	self->rd.priv = &dt;
	ASSERT_EQ(0, uwt_start(self->fd, 0, 1000, UWPROF_MAX_DEPTH, 0, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 3000));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	log_stats(_metadata, self->fd, &self->t);
	over = walks_over(&st, 4 * us * 1000);
	TH_LOG("%llu samples, %llu out of time (%llu in chain_leaf, %llu of them with its callers), at most %llu frames kept; %llu walks over %llu us",
	       (unsigned long long)dt.samples, (unsigned long long)dt.time,
	       (unsigned long long)dt.time_leaf,
	       (unsigned long long)dt.time_leaf_ok,
	       (unsigned long long)dt.depth_max, (unsigned long long)over,
	       4 * us);
	EXPECT_EQ(0, self->rd.c.bad);
	ASSERT_GT(dt.samples, 0);
	EXPECT_GT(dt.time, 0);
	EXPECT_EQ(dt.time, st.stop_time);
	EXPECT_EQ(dt.time_leaf, dt.time_leaf_ok);
	EXPECT_LT(dt.depth_max, 8200);
	EXPECT_LE(over * 10, st.samples)
		TH_LOG("more than 10%% of the walks took over 4 times the limit");
}

/* 1.5 s of cpu-clock sampling of 'pid' at 'freq' under a kernel limit. */
static int sample_under_limit(int fd, struct uwt_rings *r,
			      struct uwt_reader *rd, uint32_t pid,
			      unsigned long long limit, uint32_t freq,
			      struct uwprof_stats *st)
{
	int ret;

	uwt_rings_unmap(r);
	ret = uwt_knob(UWT_MAX_RATE, &limit, true);
	if (!ret)
		ret = uwt_start(fd, UWPROF_START_CPU_CLOCK, freq, 64, 0, &pid, 1);
	if (!ret)
		ret = run_for(fd, r, rd, 1500);
	return ret ? ret : uwt_stats(fd, st);
}

/*
 * The kernel's own limit, kernel.perf_event_max_sample_rate: an event
 * that overflows more often in a tick is stopped until the next one. At
 * a limit of 100 Hz (one sample a tick at any HZ) a 4 kHz session is
 * throttled, and says so in kernel_throttles, at most once a sample; at
 * 10 kHz a 100 Hz session is not.
 */
TEST_F(sampling, kernel_throttles)
{
	struct uwprof_stats st;
	uint32_t pid;

	ASSERT_EQ(0, uwt_knob(UWT_MAX_RATE, &self->saved_rate, false));
	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));

	ASSERT_EQ(0, sample_under_limit(self->fd, &self->r, &self->rd, pid,
					100, 4000, &st));
	TH_LOG("limit 100 Hz, 4 kHz asked: events %llu samples %llu kernel_throttles %llu",
	       st.events, st.samples, st.kernel_throttles);
	EXPECT_GT(st.samples, 0);
	EXPECT_GT(st.kernel_throttles, 0);
	EXPECT_LE(st.kernel_throttles, st.events);

	ASSERT_EQ(0, sample_under_limit(self->fd, &self->r, &self->rd, pid,
					10000, 100, &st));
	TH_LOG("limit 10 kHz, 100 Hz asked: events %llu samples %llu kernel_throttles %llu",
	       st.events, st.samples, st.kernel_throttles);
	EXPECT_GT(st.samples, 0);
	EXPECT_EQ(0, st.kernel_throttles);
}

/*
 * Whether the host injects NMIs (tests/vm/run --nmi on x86_64 sets
 * UWPROF_TEST_NMI=1; arm64 pseudo-NMI sets "pmu" and injects nothing).
 */
static bool nmi_injected(void)
{
	const char *source = getenv("UWPROF_TEST_NMI");

	return source && strcmp(source, "pmu");
}

/*
 * The sample path run in NMI context: hardware cycles on x86_64, or on
 * arm64 with pseudo-NMI (tests/vm/run --nmi sets UWPROF_TEST_NMI=pmu), or
 * the NMIs tests/vm/run --nmi injects on x86_64 (it sets UWPROF_TEST_NMI=1)
 * beside a 10 Hz cpu-clock, so that NMIs take most samples. Injected NMIs reach
 * only CPU 0 (the one whose local APIC Linux leaves LINT1 unmasked on),
 * so the chain is pinned there. The counter must see
 * them, the identities documented with struct uwprof_stats must hold
 * exactly, and the chain must be complete in 99% of the leaf samples,
 * which with NMI samples in the majority also bounds how many of those
 * can be short.
 */
TEST_F(sampling, nmi_samples)
{
	struct uwprof_version v = { .size = sizeof(v) };
	const char *source = getenv("UWPROF_TEST_NMI");
	bool pmu_nmi = source && !strcmp(source, "pmu");
	bool injected = nmi_injected();
	uint32_t pid, flags = UWPROF_START_CPU_CLOCK, freq = 10;
	struct uwprof_stats st;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	if (!injected) {
		if (v.arch != UWPROF_ARCH_X86_64 && !pmu_nmi)
			SKIP(return, "no NMI source: arm64 PMU overflows are NMIs only with CONFIG_ARM64_PSEUDO_NMI and irqchip.gicv3_pseudo_nmi=1 (tests/vm/run --arch arm64 --kernel debug --nmi)");
		if (pmu_nmi)
			ASSERT_TRUE(v.caps & UWPROF_CAP_HW_CYCLES)
				TH_LOG("pseudo-NMI asked for, but no PMU cycles event");
		if (!(v.caps & UWPROF_CAP_HW_CYCLES))
			SKIP(return, "no NMI source: no x86 PMU, and no injected NMIs (tests/vm/run --nmi)");
		flags = UWPROF_START_CYCLES;
		freq = 1000;
	}
	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	if (injected) {
		cpu_set_t cpu0;

		CPU_ZERO(&cpu0);
		CPU_SET(0, &cpu0);
		ASSERT_EQ(0, sched_setaffinity(self->child, sizeof(cpu0), &cpu0));
	}
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));
	ASSERT_EQ(0, uwt_start(self->fd, flags, freq, 64, 0, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 4000));
	log_stats(_metadata, self->fd, &self->t);
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	TH_LOG("events %llu, samples %llu (%llu in NMI), lost %llu (samples %llu), skipped %llu; read: samples %llu, lost %llu",
	       st.events, st.samples, st.nmi_samples, st.lost,
	       st.lost_samples, (unsigned long long)uwt_events_skipped(&st),
	       (unsigned long long)self->rd.c.samples,
	       (unsigned long long)self->rd.c.lost);

	EXPECT_EQ(0, self->rd.c.bad);
	EXPECT_EQ(0, self->t.other_pid);
	EXPECT_EQ(0, self->t.bad_user);
	EXPECT_EQ(st.events, st.samples + st.lost_samples +
		  uwt_events_skipped(&st));
	EXPECT_EQ(st.lost, uwt_ctl_lost(&self->r));
	EXPECT_EQ(st.lost, self->rd.c.lost);
	EXPECT_LE(st.lost_samples, st.lost);
	EXPECT_EQ(st.samples, self->rd.c.samples);
	EXPECT_GT(st.nmi_samples, 0);
	if (injected) {
		EXPECT_GT(st.nmi_samples * 2, st.samples)
			TH_LOG("NMIs took too few samples to judge their stacks");
	} else {
		EXPECT_EQ(st.nmi_samples, st.samples);
	}
	ASSERT_GE(self->t.leaf, 100)
		TH_LOG("too few samples in chain_leaf to judge");
	EXPECT_GE(self->t.exact * 100, self->t.leaf * 99);
}

/* 'n' sessions read at once for 'ms', then all stopped and drained. */
static int run_n(int n, int fd[], struct uwt_rings *r[],
		 struct uwt_reader *rd[], long ms)
{
	struct pollfd p[4];
	struct timespec t0;
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = uwt_rings_map(fd[i], r[i]);
		if (ret)
			return ret;
		p[i].fd = fd[i];
		p[i].events = POLLIN;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		poll(p, n, 100);
		for (i = 0; i < n; i++)
			uwt_rings_drain(r[i], rd[i]);
	} while ((long)elapsed_ms(&t0) < ms);
	for (i = 0; i < n; i++) {
		ret = uwt_ioctl(fd[i], UWPROF_IOC_STOP, NULL);
		if (ret)
			return ret;
		uwt_rings_drain(r[i], rd[i]);
	}
	return 0;
}

static int run_two(int fd[2], struct uwt_rings *r[2], struct uwt_reader *rd[2],
		   long ms)
{
	return run_n(2, fd, r, rd, ms);
}

/*
 * The accounting identities of struct uwprof_stats, exactly, for one
 * session after STOP and its last drain.
 */
static void check_session(struct __test_metadata *_metadata, int fd,
			  struct uwt_rings *r, const struct uwt_reader *rd,
			  const char *name, struct uwprof_stats *out)
{
	struct uwprof_stats st;

	ASSERT_EQ(0, uwt_stats(fd, &st));
	*out = st;
	TH_LOG("%s: events %llu, samples %llu (%llu in NMI), lost %llu (samples %llu), skipped: filter %llu, throttle %llu; read: samples %llu, lost %llu",
	       name, st.events, st.samples, st.nmi_samples, st.lost,
	       st.lost_samples, st.skipped_filter, st.skipped_throttle,
	       (unsigned long long)rd->c.samples,
	       (unsigned long long)rd->c.lost);
	EXPECT_EQ(0, rd->c.bad);
	EXPECT_EQ(st.events, st.samples + st.lost_samples +
		  uwt_events_skipped(&st));
	EXPECT_EQ(st.lost, uwt_ctl_lost(r));
	EXPECT_EQ(st.lost, rd->c.lost);
	EXPECT_LE(st.lost_samples, st.lost);
	EXPECT_EQ(st.samples, rd->c.samples);
}

/* Pins 'pid' to CPU 0, where injected NMIs arrive. */
static int pin_cpu0(pid_t pid)
{
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	return sched_setaffinity(pid, sizeof(cpu0), &cpu0);
}

/*
 * Two sessions sample the same process at once, as an always-on agent
 * beside an ad-hoc recording: each uploads its own table and mappings,
 * gets the complete chain in 99% of its leaf samples and accounts for
 * every event of its own. With injected NMIs (pinned to CPU 0) the NMI
 * handler samples both, also inside either session's cpu-clock handler.
 */
TEST_F(sampling, two_sessions)
{
	bool injected = nmi_injected();
	const char *why = NULL;
	struct uwt_reader *rd2 = calloc(1, sizeof(*rd2));
	struct tally t2 = {};
	struct uwt_rings *rs[2] = { &self->r, &self->r2 };
	struct uwt_reader *rds[2] = { &self->rd, rd2 };
	int fds[2];
	uint32_t pid;
	int i;

	ASSERT_NE(NULL, rd2);
	self->fd2 = uwt_open(&why);
	ASSERT_GE(self->fd2, 0) TH_LOG("second open: %s", why);
	fds[0] = self->fd;
	fds[1] = self->fd2;
	memcpy(t2.fn, self->t.fn, sizeof(t2.fn));
	rd2->on_sample = on_sample;
	rd2->on_exit = on_exit_rec;
	rd2->priv = &t2;
	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = t2.pid = self->child;
	if (injected)
		ASSERT_EQ(0, pin_cpu0(self->child));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, upload_chain(fds[i], self->child, &self->blob));
	ASSERT_EQ(0, uwt_start(fds[0], UWPROF_START_CPU_CLOCK, 1000, 64, 0,
			       &pid, 1));
	ASSERT_EQ(0, uwt_start(fds[1], UWPROF_START_CPU_CLOCK, 997, 64, 0,
			       &pid, 1));
	ASSERT_EQ(0, run_two(fds, rs, rds, 4000));
	for (i = 0; i < 2; i++) {
		struct tally *t = i ? &t2 : &self->t;
		struct uwprof_stats st;

		check_session(_metadata, fds[i], rs[i], rds[i],
			      i ? "second" : "first", &st);
		if (injected)
			EXPECT_GT(st.nmi_samples, 0);
		TH_LOG("session %d: %llu samples, %llu of the target in chain_leaf, %llu exact",
		       i + 1, (unsigned long long)t->samples,
		       (unsigned long long)t->leaf,
		       (unsigned long long)t->exact);
		EXPECT_EQ(0, t->other_pid);
		EXPECT_EQ(0, t->bad_user);
		EXPECT_GE(t->leaf, 100);
		EXPECT_GE(t->exact * 100, t->leaf * 99);
	}
	free(rd2);
}

/* Of the events on the chain, the share skipped over the budget, in %. */
static uint64_t throttled_pct(const struct uwprof_stats *st)
{
	uint64_t judged = st->samples + st->lost_samples + st->skipped_throttle;

	return judged ? st->skipped_throttle * 100 / judged : 0;
}

/*
 * Sessions share one walk budget per CPU. At cpu_max_percent 1, two
 * sessions sample the chain (pinned to one CPU) at 20 kHz, more than the
 * share allows, and a third at 100 Hz, which alone stays within it (at
 * most a fifth of its samples skipped). Once the fast ones used up a
 * window's share, every session is skipped for the rest of the window,
 * so the slow session is skipped in the part of each window that comes
 * after: at least 10 points more often than alone is asked. With a
 * budget per session it would be skipped as rarely as alone. (The fast
 * sessions' own rate is no yardstick: their events crowd the end of a
 * window, once their walks no longer hold the CPU.) Injected NMIs (about
 * 300/s) sample every session too, so the slow one walks four times as
 * often: its share is four times as large then.
 */
TEST_F(sampling, cpu_budget_shared)
{
	struct uwt_reader *rd[3] = { &self->rd };
	struct uwt_rings r3 = {}, *rs[3] = { &self->r, &self->r2, &r3 };
	unsigned long long pct = nmi_injected() ? 4 : 1;
	struct uwprof_stats st[3];
	const char *why = NULL;
	uint64_t fast_pct, alone_pct;
	uint32_t pid;
	int fds[3], i;

	ASSERT_EQ(0, uwt_param("cpu_max_percent", &self->saved_pct, false));
	self->fd2 = uwt_open(&why);
	ASSERT_GE(self->fd2, 0) TH_LOG("second open: %s", why);
	fds[0] = self->fd;
	fds[1] = self->fd2;
	fds[2] = uwt_open(&why);
	ASSERT_GE(fds[2], 0) TH_LOG("third open: %s", why);
	for (i = 1; i < 3; i++) {
		rd[i] = calloc(1, sizeof(*rd[i]));
		ASSERT_NE(NULL, rd[i]);
	}
	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, pin_cpu0(self->child));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, upload_chain(fds[i], self->child, &self->blob));
	ASSERT_EQ(0, uwt_param("cpu_max_percent", &pct, true));

	ASSERT_EQ(0, uwt_start(fds[0], UWPROF_START_CPU_CLOCK, 100, 64, 0,
			       &pid, 1));
	ASSERT_EQ(0, run_for(fds[0], &self->r, &self->rd, 2000));
	check_session(_metadata, fds[0], rs[0], rd[0], "100 Hz alone", &st[0]);
	TH_LOG("100 Hz alone: %llu%% skipped over the budget",
	       (unsigned long long)throttled_pct(&st[0]));
	ASSERT_GE(st[0].samples, 50);
	alone_pct = throttled_pct(&st[0]);
	EXPECT_LE(alone_pct, 20);
	uwt_rings_unmap(&self->r);
	memset(&self->rd.c, 0, sizeof(self->rd.c));

	ASSERT_EQ(0, uwt_start(fds[0], UWPROF_START_CPU_CLOCK, 100, 64, 0,
			       &pid, 1));
	for (i = 1; i < 3; i++)
		ASSERT_EQ(0, uwt_start(fds[i], UWPROF_START_CPU_CLOCK, 20000,
				       64, 0, &pid, 1));
	ASSERT_EQ(0, run_n(3, fds, rs, rd, 3000));
	for (i = 0; i < 3; i++)
		check_session(_metadata, fds[i], rs[i], rd[i],
			      i ? "20 kHz" : "100 Hz", &st[i]);
	fast_pct = (st[1].skipped_throttle + st[2].skipped_throttle) * 100 /
		   (st[1].samples + st[1].skipped_throttle +
		    st[2].samples + st[2].skipped_throttle + 1);
	TH_LOG("together: 100 Hz %llu%% skipped, 20 kHz %llu%% and %llu%% (%llu%% of both)",
	       (unsigned long long)throttled_pct(&st[0]),
	       (unsigned long long)throttled_pct(&st[1]),
	       (unsigned long long)throttled_pct(&st[2]),
	       (unsigned long long)fast_pct);
	ASSERT_GE(fast_pct, 30)
		TH_LOG("the fast sessions' walks did not use up the share: nothing to judge");
	EXPECT_GE(st[0].samples + st[0].skipped_throttle, 100);
	EXPECT_GE(throttled_pct(&st[0]), alone_pct + 10);
	uwt_rings_unmap(&r3);
	close(fds[2]);
	for (i = 1; i < 3; i++)
		free(rd[i]);
}

/* Samples by thread, for the filter tests. */
struct who_tally {
	uint32_t id[3];		/* tids (of single-threaded processes: pids) */
	uint64_t n[3];
	uint64_t first_ns[3];	/* the earliest sample of each */
	uint32_t threads_of;	/* a process whose other threads count... */
	uint64_t threads;	/* ... here */
	uint64_t other;		/* of anything else */
	uint32_t other_id;
};

static void on_who_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			  void *priv)
{
	struct who_tally *w = priv;
	uint32_t id = s->tid;
	int i;

	(void)ring;
	if (w->threads_of && s->pid == w->threads_of && s->tid != s->pid) {
		w->threads++;
		return;
	}
	for (i = 0; i < 3; i++) {
		if (w->id[i] && w->id[i] == id) {
			if (!w->n[i]++ || s->time_ns < w->first_ns[i])
				w->first_ns[i] = s->time_ns;
			return;
		}
	}
	w->other++;
	w->other_id = id;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The cgroup filter: of three spinning processes, one is moved into a
 * fresh cgroup v2 directory before START, one after, and one never. Only
 * the first two are sampled, the second only from its move on; the
 * cgroup's fd is closed right after START.
 */
TEST_F(sampling, cgroup_filter)
{
	struct uwprof_start a = { .size = sizeof(a) };
	struct who_tally w = {};
	struct uwprof_stats st;
	uint64_t moved;
	int cg, ret, i;

	ret = uwt_cgroup_make("uwprof-sampling", self->cgroup,
			      sizeof(self->cgroup));
	if (ret) {
		self->cgroup[0] = 0;
		SKIP(return, "no cgroup v2 hierarchy: %s", strerror(-ret));
	}
	for (i = 0; i < 3; i++) {
		self->more[i] = uwt_spinner();
		ASSERT_GT(self->more[i], 0);
		w.id[i] = self->more[i];
	}
	ASSERT_EQ(0, uwt_cgroup_enter(self->cgroup, self->more[0]));
	cg = open(self->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(cg, 0);
	a.flags = UWPROF_START_SYSTEM_WIDE | UWPROF_START_CGROUP |
		  UWPROF_START_CPU_CLOCK;
	a.freq_hz = 1000;
	a.max_depth = 16;
	a.cgroup_fd = cg;
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_START, &a));
	close(cg);
	self->rd.on_sample = on_who_sample;
	self->rd.on_exit = NULL;
	self->rd.priv = &w;
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	uwt_sleep_ms(1000);
	uwt_rings_drain(&self->r, &self->rd);
	moved = mono_ns();
	ASSERT_EQ(0, uwt_cgroup_enter(self->cgroup, self->more[1]));
	uwt_sleep_ms(1500);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	uwt_rings_drain(&self->r, &self->rd);
	TH_LOG("inside from the start %llu samples, moved in %llu (first %lld us after the move), never inside %llu, others %llu (last %u)",
	       (unsigned long long)w.n[0], (unsigned long long)w.n[1],
	       w.n[1] ? (long long)(w.first_ns[1] - moved) / 1000 : -1LL,
	       (unsigned long long)w.n[2], (unsigned long long)w.other,
	       w.other_id);
	check_session(_metadata, self->fd, &self->r, &self->rd, "cgroup", &st);
	EXPECT_GE(w.n[0], 100);
	EXPECT_GE(w.n[1], 50);
	EXPECT_GE(w.first_ns[1], moved);
	EXPECT_EQ(0, w.n[2]);
	EXPECT_EQ(0, w.other);
	EXPECT_GT(st.skipped_filter, 0);
}

struct spin_name {
	const char *name;
	int ready;		/* fd: a byte once the name is set */
};

/* Names its thread, says so, spins. */
static void *spin_named_main(void *arg)
{
	const struct spin_name *n = arg;
	volatile unsigned long x = 0;

	prctl(PR_SET_NAME, n->name);
	if (write(n->ready, "r", 1) != 1)
		_exit(1);
	for (;;)
		x++;
	return NULL;
}

/*
 * A process whose main thread spins named 'main_name', with a second
 * spinning thread named 'thread_name' unless NULL. Returns its pid once
 * the last name is set.
 */
static pid_t spin_named(const char *main_name, const char *thread_name)
{
	struct spin_name n;
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid) {
		close(p[1]);
		if (pid < 0 || read(p[0], &c, 1) != 1) {
			uwt_reap(pid);
			pid = -1;
		}
		close(p[0]);
		return pid;
	}
	close(p[0]);
	n.ready = p[1];
	if (thread_name) {
		volatile unsigned long x = 0;
		pthread_t th;

		prctl(PR_SET_NAME, main_name);
		n.name = thread_name;
		if (pthread_create(&th, NULL, spin_named_main, &n))
			_exit(1);
		for (;;)
			x++;
	}
	n.name = main_name;
	spin_named_main(&n);
	_exit(0);
}

/*
 * The comm filter compares each thread's own name: a process named
 * "uwt-yes", one named "uwt-no", and one named "uwt-no" with a thread
 * "uwt-yes". Only the first process and that thread are sampled.
 */
TEST_F(sampling, comm_filter)
{
	struct uwprof_start a = { .size = sizeof(a) };
	struct who_tally w = {};
	struct uwprof_stats st;
	int i;

	self->more[0] = spin_named("uwt-yes", NULL);
	self->more[1] = spin_named("uwt-no", NULL);
	self->more[2] = spin_named("uwt-no", "uwt-yes");
	for (i = 0; i < 3; i++) {
		ASSERT_GT(self->more[i], 0);
		w.id[i] = self->more[i];
	}
	a.flags = UWPROF_START_SYSTEM_WIDE | UWPROF_START_COMM |
		  UWPROF_START_CPU_CLOCK;
	a.freq_hz = 1000;
	a.max_depth = 16;
	strcpy(a.comm, "uwt-yes");
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_START, &a));
	w.threads_of = self->more[2];
	self->rd.on_sample = on_who_sample;
	self->rd.on_exit = NULL;
	self->rd.priv = &w;
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 2500));
	TH_LOG("uwt-yes %llu samples, uwt-no %llu, the mixed process's main thread (uwt-no) %llu, its uwt-yes thread %llu, others %llu (last tid %u)",
	       (unsigned long long)w.n[0], (unsigned long long)w.n[1],
	       (unsigned long long)w.n[2], (unsigned long long)w.threads,
	       (unsigned long long)w.other, w.other_id);
	check_session(_metadata, self->fd, &self->r, &self->rd, "comm", &st);
	EXPECT_GE(w.n[0], 100);
	EXPECT_EQ(0, w.n[1]);
	EXPECT_EQ(0, w.n[2]);
	EXPECT_GE(w.threads, 100);
	EXPECT_EQ(0, w.other);
	EXPECT_GT(st.skipped_filter, 0);
}

/* A process that spends its time in system calls. */
static pid_t syscaller(void)
{
	pid_t pid = fork();

	if (!pid) {
		static char buf[1 << 16];
		int fd = open("/dev/zero", O_RDONLY);

		for (;;)
			if (read(fd, buf, sizeof(buf)) < 0)
				_exit(1);
	}
	return pid;
}

TEST_F(sampling, kernel_frames_first)
{
	struct uwprof_version v = { .size = sizeof(v) };
	uint32_t pid;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	if (!(v.caps & UWPROF_CAP_KERNEL_STACK))
		SKIP(return, "kernel stacks not allowed for this opener");
	self->child = syscaller();
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_KERNEL_STACK, 1000, 32, 0,
			       &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 2000));
	TH_LOG("%llu samples, %llu in kernel, %llu with kernel frames (%llu with callers, %llu frames)",
	       (unsigned long long)self->t.samples,
	       (unsigned long long)self->t.in_kernel,
	       (unsigned long long)self->t.with_kernel,
	       (unsigned long long)self->t.kwalked,
	       (unsigned long long)self->t.kframes);
	EXPECT_EQ(0, self->rd.c.bad);
	EXPECT_GT(self->t.in_kernel, 0);
	/* Kernel frames exactly when the sample hit the kernel. */
	EXPECT_EQ(self->t.in_kernel, self->t.with_kernel);
	/* Most walks reach the interrupted pc and carry its callers. */
	EXPECT_GE(self->t.kwalked * 2, self->t.in_kernel);
	EXPECT_EQ(0, self->t.bad_kernel);
	EXPECT_EQ(0, self->t.bad_user);
}

/* Samples of processes other than t->pid, in chain_leaf. */
struct fork_tally {
	struct range fn[F_NR];
	uint32_t parent;
	uint64_t leaf, exact;
};

static void on_child_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			    void *priv)
{
	const __u64 *u = s->ips + s->nr_kernel;
	struct fork_tally *t = priv;
	uint32_t i;

	(void)ring;
	if (s->pid == t->parent || !s->nr_user || !in(&t->fn[F_LEAF], u[0]))
		return;
	t->leaf++;
	for (i = 1; i < F_NR; i++)
		if (i >= s->nr_user || !in(&t->fn[i], u[i]))
			break;
	if (i == F_NR)
		t->exact++;
}

/* A forked child unwinds from its first sample, with no upload of its own. */
TEST_F(sampling, fork_inherits_mappings)
{
	struct fork_tally ft = {};
	struct uwprof_stats st;

	self->child = uwt_spawn2(CHAIN, "60", "fork");
	ASSERT_GT(self->child, 0);
	memcpy(ft.fn, self->t.fn, sizeof(ft.fn));
	ft.parent = self->child;
	self->rd.on_sample = on_child_sample;
	self->rd.priv = &ft;
	ASSERT_EQ(0, upload_chain(self->fd, self->child, &self->blob));
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE, 1000, 64, 0,
			       NULL, 0));
	ASSERT_EQ(0, kill(self->child, SIGUSR1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 4000));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	TH_LOG("inherited %llu, child samples in chain_leaf %llu, exact %llu",
	       st.processes_inherited, (unsigned long long)ft.leaf,
	       (unsigned long long)ft.exact);
	EXPECT_GE(st.processes_inherited, 1);
	EXPECT_EQ(2, st.processes);
	/* The emulated arm64 guest is slow: 30 samples still judge 99%. */
	ASSERT_GE(ft.leaf, 30);
	EXPECT_GE(ft.exact * 100, ft.leaf * 99);
}

/*
 * A process with UWPROF_MAX_MAPS - 1 mappings forks 100 children that stay:
 * each inherits the list by reference, so the session's memory grows by a
 * small entry per child, not by a copy of the list (which, 100 times, would
 * take most of table_mem_max from every other session). A child gets its
 * entry before its first user instruction, not at fork(): each says so
 * once it runs.
 */
TEST_F(sampling, fork_shares_mappings)
{
	const uint32_t nr = UWPROF_MAX_MAPS - 1, kids = 100;
	struct uwprof_stats before, after;
	struct uwprof_map *maps;
	int go[2], ready[2];
	uint32_t i;
	char c = 0;

	maps = calloc(nr, sizeof(*maps));
	ASSERT_NE(NULL, maps);
	for (i = 0; i < nr; i++) {
		maps[i].start = 0x10000ULL + (uint64_t)i * 0x2000;
		maps[i].end = maps[i].start + 0x1000;
		maps[i].flags = UWPROF_MAP_NO_TABLE;
	}
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* The parent: forks on the word, each child waits for EOF. */
		close(go[1]);
		close(ready[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < kids; i++)
			if (!fork()) {
				if (write(ready[1], &c, 1) != 1)
					_exit(1);
				while (read(go[0], &c, 1) > 0)
					;
				_exit(0);
			}
		_exit(write(ready[1], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	close(ready[1]);
	ASSERT_EQ(0, uwt_maps_set(self->fd, self->child, maps, nr));
	free(maps);
	ASSERT_EQ(0, uwt_stats(self->fd, &before));
	ASSERT_EQ(1, write(go[1], &c, 1));
	/* One word from each child and one from their parent. */
	for (i = 0; i <= kids; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, uwt_stats(self->fd, &after));
	/* Children end at EOF of 'go'; the parent has exited already. */
	close(go[1]);
	close(ready[0]);
	waitpid(self->child, NULL, 0);
	self->child = -1;
	TH_LOG("%u children of a process with %u mappings: %llu inherited, session memory %llu -> %llu bytes",
	       kids, nr, (unsigned long long)after.processes_inherited,
	       (unsigned long long)before.table_bytes,
	       (unsigned long long)after.table_bytes);
	EXPECT_EQ(kids, after.processes_inherited);
	EXPECT_LE(after.table_bytes - before.table_bytes, kids * 256ULL);
}

/* A process that sleeps 20 ms at a time. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (!pid)
		for (;;)
			uwt_sleep_ms(20);
	return pid;
}

struct off_tally {
	uint32_t pid;
	uint64_t on, off, off_ns, bad, with_kernel, bad_kernel;
};

static void on_off_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			  void *priv)
{
	struct off_tally *t = priv;
	uint32_t i;

	/* Every record names the CPU of its ring, where the thread ran again. */
	if (s->cpu != ring)
		t->bad++;
	if (!(s->flags & UWPROF_SAMPLE_OFF_CPU)) {
		t->on++;
		return;
	}
	t->off++;
	t->off_ns += s->period;
	/* Blocks of the sleeper only, at least the minimum, in the kernel. */
	if (s->pid != t->pid || s->tid != t->pid || s->period < 5000000 ||
	    s->period > 2000000000ULL || !(s->flags & UWPROF_SAMPLE_IN_KERNEL) ||
	    !s->nr_user || (s->flags & UWPROF_SAMPLE_SNAPSHOT))
		t->bad++;
	if (s->nr_kernel)
		t->with_kernel++;
	for (i = 0; i < s->nr_kernel; i++)
		if (s->ips[i] < KERNEL_HALF)
			t->bad_kernel++;
}

/*
 * Off-CPU samples: one per 20 ms sleep, weighed by its length, with the
 * kernel frames where it slept; the off-CPU counters add up.
 */
TEST_F(sampling, off_cpu)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct uwprof_start a = { .size = sizeof(a) };
	struct off_tally ot = {};
	struct uwprof_stats st;
	uint64_t ended;
	uint32_t pid;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	if (!(v.caps & UWPROF_CAP_OFF_CPU))
		SKIP(return, "no sched_switch tracepoint");
	self->child = sleeper();
	ASSERT_GT(self->child, 0);
	pid = ot.pid = self->child;
	self->rd.on_sample = on_off_sample;
	self->rd.priv = &ot;
	/* The minimum needs the flag. */
	a.flags = UWPROF_START_CPU_CLOCK;
	a.freq_hz = 100;
	a.max_depth = 32;
	a.nr_pids = 1;
	a.pids = (uintptr_t)&pid;
	a.off_cpu_min_ns = 5000000;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_START, &a));
	a.flags |= UWPROF_START_OFF_CPU;
	if (v.caps & UWPROF_CAP_KERNEL_STACK)
		a.flags |= UWPROF_START_KERNEL_STACK;
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_START, &a));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 2000));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	TH_LOG("off-CPU: %llu samples (%llu ms), %llu on-CPU; stats: blocks %llu samples %llu short %llu dropped %llu lost %llu",
	       (unsigned long long)ot.off,
	       (unsigned long long)(ot.off_ns / 1000000),
	       (unsigned long long)ot.on, st.off_cpu_blocks, st.off_cpu_samples,
	       st.off_cpu_short, st.off_cpu_dropped, st.off_cpu_lost);
	EXPECT_EQ(0, self->rd.c.bad);
	EXPECT_EQ(0, ot.bad);
	EXPECT_GE(ot.off, 20);
	EXPECT_EQ(st.off_cpu_samples, ot.off);
	/* Asleep most of the 2 s, and never longer than the run. */
	EXPECT_GE(ot.off_ns, 1000000000ULL);
	EXPECT_LE(ot.off_ns, 2500000000ULL);
	/* Every block ended one way, but the one still asleep at STOP. */
	ended = st.off_cpu_samples + st.off_cpu_short + st.off_cpu_dropped +
		st.off_cpu_lost;
	EXPECT_GE(st.off_cpu_blocks, ended);
	EXPECT_LE(st.off_cpu_blocks, ended + 1);
	if (a.flags & UWPROF_START_KERNEL_STACK) {
		EXPECT_EQ(ot.off, ot.with_kernel);
		EXPECT_EQ(0, ot.bad_kernel);
	}
}

/*
 * A child that execs the chain (running 'seconds') once a byte arrives on
 * *go; -1 if fork or pipe failed.
 */
static pid_t spawn_exec_on_go(const char *seconds, int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		execl(CHAIN, CHAIN, seconds, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* Waits up to 'ms' for the state to be (want) or not to be (!want) 'T'. */
static bool wait_stopped(pid_t pid, bool want, long ms)
{
	for (; ms > 0; ms -= 10) {
		if ((uwt_proc_state(pid) == 'T') == want)
			return true;
		uwt_sleep_ms(10);
	}
	return false;
}

/*
 * HOLD_EXEC: a process with mappings stops at its exec, before the new
 * image runs, until the reader uploads it ('upload'), or else until the
 * module's time limit lets it go; either way it then runs to its end.
 */
static void hold_exec(struct __test_metadata *_metadata,
		      FIXTURE_DATA(sampling) *self, bool upload)
{
	struct uwprof_map m = {
		.start = 0x10000, .end = 0x20000, .flags = UWPROF_MAP_NO_TABLE,
	};
	struct timespec t0, t1;
	int go, status;
	uint32_t pid;
	long held_ms;
	char c = 0;

	self->child = spawn_exec_on_go("1", &go);
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, uwt_maps_set(self->fd, pid, &m, 1));
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_HOLD_EXEC, 1000, 32, 0,
			       &pid, 1));
	ASSERT_EQ(1, write(go, &c, 1));
	close(go);
	ASSERT_TRUE(wait_stopped(pid, true, 5000))
		TH_LOG("the child did not stop at its exec");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (upload) {
		uwt_sleep_ms(100);
		EXPECT_EQ('T', uwt_proc_state(pid)) TH_LOG("let go before the upload");
		ASSERT_EQ(0, uwt_maps_set(self->fd, pid, &m, 1));
	}
	ASSERT_TRUE(wait_stopped(pid, false, 5000))
		TH_LOG("the child was never let go");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	held_ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		  (t1.tv_nsec - t0.tv_nsec) / 1000000;
	TH_LOG("held %ld ms after the stop was seen", held_ms);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 200));
	EXPECT_EQ(1, self->t.exits[1]);
	EXPECT_GT(self->t.samples, 0);
}

TEST_F(sampling, hold_exec_until_upload)
{
	hold_exec(_metadata, self, true);
}

TEST_F(sampling, hold_exec_time_limit)
{
	hold_exec(_metadata, self, false);
}

/*
 * Two sessions hold the same process at its exec: it stays stopped until
 * both readers answered, and each session gets its EXIT record.
 */
TEST_F(sampling, hold_exec_two_sessions)
{
	struct uwprof_map m = {
		.start = 0x10000, .end = 0x20000, .flags = UWPROF_MAP_NO_TABLE,
	};
	struct uwt_reader *rd2 = calloc(1, sizeof(*rd2));
	struct uwt_rings *rs[2] = { &self->r, &self->r2 };
	struct uwt_reader *rds[2] = { &self->rd, rd2 };
	struct tally t2 = {};
	const char *why = NULL;
	int go, status, fds[2], i;
	uint32_t pid;
	char c = 0;

	ASSERT_NE(NULL, rd2);
	self->fd2 = uwt_open(&why);
	ASSERT_GE(self->fd2, 0) TH_LOG("second open: %s", why);
	fds[0] = self->fd;
	fds[1] = self->fd2;
	rd2->on_sample = on_sample;
	rd2->on_exit = on_exit_rec;
	rd2->priv = &t2;
	self->child = spawn_exec_on_go("1", &go);
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = t2.pid = self->child;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, uwt_maps_set(fds[i], pid, &m, 1));
		ASSERT_EQ(0, uwt_start(fds[i], UWPROF_START_HOLD_EXEC, 1000, 32,
				       0, &pid, 1));
	}
	ASSERT_EQ(1, write(go, &c, 1));
	close(go);
	ASSERT_TRUE(wait_stopped(pid, true, 5000))
		TH_LOG("the child did not stop at its exec");
	ASSERT_EQ(0, uwt_maps_set(fds[0], pid, &m, 1));
	/* Well within the 500 ms the module holds a process at most. */
	uwt_sleep_ms(100);
	EXPECT_EQ('T', uwt_proc_state(pid))
		TH_LOG("let go while the second session still held it");
	ASSERT_EQ(0, uwt_maps_set(fds[1], pid, &m, 1));
	EXPECT_TRUE(wait_stopped(pid, false, 5000))
		TH_LOG("not let go once both answered");
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, run_two(fds, rs, rds, 200));
	EXPECT_EQ(1, self->t.exits[1]);
	EXPECT_EQ(1, t2.exits[1]);
	free(rd2);
}

/*
 * System-wide, an exec is reported even for a process nobody uploaded:
 * it is the reader's earliest news of a new image. Its exit is not (it
 * had no mappings to drop).
 */
TEST_F(sampling, exec_reported_system_wide)
{
	struct uwprof_stats st;
	int go, status;
	char c = 0;

	self->child = spawn_exec_on_go("0", &go);
	ASSERT_GT(self->child, 0);
	self->t.pid = self->child;
	/* Other processes' records are expected here: only count ours. */
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE, 100, 8, 0,
			       NULL, 0));
	ASSERT_EQ(1, write(go, &c, 1));
	close(go);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 200));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(1, self->t.exits[1]) TH_LOG("EXIT records with exec=1 for the child");
	EXPECT_EQ(0, self->t.exits[0]) TH_LOG("EXIT records with exec=0 for the child");
	EXPECT_GE(st.exit_records, 1);
}

/* The MMAP records of one process. */
struct mmap_tally {
	pid_t pid;
	uint64_t exec_chain;	/* the program, mapped by the exec */
	uint64_t exec_other;	/* its interpreter (dynamic programs) */
	uint64_t later;		/* mapped after the exec: libraries */
	uint64_t vdso;
	uint64_t bad;		/* wrong pgoff or tid, a path not a file */
	uint64_t exec_ns;	/* the exec's EXIT record */
	uint64_t last_exec_map_ns;	/* the latest UWPROF_MMAP_EXEC record */
};

static void on_mmap_exit(const struct uwprof_rec_exit *e, void *priv)
{
	struct mmap_tally *t = priv;

	if ((pid_t)e->pid == t->pid && e->exec)
		t->exec_ns = e->time_ns;
}

static void on_mmap_rec(const struct uwprof_rec_mmap *m, void *priv)
{
	struct mmap_tally *t = priv;
	struct stat st;

	if ((pid_t)m->pid != t->pid)
		return;
	if (m->tid != m->pid || (m->pgoff & 4095))
		t->bad++;
	if (m->flags & UWPROF_MMAP_VDSO) {
		t->vdso++;
		return;
	}
	if (stat(m->path, &st) || st.st_ino != m->ino)
		t->bad++;
	if (m->flags & UWPROF_MMAP_EXEC && m->time_ns > t->last_exec_map_ns)
		t->last_exec_map_ns = m->time_ns;
	if (!(m->flags & UWPROF_MMAP_EXEC))
		t->later++;
	else if (strstr(m->path, "/uwprof_chain"))
		t->exec_chain++;
	else
		t->exec_other++;
}

/*
 * A child that execs the chain, system-wide with MMAP records: the exec's
 * own mappings (the program, its interpreter) carry UWPROF_MMAP_EXEC with
 * the file's path and inode, the libraries the interpreter maps later do
 * not, and the vDSO has its record; without the flag, no record. The
 * exec's records are dated before its EXIT record, wherever each lies in
 * the rings (the records are written on the way back to user space).
 */
TEST_F(sampling, mmap_records)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct mmap_tally mt = {};
	struct uwprof_stats st;
	int go, status, round;
	char c = 0;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	if (!(v.caps & UWPROF_CAP_MMAP))
		SKIP(return, "this kernel has no kprobes");
	self->rd.on_mmap = on_mmap_rec;
	self->rd.priv = &mt;
	self->rd.on_sample = NULL;
	self->rd.on_exit = on_mmap_exit;
	for (round = 0; round < 2; round++) {
		uint32_t flags = UWPROF_START_SYSTEM_WIDE |
				 (round ? 0 : UWPROF_START_MMAP);

		memset(&mt, 0, sizeof(mt));
		memset(&self->rd.c, 0, sizeof(self->rd.c));
		self->child = spawn_exec_on_go("0", &go);
		ASSERT_GT(self->child, 0);
		mt.pid = self->child;
		ASSERT_EQ(0, uwt_start(self->fd, flags, 100, 8, 0, NULL, 0));
		ASSERT_EQ(1, write(go, &c, 1));
		close(go);
		ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
		self->child = -1;
		ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 200));
		ASSERT_EQ(0, uwt_stats(self->fd, &st));
		uwt_rings_unmap(&self->r);
		EXPECT_EQ(0, self->rd.c.bad);
		EXPECT_EQ(st.mmap_records, self->rd.c.mmaps)
			TH_LOG("the stats count every MMAP record read (none lost: %llu)",
			       (unsigned long long)self->rd.c.lost);
		if (round) {
			EXPECT_EQ(0, self->rd.c.mmaps) TH_LOG("records without the flag");
			continue;
		}
		EXPECT_EQ(0, mt.bad);
		EXPECT_GE(mt.exec_chain, 1) TH_LOG("the program's code, mapped by its exec");
		EXPECT_NE(0, mt.exec_ns) TH_LOG("the exec's EXIT record");
		EXPECT_LT(mt.last_exec_map_ns, mt.exec_ns)
			TH_LOG("the exec's mappings are dated before its EXIT record");
		EXPECT_EQ(1, mt.vdso);
		/* A dynamic program: ld.so by the exec, libc after it. */
		if (mt.exec_other || mt.later) {
			EXPECT_GE(mt.exec_other, 1);
			EXPECT_GE(mt.later, 1);
		}
		TH_LOG("child's MMAP records: %llu of the program, %llu of the interpreter, %llu later, %llu vDSO",
		       (unsigned long long)mt.exec_chain,
		       (unsigned long long)mt.exec_other,
		       (unsigned long long)mt.later,
		       (unsigned long long)mt.vdso);
	}
}

/*
 * A child that makes a page of a file executable and not, as fast as it
 * can for 'ms' milliseconds: every mprotect to PROT_EXEC is a new
 * executable mapping of the file. It writes how many it made to 'out'.
 */
static pid_t mprotect_loop(long ms, int out)
{
	long pg = sysconf(_SC_PAGESIZE), n = 0;
	struct timespec t0, t;
	pid_t pid = fork();
	void *p;
	int fd;

	if (pid)
		return pid;
	fd = open(CHAIN, O_RDONLY | O_CLOEXEC);
	p = fd < 0 ? MAP_FAILED : mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		_exit(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (mprotect(p, pg, PROT_READ | PROT_EXEC) ||
		    mprotect(p, pg, PROT_READ))
			_exit(1);
		n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	_exit(write(out, &n, sizeof(n)) == sizeof(n) ? 0 : 1);
}

/*
 * MMAP records are rate limited: a process looping over mprotect for a
 * second gets at most UWPROF_MMAP_RATE records a second per CPU written,
 * the rest counted as throttled; every mapping it made is one or the
 * other (or lost, should the ring fill).
 */
TEST_F(sampling, mmap_records_rate_limited)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct uwprof_stats st;
	int status, pfd[2];
	long made = 0;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	if (!(v.caps & UWPROF_CAP_MMAP))
		SKIP(return, "this kernel has no kprobes");
	self->rd.on_sample = NULL;
	self->rd.on_exit = NULL;
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE |
			       UWPROF_START_MMAP, 100, 8, 256, NULL, 0));
	self->child = mprotect_loop(1000, pfd[1]);
	ASSERT_GT(self->child, 0);
	close(pfd[1]);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_EQ(sizeof(made), read(pfd[0], &made, sizeof(made)));
	close(pfd[0]);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 100));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	TH_LOG("%ld mprotect(PROT_EXEC) in 1 s: %llu MMAP records written, %llu throttled, %llu records lost",
	       made, (unsigned long long)st.mmap_records,
	       (unsigned long long)st.mmap_throttled,
	       (unsigned long long)st.lost);
	/* One second of looping spans two seconds of the clock, per CPU. */
	EXPECT_LE(st.mmap_records, (uint64_t)UWPROF_MMAP_RATE * 2 * v.nr_cpus);
	EXPECT_GE(st.mmap_records + st.mmap_throttled + st.lost,
		  (uint64_t)made);
	if (made > UWPROF_MMAP_RATE * 2 * (long)v.nr_cpus)
		EXPECT_LT(0, st.mmap_throttled);
}

/* Samples taken inside execve, over every process. */
struct exec_tally {
	uint64_t samples, in_exec, bad;
};

static void on_exec_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			   void *priv)
{
	struct exec_tally *t = priv;

	(void)ring;
	t->samples++;
	if (!(s->flags & UWPROF_SAMPLE_EXEC))
		return;
	t->in_exec++;
	if (s->nr_user || (s->flags & UWPROF_SAMPLE_STOP_MASK) != UWPROF_STOP_READ)
		t->bad++;
}

/* A child that forks and execs the chain (which exits at once) 'n' times. */
static pid_t exec_loop(int n)
{
	pid_t pid = fork(), c;
	int i;

	if (pid)
		return pid;
	for (i = 0; i < n; i++) {
		c = fork();
		if (!c) {
			execl(CHAIN, CHAIN, "0", (char *)NULL);
			_exit(127);
		}
		if (c < 0 || waitpid(c, NULL, 0) != c)
			_exit(1);
	}
	_exit(0);
}

/*
 * From exec_mmap() until the exec probe, registers and uploaded mappings
 * belong to different images: such samples carry UWPROF_SAMPLE_EXEC, no
 * user frame and UWPROF_STOP_READ. Hundreds of execs under a 1 kHz clock
 * land in that gap many times. The loop ends at EXEC_GAP_SEEN such
 * samples or after EXEC_GAP_MS: on the debug kernel in a guest whose host
 * is busy, an exec takes up to a second, and 300 of them outlasted the
 * harness's limit.
 */
#define EXEC_GAP_SEEN	100
#define EXEC_GAP_MS	120000

TEST_F(sampling, exec_gap_has_no_user_frames)
{
	struct exec_tally t = { 0 };
	struct timespec t0, now;
	int status, cut = 0;

	self->rd.on_sample = on_exec_sample;
	self->rd.priv = &t;
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE, 1000, 64, 0,
			       NULL, 0));
	self->child = exec_loop(300);
	ASSERT_GT(self->child, 0);
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (waitpid(self->child, &status, WNOHANG) == 0) {
		uwt_rings_drain(&self->r, &self->rd);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!cut && (t.in_exec >= EXEC_GAP_SEEN ||
			     (now.tv_sec - t0.tv_sec) * 1000 +
			     (now.tv_nsec - t0.tv_nsec) / 1000000 >= EXEC_GAP_MS))
			cut = !kill(self->child, SIGKILL);
		uwt_sleep_ms(50);
	}
	self->child = -1;
	EXPECT_TRUE(cut ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL :
		    WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	uwt_rings_drain(&self->r, &self->rd);
	TH_LOG("%llu samples, %llu inside execve, %llu of them with user frames or another stop%s",
	       (unsigned long long)t.samples, (unsigned long long)t.in_exec,
	       (unsigned long long)t.bad, cut ? " (loop ended early)" : "");
	EXPECT_GT(t.in_exec, 0);
	EXPECT_EQ(0, t.bad);
}

TEST_F(sampling, unknown_process)
{
	uint32_t pid;

	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = self->child;
	ASSERT_EQ(0, uwt_start(self->fd, 0, 1000, 32, 0, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 1500));
	EXPECT_GT(self->t.samples, 0);
	EXPECT_EQ(self->t.samples, self->t.stops[UWPROF_STOP_NO_PROCESS]);
	EXPECT_GT(self->rd.c.unknown, 0);
}

/* Snapshot records of the child, checked as they are read. */
struct snap_tally {
	uint32_t pid;
	uint64_t samples, with, bad, bytes, cut, time;
};

#if defined(__x86_64__)
#define SNAP_NR_GPR	16
#define SNAP_SP_REGNO	7
#else
#define SNAP_NR_GPR	32
#define SNAP_SP_REGNO	31
#endif

static void on_snap_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			   void *priv)
{
	const struct uwprof_snapshot *sn;
	struct snap_tally *t = priv;
	size_t off, need;

	(void)ring;
	if (s->pid != t->pid)
		return;
	t->samples++;
	if (!(s->flags & UWPROF_SAMPLE_SNAPSHOT))
		return;
	t->with++;
	off = sizeof(*s) + 8 * ((size_t)s->nr_kernel + s->nr_user);
	sn = (const void *)((const char *)s + off);
	need = off + sizeof(*sn) + 8 * (size_t)sn->nr_gpr + sn->stack_size;
	/*
	 * A copy the walk's time limit shortened (a vCPU the host preempted
	 * mid-sample) is cut below the size, maybe to nothing.
	 */
	if (need > s->hdr.size || s->hdr.size - need >= 8 || !s->nr_user ||
	    sn->pc != s->ips[s->nr_kernel + s->nr_user - 1] ||
	    sn->flags & ~(UWPROF_SNAP_CUT | UWPROF_SNAP_TIME) ||
	    sn->nr_gpr != SNAP_NR_GPR ||
	    ((const uint64_t *)(sn + 1))[SNAP_SP_REGNO] != sn->sp ||
	    sn->stack_size > 4096 ||
	    ((sn->flags & UWPROF_SNAP_TIME) ? sn->stack_size == 4096 :
	     !sn->stack_size ||
	     !!(sn->flags & UWPROF_SNAP_CUT) != (sn->stack_size == 4096)) ||
	    (s->flags & UWPROF_SAMPLE_STOP_MASK) != UWPROF_STOP_NO_PROCESS) {
		if (t->bad++ < 3)
			fprintf(stderr, "# bad snapshot: size %u flags %#x nr_gpr %u stack %u\n",
				s->hdr.size, sn->flags, sn->nr_gpr, sn->stack_size);
		return;
	}
	t->bytes += sn->stack_size;
	t->time += !!(sn->flags & UWPROF_SNAP_TIME);
	t->cut += !!(sn->flags & UWPROF_SNAP_CUT);
}

/*
 * A process nobody uploaded: every sample of it carries the interrupted
 * registers and up to snapshot_size bytes of its stack, and the stats
 * count exactly those.
 */
TEST_F(sampling, snapshot_of_unknown_process)
{
	struct snap_tally st = { 0 };
	struct uwprof_stats s;
	uint32_t pid;

	self->child = uwt_spawn(CHAIN, "60");
	ASSERT_GT(self->child, 0);
	pid = st.pid = self->child;
	self->rd.on_sample = on_snap_sample;
	self->rd.on_exit = NULL;
	self->rd.priv = &st;
	ASSERT_EQ(0, uwt_start_snap(self->fd, UWPROF_START_SNAPSHOT, 1000, 32,
				    0, 4096, &pid, 1));
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 1500));
	ASSERT_EQ(0, uwt_stats(self->fd, &s));
	TH_LOG("%llu samples, %llu with snapshots (%llu cut at 4096, %llu shortened for time), %llu bad",
	       (unsigned long long)st.samples, (unsigned long long)st.with,
	       (unsigned long long)st.cut, (unsigned long long)st.time,
	       (unsigned long long)st.bad);
	EXPECT_GT(st.samples, 0);
	EXPECT_EQ(st.samples, st.with);
	EXPECT_EQ(0, st.bad);
	EXPECT_EQ(st.with, s.snapshots);
	EXPECT_EQ(st.bytes, s.snapshot_bytes);
	EXPECT_EQ(st.time, s.snapshots_time_cut);
}

TEST_F(sampling, exit_and_exec_drop_mappings)
{
	struct uwprof_process_del pd = { .size = sizeof(pd) };
	struct uwprof_stats st;
	int go, status;
	uint32_t pid;
	char c = 0;

	/* A child that execs the chain (for 1 s) when told to. */
	self->child = spawn_exec_on_go("1", &go);
	ASSERT_GT(self->child, 0);
	pid = self->t.pid = pd.pid = self->child;
	{
		/* Any valid list will do: it must be gone after the exec. */
		struct uwprof_map m = {
			.start = 0x10000, .end = 0x20000,
			.flags = UWPROF_MAP_NO_TABLE,
		};

		ASSERT_EQ(0, uwt_maps_set(self->fd, pid, &m, 1));
	}
	ASSERT_EQ(0, uwt_start(self->fd, 0, 1000, 32, 0, &pid, 1));
	ASSERT_EQ(1, write(go, &c, 1));
	close(go);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_EQ(0, run_for(self->fd, &self->r, &self->rd, 200));

	EXPECT_EQ(1, self->t.exits[1]) TH_LOG("EXIT records with exec=1");
	EXPECT_EQ(1, self->t.exits[0]) TH_LOG("EXIT records with exec=0");
	EXPECT_EQ(0, self->t.exit_pid_bad);
	EXPECT_EQ(0, self->t.exec_comm_bad) TH_LOG("the exec's new name");
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(0, st.processes);
	EXPECT_EQ(1, st.processes_dropped);
	EXPECT_EQ(2, st.exit_records);
	EXPECT_EQ(-ENOENT, uwt_ioctl(self->fd, UWPROF_IOC_PROCESS_DEL, &pd));
}

/* ---- thread renames ---- */

struct rename_seen {
	pid_t pid;
	uint32_t tid;
	uint32_t n;			/* COMM records of pid */
	char names[4][2][16];		/* old, new of the first four */
	uint64_t at[4];
};

static void rename_comm(const struct uwprof_rec_comm *c, void *priv)
{
	struct rename_seen *rs = priv;

	if ((pid_t)c->pid != rs->pid || c->tid == c->pid)
		return;
	if (rs->n < 4) {
		memcpy(rs->names[rs->n][0], c->old_comm, 16);
		memcpy(rs->names[rs->n][1], c->comm, 16);
		rs->at[rs->n] = c->time_ns;
		rs->tid = c->tid;
	}
	rs->n++;
}

static uint64_t rename_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *rename_thread(void *arg)
{
	volatile unsigned long x = 0;
	uint64_t end;

	(void)arg;
	prctl(PR_SET_NAME, "uwt-before", 0, 0, 0);
	for (end = rename_now_ns() + 300000000ULL; rename_now_ns() < end;)
		x++;
	prctl(PR_SET_NAME, "uwt-after", 0, 0, 0);
	for (end = rename_now_ns() + 300000000ULL; rename_now_ns() < end;)
		x++;
	return NULL;
}

/*
 * A thread that renames itself while sampled: the session's reader hears
 * each rename, in order, with the old and the new name, as perf's COMM
 * events say.
 */
TEST_F(sampling, thread_rename_reported)
{
	struct rename_seen rs = { 0 };
	struct uwprof_version v = { .size = sizeof(v) };
	int go[2], status;
	uint32_t pid;
	char c;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	ASSERT_NE(0, v.caps & UWPROF_CAP_RENAME)
		TH_LOG("the module reports no renames (no task_rename tracepoint?)");
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		pthread_t t;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (pthread_create(&t, NULL, rename_thread, NULL))
			_exit(2);
		pthread_join(t, NULL);
		_exit(0);
	}
	close(go[0]);
	pid = self->child;
	rs.pid = self->child;
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 1000, 32, 0,
			       &pid, 1));
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	self->rd.on_comm = rename_comm;
	self->rd.on_sample = NULL;
	self->rd.priv = &rs;
	uwt_rings_drain(&self->r, &self->rd);
	TH_LOG("%u renames of thread %u: '%.16s' -> '%.16s', '%.16s' -> '%.16s'",
	       rs.n, rs.tid, rs.names[0][0], rs.names[0][1], rs.names[1][0],
	       rs.names[1][1]);
	ASSERT_EQ(2, rs.n);
	EXPECT_STREQ("uwt-before", rs.names[0][1]);
	EXPECT_STREQ("uwt-before", rs.names[1][0]);
	EXPECT_STREQ("uwt-after", rs.names[1][1]);
	EXPECT_LT(rs.at[0], rs.at[1]);
	EXPECT_EQ(0, self->rd.c.bad);
}

TEST_HARNESS_MAIN

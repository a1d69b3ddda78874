// SPDX-License-Identifier: GPL-2.0
/*
 * Ring suite: record accounting is exact. Every overflow-handler call ends
 * as a written sample, a lost sample or a counted skip; every lost record
 * is reported by LOST records and the rings' running totals; a reader that
 * consumes concurrently sees well-formed records only; a lying reader
 * (garbage tail) cannot break the module; poll() wakes up; rings mapped
 * while a START fails stay valid until they are unmapped. START creates
 * its events in the caller's context and charges its rings to the
 * caller's memory cgroup.
 */
#include "uwprof_test.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/utsname.h>

#include "uwprof_harness.h"

/*
 * A PREEMPT_RT kernel: /sys/kernel/realtime where the kernel has it (from
 * 6.13), else the build's version string, which names the model (6.12's
 * "SMP PREEMPT_RT").
 */
static bool uwt_preempt_rt(void)
{
	struct utsname u;

	if (!access("/sys/kernel/realtime", F_OK))
		return true;
	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

FIXTURE(ring) {
	int fd;
	pid_t child;
	struct uwt_rings r;
	struct uwt_reader rd;
};

FIXTURE_SETUP(ring)
{
	const char *why = NULL;

	self->child = -1;
	self->r.base = NULL;
	memset(&self->rd, 0, sizeof(self->rd));
	self->fd = uwt_open(&why);
	if (self->fd < 0)
		SKIP(return, "%s", why);
	self->child = uwt_spinner();
	ASSERT_GT(self->child, 0);
}

FIXTURE_TEARDOWN(ring)
{
	uwt_rings_unmap(&self->r);
	uwt_reap(self->child);
	if (self->fd >= 0)
		close(self->fd);
}

/* The identities documented with struct uwprof_stats. */
static void uwt_check_identities(struct __test_metadata *_metadata, int fd,
				 struct uwt_rings *r, struct uwt_reader *rd,
				 bool all_records_read)
{
	struct uwprof_stats st;

	ASSERT_EQ(0, uwt_stats(fd, &st));
	TH_LOG("events %llu samples %llu lost %llu (samples %llu) skipped %llu/%llu/%llu/%llu read: samples %llu lost %llu unknown %llu",
	       st.events, st.samples, st.lost, st.lost_samples,
	       st.skipped_kthread, st.skipped_compat, st.skipped_filter,
	       st.skipped_throttle,
	       rd->c.samples, rd->c.lost, rd->c.unknown);
	EXPECT_EQ(0, rd->c.bad);
	EXPECT_EQ(st.events, st.samples + st.lost_samples +
		  uwt_events_skipped(&st));
	EXPECT_EQ(st.lost, uwt_ctl_lost(r));
	EXPECT_LE(st.lost_samples, st.lost);
	if (all_records_read) {
		EXPECT_EQ(st.samples, rd->c.samples);
		EXPECT_EQ(st.lost, rd->c.lost);
		EXPECT_EQ(st.unknown_maps, rd->c.unknown);
	}
}

/* Nobody reads: the tiny ring fills, and every drop is accounted for. */
TEST_F(ring, overflow_exact)
{
	uint32_t pid = self->child;
	struct uwprof_stats st;

	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 2000, 8, 1,
			       &pid, 1));
	uwt_sleep_ms(1500);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	uwt_rings_drain(&self->r, &self->rd);
	uwt_check_identities(_metadata, self->fd, &self->r, &self->rd, true);
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_GT(st.samples, 0);
	EXPECT_GT(st.lost_samples, 0)
		TH_LOG("a one-page ring was expected to overflow");
}

/* A reader consumes while sampling runs; then everything adds up. */
TEST_F(ring, concurrent_reader)
{
	uint32_t pid = self->child;
	struct timespec t0, t;
	struct pollfd p;

	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 4000, 16, 2,
			       &pid, 1));
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		p.fd = self->fd;
		p.events = POLLIN;
		poll(&p, 1, 50);
		uwt_rings_drain(&self->r, &self->rd);
		/* Read slowly now and then so the ring overflows too. */
		if (self->rd.c.samples % 7 == 0)
			uwt_sleep_ms(30);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 2);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	uwt_rings_drain(&self->r, &self->rd);
	uwt_check_identities(_metadata, self->fd, &self->r, &self->rd, true);
	EXPECT_GT(self->rd.c.samples, 0);
}

TEST_F(ring, poll_wakes)
{
	uint32_t pid = self->child;
	struct pollfd p = { .fd = self->fd, .events = POLLIN };

	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 1000, 8, 0,
			       &pid, 1));
	EXPECT_EQ(1, poll(&p, 1, 5000));
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
}

/*
 * Samples alone do not wake a sleeping reader until a quarter of the ring
 * is unread (about 650 samples of a 256 KiB ring, far more than 1000 Hz
 * gives in the poll's 400 ms): the poll sleeps to its timeout and then
 * finds the samples. A sample that lands between the drain and the poll
 * makes the poll return at once, so a few attempts are allowed.
 */
TEST_F(ring, samples_wait_for_mark)
{
	uint32_t pid = self->child;
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	struct timespec t0, t1;
	long waited = 0;
	int i, ret = 0;

	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 1000, 8, 0,
			       &pid, 1));
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	for (i = 0; i < 20 && waited < 200; i++) {
		uwt_rings_drain(&self->r, &self->rd);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = poll(&p, 1, 400);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		waited = (t1.tv_sec - t0.tv_sec) * 1000 +
			 (t1.tv_nsec - t0.tv_nsec) / 1000000;
	}
	TH_LOG("poll waited %ld ms (attempt %d), returned %d", waited, i, ret);
	EXPECT_GE(waited, 200);
	EXPECT_EQ(1, ret);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	uwt_rings_drain(&self->r, &self->rd);
	uwt_check_identities(_metadata, self->fd, &self->r, &self->rd, true);
}

/* The reader's tail is untrusted: garbage must not hurt the module. */
TEST_F(ring, garbage_tail)
{
	static const uint64_t bad[] = { ~0ULL, 1ULL << 63, 12345, 7 };
	uint32_t pid = self->child;
	unsigned int i, k;

	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 4000, 8, 1,
			       &pid, 1));
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	for (k = 0; k < 20; k++) {
		for (i = 0; i < self->r.info.nr_rings; i++) {
			struct uwprof_ring_ctl *c = uwt_ctl(&self->r, i);

			__atomic_store_n(&uwt_tail(&self->r, i)->tail,
					 k & 1 ? c->head + bad[k % 4] :
						 c->head - bad[k % 4],
					 __ATOMIC_RELEASE);
			/* The control page is the module's; scribbling is ignored. */
			c->head = 3;
		}
		uwt_sleep_ms(50);
	}
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	{
		struct uwprof_stats st;

		ASSERT_EQ(0, uwt_stats(self->fd, &st));
		EXPECT_EQ(st.events, st.samples + st.lost_samples +
			  uwt_events_skipped(&st));
		EXPECT_EQ(st.lost, uwt_ctl_lost(&self->r));
	}
}

struct hotplug_seen {
	uint64_t after_ns;
	uint64_t late_on_cpu1;
};

static void hotplug_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			   void *priv)
{
	struct hotplug_seen *h = priv;

	if (ring == 1 && s->time_ns > h->after_ns)
		h->late_on_cpu1++;
}

/* CPU 1 goes away and comes back while sampling: its event follows. */
TEST_F(ring, cpu_hotplug)
{
	struct hotplug_seen seen = {};
	struct timespec now;
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two online CPUs");
	if (uwt_cpu_online(1, 1, NULL))
		SKIP(return, "CPU 1 cannot be hotplugged here");
	ASSERT_EQ(0, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE |
			       UWPROF_START_CPU_CLOCK, 1000, 16, 0, NULL, 0));
	ASSERT_EQ(0, uwt_rings_map(self->fd, &self->r));
	uwt_sleep_ms(200);
	ASSERT_EQ(0, uwt_cpu_online(1, 0, NULL));
	uwt_sleep_ms(300);
	ASSERT_EQ(0, uwt_cpu_online(1, 1, NULL));
	clock_gettime(CLOCK_MONOTONIC, &now);
	seen.after_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	ASSERT_EQ(0, sched_setaffinity(self->child, sizeof(set), &set));
	self->rd.on_sample = hotplug_sample;
	self->rd.priv = &seen;
	uwt_sleep_ms(500);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	uwt_rings_drain(&self->r, &self->rd);
	uwt_check_identities(_metadata, self->fd, &self->r, &self->rd, false);
	EXPECT_GT(seen.late_on_cpu1, 0)
		TH_LOG("no sample on CPU 1 after it came back");
}

/* ---- a START that fails while its rings are being mapped ---- */

#define UWT_FAILFN	"/sys/kernel/debug/fail_function"

/* Writes one line to a debugfs file; -errno on failure. */
static int uwt_put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* Makes 'fn' return -ENOMEM on every call; -errno when it cannot. */
static int uwt_failfn_arm(const char *fn)
{
	char path[128], val[32];
	int ret;

	ret = uwt_put(UWT_FAILFN "/inject", fn);
	if (ret)
		return ret;
	snprintf(val, sizeof(val), "%#lx", (unsigned long)-ENOMEM);
	snprintf(path, sizeof(path), UWT_FAILFN "/%s/retval", fn);
	ret = uwt_put(path, val);
	/* verbose 0: a stack trace per injected fault would read as a WARNING. */
	if (!ret)
		ret = uwt_put(UWT_FAILFN "/verbose", "0");
	if (!ret)
		ret = uwt_put(UWT_FAILFN "/times", "-1");
	if (!ret)
		ret = uwt_put(UWT_FAILFN "/interval", "1");
	if (!ret)
		ret = uwt_put(UWT_FAILFN "/probability", "100");
	return ret;
}

static void uwt_failfn_disarm(const char *fn)
{
	char cmd[64];

	uwt_put(UWT_FAILFN "/probability", "0");
	snprintf(cmd, sizeof(cmd), "!%s", fn);
	uwt_put(UWT_FAILFN "/inject", cmd);
}

struct uwt_mapper {
	int fd;
	size_t size;
	volatile int done;
	void *map;
};

/* Maps the rings as soon as the module lets it, until told to stop. */
static void *uwt_mapper_main(void *arg)
{
	struct uwt_mapper *m = arg;

	while (!m->done) {
		void *p = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, m->fd, 0);

		if (p != MAP_FAILED) {
			m->map = p;
			break;
		}
	}
	return NULL;
}

struct uwt_failstart {
	int starts;		/* STARTs tried */
	int enomem;		/* ... that failed with the injected ENOMEM */
	int mapped;		/* ... during which the mapper got the rings */
	int intact;		/* ... whose mapping still held valid rings */
};

/*
 * One failing START on a fresh session while a second thread maps its
 * rings; the mapping, if made, is checked, split by mprotect (a second
 * vma of the same rings) and unmapped after the sampler is gone.
 */
static int uwt_failstart_once(uint32_t flags, pid_t pid, long pagesz,
			      struct uwt_failstart *st)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct uwt_mapper m = { 0 };
	uint32_t p = pid, pages = 8, i;
	size_t stride;
	pthread_t th;
	bool ok = true;
	int ret;

	m.fd = uwt_open(&(const char *){ NULL });
	if (m.fd < 0 || uwt_ioctl(m.fd, UWPROF_IOC_VERSION, &v))
		return -EIO;
	stride = (size_t)(pages + 2) * pagesz;
	m.size = stride * v.nr_cpus;
	if (pthread_create(&th, NULL, uwt_mapper_main, &m)) {
		close(m.fd);
		return -EAGAIN;
	}
	ret = uwt_start(m.fd, flags, 1000, 8, pages, &p, 1);
	m.done = 1;
	pthread_join(th, NULL);
	st->starts++;
	if (ret == -ENOMEM)
		st->enomem++;
	if (m.map) {
		st->mapped++;
		for (i = 0; i < v.nr_cpus; i++) {
			struct uwprof_ring_ctl *c =
				(void *)((char *)m.map + i * stride);

			ok &= c->version == UWPROF_RING_VERSION && c->cpu == i;
		}
		if (v.nr_cpus > 1)
			ok &= !mprotect((char *)m.map + stride, stride,
					PROT_READ);
		st->intact += ok;
		munmap(m.map, m.size);
	}
	close(m.fd);
	return 0;
}

/*
 * The rings of a START that fails after publishing them (fail_function on
 * uwprof_sample_run, and on uwprof_mmap_get for a START with MMAP
 * records) may be mapped by another thread in that window. The mapping
 * holds its own reference: it stays valid after the failed sampler is
 * freed, and its munmap frees the rings (on the debug kernel, KASAN
 * reports any access to freed rings). Afterwards the module starts
 * normally. Needs CONFIG_FAIL_FUNCTION (the debug kernel).
 */
TEST_F(ring, start_fails_while_mapped)
{
	static const struct {
		const char *fn;
		uint32_t flags;
	} cases[] = {
		{ "uwprof_sample_run", UWPROF_START_CPU_CLOCK },
		{ "uwprof_mmap_get", UWPROF_START_CPU_CLOCK | UWPROF_START_MMAP },
	};
	long pagesz = sysconf(_SC_PAGESIZE);
	uint32_t pid = self->child;
	unsigned int c;

	if (access(UWT_FAILFN, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(UWT_FAILFN "/inject", W_OK))
		SKIP(return, "no %s: kernel without CONFIG_FAIL_FUNCTION (make check-debug runs this)",
		     UWT_FAILFN);
	/*
	 * fail_function's kprobe handler draws a random number under a
	 * sleeping lock on PREEMPT_RT: the kernel's report, not the module's.
	 * The x86_64 debug kernel runs this test.
	 */
	if (uwt_preempt_rt())
		SKIP(return, "PREEMPT_RT: the kernel's fail_function is not RT-safe (get_random_u8 in its kprobe handler); the non-RT debug kernel runs this");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct uwt_failstart st = { 0 };
		int armed, tries, ret = 0, fd;

		armed = uwt_failfn_arm(cases[c].fn);
		for (tries = 0; !armed && !ret && tries < 200 && st.mapped < 5;
		     tries++)
			ret = uwt_failstart_once(cases[c].flags, self->child,
						 pagesz, &st);
		uwt_failfn_disarm(cases[c].fn);
		TH_LOG("%s: armed %d, %d STARTs, %d ENOMEM, %d mapped in the window, %d intact",
		       cases[c].fn, armed, st.starts, st.enomem, st.mapped,
		       st.intact);
		ASSERT_EQ(0, armed);
		ASSERT_EQ(0, ret);
		EXPECT_EQ(st.starts, st.enomem);
		EXPECT_LT(0, st.mapped);
		EXPECT_EQ(st.mapped, st.intact);

		/* The module is whole: a START with the same flags runs. */
		fd = uwt_open(&(const char *){ NULL });
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, uwt_start(fd, cases[c].flags, 1000, 8, 8, &pid,
				       1));
		EXPECT_EQ(0, uwt_ioctl(fd, UWPROF_IOC_STOP, NULL));
		close(fd);
	}
}

/* ---- who creates the events, who pays for the rings ---- */

#define UWT_KPROBE_GROUP	"uwprof_ring_test"

/* tracefs, mounted if the guest's init did not; 0 or -errno. */
static int uwt_tracefs(char *dir, size_t len)
{
	static const char *const where[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[PATH_MAX + 32];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events", where[i]);
		if (!access(path, W_OK)) {
			snprintf(dir, len, "%s", where[i]);
			return 0;
		}
	}
	if (mount("tracefs", where[0], "tracefs", 0, NULL))
		return -errno;
	snprintf(path, sizeof(path), "%s/kprobe_events", where[0]);
	if (access(path, W_OK))
		return -errno;
	snprintf(dir, len, "%s", where[0]);
	return 0;
}

/* Appends one line to a tracefs file; -errno on failure. */
static int uwt_trace_put(const char *dir, const char *file, const char *val,
			 bool append)
{
	char path[PATH_MAX + 32];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Counts the kprobe's hits in the trace buffer, and those whose comm is
 * not 'comm'; the first stranger's name goes to other[].
 */
static void uwt_trace_comms(const char *dir, const char *comm, int *hits,
			    int *strangers, char *other, size_t len)
{
	char path[PATH_MAX + 32], line[512], *p, *q;
	FILE *f;

	*hits = *strangers = 0;
	snprintf(path, sizeof(path), "%s/trace", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "comm=\"");
		if (line[0] == '#' || !p)
			continue;
		p += 6;
		q = strchr(p, '"');
		if (!q)
			continue;
		*q = 0;
		(*hits)++;
		if (strcmp(p, comm)) {
			if (!(*strangers)++)
				snprintf(other, len, "%s", p);
		}
	}
	fclose(f);
}

/*
 * perf_event_open() creates an event in the caller's context, where the
 * LSM perf_event hooks judge it; START must do the same for every CPU
 * online at the time, not leave the creation to each CPU's hotplug
 * thread. A kprobe event on perf_event_create_kernel_counter() records
 * the comm of every task that creates a kernel counter while START runs.
 */
TEST_F(ring, events_created_by_caller)
{
	char dir[PATH_MAX], comm[32] = "", other[32] = "";
	int hits, strangers, ret;
	uint32_t pid = self->child;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f;

	ret = uwt_tracefs(dir, sizeof(dir));
	if (ret)
		SKIP(return, "no tracefs with kprobe_events: %s", strerror(-ret));
	f = fopen("/proc/self/comm", "re");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;

	uwt_trace_put(dir, "kprobe_events", "-:" UWT_KPROBE_GROUP "/create\n", true);
	ret = uwt_trace_put(dir, "kprobe_events",
			    "p:" UWT_KPROBE_GROUP "/create perf_event_create_kernel_counter comm=$comm\n",
			    true);
	if (ret)
		SKIP(return, "kprobe on perf_event_create_kernel_counter: %s",
		     strerror(-ret));
	ASSERT_EQ(0, uwt_trace_put(dir, "trace", "", false));
	ASSERT_EQ(0, uwt_trace_put(dir, "events/" UWT_KPROBE_GROUP "/create/enable",
				   "1", false));
	ret = uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 1000, 8, 8, &pid, 1);
	uwt_trace_put(dir, "events/" UWT_KPROBE_GROUP "/create/enable", "0", false);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	uwt_trace_comms(dir, comm, &hits, &strangers, other, sizeof(other));
	uwt_trace_put(dir, "kprobe_events", "-:" UWT_KPROBE_GROUP "/create\n", true);
	TH_LOG("%d events created for %ld online CPUs, %d by another task (%s)",
	       hits, online, strangers, strangers ? other : "none");
	EXPECT_LE(online, hits);
	EXPECT_EQ(0, strangers);
}

/* memory.current of the cgroup at 'path', or -1. */
static long long uwt_memcg_current(const char *path)
{
	char fn[PATH_MAX + 32];
	long long v = -1;
	FILE *f;

	snprintf(fn, sizeof(fn), "%s/memory.current", path);
	f = fopen(fn, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * The rings are kernel memory the caller asked for: they are charged to
 * its memory cgroup, as its other START allocations are, so a container's
 * memory limit bounds what it can pin through the module.
 */
TEST_F(ring, rings_charged_to_memcg)
{
	const uint32_t ring_pages = 1024;
	char root[PATH_MAX], cg[PATH_MAX], fn[PATH_MAX + 32];
	long long before, after, rings;
	long pagesz = sysconf(_SC_PAGESIZE);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t pid = self->child;
	int ret;

	ASSERT_EQ(0, uwt_cgroup2_root(root, sizeof(root)));
	snprintf(fn, sizeof(fn), "%s/cgroup.subtree_control", root);
	if (uwt_put(fn, "+memory"))
		SKIP(return, "no memory controller in %.200s", root);
	ASSERT_EQ(0, uwt_cgroup_make("uwprof-memcg", cg, sizeof(cg)));
	ret = uwt_cgroup_enter(cg, getpid());
	if (!ret) {
		before = uwt_memcg_current(cg);
		ret = uwt_start(self->fd, UWPROF_START_CPU_CLOCK, 100, 8,
				ring_pages, &pid, 1);
		after = uwt_memcg_current(cg);
		if (!ret)
			uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL);
		close(self->fd);
		self->fd = -1;
	}
	uwt_cgroup_enter(root, getpid());
	uwt_cgroup_remove(cg);
	ASSERT_EQ(0, ret);
	rings = (long long)ring_pages * pagesz * online;
	TH_LOG("memory.current %lld -> %lld (+%lld) for %lld bytes of rings on %ld online CPUs",
	       before, after, after - before, rings, online);
	ASSERT_LE(0, before);
	/* The cgroup's per-CPU charge batches blur a few hundred KiB. */
	EXPECT_LE(rings * 3 / 4, after - before);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest stress and fuzz of uwprof.ko, one scenario per subcommand:
 *
 *	uwprof_stress fuzz CALLS CHAIN BLOB	random and mutated ioctls while
 *						sampling runs, then a normal
 *						recording of CHAIN with BLOB
 *	uwprof_stress churn PROCS [OPTS]	short-lived processes while
 *						sampling system-wide at 10 kHz
 *	uwprof_stress unload CYCLES KO		start, map, sample, rmmod
 *						(refused), close, rmmod, insmod
 *	uwprof_stress hotplug CYCLES		CPU offline/online while sampling
 *	uwprof_stress overflow SECONDS		a reader that stops reading
 *	uwprof_stress memcap			uploads beyond table_mem_max
 *	uwprof_stress sessions CYCLES CHAIN BLOB	sessions started, read,
 *						stopped and closed by several
 *						threads at once while
 *						processes churn, then a normal
 *						recording of CHAIN
 *	uwprof_stress lifecycle PROCS EXEC	processes that fork (the child
 *						inherits) and exec (held) while
 *						sampling system-wide
 *	uwprof_stress mmaprename SECONDS	MMAP records of a file whose
 *						path is renamed meanwhile
 *
 * Each prints TAP lines ("ok N - ..." / "not ok N - ...") with the figure
 * it measured (calls, processes, cycles, seconds) and exits non-zero when
 * any check failed. The run script (tests/stress/run) picks the sizes.
 */
#include "../lib/uwprof_guest.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

/* xorshift64*: each thread keeps its own state. */
static uint64_t rnd(uint64_t *st)
{
	uint64_t x = *st;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd_below(uint64_t *st, uint64_t n)
{
	return n ? rnd(st) % n : 0;
}

static int nr_cpus_online(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* ---- a reader thread that drains every ring of one session ---- */

struct drainer {
	int fd;
	struct uwt_rings r;
	struct uwt_reader rd;
	pthread_t th;
	pthread_mutex_t lock;	/* rd and r against the final drain */
	volatile int stop;
	volatile int paused;	/* stops reading (overflow scenario) */
};

static void *drainer_main(void *arg)
{
	struct drainer *d = arg;
	struct pollfd p = { .fd = d->fd, .events = POLLIN };

	while (!d->stop) {
		poll(&p, 1, 20);
		if (d->paused)
			continue;
		pthread_mutex_lock(&d->lock);
		uwt_rings_drain(&d->r, &d->rd);
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

static int drainer_start(struct drainer *d, int fd)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->fd = fd;
	pthread_mutex_init(&d->lock, NULL);
	ret = uwt_rings_map(fd, &d->r);
	if (ret)
		return ret;
	return -pthread_create(&d->th, NULL, drainer_main, d);
}

static void drainer_join(struct drainer *d)
{
	d->stop = 1;
	pthread_join(d->th, NULL);
}

/* The histogram bucket holding the q-th quantile (q in percent). */
static int hist_quantile(const struct uwprof_stats *st, unsigned int q)
{
	uint64_t n = 0, seen = 0;
	int i;

	for (i = 0; i < UWPROF_HIST_BUCKETS; i++)
		n += st->unwind_ns_hist[i];
	for (i = 0; i < UWPROF_HIST_BUCKETS; i++) {
		seen += st->unwind_ns_hist[i];
		if (seen * 100 >= n * q)
			return i;
	}
	return UWPROF_HIST_BUCKETS - 1;
}

/*
 * After STOP and a final drain: everything the module counted is what the
 * reader saw, and every overflow-handler call is accounted for.
 */
static void check_identities(const char *what, int fd, struct drainer *d)
{
	struct uwprof_stats st;
	uint64_t taken;

	uwt_rings_drain(&d->r, &d->rd);
	if (uwt_stats(fd, &st)) {
		tap(false, "%s: STATS failed", what);
		return;
	}
	taken = st.events - uwt_events_skipped(&st);
	printf("# %s: walk time per sample: median below %llu ns, p99 below %llu ns; %llu samples skipped over the CPU share; %llu samples taken in NMI\n",
	       what, 64ULL << (hist_quantile(&st, 50) + 1),
	       64ULL << (hist_quantile(&st, 99) + 1),
	       (unsigned long long)st.skipped_throttle,
	       (unsigned long long)st.nmi_samples);
	tap(d->rd.c.bad == 0, "%s: every record well formed (%llu bad)", what,
	    (unsigned long long)d->rd.c.bad);
	tap(st.samples == d->rd.c.samples && st.lost == d->rd.c.lost &&
	    st.lost == uwt_ctl_lost(&d->r),
	    "%s: reader saw samples %llu (module %llu), lost %llu (module %llu, rings %llu)",
	    what, (unsigned long long)d->rd.c.samples,
	    (unsigned long long)st.samples, (unsigned long long)d->rd.c.lost,
	    (unsigned long long)st.lost,
	    (unsigned long long)uwt_ctl_lost(&d->r));
	tap(taken == st.samples + st.lost_samples,
	    "%s: samples taken %llu == written %llu + lost %llu", what,
	    (unsigned long long)taken, (unsigned long long)st.samples,
	    (unsigned long long)st.lost_samples);
}

/* ---- fuzz ---- */

static const unsigned long fuzz_cmds[] = {
	UWPROF_IOC_VERSION, UWPROF_IOC_TABLE_ADD, UWPROF_IOC_OBJECT_DEL,
	UWPROF_IOC_MAPS_SET, UWPROF_IOC_PROCESS_DEL, UWPROF_IOC_START,
	UWPROF_IOC_STOP, UWPROF_IOC_STATS, UWPROF_IOC_RING_INFO,
};

static bool is_start_or_stop(unsigned long cmd)
{
	const unsigned long mask = ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT);

	cmd &= 0xffffffffUL;
	return (cmd & mask) == (UWPROF_IOC_START & mask) ||
	       (cmd & mask) == (UWPROF_IOC_STOP & mask);
}

/* Every errno the uapi header documents; anything else is a finding. */
static bool errno_documented(int e)
{
	switch (e) {
	case 0: case EINVAL: case E2BIG: case EFAULT: case ENOMEM: case ENOSPC:
	case ENOENT: case EEXIST: case EBUSY: case EPERM: case EOPNOTSUPP:
	case ENOTTY: case EBADF: case ESRCH:
		return true;
	}
	return false;
}

struct fuzz_shared {
	int sampler_fd;		/* sampling session: no START/STOP on it */
	uint64_t calls_each;
	const uint32_t *pids;	/* live processes to name in MAPS_SET */
	int nr_pids;
};

struct fuzz_thread {
	struct fuzz_shared *sh;
	pthread_t th;
	uint64_t seed;
	uint64_t calls;
	uint64_t ok;
	uint64_t undocumented;
	int last_bad_errno;
	unsigned long last_bad_cmd;
	uint64_t by_errno[256];
};

/* Pointers that must never be dereferenced as if they were valid. */
static uint64_t bad_ptr(uint64_t *st)
{
	static const uint64_t p[] = {
		0, 1, 0x1000, 0xffffffff81000000ULL, 0xffff888000000000ULL,
		0x7ffffffff000ULL, 0xfffffffffffff000ULL, 0x8000000000000000ULL,
	};

	return p[rnd_below(st, sizeof(p) / sizeof(p[0]))];
}

/* A blob: valid, then mutated in one of several ways. */
static void fuzz_table(int fd, uint64_t *st, uint8_t *garbage, size_t gsize,
		       int *err)
{
	struct uwprof_table_add a = { .size = sizeof(a) };
	struct uwprof_table_hdr *h;
	uint32_t rows = 1 + rnd_below(st, rnd_below(st, 8) ? 64 : 20000);

	/* Now and then a real big table: a million rows, 3.5 MB. */
	if (rnd_below(st, 1000) == 0)
		rows = 1 << 20;
	struct uwt_blob b;
	uint64_t i, n;

	if (uwt_blob_make(&b, rows)) {
		*err = 0;
		return;
	}
	h = b.data;
	switch (rnd_below(st, 10)) {
	case 0:	/* valid */
		break;
	case 1:	/* garbage rows, pages and palettes */
		for (i = 0; i < rows; i++) {
			if (rnd_below(st, 4) == 0)
				uwt_pcs(&b)[i] = (uint16_t)rnd(st);
			if (rnd_below(st, 4) == 0)
				uwt_slots(&b)[i] = (uint8_t)rnd(st);
		}
		for (i = 0; i <= h->nr_pages; i++) {
			if (rnd_below(st, 8) == 0)
				uwt_pages(&b)[i].row = (uint32_t)rnd(st);
			if (rnd_below(st, 8) == 0)
				uwt_pages(&b)[i].palette = (uint32_t)rnd(st);
		}
		for (i = 0; i < h->nr_palette; i++)
			if (rnd_below(st, 4) == 0)
				uwt_palette(&b)[i] = (uint16_t)rnd(st);
		break;
	case 2:	/* garbage rules */
		for (i = 0; i < h->nr_rules * sizeof(struct uwprof_rule); i++)
			if (rnd_below(st, 3) == 0)
				((uint8_t *)uwt_rules(&b))[i] = (uint8_t)rnd(st);
		break;
	case 3:	/* header fields off */
		switch (rnd_below(st, 9)) {
		case 0: h->nr_rows = (uint32_t)rnd(st); break;
		case 1: h->nr_rules = (uint32_t)rnd(st); break;
		case 2: h->hdr_size = (uint32_t)rnd_below(st, 8192); break;
		case 3: h->rule_size = (uint32_t)rnd_below(st, 64); break;
		case 4: h->version = (uint16_t)rnd(st); break;
		case 5: h->nr_pages = (uint32_t)rnd(st); break;
		case 6: h->nr_palette = (uint32_t)rnd(st); break;
		case 7: h->page_shift = (uint32_t)rnd_below(st, 64); break;
		default: h->arch = (uint16_t)rnd(st); break;
		}
		break;
	case 4:	/* huge: the largest counts the uapi allows, short data */
		h->nr_rows = UWPROF_TABLE_MAX_ROWS - rnd_below(st, 2);
		h->nr_rules = UWPROF_TABLE_MAX_RULES - rnd_below(st, 2);
		h->nr_palette = UWPROF_TABLE_MAX_PALETTE - rnd_below(st, 2);
		if (rnd_below(st, 2))
			h->nr_pages = h->nr_rows;
		break;
	case 5:	/* random bit flips anywhere */
		n = 1 + rnd_below(st, 16);
		for (i = 0; i < n; i++)
			((uint8_t *)b.data)[rnd_below(st, b.size)] ^=
				1u << rnd_below(st, 8);
		break;
	case 6:	/* END row in the middle, or no END at the end */
		uwt_slots(&b)[rnd_below(st, rows)] = rnd_below(st, 2);
		break;
	case 7:	/* saved-register bytes of a rule without RULE_REGS */
		(&uwt_rules(&b)[1].saved_type)[rnd_below(st, 4)] =
			(uint8_t)(1 + rnd_below(st, 255));
		break;
	default:	/* random bytes under a valid-looking header */
		n = b.size > sizeof(*h) ? b.size - sizeof(*h) : 0;
		memcpy((char *)b.data + sizeof(*h), garbage,
		       n < gsize ? n : gsize);
		break;
	}
	a.object_id = 1 + rnd_below(st, 64);
	a.data = (uintptr_t)b.data;
	a.data_size = b.size;
	switch (rnd_below(st, 8)) {
	case 0: a.data_size = rnd_below(st, b.size + 64); break;
	case 1: a.data_size = rnd(st); a.data = (uintptr_t)garbage; break;
	case 2: a.data = bad_ptr(st); break;
	case 3: a.flags = 1u << rnd_below(st, 32); break;
	case 4: a.size = (uint32_t)rnd_below(st, 64); break;
	default: break;
	}
	*err = ioctl(fd, UWPROF_IOC_TABLE_ADD, &a) ? errno : 0;
	free(b.data);
}

/*
 * An interpreter descriptor: the shape the tool sends for CPython 3.11 on
 * glibc, aimed at memory of the process it is sent for (its stack, its
 * heap, nothing), then bent: a field off, random bytes, a size off. The
 * sampling session walks the processes named with whatever is accepted.
 */
static void fuzz_python(struct uwprof_python *d, uint64_t *st)
{
	static const uint64_t aims[] = {
		0x10000, 0x400000, 0x555555554000ULL, 0x7ffff7dd0000ULL,
		0x7ffffffde000ULL, 0x7fffffffe000ULL,
	};
	uint64_t i, n, key, code;

	/* In this order: a seed replays the same descriptors. */
	key = aims[rnd_below(st, 6)];
	key += 4 * rnd_below(st, 1024);
	code = aims[rnd_below(st, 6)];
	code += 8 * rnd_below(st, 1024);
	uwt_py311(d, key, code);
	if (rnd_below(st, 2)) {
		d->flags = rnd_below(st, 2) ? UWPROF_PY_CODE_TAGGED : 0;
		d->cf_frame = d->cf_previous = 0;
		d->ts_frame = 72;
		d->fr_code = 0;
		d->fr_previous = 8;
		d->fr_entry = 70;
		d->entry_value = 3;
	}
	switch (rnd_below(st, 6)) {
	case 0:	/* offsets anywhere the check allows */
		d->ts_frame = 8 * rnd_below(st, UWPROF_PY_MAX_OFF / 8);
		d->fr_previous = 8 * rnd_below(st, UWPROF_PY_MAX_OFF / 8);
		d->fr_entry = rnd_below(st, UWPROF_PY_MAX_OFF);
		d->tp_pthread = (int32_t)rnd_below(st, 8192) - 4096;
		break;
	case 1:	/* random bit flips */
		n = 1 + rnd_below(st, 8);
		for (i = 0; i < n; i++)
			((uint8_t *)d)[rnd_below(st, sizeof(*d))] ^=
				1u << rnd_below(st, 8);
		break;
	case 2:
		d->size = (uint32_t)rnd_below(st, 2 * sizeof(*d));
		break;
	default:
		break;
	}
}

static void fuzz_maps(int fd, struct fuzz_thread *t, uint64_t *st, int *err)
{
	struct fuzz_shared *sh = t->sh;
	struct uwprof_maps_set a = { .size = sizeof(a) };
	struct uwprof_python py;
	uint32_t n = 1 + rnd_below(st, rnd_below(st, 16) ? 32 : 70000);
	struct uwprof_map *m;
	uint64_t pos = 0x400000 + rnd_below(st, 1 << 20) * 4096, i;

	m = calloc(n, sizeof(*m));
	if (!m) {
		*err = 0;
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t len = 4096 * (1 + rnd_below(st, 64));

		m[i].start = pos;
		m[i].end = pos + len;
		m[i].bias = rnd_below(st, 2) ? pos - 0x1000 : rnd(st);
		m[i].object_id = 1 + rnd_below(st, 64);
		pos += len + 4096 * rnd_below(st, 4);
		switch (rnd_below(st, 40)) {
		case 0:	/* overlapping the previous one */
			if (i)
				m[i].start = m[i - 1].end - 4096;
			break;
		case 1:	/* unsorted */
			m[i].start = rnd(st) & 0x7ffffffff000ULL;
			m[i].end = m[i].start + 4096;
			break;
		case 2:	/* kernel addresses */
			m[i].start = 0xffffffff81000000ULL;
			m[i].end = 0xffffffff82000000ULL;
			break;
		case 3:	/* straddling the end of user space */
			m[i].start = 0x7ffffffff000ULL - 4096;
			m[i].end = 0x800000001000ULL;
			break;
		case 4:	/* empty */
			m[i].end = m[i].start;
			break;
		case 5:
			m[i].flags = UWPROF_MAP_NO_TABLE;
			m[i].object_id = rnd_below(st, 2);
			break;
		case 6:
			m[i].flags = (uint32_t)rnd(st);
			break;
		case 7:
			m[i].__reserved = 1;
			break;
		}
	}
	if (sh->nr_pids && rnd_below(st, 4))
		a.pid = sh->pids[rnd_below(st, sh->nr_pids)];
	else
		a.pid = rnd_below(st, 2) ? (uint32_t)rnd(st) : (uint32_t)getpid();
	a.nr_maps = n;
	a.maps = (uintptr_t)m;
	switch (rnd_below(st, 10)) {
	case 0: a.nr_maps = (uint32_t)rnd(st); break;
	case 1: a.maps = bad_ptr(st); break;
	case 2: a.nr_maps = 0; break;
	case 3: a.flags = 1; break;
	default: break;
	}
	if (rnd_below(st, 3) == 0) {
		a.flags |= UWPROF_MAPS_PYTHON;
		a.python = (uintptr_t)&py;
		fuzz_python(&py, st);
		if (rnd_below(st, 16) == 0)
			a.python = bad_ptr(st);
	}
	*err = ioctl(fd, UWPROF_IOC_MAPS_SET, &a) ? errno : 0;
	free(m);
}

static void fuzz_start(int fd, uint64_t *st, int *err)
{
	uint32_t pids[8];
	struct uwprof_start a = { .size = sizeof(a) };
	int i;

	for (i = 0; i < 8; i++)
		pids[i] = rnd_below(st, 2) ? (uint32_t)getpid() : (uint32_t)rnd(st);
	a.flags = rnd_below(st, 2) ? (uint32_t)rnd_below(st, 32) : (uint32_t)rnd(st);
	a.flags &= ~UWPROF_START_CYCLES;	/* TCG guests have no PMU */
	a.freq_hz = rnd_below(st, 2) ? 1 + rnd_below(st, 2000) : (uint32_t)rnd(st);
	a.max_depth = rnd_below(st, 2) ? 1 + rnd_below(st, 64) : (uint32_t)rnd(st);
	a.ring_pages = rnd_below(st, 2) ? 1u << rnd_below(st, 4) : (uint32_t)rnd(st);
	a.nr_pids = rnd_below(st, 2) ? 1 + rnd_below(st, 8) : (uint32_t)rnd(st);
	a.pids = rnd_below(st, 8) ? (uintptr_t)pids : bad_ptr(st);
	*err = ioctl(fd, UWPROF_IOC_START, &a) ? errno : 0;
	if (!*err && rnd_below(st, 2))
		ioctl(fd, UWPROF_IOC_STOP, NULL);
}

static void fuzz_one(int fd, bool sampler, struct fuzz_thread *t, uint64_t *st,
		     uint8_t *garbage, size_t gsize)
{
	unsigned long cmd;
	int err = 0;
	uint64_t kind = rnd_below(st, 100);

	if (kind < 30) {
		cmd = UWPROF_IOC_TABLE_ADD;
		fuzz_table(fd, st, garbage, gsize, &err);
	} else if (kind < 55) {
		cmd = UWPROF_IOC_MAPS_SET;
		fuzz_maps(fd, t, st, &err);
	} else if (kind < 62 && !sampler) {
		cmd = UWPROF_IOC_START;
		fuzz_start(fd, st, &err);
	} else if (kind < 70) {
		struct uwprof_object_del d = { .size = sizeof(d) };

		cmd = UWPROF_IOC_OBJECT_DEL;
		d.object_id = rnd_below(st, 66);
		err = ioctl(fd, cmd, &d) ? errno : 0;
	} else if (kind < 76) {
		struct uwprof_process_del d = { .size = sizeof(d) };

		cmd = UWPROF_IOC_PROCESS_DEL;
		d.pid = rnd_below(st, 2) ? (uint32_t)getpid() : (uint32_t)rnd(st);
		err = ioctl(fd, cmd, &d) ? errno : 0;
	} else if (kind < 80) {
		/* mmap with random length and offset; must never succeed wrongly */
		size_t len = 4096 * (1 + rnd_below(st, 64));
		void *p = mmap(NULL, len, PROT_READ | (rnd_below(st, 2) ? PROT_WRITE : 0),
			       MAP_SHARED, fd, 4096 * rnd_below(st, 4));

		cmd = 0;
		if (p != MAP_FAILED) {
			volatile char c = *(volatile char *)p;

			(void)c;
			munmap(p, len);
		}
	} else {
		/*
		 * Random: any command (known numbers with wrong sizes and
		 * directions too), a buffer of random bytes with a random
		 * 'size', or a bad pointer.
		 */
		uint64_t buf[600];
		size_t i;

		for (i = 0; i < sizeof(buf) / 8; i++)
			buf[i] = rnd_below(st, 3) ? 0 : rnd(st);
		buf[0] = (buf[0] & ~0xffffffffULL) | rnd_below(st, 5000);
		if (rnd_below(st, 2))
			cmd = fuzz_cmds[rnd_below(st, sizeof(fuzz_cmds) /
						   sizeof(fuzz_cmds[0]))];
		else
			cmd = _IOC(rnd_below(st, 4), rnd_below(st, 4) ? UWPROF_IOC_MAGIC :
				   rnd_below(st, 256), rnd_below(st, 16),
				   rnd_below(st, 1 << 14));
		/*
		 * The module reads a command by type, number and direction
		 * (not size): whatever names START or STOP that way would
		 * end the shared sampler's run.
		 */
		if (sampler && is_start_or_stop(cmd))
			cmd = UWPROF_IOC_STATS;
		err = ioctl(fd, cmd, rnd_below(st, 8) ? (void *)buf :
			    (void *)(uintptr_t)bad_ptr(st)) ? errno : 0;
	}
	t->calls++;
	if (!err)
		t->ok++;
	t->by_errno[err & 255]++;
	/* Other ioctl types may be answered by the VFS, not the module. */
	if (cmd && _IOC_TYPE(cmd) == UWPROF_IOC_MAGIC && !errno_documented(err)) {
		t->undocumented++;
		t->last_bad_errno = err;
		t->last_bad_cmd = cmd;
	}
}

static void *fuzz_main(void *arg)
{
	struct fuzz_thread *t = arg;
	uint64_t st = t->seed;
	uint8_t garbage[8192];
	int own = uwg_open();
	uint64_t i;

	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)rnd(&st);
	for (i = 0; i < t->sh->calls_each; i++) {
		bool shared = rnd_below(&st, 4) == 0;

		fuzz_one(shared ? t->sh->sampler_fd : own, shared, t, &st,
			 garbage, sizeof(garbage));
		/* Now and then a fresh session: close frees everything. */
		if (rnd_below(&st, 2000) == 0) {
			close(own);
			own = uwg_open();
		}
	}
	close(own);
	return NULL;
}

/*
 * The selftests' chain target, recorded like the tool does it: its table,
 * its mappings, sampling of its pid. The stack must come out whole: the
 * unwinder still works after the fuzzing.
 */
static void normal_recording(const char *chain, const char *blob_path)
{
	struct uwprof_map maps[16];
	struct drainer d;
	struct uwt_blob b;
	uint32_t pid;
	int fd, n;
	struct uwprof_stats st;

	fd = uwg_open();
	if (uwt_blob_read(blob_path, &b)) {
		tap(false, "normal recording: cannot read %s", blob_path);
		close(fd);
		return;
	}
	tap(uwt_table_add(fd, 1, b.data, b.size) == 0, "normal recording: table added");
	free(b.data);
	pid = uwt_spawn(chain, "20");
	if ((int)pid < 0) {
		tap(false, "normal recording: cannot start %s", chain);
		close(fd);
		return;
	}
	n = uwt_proc_maps(pid, chain, 1, maps, 16);
	tap(n > 0 && uwt_maps_set(fd, pid, maps, n) == 0,
	    "normal recording: %d mappings uploaded", n);
	tap(uwt_start(fd, UWPROF_START_CPU_CLOCK, 1000, 64, 0, &pid, 1) == 0,
	    "normal recording: START");
	drainer_start(&d, fd);
	uwt_sleep_ms(1500);
	uwt_ioctl(fd, UWPROF_IOC_STOP, NULL);
	drainer_join(&d);
	check_identities("normal recording", fd, &d);
	uwt_stats(fd, &st);
	/* chain_leaf <- c <- b <- a <- main <- libc start: outermost reached */
	tap(st.samples >= 20 && st.stop[UWPROF_STOP_OK] * 10 >= st.samples * 9,
	    "normal recording: %llu samples, %llu walked to the outermost frame",
	    (unsigned long long)st.samples,
	    (unsigned long long)st.stop[UWPROF_STOP_OK]);
	uwt_reap(pid);
	uwt_rings_unmap(&d.r);
	close(fd);
}

static int cmd_fuzz(int argc, char **argv)
{
	uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 0) : 100000;
	struct fuzz_thread th[3];
	struct fuzz_shared sh = {};
	uint64_t calls = 0, ok = 0, bad = 0;
	uint32_t pids[2];
	struct drainer d;
	double t0, dt;
	int fd, i, nt = 3, e;

	if (argc < 5) {
		fprintf(stderr, "usage: fuzz CALLS CHAIN BLOB\n");
		return 2;
	}
	/* A session samples system-wide the whole time, with a reader. */
	fd = uwg_open();
	pids[0] = uwt_spinner();
	pids[1] = uwt_spinner();
	tap(uwg_add_synthetic(fd, 100, 64) == 0, "fuzz: sampler table added");
	tap(uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
		      1000, 32, 4, NULL, 0) == 0, "fuzz: sampling started");
	tap(drainer_start(&d, fd) == 0, "fuzz: reader mapped the rings");

	sh.sampler_fd = fd;
	sh.calls_each = (total + nt - 1) / nt;
	sh.pids = pids;
	sh.nr_pids = 2;
	t0 = uwg_now_s();
	for (i = 0; i < nt; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].sh = &sh;
		th[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1) ^ (uint64_t)time(NULL);
		pthread_create(&th[i].th, NULL, fuzz_main, &th[i]);
	}
	for (i = 0; i < nt; i++) {
		pthread_join(th[i].th, NULL);
		calls += th[i].calls;
		ok += th[i].ok;
		bad += th[i].undocumented;
		if (th[i].undocumented)
			diag("thread %d: errno %d from cmd %#lx", i,
			     th[i].last_bad_errno, th[i].last_bad_cmd);
	}
	dt = uwg_now_s() - t0;
	for (e = 0; e < 256; e++) {
		uint64_t n = 0;

		for (i = 0; i < nt; i++)
			n += th[i].by_errno[e];
		if (n)
			diag("errno %d (%s): %llu", e, e ? strerror(e) : "success",
			     (unsigned long long)n);
	}
	tap(calls >= total, "fuzz: %llu calls in %.1f s (%llu succeeded), %d threads",
	    (unsigned long long)calls, dt, (unsigned long long)ok, nt);
	tap(bad == 0, "fuzz: every error is one the uapi documents (%llu not)",
	    (unsigned long long)bad);
	tap(uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0, "fuzz: sampler still stops");
	drainer_join(&d);
	check_identities("fuzz sampler", fd, &d);
	uwt_rings_unmap(&d.r);
	close(fd);
	uwt_reap(pids[0]);
	uwt_reap(pids[1]);
	normal_recording(argv[3], argv[4]);
	return tap_status();
}

/* ---- process churn ---- */

static void *churn_thread(void *arg)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < 20000; i++)
		x += i;
	return arg;
}

/* What each child does once its mappings are uploaded. */
enum churn_kind { CHURN_EXIT, CHURN_EXEC, CHURN_THREADS, CHURN_MAIN_FIRST, CHURN__N };

/*
 * The image the exec children run: a file descriptor (a memfd holding a
 * copy, or the file itself) and the path it came from.
 */
struct churn_image {
	int fd;
	const char *path;
};

static void churn_child(int go, enum churn_kind k, const struct churn_image *img)
{
	char *const args[] = { (char *)img->path, "exit", NULL };
	char *const env[] = { NULL };
	pthread_t th[3];
	char c;
	int i;

	if (read(go, &c, 1) != 1)
		_exit(3);
	switch (k) {
	case CHURN_EXIT:
		_exit(0);
	case CHURN_EXEC:
		fexecve(img->fd, args, env);
		_exit(4);
	case CHURN_THREADS:
		for (i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, churn_thread, NULL);
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	default:
		/* The main thread leaves first; the process ends with the last. */
		for (i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, churn_thread, NULL);
		pthread_exit(NULL);
	}
}

/*
 * Opens the exec image. With 'copy' it is read once into a memfd: the
 * x86_64 guest's root and build/ are 9p mounts without a page cache, so
 * every exec of a file there reads its pages from the host again, which
 * measured slower than the rest of the child's life under sampling.
 */
static int churn_image_open(struct churn_image *img, const char *path, bool copy)
{
	char buf[65536];
	ssize_t n;
	int src;

	img->path = path;
	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || !copy) {
		img->fd = src;
		return src < 0 ? -errno : 0;
	}
	img->fd = memfd_create("churn-exec", MFD_CLOEXEC);
	if (img->fd < 0) {
		close(src);
		return -errno;
	}
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(img->fd, buf, n) != n) {
			n = -1;
			break;
		}
	close(src);
	if (n < 0) {
		close(img->fd);
		return -EIO;
	}
	return 0;
}

/* One forking thread of the churn; several run so the guest's CPUs are busy. */
struct churn_worker {
	pthread_t th;
	int fd;
	const struct churn_image *img;
	uint64_t todo;
	uint64_t done, uploaded, upload_err, child_err, table_err;
	uint64_t kinds[CHURN__N];
	double t_fork, t_upload, t_run;	/* seconds in each phase of a child */
	uint64_t *next_id;		/* shared, under id_lock */
	pthread_mutex_t *id_lock;
	const volatile int *stop;	/* set: stop early (NULL: run 'todo') */
};

static void *churn_worker_main(void *arg)
{
	struct churn_worker *w = arg;
	struct uwprof_map map = {
		.start = 0x400000, .end = 0x500000, .bias = 0x3ff000,
	};

	while (w->done < w->todo && !(w->stop && *w->stop)) {
		enum churn_kind k = w->done % CHURN__N;
		double t0 = uwg_now_s(), t1, t2;
		int go[2], wst;
		pid_t pid;

		if (pipe2(go, O_CLOEXEC))
			break;
		pid = fork();
		if (!pid) {
			close(go[1]);
			churn_child(go[0], k, w->img);
		}
		close(go[0]);
		if (pid < 0) {
			close(go[1]);
			break;
		}
		t1 = uwg_now_s();
		pthread_mutex_lock(w->id_lock);
		/* A new table now and then; the old one stays referenced. */
		if (w->done % 64 == 63) {
			if (uwg_add_synthetic(w->fd, *w->next_id + 1, 256) == 0) {
				struct uwprof_object_del del = {
					.size = sizeof(del), .object_id = *w->next_id,
				};

				if (ioctl(w->fd, UWPROF_IOC_OBJECT_DEL, &del))
					w->table_err++;
				++*w->next_id;
			} else {
				w->table_err++;
			}
		}
		map.object_id = *w->next_id;
		if (uwt_maps_set(w->fd, pid, &map, 1) == 0)
			w->uploaded++;
		else
			w->upload_err++;
		pthread_mutex_unlock(w->id_lock);
		t2 = uwg_now_s();
		if (write(go[1], "g", 1) != 1)
			w->child_err++;
		close(go[1]);
		if (waitpid(pid, &wst, 0) != pid || !WIFEXITED(wst) ||
		    WEXITSTATUS(wst))
			w->child_err++;
		w->t_fork += t1 - t0;
		w->t_upload += t2 - t1;
		w->t_run += uwg_now_s() - t2;
		w->kinds[k]++;
		w->done++;
	}
	return NULL;
}

/*
 * Exit probes run before the parent's wait returns; the last mapping lists,
 * and the replaced tables they name, are freed by RCU callbacks after that,
 * a grace period later or several on a loaded machine. Polls STATS until
 * the counts are back at st0 (at most 10 s; a leak never gets there) and
 * returns the milliseconds it took.
 */
static int churn_settle(int fd, const struct uwprof_stats *st0, struct uwprof_stats *st)
{
	int ms;

	for (ms = 0;; ms += 10) {
		uwt_stats(fd, st);
		if ((st->tables == 1 && st->table_bytes == st0->table_bytes &&
		     st->processes == st0->processes) || ms >= 10000)
			return ms;
		uwt_sleep_ms(10);
	}
}

/*
 * churn PROCS [exec=PATH] [threads=N] [copy=0] [sampling=0]: PATH is the
 * image the exec children run (default: this program, which exits at once
 * with "exit"); copy=0 execs it where it lies instead of from a memfd
 * copy; sampling=0 runs the same churn without sampling, to measure what
 * sampling costs (the uwprof checks still hold, with no samples).
 */
static int cmd_churn(int argc, char **argv)
{
	uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 0) : 20000;
	const char *exec_path = "/proc/self/exe";
	bool copy = true, sampling = true;
	int nw = 4, i, k;
	pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;
	uint64_t next_id = 1000, done = 0, uploaded = 0, upload_err = 0;
	uint64_t child_err = 0, table_err = 0, kinds[CHURN__N] = {};
	double t_fork = 0, t_upload = 0, t_run = 0;
	struct churn_worker w[16];
	struct uwprof_stats st0, st;
	struct churn_image img;
	struct drainer d;
	double t0, dt;
	int fd, ret;

	for (i = 3; i < argc; i++) {
		if (!strncmp(argv[i], "exec=", 5))
			exec_path = argv[i] + 5;
		else if (!strncmp(argv[i], "threads=", 8))
			nw = atoi(argv[i] + 8);
		else if (!strcmp(argv[i], "copy=0"))
			copy = false;
		else if (!strcmp(argv[i], "sampling=0"))
			sampling = false;
		else {
			fprintf(stderr, "churn: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (nw < 1 || nw > 16)
		nw = 4;
	ret = churn_image_open(&img, exec_path, copy);
	if (ret) {
		printf("Bail out! churn: cannot open %s: %s\n", exec_path, strerror(-ret));
		return 1;
	}
	diag("churn: exec children run %s%s", exec_path, copy ? " (from a memfd copy)" : "");
	fd = uwg_open();
	tap(uwg_add_synthetic(fd, next_id, 256) == 0, "churn: first table added");
	if (sampling)
		tap(uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
			      10000, 32, 16, NULL, 0) == 0,
		    "churn: system-wide sampling at 10 kHz");
	else
		diag("churn: sampling=0: no sampling, no rings to read");
	/* The rings exist from START on. */
	if (sampling)
		tap(drainer_start(&d, fd) == 0, "churn: reader mapped the rings");
	uwt_stats(fd, &st0);

	t0 = uwg_now_s();
	for (i = 0; i < nw; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].fd = fd;
		w[i].img = &img;
		w[i].todo = total / nw + (i < (int)(total % nw));
		w[i].next_id = &next_id;
		w[i].id_lock = &id_lock;
		pthread_create(&w[i].th, NULL, churn_worker_main, &w[i]);
	}
	for (i = 0; i < nw; i++) {
		pthread_join(w[i].th, NULL);
		done += w[i].done;
		uploaded += w[i].uploaded;
		upload_err += w[i].upload_err;
		child_err += w[i].child_err;
		table_err += w[i].table_err;
		t_fork += w[i].t_fork;
		t_upload += w[i].t_upload;
		t_run += w[i].t_run;
		for (k = 0; k < CHURN__N; k++)
			kinds[k] += w[i].kinds[k];
	}
	dt = uwg_now_s() - t0;
	close(img.fd);
	diag("churn: waited %d ms for the RCU frees (at most 10000)", churn_settle(fd, &st0, &st));
	tap(done == total && child_err == 0,
	    "churn: %llu processes in %.1f s (%.0f/s, %d forking threads): exit %llu, exec %llu, threads %llu, main-first %llu",
	    (unsigned long long)done, dt, done / dt, nw,
	    (unsigned long long)kinds[CHURN_EXIT], (unsigned long long)kinds[CHURN_EXEC],
	    (unsigned long long)kinds[CHURN_THREADS],
	    (unsigned long long)kinds[CHURN_MAIN_FIRST]);
	if (done)
		diag("churn: mean per child: fork %.2f ms, lock and upload %.2f ms, go to reaped %.2f ms",
		     t_fork * 1e3 / done, t_upload * 1e3 / done, t_run * 1e3 / done);
	tap(upload_err == 0 && table_err == 0,
	    "churn: %llu mapping uploads (%llu failed), %llu tables replaced (%llu failed)",
	    (unsigned long long)uploaded, (unsigned long long)upload_err,
	    (unsigned long long)(next_id - 1000), (unsigned long long)table_err);
	tap(st.processes_dropped - st0.processes_dropped == uploaded,
	    "churn: processes_dropped %llu == processes uploaded %llu",
	    (unsigned long long)(st.processes_dropped - st0.processes_dropped),
	    (unsigned long long)uploaded);
	tap(st.processes == st0.processes,
	    "churn: processes back to the baseline %llu (now %llu)",
	    (unsigned long long)st0.processes, (unsigned long long)st.processes);
	/* Replaced tables are freed with the last mapping list naming them. */
	tap(st.tables == 1 && st.table_bytes == st0.table_bytes,
	    "churn: one table left (%llu), %llu bytes held as at the start (%llu)",
	    (unsigned long long)st.tables, (unsigned long long)st.table_bytes,
	    (unsigned long long)st0.table_bytes);
	diag("churn: %llu samples, %llu exit records",
	     (unsigned long long)st.samples, (unsigned long long)st.exit_records);
	if (sampling) {
		tap(uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0, "churn: STOP");
		drainer_join(&d);
		check_identities("churn", fd, &d);
		uwt_rings_unmap(&d.r);
	}
	close(fd);
	return tap_status();
}

/* ---- lifecycle probes under contention ---- */

/* One forking thread of the lifecycle scenario. */
struct lc_worker {
	pthread_t th;
	int fd;
	const struct churn_image *img;
	uint64_t todo;
	uint64_t done, uploaded, held, unheld, err;
	uint64_t object_id;
};

/*
 * The child: once its mappings are uploaded, forks a grandchild (which
 * inherits them and exits at once), then execs the image, where its
 * session's exec hold stops it.
 */
static void lc_child(int go, const struct churn_image *img)
{
	char *const args[] = { (char *)img->path, "exit", NULL };
	char *const env[] = { NULL };
	int wst;
	pid_t g;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(3);
	g = fork();
	if (!g)
		_exit(0);
	if (g < 0 || waitpid(g, &wst, 0) != g || !WIFEXITED(wst))
		_exit(5);
	fexecve(img->fd, args, env);
	_exit(4);
}

static void *lc_worker_main(void *arg)
{
	struct lc_worker *w = arg;
	struct uwprof_map map = {
		.start = 0x400000, .end = 0x500000, .bias = 0x3ff000,
		.object_id = w->object_id,
	};
	struct uwprof_process_del del = { .size = sizeof(del) };
	int go[2], wst;
	pid_t pid;

	while (w->done < w->todo) {
		if (pipe2(go, O_CLOEXEC))
			break;
		pid = fork();
		if (!pid) {
			close(go[1]);
			lc_child(go[0], w->img);
		}
		close(go[0]);
		if (pid < 0) {
			close(go[1]);
			break;
		}
		if (uwt_maps_set(w->fd, pid, &map, 1) == 0)
			w->uploaded++;
		else
			w->err++;
		if (write(go[1], "g", 1) != 1)
			w->err++;
		close(go[1]);
		/*
		 * Stopped at its exec (the hold) unless the hold expired
		 * first on a slow guest; let go as a reader would.
		 */
		if (waitpid(pid, &wst, WUNTRACED) != pid) {
			w->err++;
			break;
		}
		if (WIFSTOPPED(wst)) {
			w->held++;
			del.pid = pid;
			/* The exec took its entry: ENOENT, the hold goes anyway. */
			ioctl(w->fd, UWPROF_IOC_PROCESS_DEL, &del);
			if (waitpid(pid, &wst, 0) != pid)
				w->err++;
		} else {
			w->unheld++;
		}
		if (!WIFEXITED(wst) || WEXITSTATUS(wst))
			w->err++;
		w->done++;
	}
	return NULL;
}

/*
 * lifecycle PROCS EXEC: the lifecycle probes' work under contention.
 * Four threads each fork processes whose mappings they upload to a
 * session sampling system-wide at 10 kHz with exec holds; each process
 * forks a child that inherits its mappings and exits, then execs EXEC and
 * is held there until its thread lets go. Some processes are stopped by
 * their hold; every child inherits or is counted lost; the counts come
 * back to where they started; the sampler's identities hold. On a
 * PREEMPT_RT debug kernel this is the scenario that shows a lifecycle
 * probe taking a sleeping lock.
 */
static int cmd_lifecycle(int argc, char **argv)
{
	uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 0) : 2000;
	uint64_t done = 0, uploaded = 0, held = 0, unheld = 0, err = 0;
	struct lc_worker w[4];
	struct uwprof_stats st0, st;
	struct churn_image img;
	struct drainer d;
	uint64_t inh, drop;
	double t0, dt;
	int fd, i;

	if (argc < 4 || churn_image_open(&img, argv[3], true)) {
		printf("Bail out! lifecycle: usage: lifecycle PROCS EXEC (readable)\n");
		return 1;
	}
	fd = uwg_open();
	tap(uwg_add_synthetic(fd, 77, 256) == 0, "lifecycle: table added");
	tap(uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK |
		      UWPROF_START_HOLD_EXEC, 10000, 32, 16, NULL, 0) == 0,
	    "lifecycle: system-wide sampling at 10 kHz with exec holds");
	tap(drainer_start(&d, fd) == 0, "lifecycle: reader mapped the rings");
	uwt_stats(fd, &st0);
	t0 = uwg_now_s();
	for (i = 0; i < 4; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].fd = fd;
		w[i].img = &img;
		w[i].todo = total / 4 + (i < (int)(total % 4));
		w[i].object_id = 77;
		pthread_create(&w[i].th, NULL, lc_worker_main, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(w[i].th, NULL);
		done += w[i].done;
		uploaded += w[i].uploaded;
		held += w[i].held;
		unheld += w[i].unheld;
		err += w[i].err;
	}
	dt = uwg_now_s() - t0;
	close(img.fd);
	diag("lifecycle: waited %d ms for the RCU frees", churn_settle(fd, &st0, &st));
	tap(done == total && err == 0 && uploaded == total,
	    "lifecycle: %llu processes in %.1f s, each forked a child and exec'd (%llu errors)",
	    (unsigned long long)done, dt, (unsigned long long)err);
	tap(held > 0,
	    "lifecycle: %llu stopped by their exec hold, %llu ran on (hold expired first)",
	    (unsigned long long)held, (unsigned long long)unheld);
	inh = st.processes_inherited - st0.processes_inherited;
	drop = st.processes_dropped - st0.processes_dropped;
	diag("lifecycle: lifecycle_lost %llu", (unsigned long long)st.lifecycle_lost);
	tap(inh + st.lifecycle_lost - st0.lifecycle_lost == total,
	    "lifecycle: every child inherited its parent's mappings (%llu) or was counted lost (%llu)",
	    (unsigned long long)inh,
	    (unsigned long long)(st.lifecycle_lost - st0.lifecycle_lost));
	tap(drop == uploaded + inh,
	    "lifecycle: processes_dropped %llu == uploaded %llu + inherited %llu",
	    (unsigned long long)drop, (unsigned long long)uploaded,
	    (unsigned long long)inh);
	tap(st.processes == st0.processes,
	    "lifecycle: processes back to the baseline %llu (now %llu)",
	    (unsigned long long)st0.processes, (unsigned long long)st.processes);
	tap(uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0, "lifecycle: STOP");
	drainer_join(&d);
	check_identities("lifecycle", fd, &d);
	uwt_rings_unmap(&d.r);
	close(fd);
	return tap_status();
}

/* ---- MMAP records while paths are renamed and mounts change ---- */

#define MR_DEPTH	48	/* directories between the renamed one and the file */
#define MR_MAPPERS	2

struct mr_state {
	char dir[64];			/* a tmpfs of its own */
	char path[2][PATH_MAX];		/* the file, under "a" and under "b" */
	struct stat st;			/* the file's identity */
	pid_t pids[MR_MAPPERS];
	volatile int stop;
	uint64_t renames, mounts, rename_err, mount_err;
	/* From the drainer thread: the mappers' records. */
	uint64_t with_path, pathless, wrong;
};

static void on_mr_mmap(const struct uwprof_rec_mmap *m, void *priv)
{
	struct mr_state *s = priv;
	int i;

	for (i = 0; i < MR_MAPPERS; i++)
		if ((pid_t)m->pid == s->pids[i])
			break;
	if (i == MR_MAPPERS)
		return;
	if (m->ino != s->st.st_ino || m->dev_major != major(s->st.st_dev) ||
	    m->dev_minor != minor(s->st.st_dev) || (m->flags & UWPROF_MMAP_VDSO))
		s->wrong++;
	else if (m->flags & UWPROF_MMAP_PATH_CUT)
		s->pathless++;
	else if (!strcmp(m->path, s->path[0]) || !strcmp(m->path, s->path[1]))
		s->with_path++;
	else
		s->wrong++;
}

/* Renames "a" to "b" and back, each a new name on the mapped file's path. */
static void *mr_renamer(void *arg)
{
	struct mr_state *s = arg;
	char a[96], b[96];

	snprintf(a, sizeof(a), "%s/a", s->dir);
	snprintf(b, sizeof(b), "%s/b", s->dir);
	while (!s->stop) {
		if (rename(a, b) || rename(b, a))
			s->rename_err++;
		else
			s->renames += 2;
	}
	return NULL;
}

/* Mounts and unmounts a tmpfs beside the file: mount_lock's writer. */
static void *mr_mounter(void *arg)
{
	struct mr_state *s = arg;
	char m[96];

	snprintf(m, sizeof(m), "%s/m", s->dir);
	while (!s->stop) {
		if (mount("uwprof-mr", m, "tmpfs", 0, NULL) || umount(m))
			s->mount_err++;
		else
			s->mounts++;
	}
	return NULL;
}

/*
 * A child mapping the file open at 'fd' executable and unmapping it for
 * 'ms' ms (opened before: its path changes all the time).
 */
static pid_t mr_mapper(int fd, long ms, int out)
{
	struct timespec t0, t;
	pid_t pid = fork();
	long n = 0;
	void *p;

	if (pid)
		return pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED || munmap(p, 4096))
			_exit(1);
		n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	_exit(write(out, &n, sizeof(n)) == sizeof(n) ? 0 : 1);
}

/* The tree: DIR/a/d00/.../dNN/lib, a page of a file, and DIR/m. */
static int mr_tree(struct mr_state *s)
{
	char buf[4096] = { 0 };
	size_t n;
	int i, fd;

	snprintf(s->dir, sizeof(s->dir), "/tmp/uwprof-mr.XXXXXX");
	if (!mkdtemp(s->dir) || mount("uwprof-mr", s->dir, "tmpfs", 0, NULL))
		return -1;
	for (i = 0; i < 2; i++) {
		n = (size_t)snprintf(s->path[i], sizeof(s->path[i]), "%s/%c",
				     s->dir, i ? 'b' : 'a');
		for (int k = 0; k < MR_DEPTH; k++)
			n += (size_t)snprintf(s->path[i] + n, sizeof(s->path[i]) - n,
					      "/d%02d", k);
		snprintf(s->path[i] + n, sizeof(s->path[i]) - n, "/lib");
	}
	snprintf(buf, sizeof(buf), "%s/m", s->dir);
	if (mkdir(buf, 0755))
		return -1;
	/* mkdir -p of path[0]'s directories */
	strcpy(buf, s->path[0]);
	for (n = strlen(s->dir) + 1; buf[n]; n++) {
		if (buf[n] != '/')
			continue;
		buf[n] = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		buf[n] = '/';
	}
	memset(buf, 0, sizeof(buf));
	fd = open(s->path[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
	    fstat(fd, &s->st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * mmaprename SECONDS: MMAP records of a file mapped executable over and
 * over by two processes while a thread renames a directory on the file's
 * path and another mounts and unmounts a tmpfs, so that resolving the
 * path races a rename or a mount (rename_lock's and mount_lock's writers;
 * spinlock_t, sleeping locks on PREEMPT_RT). Every record of the mappers
 * names the file by one of its two paths, or by none (counted), with the
 * file's device and inode. On a PREEMPT_RT debug kernel this is the
 * scenario that shows the MMAP probe taking a sleeping lock.
 */
static int cmd_mmaprename(int argc, char **argv)
{
	long secs = argc > 2 ? strtol(argv[2], NULL, 0) : 20;
	struct mr_state *s = calloc(1, sizeof(*s));
	struct uwprof_stats st;
	pthread_t th[2];
	int pfd[2], i, status, ok = 0;
	uint64_t made = 0;
	struct drainer d;
	int fd, lib;
	long n;

	if (!s || secs <= 0 || mr_tree(s)) {
		printf("Bail out! mmaprename: usage: mmaprename SECONDS (a tmpfs under /tmp: %s)\n",
		       strerror(errno));
		return 1;
	}
	fd = uwg_open();
	tap(uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_MMAP, 100,
		      8, 64, NULL, 0) == 0,
	    "mmaprename: system-wide session with MMAP records");
	tap(drainer_start(&d, fd) == 0, "mmaprename: reader mapped the rings");
	pthread_mutex_lock(&d.lock);
	d.rd.on_mmap = on_mr_mmap;
	d.rd.priv = s;
	pthread_mutex_unlock(&d.lock);
	lib = open(s->path[0], O_RDONLY | O_CLOEXEC);
	if (lib < 0 || pipe(pfd))
		return 1;
	/* The mappers first, so the reader knows their pids. */
	pthread_mutex_lock(&d.lock);
	for (i = 0; i < MR_MAPPERS; i++)
		s->pids[i] = mr_mapper(lib, secs * 1000, pfd[1]);
	pthread_mutex_unlock(&d.lock);
	close(pfd[1]);
	close(lib);
	pthread_create(&th[0], NULL, mr_renamer, s);
	pthread_create(&th[1], NULL, mr_mounter, s);
	for (i = 0; i < MR_MAPPERS; i++) {
		if (waitpid(s->pids[i], &status, 0) == s->pids[i] &&
		    WIFEXITED(status) && !WEXITSTATUS(status))
			ok++;
	}
	while (read(pfd[0], &n, sizeof(n)) == sizeof(n))
		made += (uint64_t)n;
	close(pfd[0]);
	s->stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	tap(ok == MR_MAPPERS && made > 0,
	    "mmaprename: %llu executable mappings by %d processes in %ld s",
	    (unsigned long long)made, ok, secs);
	tap(s->renames > 0 && s->rename_err == 0,
	    "mmaprename: %llu renames on the path meanwhile (%llu failed)",
	    (unsigned long long)s->renames, (unsigned long long)s->rename_err);
	tap(s->mounts > 0 && s->mount_err == 0,
	    "mmaprename: %llu mounts and unmounts beside it (%llu failed)",
	    (unsigned long long)s->mounts, (unsigned long long)s->mount_err);
	tap(uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0, "mmaprename: STOP");
	drainer_join(&d);
	uwt_rings_drain(&d.r, &d.rd);
	uwt_stats(fd, &st);
	tap(s->with_path > 0 && s->wrong == 0,
	    "mmaprename: %llu records name the file by one of its paths, %llu by none, %llu wrongly",
	    (unsigned long long)s->with_path, (unsigned long long)s->pathless,
	    (unsigned long long)s->wrong);
	tap(st.mmap_records == d.rd.c.mmaps && d.rd.c.bad == 0,
	    "mmaprename: the reader got every MMAP record written (%llu of %llu, %llu throttled, %llu lost)",
	    (unsigned long long)d.rd.c.mmaps,
	    (unsigned long long)st.mmap_records,
	    (unsigned long long)st.mmap_throttled,
	    (unsigned long long)d.rd.c.lost);
	tap(st.mmap_records + st.mmap_throttled + st.lost >= made,
	    "mmaprename: every mapping written, throttled or lost");
	uwt_rings_unmap(&d.r);
	close(fd);
	umount(s->dir);
	rmdir(s->dir);
	free(s);
	return tap_status();
}

/* ---- load/unload cycles ---- */

static int sys_rmmod(void)
{
	return syscall(SYS_delete_module, "uwprof", O_NONBLOCK) ? -errno : 0;
}

static int sys_insmod(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int wait_dev(void)
{
	int i, fd;

	/* devtmpfs creates the node asynchronously after insmod. */
	for (i = 0; i < 500; i++) {
		fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		uwt_sleep_ms(10);
	}
	return -1;
}

static int cmd_unload(int argc, char **argv)
{
	uint64_t cycles = argc > 2 ? strtoull(argv[2], NULL, 0) : 200;
	const char *ko = argc > 3 ? argv[3] : NULL;
	uint64_t i, done = 0, refused_open = 0, refused_mapped = 0;
	uint64_t samples = 0, bad_refusal = 0, rmmod_fail = 0, retries = 0;
	uint32_t pid;
	double t0, dt;
	int ret;

	if (!ko) {
		fprintf(stderr, "usage: unload CYCLES KO\n");
		return 2;
	}
	pid = uwt_spinner();
	t0 = uwg_now_s();
	for (i = 0; i < cycles; i++) {
		struct drainer d;
		int fd, j;

		ret = sys_insmod(ko, "");
		if (ret && ret != -EEXIST) {
			diag("cycle %llu: insmod: %s", (unsigned long long)i,
			     strerror(-ret));
			break;
		}
		fd = wait_dev();
		if (fd < 0)
			break;
		if (uwg_add_synthetic(fd, 1, 64) ||
		    uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
			      2000, 16, 2, NULL, 0) || drainer_start(&d, fd)) {
			diag("cycle %llu: could not start", (unsigned long long)i);
			close(fd);
			break;
		}
		uwt_sleep_ms(20);
		ret = sys_rmmod();
		if (ret == -EBUSY || ret == -EAGAIN)
			refused_open++;
		else
			bad_refusal++;
		drainer_join(&d);
		samples += d.rd.c.samples;
		/* Closed but still mapped: the mapping pins the module. */
		close(fd);
		ret = sys_rmmod();
		if (ret == -EBUSY || ret == -EAGAIN)
			refused_mapped++;
		else
			bad_refusal++;
		uwt_rings_unmap(&d.r);
		for (j = 0; j < 100; j++) {
			ret = sys_rmmod();
			if (ret != -EAGAIN && ret != -EBUSY)
				break;
			retries++;
			uwt_sleep_ms(10);
		}
		if (ret) {
			diag("cycle %llu: rmmod after close: %s",
			     (unsigned long long)i, strerror(-ret));
			rmmod_fail++;
			break;
		}
		done++;
	}
	dt = uwg_now_s() - t0;
	if (access("/sys/module/uwprof", F_OK))
		sys_insmod(ko, "");
	uwt_reap(pid);
	tap(done == cycles, "unload: %llu of %llu load/start/map/close/unload cycles in %.1f s, %llu samples read",
	    (unsigned long long)done, (unsigned long long)cycles, dt,
	    (unsigned long long)samples);
	tap(refused_open == done && refused_mapped == done && bad_refusal == 0,
	    "unload: rmmod refused with EBUSY/EAGAIN while open (%llu) and while mapped (%llu), %llu other answers",
	    (unsigned long long)refused_open, (unsigned long long)refused_mapped,
	    (unsigned long long)bad_refusal);
	tap(rmmod_fail == 0 && retries == 0,
	    "unload: rmmod right after munmap succeeded (%llu retries)",
	    (unsigned long long)retries);
	tap(!access("/sys/module/uwprof", F_OK), "unload: module loaded again at the end");
	return tap_status();
}

/* ---- CPU hotplug ---- */

struct per_cpu_seen {
	uint64_t n[64];
};

static void count_cpu(const struct uwprof_rec_sample *s, uint32_t ring, void *priv)
{
	struct per_cpu_seen *p = priv;

	(void)s;
	if (ring < 64)
		p->n[ring]++;
}

static int cmd_hotplug(int argc, char **argv)
{
	uint64_t cycles = argc > 2 ? strtoull(argv[2], NULL, 0) : 100;
	int ncpu = nr_cpus_online(), cpu, i, fd, errs = 0, retries = 0, on, ret;
	struct per_cpu_seen before = {}, seen = {};
	pid_t spin[8];
	struct drainer d;
	double t0, dt;
	uint64_t c;

	if (ncpu < 2) {
		printf("ok 1 - hotplug # SKIP needs two online CPUs\n");
		return 0;
	}
	if (uwt_cpu_online(1, 1, NULL)) {
		printf("ok 1 - hotplug # SKIP CPU 1 cannot be hotplugged\n");
		return 0;
	}
	for (i = 0; i < ncpu && i < 8; i++)
		spin[i] = uwt_spinner();
	fd = uwg_open();
	tap(uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
		      2000, 16, 4, NULL, 0) == 0, "hotplug: system-wide sampling");
	tap(drainer_start(&d, fd) == 0, "hotplug: reader mapped the rings");
	t0 = uwg_now_s();
	for (c = 0; c < cycles; c++) {
		cpu = 1 + c % (ncpu - 1);
		for (on = 0; on < 2; on++) {
			/* The kernel's EBUSY is retried; uwprof's callbacks never fail. */
			ret = uwt_cpu_online(cpu, on, &retries);
			if (ret) {
				errs++;
				diag("hotplug: CPU %d %s: %s", cpu,
				     on ? "online" : "offline", strerror(-ret));
				uwt_cpu_online(cpu, 1, NULL);
			}
			uwt_sleep_ms(5);
		}
	}
	dt = uwg_now_s() - t0;
	tap(errs == 0, "hotplug: %llu offline/online cycles of CPUs 1..%d in %.1f s (%d errors, %d EBUSY retried)",
	    (unsigned long long)cycles, ncpu - 1, dt, errs, retries);
	/* Every CPU samples again once back online. */
	pthread_mutex_lock(&d.lock);
	d.rd.priv = &seen;
	d.rd.on_sample = count_cpu;
	before = seen;
	pthread_mutex_unlock(&d.lock);
	uwt_sleep_ms(1000);
	pthread_mutex_lock(&d.lock);
	d.rd.on_sample = NULL;
	pthread_mutex_unlock(&d.lock);
	for (cpu = 0; cpu < ncpu && cpu < 64; cpu++)
		tap(seen.n[cpu] > before.n[cpu], "hotplug: CPU %d samples after the cycles (%llu)",
		    cpu, (unsigned long long)seen.n[cpu]);
	tap(uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0, "hotplug: STOP");
	drainer_join(&d);
	check_identities("hotplug", fd, &d);
	uwt_rings_unmap(&d.r);
	close(fd);
	for (i = 0; i < ncpu && i < 8; i++)
		uwt_reap(spin[i]);
	return tap_status();
}

/* ---- ring overflow with a reader that stops reading ---- */

static int cmd_overflow(int argc, char **argv)
{
	double secs = argc > 2 ? strtod(argv[2], NULL) : 3;
	pid_t spin[4];
	struct drainer d;
	struct uwprof_stats st;
	uint64_t read_before;
	int fd, i;

	for (i = 0; i < 4; i++)
		spin[i] = uwt_spinner();
	fd = uwg_open();
	tap(uwt_start(fd, UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
		      10000, 32, 1, NULL, 0) == 0, "overflow: 10 kHz into one-page rings");
	tap(drainer_start(&d, fd) == 0, "overflow: reader mapped the rings");
	uwt_sleep_ms(secs * 1000 / 3);
	d.paused = 1;
	pthread_mutex_lock(&d.lock);
	read_before = d.rd.c.samples;
	pthread_mutex_unlock(&d.lock);
	uwt_sleep_ms(secs * 1000 / 3);
	d.paused = 0;
	uwt_sleep_ms(secs * 1000 / 3);
	tap(uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0, "overflow: STOP");
	drainer_join(&d);
	check_identities("overflow", fd, &d);
	uwt_stats(fd, &st);
	tap(st.lost_samples > 0 && d.rd.c.samples > read_before,
	    "overflow: %.1f s, %llu samples read (%llu before the pause), %llu lost, reading resumed",
	    secs, (unsigned long long)d.rd.c.samples,
	    (unsigned long long)read_before, (unsigned long long)st.lost_samples);
	uwt_rings_unmap(&d.r);
	close(fd);
	for (i = 0; i < 4; i++)
		uwt_reap(spin[i]);
	return tap_status();
}

/* ---- memory cap ---- */

static int cmd_memcap(int argc, char **argv)
{
	unsigned long long cap = 0;
	struct uwprof_stats sa, sb, sa2;
	struct uwprof_map map = {
		.start = 0x400000, .end = 0x500000, .bias = 0x3ff000, .object_id = 1,
	};
	uint64_t id, added = 0, other_err = 0;
	uint32_t pid;
	struct drainer d;
	int a, b, ret = 0;

	(void)argc;
	(void)argv;
	if (uwt_param("table_mem_max", &cap, false)) {
		tap(false, "memcap: cannot read table_mem_max");
		return 1;
	}
	if (cap > 64ULL << 20) {
		printf("ok 1 - memcap # SKIP table_mem_max is %llu: load uwprof with a small cap\n",
		       cap);
		return 0;
	}
	pid = uwt_spinner();
	a = uwg_open();
	b = uwg_open();
	/* Session a samples and unwinds with its small table the whole time. */
	tap(uwg_add_synthetic(a, 1, 64) == 0 && uwt_maps_set(a, pid, &map, 1) == 0,
	    "memcap: sampler's table and mappings");
	tap(uwt_start(a, UWPROF_START_CPU_CLOCK, 2000, 16, 2, &pid, 1) == 0,
	    "memcap: sampling started");
	tap(drainer_start(&d, a) == 0, "memcap: reader mapped the rings");
	uwt_stats(a, &sa);

	/* Session b fills the cap with 64 KiB tables. */
	for (id = 1; id < 100000; id++) {
		ret = uwg_add_synthetic(b, id, 10000);
		if (ret)
			break;
		added++;
	}
	uwt_stats(b, &sb);
	tap(ret == -ENOSPC, "memcap: TABLE_ADD beyond the cap answers ENOSPC (%s) after %llu tables, %llu bytes of %llu",
	    strerror(-ret), (unsigned long long)added,
	    (unsigned long long)sb.table_bytes, cap);
	tap(sb.table_bytes <= cap, "memcap: the session holds at most the cap");
	ret = uwg_add_synthetic(b, 999999, 10000);
	tap(ret == -ENOSPC, "memcap: and again (%s)", strerror(-ret));
	/* MAPS_SET is charged too. */
	{
		uint32_t n = 4096, i;
		struct uwprof_map *m = calloc(n, sizeof(*m));

		for (i = 0; i < n && m; i++) {
			m[i].start = 0x400000 + i * 0x2000ULL;
			m[i].end = m[i].start + 0x1000;
			m[i].object_id = 1;
		}
		ret = m ? uwt_maps_set(b, getpid(), m, n) : -ENOMEM;
		tap(ret == -ENOSPC, "memcap: MAPS_SET beyond the cap answers ENOSPC (%s)",
		    strerror(-ret));
		free(m);
	}
	/* Everything else goes on. */
	uwt_sleep_ms(500);
	uwt_stats(a, &sa2);
	tap(sa2.samples > sa.samples, "memcap: sampling went on (%llu -> %llu samples)",
	    (unsigned long long)sa.samples, (unsigned long long)sa2.samples);
	{
		struct uwprof_version v = { .size = sizeof(v) };

		other_err += uwt_ioctl(b, UWPROF_IOC_VERSION, &v) != 0;
		other_err += uwt_stats(b, &sb) != 0;
	}
	tap(other_err == 0, "memcap: VERSION and STATS still answer");
	{
		struct uwprof_object_del del = { .size = sizeof(del), .object_id = 1 };

		tap(uwt_ioctl(b, UWPROF_IOC_OBJECT_DEL, &del) == 0 &&
		    uwg_add_synthetic(b, 999999, 10000) == 0,
		    "memcap: OBJECT_DEL makes room for one more table");
	}
	close(b);
	tap(uwg_add_synthetic(a, 2, 10000) == 0,
	    "memcap: closing the full session gives its memory back");
	tap(uwt_ioctl(a, UWPROF_IOC_STOP, NULL) == 0, "memcap: STOP");
	drainer_join(&d);
	check_identities("memcap", a, &d);
	uwt_rings_unmap(&d.r);
	close(a);
	uwt_reap(pid);
	return tap_status();
}

/* ---- several sessions at once ---- */

/* What every session thread may use. */
struct sess_shared {
	uint32_t caps;
	uint32_t spin_pid;	/* a spinner, for pid-filtered sessions */
	int cgroup_fd;		/* a cgroup the spinner is in, or -1 */
	uint64_t cycles;	/* per thread */
};

struct sess_thread {
	pthread_t th;
	const struct sess_shared *sh;
	uint64_t seed;
	uint64_t cycles, started, closed_sampling, start_err, busy_err;
	uint64_t bad_identity, bad_records, samples, lost, throttled;
	int last_err;
	char why[200];		/* the last identity failure */
	struct uwt_reader *rd;
};

/* START of a random session; returns 0 or -errno, 'a' as used. */
static int sess_start(int fd, const struct sess_shared *sh, uint64_t *st,
		      struct uwprof_start *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = UWPROF_START_CPU_CLOCK;
	a->freq_hz = 100 + rnd_below(st, 4900);
	a->max_depth = 1 + rnd_below(st, 64);
	if (rnd_below(st, 3)) {
		a->flags |= UWPROF_START_SYSTEM_WIDE;
	} else {
		a->nr_pids = 1;
		a->pids = (uintptr_t)&sh->spin_pid;
	}
	if (rnd_below(st, 4) == 0 && sh->cgroup_fd >= 0) {
		a->flags |= UWPROF_START_CGROUP;
		a->cgroup_fd = sh->cgroup_fd;
	}
	if (rnd_below(st, 4) == 0) {
		a->flags |= UWPROF_START_COMM;
		strcpy(a->comm, rnd_below(st, 2) ? "churn_exit" : "uwprof_stress");
	}
	if (rnd_below(st, 3) == 0)
		a->flags |= UWPROF_START_SNAPSHOT;
	if (rnd_below(st, 4) == 0 && (sh->caps & UWPROF_CAP_OFF_CPU)) {
		a->flags |= UWPROF_START_OFF_CPU;
		a->off_cpu_min_ns = rnd_below(st, 1000000);
	}
	if (rnd_below(st, 4) == 0 && (sh->caps & UWPROF_CAP_KERNEL_STACK))
		a->flags |= UWPROF_START_KERNEL_STACK;
	/* One page overflows at once; it holds no snapshot or kernel stack. */
	if (!(a->flags & (UWPROF_START_SNAPSHOT | UWPROF_START_KERNEL_STACK)) &&
	    rnd_below(st, 3) == 0)
		a->ring_pages = 1;
	return uwt_ioctl(fd, UWPROF_IOC_START, a);
}

/*
 * The identities of struct uwprof_stats for one stopped and drained
 * session; off-CPU samples are records the reader counts as samples.
 */
static void sess_judge(struct sess_thread *t, int fd, struct uwt_rings *r)
{
	const struct uwt_counts *c = &t->rd->c;
	struct uwprof_stats st;

	if (uwt_stats(fd, &st)) {
		t->bad_identity++;
		snprintf(t->why, sizeof(t->why), "STATS failed");
		return;
	}
	t->samples += st.samples;
	t->lost += st.lost;
	t->throttled += st.skipped_throttle;
	t->bad_records += c->bad;
	if (st.events != st.samples + st.lost_samples + uwt_events_skipped(&st) ||
	    c->samples != st.samples + st.off_cpu_samples ||
	    c->lost != st.lost || uwt_ctl_lost(r) != st.lost) {
		t->bad_identity++;
		snprintf(t->why, sizeof(t->why),
			 "events %llu samples %llu lost %llu/%llu skipped %llu; read samples %llu lost %llu; rings lost %llu",
			 st.events, st.samples, st.lost, st.lost_samples,
			 (unsigned long long)uwt_events_skipped(&st),
			 (unsigned long long)c->samples,
			 (unsigned long long)c->lost,
			 (unsigned long long)uwt_ctl_lost(r));
	}
}

/*
 * One session's life: open, a table, START, read for 20 to 200 ms, then
 * either close while sampling or STOP, judge, try a START while the rings
 * are still mapped (EBUSY), and close.
 */
static void sess_cycle(struct sess_thread *t, uint64_t *st)
{
	struct pollfd p = { .events = POLLIN };
	struct uwprof_start a;
	struct uwt_rings r;
	double until;
	int fd, ret;

	fd = uwg_open();
	uwg_add_synthetic(fd, 1, 64);
	ret = sess_start(fd, t->sh, st, &a);
	if (ret) {
		t->start_err++;
		t->last_err = -ret;
		close(fd);
		return;
	}
	t->started++;
	memset(&t->rd->c, 0, sizeof(t->rd->c));
	if (uwt_rings_map(fd, &r)) {
		t->start_err++;
		close(fd);
		return;
	}
	p.fd = fd;
	until = uwg_now_s() + (20 + rnd_below(st, 180)) / 1e3;
	while (uwg_now_s() < until) {
		poll(&p, 1, 10);
		uwt_rings_drain(&r, t->rd);
	}
	if (rnd_below(st, 8) == 0) {
		t->closed_sampling++;
	} else if (uwt_ioctl(fd, UWPROF_IOC_STOP, NULL)) {
		t->bad_identity++;
		snprintf(t->why, sizeof(t->why), "STOP failed");
	} else {
		uwt_rings_drain(&r, t->rd);
		sess_judge(t, fd, &r);
		if (rnd_below(st, 4) == 0 &&
		    uwt_ioctl(fd, UWPROF_IOC_START, &a) != -EBUSY)
			t->busy_err++;
	}
	uwt_rings_unmap(&r);
	close(fd);
}

static void *sess_main(void *arg)
{
	struct sess_thread *t = arg;
	uint64_t st = t->seed;

	t->rd = calloc(1, sizeof(*t->rd));
	if (!t->rd)
		return NULL;
	for (t->cycles = 0; t->cycles < t->sh->cycles; t->cycles++)
		sess_cycle(t, &st);
	free(t->rd);
	return NULL;
}

/* A spinner in a fresh cgroup, and its directory's fd (-1 without). */
static int sess_cgroup(pid_t spin, char *path, size_t len)
{
	int fd;

	if (uwt_cgroup_make("uwprof-stress", path, len) ||
	    uwt_cgroup_enter(path, spin)) {
		path[0] = 0;
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd;
}

/* The processes that churn while the sessions come and go. */
struct sess_churn {
	struct churn_image img;
	struct churn_worker w[2];
	pthread_mutex_t id_lock;
	uint64_t next_id;
	volatile int stop;
	int fd;
};

static int sess_churn_start(struct sess_churn *c, const char *exec_path)
{
	int i;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->id_lock, NULL);
	c->next_id = 1000;
	if (churn_image_open(&c->img, exec_path, true))
		return -1;
	c->fd = uwg_open();
	if (uwg_add_synthetic(c->fd, c->next_id, 256))
		return -1;
	for (i = 0; i < 2; i++) {
		c->w[i].fd = c->fd;
		c->w[i].img = &c->img;
		c->w[i].todo = UINT64_MAX;
		c->w[i].next_id = &c->next_id;
		c->w[i].id_lock = &c->id_lock;
		c->w[i].stop = &c->stop;
		pthread_create(&c->w[i].th, NULL, churn_worker_main, &c->w[i]);
	}
	return 0;
}

/* Stops the churn: returns the processes it ran, 'bad' its failures. */
static uint64_t sess_churn_stop(struct sess_churn *c, uint64_t *bad)
{
	uint64_t done = 0;
	int i;

	c->stop = 1;
	*bad = 0;
	for (i = 0; i < 2; i++) {
		pthread_join(c->w[i].th, NULL);
		done += c->w[i].done;
		*bad += c->w[i].child_err + c->w[i].upload_err + c->w[i].table_err;
	}
	close(c->img.fd);
	close(c->fd);
	return done;
}

/*
 * sessions CYCLES CHAIN BLOB [exec=PATH]: three threads each run CYCLES
 * sessions of random kinds (system-wide or one pid, cgroup and comm
 * filters, snapshots, off-CPU, kernel stacks, tiny rings) while two
 * threads fork processes that exit, exec PATH or start threads, their
 * mappings uploaded by a session of their own. Every stopped session's
 * identities must hold exactly; afterwards a normal recording of CHAIN
 * still gets complete stacks.
 */
static int cmd_sessions(int argc, char **argv)
{
	uint64_t cycles = argc > 2 ? strtoull(argv[2], NULL, 0) : 100;
	struct uwprof_version v = { .size = sizeof(v) };
	uint64_t started = 0, closed = 0, start_err = 0, busy_err = 0;
	uint64_t bad = 0, bad_rec = 0, samples = 0, lost = 0, thr = 0;
	uint64_t procs, churn_bad;
	struct sess_shared sh = { .cycles = cycles };
	struct sess_thread th[3];
	struct sess_churn churn;
	char cgpath[PATH_MAX];
	pid_t spin;
	double t0;
	int fd, i;

	if (argc < 5) {
		fprintf(stderr, "sessions: CYCLES CHAIN BLOB [exec=PATH]\n");
		return 2;
	}
	fd = uwg_open();
	i = uwt_ioctl(fd, UWPROF_IOC_VERSION, &v);
	tap(!i && (v.caps & UWPROF_CAP_SESSIONS),
	    "sessions: the module samples several sessions at once (caps %#x)",
	    v.caps);
	close(fd);
	sh.caps = v.caps;
	spin = uwt_spinner();
	sh.spin_pid = spin;
	sh.cgroup_fd = sess_cgroup(spin, cgpath, sizeof(cgpath));
	if (sh.cgroup_fd < 0)
		diag("sessions: no cgroup v2 hierarchy: no cgroup-filtered sessions");
	if (sess_churn_start(&churn, argc > 5 && !strncmp(argv[5], "exec=", 5) ?
			     argv[5] + 5 : "/proc/self/exe")) {
		printf("Bail out! sessions: cannot start the churn\n");
		return 1;
	}
	t0 = uwg_now_s();
	for (i = 0; i < 3; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].sh = &sh;
		th[i].seed = 0x9e3779b97f4a7c15ULL * (i + 7) ^ (uint64_t)time(NULL);
		pthread_create(&th[i].th, NULL, sess_main, &th[i]);
	}
	for (i = 0; i < 3; i++) {
		pthread_join(th[i].th, NULL);
		started += th[i].started;
		closed += th[i].closed_sampling;
		start_err += th[i].start_err;
		busy_err += th[i].busy_err;
		bad += th[i].bad_identity;
		bad_rec += th[i].bad_records;
		samples += th[i].samples;
		lost += th[i].lost;
		thr += th[i].throttled;
		if (th[i].start_err)
			diag("thread %d: last START error %s", i,
			     strerror(th[i].last_err));
		if (th[i].bad_identity)
			diag("thread %d: %s", i, th[i].why);
	}
	procs = sess_churn_stop(&churn, &churn_bad);
	tap(started == 3 * cycles && start_err == 0,
	    "sessions: %llu sessions started by 3 threads at once in %.1f s (%llu START errors), %llu closed while sampling",
	    (unsigned long long)started, uwg_now_s() - t0,
	    (unsigned long long)start_err, (unsigned long long)closed);
	tap(bad == 0 && bad_rec == 0,
	    "sessions: every stopped session's identities exact (%llu not; %llu malformed records); %llu samples, %llu lost, %llu skipped over the CPU share",
	    (unsigned long long)bad, (unsigned long long)bad_rec,
	    (unsigned long long)samples, (unsigned long long)lost,
	    (unsigned long long)thr);
	tap(busy_err == 0,
	    "sessions: START with the last run's rings mapped is EBUSY (%llu not)",
	    (unsigned long long)busy_err);
	tap(procs > 0 && churn_bad == 0,
	    "sessions: %llu processes churned meanwhile (%llu failures)",
	    (unsigned long long)procs, (unsigned long long)churn_bad);
	if (sh.cgroup_fd >= 0)
		close(sh.cgroup_fd);
	uwt_reap(spin);
	if (cgpath[0])
		uwt_cgroup_remove(cgpath);
	normal_recording(argv[3], argv[4]);
	return tap_status();
}

/* A churn child exec's this program with "exit". */
int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "exit"))
		return 0;
	if (!strcmp(cmd, "fuzz"))
		return cmd_fuzz(argc, argv);
	if (!strcmp(cmd, "churn"))
		return cmd_churn(argc, argv);
	if (!strcmp(cmd, "unload"))
		return cmd_unload(argc, argv);
	if (!strcmp(cmd, "hotplug"))
		return cmd_hotplug(argc, argv);
	if (!strcmp(cmd, "overflow"))
		return cmd_overflow(argc, argv);
	if (!strcmp(cmd, "memcap"))
		return cmd_memcap(argc, argv);
	if (!strcmp(cmd, "sessions"))
		return cmd_sessions(argc, argv);
	if (!strcmp(cmd, "lifecycle"))
		return cmd_lifecycle(argc, argv);
	if (!strcmp(cmd, "mmaprename"))
		return cmd_mmaprename(argc, argv);
	fprintf(stderr, "usage: %s fuzz|churn|unload|hotplug|overflow|memcap|sessions|lifecycle|mmaprename ...\n",
		argv[0]);
	return 2;
}

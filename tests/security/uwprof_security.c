// SPDX-License-Identifier: GPL-2.0
/*
 * Security checks of uwprof.ko, run as root in a guest by
 * tests/security/guest-run:
 *
 *	uwprof_security open OK|EPERM|EACCES	open /dev/uwprof with the
 *						caller's credentials (setpriv
 *						sets them) and compare
 *	uwprof_security kaddr			mappings over kernel addresses
 *						are refused; a process whose
 *						registers and stack hold kernel
 *						addresses unwinds to a truncated
 *						stack, never a kernel read
 *	uwprof_security nokernel		without KERNEL_STACK no kernel
 *						address reaches the reader, even
 *						for samples taken in the kernel
 *	uwprof_security hold PID held|free|setuid
 *						a session with HOLD_EXEC and
 *						PID's mappings; PID (waiting in
 *						hold-target) execs: it must be
 *						stopped (held) or never stopped
 *						(free; setuid: its new image runs
 *						with euid 0)
 *	uwprof_security hold-target NEXT	waits for hold's go file, then
 *						execs NEXT as hold-execd
 *	uwprof_security sessions N|any		N sessions open and the next is
 *						EMFILE (any: 64 open)
 *	uwprof_security rings limited|free	with RLIMIT_MEMLOCK 0, rings of
 *						16 MiB a CPU are EPERM (limited)
 *						or not; the default ones start,
 *						five times over
 *	uwprof_security tables MIB|any		tables up to MIB MiB, then
 *						ENOSPC (any: 64 MiB, no ENOSPC)
 *	uwprof_security mm			the sample path's user reads
 *						through page tables that are not
 *						current's are refused (module
 *						built with UWPROF_TEST_MM=1, else
 *						a skip)
 *
 * TAP output; exit 1 when a check failed.
 */
#include "../lib/uwprof_guest.h"

#include <sys/resource.h>

/* Both arches keep user space in the lower half: bit 63 marks the kernel. */
static bool kernel_half(uint64_t a)
{
	return a >> 63;
}

/* ---- open ---- */

static int cmd_open(const char *want)
{
	int fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	const char *got = !err ? "OK" : err == EPERM ? "EPERM" :
			  err == EACCES ? "EACCES" : strerror(err);
	char desc[160];

	snprintf(desc, sizeof(desc), "open as uid %d euid %d: %s, expected %s",
		 (int)getuid(), (int)geteuid(), got, want);
	tap(!strcmp(got, want), "%s", desc);
	if (fd >= 0) {
		struct uwprof_version v = { .size = sizeof(v) };
		uint32_t pid = getpid();

		/*
		 * Whoever may open may see kernel addresses: perf's rule for
		 * CAP_PERFMON, which lifts perf_event_paranoid.
		 */
		int ret = uwt_ioctl(fd, UWPROF_IOC_VERSION, &v);

		tap(!ret && (v.caps & UWPROF_CAP_KERNEL_STACK),
		    "opener holding CAP_PERFMON may ask for kernel stacks (caps %#x)",
		    v.caps);
		tap(uwt_start(fd, UWPROF_START_KERNEL_STACK | UWPROF_START_CPU_CLOCK,
			      100, 8, 0, &pid, 1) == 0 &&
		    uwt_ioctl(fd, UWPROF_IOC_STOP, NULL) == 0,
		    "START with KERNEL_STACK accepted for it");
		close(fd);
	}
	return tap_status();
}

/* ---- kernel addresses in mappings, registers and stack ---- */

/*
 * The victim: aligns sp, pushes two kernel addresses (they are where a
 * return address and a saved frame pointer would be), puts one in the
 * frame-pointer (and on arm64 the link) register, and spins.
 */
#if defined(__x86_64__)
#define KADDR	"0xffffffff81000000"
__asm__(".text\n"
	".globl victim_spin\n.type victim_spin, @function\n"
	"victim_spin:\n"
	"	and $-16, %rsp\n"
	"	movabs $" KADDR ", %rax\n"
	"	push %rax\n"
	"	push %rax\n"
	"	mov %rax, %rbp\n"
	"1:	jmp 1b\n"
	".globl victim_spin_end\n"
	"victim_spin_end:\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl victim_spin\n.type victim_spin, %function\n"
	"victim_spin:\n"
	"	mov x9, sp\n"
	"	and x9, x9, #~15\n"
	"	mov sp, x9\n"
	"	movz x10, #0xffff, lsl #48\n"
	"	movk x10, #0x8000, lsl #32\n"
	"	stp x10, x10, [sp, #-16]!\n"
	"	mov x29, x10\n"
	"	mov x30, x10\n"
	"1:	b 1b\n"
	".globl victim_spin_end\n"
	"victim_spin_end:\n");
#endif
void victim_spin(void);
void victim_spin_end(void);

static pid_t victim_start(void)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		close(fds[0]);
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		victim_spin();
		_exit(2);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	/* Let it reach the loop. */
	uwt_sleep_ms(50);
	return pid;
}

/* A one-row table over victim_spin with the given rule. */
static int victim_table(int fd, uint64_t id, const struct uwprof_rule *rule)
{
	uint64_t start = (uintptr_t)victim_spin;
	uint64_t len = (uintptr_t)victim_spin_end - start;
	struct uwt_blob b;
	int ret;

	if (uwt_blob_one(&b, start, (uint32_t)len))
		return -ENOMEM;
	uwt_rules(&b)[1] = *rule;
	ret = uwt_table_add(fd, id, b.data, b.size);
	free(b.data);
	return ret;
}

struct walk_seen {
	uint32_t pid;
	uint64_t samples;	/* of the victim, in victim_spin */
	uint64_t kernel_ips;	/* kernel-half addresses among user frames */
	uint64_t deeper;	/* more than the leaf frame */
	uint64_t stop[UWPROF_STOP__COUNT];
};

static void walk_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			void *priv)
{
	struct walk_seen *w = priv;
	const __u64 *u = s->ips + s->nr_kernel;
	uint32_t i;

	(void)ring;
	if (s->pid != w->pid || !s->nr_user)
		return;
	for (i = 0; i < s->nr_user; i++)
		w->kernel_ips += kernel_half(u[i]);
	if (u[0] < (uintptr_t)victim_spin || u[0] >= (uintptr_t)victim_spin_end)
		return;
	w->samples++;
	w->deeper += s->nr_user > 1;
	w->stop[(s->flags & UWPROF_SAMPLE_STOP_MASK) % UWPROF_STOP__COUNT]++;
}

/*
 * Samples the victim with one mapping over victim_spin (a table row with
 * 'rule', or no table and the frame-pointer fallback) and checks that the
 * walk stopped at the leaf for one of the 'ok' reasons.
 */
/*
 * Samples for at least 700 ms and until the module wrote 'min' samples, at
 * most 'max_ms': a guest on a loaded host may run the target only now and
 * then, and a fixed time would judge a handful of samples.
 */
static void sample_until(int fd, uint64_t min, int max_ms)
{
	struct uwprof_stats st;
	int waited = 0;

	uwt_sleep_ms(700);
	for (waited = 700; waited < max_ms; waited += 50) {
		if (uwt_stats(fd, &st) == 0 && st.samples >= min)
			break;
		uwt_sleep_ms(50);
	}
	uwt_ioctl(fd, UWPROF_IOC_STOP, NULL);
}

static void victim_walk(const char *name, const struct uwprof_rule *rule,
			uint32_t ok_mask, bool leaf_only)
{
	struct uwt_reader *rd = calloc(1, sizeof(*rd));
	struct walk_seen w = {};
	struct uwprof_map m = {};
	struct uwt_rings r;
	uint64_t other = 0;
	uint32_t pid;
	int fd, i;

	fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);
	pid = victim_start();
	if (fd < 0 || (int)pid < 0 || !rd) {
		tap(false, "%s: setup", name);
		goto out;
	}
	m.start = (uintptr_t)victim_spin & ~4095ULL;
	m.end = ((uintptr_t)victim_spin_end + 4095) & ~4095ULL;
	if (rule) {
		m.object_id = 1;
		if (victim_table(fd, 1, rule)) {
			tap(false, "%s: table upload", name);
			goto out;
		}
	} else {
		m.flags = UWPROF_MAP_NO_TABLE;
	}
	if (uwt_maps_set(fd, pid, &m, 1) ||
	    uwt_start(fd, UWPROF_START_CPU_CLOCK, 2000, 16, 0, &pid, 1)) {
		tap(false, "%s: mappings and START", name);
		goto out;
	}
	sample_until(fd, 100, 20000);
	if (uwt_rings_map(fd, &r)) {
		tap(false, "%s: mmap", name);
		goto out;
	}
	w.pid = pid;
	rd->on_sample = walk_sample;
	rd->priv = &w;
	uwt_rings_drain(&r, rd);
	uwt_rings_unmap(&r);
	for (i = 0; i < UWPROF_STOP__COUNT; i++) {
		if (!(ok_mask & (1u << i)))
			other += w.stop[i];
		if (w.stop[i])
			diag("%s: stop reason %d: %llu samples", name, i,
			     (unsigned long long)w.stop[i]);
	}
	tap(w.samples >= 20 && !w.kernel_ips && (!leaf_only || !w.deeper) && !other,
	    "%s: %llu samples, %llu past the leaf (bad_pc %llu, bad_sp %llu, read %llu, fp_end %llu, other %llu), %llu kernel addresses reported",
	    name, (unsigned long long)w.samples, (unsigned long long)w.deeper,
	    (unsigned long long)w.stop[UWPROF_STOP_BAD_PC],
	    (unsigned long long)w.stop[UWPROF_STOP_BAD_SP],
	    (unsigned long long)w.stop[UWPROF_STOP_READ],
	    (unsigned long long)w.stop[UWPROF_STOP_FP_END],
	    (unsigned long long)other, (unsigned long long)w.kernel_ips);
out:
	uwt_reap(pid);
	if (fd >= 0)
		close(fd);
	free(rd);
}

#define STOPBIT(x)	(1u << UWPROF_STOP_##x)

/*
 * The end of user space here: 47 bits (x86_64) or 48 (arm64), unless the
 * CPU and kernel run larger page tables (la57, 52-bit VA), which a fixed
 * mapping just above the small limit reveals.
 */
static uint64_t user_top(void)
{
#if defined(__x86_64__)
	const unsigned int small = 47, large = 56;
#else
	const unsigned int small = 48, large = 52;
#endif
	void *p = mmap((void *)(1ULL << small), 4096, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED || p != (void *)(1ULL << small))
		return 1ULL << small;
	munmap(p, 4096);
	return 1ULL << large;
}

static int cmd_kaddr(void)
{
	uint64_t top = user_top();
	const struct { uint64_t start, end; const char *what; } bad[] = {
		{ 0xffffffff81000000ULL, 0xffffffff82000000ULL, "kernel text" },
		{ 0xffff888000000000ULL, 0xffff888000100000ULL, "direct map" },
		{ top - 4096, top + 4096, "straddling the top of user space" },
		{ top, top + 4096, "just above user space" },
		{ 0xfffffffffffff000ULL, 0xffffffffffffffffULL, "the last page" },
	};
	struct uwprof_rule ra = {
		.cfa_type = UWPROF_CFA_SP, .cfa_off = 16,
		.fp_type = UWPROF_REG_SAME,
		.ra_type = UWPROF_REG_AT_CFA, .ra_off = -8,
	};
	struct uwprof_rule cfa = {
		.cfa_type = UWPROF_CFA_FP, .cfa_off = 16,
		.fp_type = UWPROF_REG_AT_CFA, .fp_off = -16,
		.ra_type = UWPROF_REG_AT_CFA, .ra_off = -8,
	};
	struct uwprof_rule huge = {
		.cfa_type = UWPROF_CFA_SP, .cfa_off = 0x7ffffff0,
		.fp_type = UWPROF_REG_SAME,
		.ra_type = UWPROF_REG_AT_CFA, .ra_off = -8,
	};
	size_t i;
	int fd;

	fd = uwg_open();
	tap(uwg_add_synthetic(fd, 1, 4) == 0, "a table to map");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct uwprof_map m = {
			.start = bad[i].start, .end = bad[i].end, .object_id = 1,
		};
		int ret = uwt_maps_set(fd, getpid(), &m, 1);

		tap(ret == -EINVAL, "mapping over %s [%#llx, %#llx) refused: %s",
		    bad[i].what, (unsigned long long)m.start,
		    (unsigned long long)m.end, strerror(-ret));
	}
	close(fd);

	/*
	 * arm64 strips the pointer-authentication bits of every return
	 * address first (they sit where a kernel address has its ones), so
	 * there the value becomes a user address in no mapping: it is
	 * reported as the caller's frame and the walk ends with NO_MAP.
	 */
	if (UWT_ARCH == UWPROF_ARCH_ARM64)
		victim_walk("return address in the kernel", &ra,
			    STOPBIT(NO_MAP), false);
	else
		victim_walk("return address in the kernel", &ra,
			    STOPBIT(BAD_PC), true);
	victim_walk("CFA from a kernel frame pointer", &cfa,
		    STOPBIT(READ) | STOPBIT(BAD_SP), true);
	victim_walk("CFA beyond the stack", &huge,
		    STOPBIT(READ) | STOPBIT(BAD_SP) | STOPBIT(BAD_PC), true);
	victim_walk("frame-pointer fallback on a kernel fp", NULL,
		    STOPBIT(BAD_SP) | STOPBIT(READ) | STOPBIT(FP_END), true);
	return tap_status();
}

/* ---- no kernel addresses unless asked for ---- */

struct kern_seen {
	uint64_t samples, in_kernel, nr_kernel, kernel_ips;
};

static void kern_sample(const struct uwprof_rec_sample *s, uint32_t ring,
			void *priv)
{
	struct kern_seen *k = priv;
	uint32_t i;

	(void)ring;
	k->samples++;
	k->in_kernel += !!(s->flags & UWPROF_SAMPLE_IN_KERNEL);
	k->nr_kernel += s->nr_kernel;
	for (i = 0; i < s->nr_kernel + s->nr_user; i++)
		k->kernel_ips += kernel_half(s->ips[i]);
}

/* A child that spends most of its time in the kernel. */
static pid_t syscaller(void)
{
	pid_t pid = fork();

	if (!pid) {
		char buf[65536];
		int z = open("/dev/zero", O_RDONLY);

		for (;;)
			if (read(z, buf, sizeof(buf)) < 0)
				_exit(1);
	}
	return pid;
}

static int cmd_nokernel(void)
{
	struct uwt_reader *rd = calloc(1, sizeof(*rd));
	struct kern_seen k = {};
	struct uwt_rings r;
	uint32_t pid;
	int fd;

	fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);
	pid = syscaller();
	if (fd < 0 || (int)pid < 0 || !rd) {
		tap(false, "nokernel: setup");
		return 1;
	}
	tap(uwt_start(fd, UWPROF_START_CPU_CLOCK, 2000, 16, 0, &pid, 1) == 0,
	    "sampling a syscall-bound process without KERNEL_STACK");
	sample_until(fd, 100, 20000);
	if (uwt_rings_map(fd, &r) == 0) {
		rd->on_sample = kern_sample;
		rd->priv = &k;
		uwt_rings_drain(&r, rd);
		uwt_rings_unmap(&r);
	}
	tap(k.in_kernel > 0 && k.nr_kernel == 0 && k.kernel_ips == 0,
	    "%llu samples, %llu hit the kernel: %llu kernel frames, %llu kernel addresses",
	    (unsigned long long)k.samples, (unsigned long long)k.in_kernel,
	    (unsigned long long)k.nr_kernel, (unsigned long long)k.kernel_ips);
	uwt_reap(pid);
	close(fd);
	free(rd);
	return tap_status();
}

/* ---- exec holds ---- */

#define HOLD_GO	"/tmp/uwprof-hold-go"

/* The effective uid of 'pid' from /proc/PID/status, or -1. */
static long proc_euid(pid_t pid)
{
	char path[64], line[256];
	long r, e = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %ld %ld", &r, &e) == 2)
			break;
	fclose(f);
	return e;
}

/* Whether 'pid' runs with 'word' as its argv[1]. */
static bool proc_runs(pid_t pid, const char *word)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return memmem(buf, n, word, strlen(word)) != NULL;
}

/*
 * Exec holds stop only processes the opener could ptrace-attach to: the
 * caller's credentials (setpriv in guest-run) decide, against those of
 * the image 'pid' execs into.
 */
static int cmd_hold(pid_t pid, const char *want)
{
	struct uwprof_map m = {
		.start = 0x10000, .end = 0x20000, .flags = UWPROF_MAP_NO_TABLE,
	};
	struct uwprof_maps_set ms = {
		.size = sizeof(ms), .pid = pid, .nr_maps = 1,
		.maps = (uintptr_t)&m,
	};
	uint32_t p = pid;
	bool stopped = false, execd = false;
	char go[64];
	int fd, i;
	long euid = -1;

	/*
	 * Its exec into hold-target (setpriv's, whose argv names it too)
	 * must not be the one held: wait until setpriv is gone.
	 */
	for (i = 0; i < 1000 && (!proc_runs(pid, "hold-target") ||
				 proc_runs(pid, "setpriv")); i++)
		uwt_sleep_ms(10);
	fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);
	i = fd < 0 ? -errno : uwt_ioctl(fd, UWPROF_IOC_MAPS_SET, &ms);
	if (!i)
		i = uwt_start(fd, UWPROF_START_CPU_CLOCK |
			      UWPROF_START_HOLD_EXEC, 100, 8, 0, &p, 1);
	if (i) {
		tap(false, "hold: session for pid %d: %s", pid, strerror(-i));
		return 1;
	}
	snprintf(go, sizeof(go), HOLD_GO ".%d", pid);
	close(open(go, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	/* The hold lasts 500 ms at most: look for it for two seconds. */
	for (i = 0; i < 400; i++) {
		char st = uwt_proc_state(pid);

		if (!st)
			break;
		stopped |= st == 'T';
		if (!execd && proc_runs(pid, "hold-execd")) {
			execd = true;
			euid = proc_euid(pid);
		}
		uwt_sleep_ms(5);
	}
	uwt_ioctl(fd, UWPROF_IOC_STOP, NULL);
	close(fd);
	unlink(go);
	if (!execd) {
		tap(false, "hold: pid %d never ran its new image", pid);
		return 1;
	}
	if (!strcmp(want, "setuid") && euid != 0) {
		tap(true, "# SKIP setuid not honoured here (new image's euid %ld)",
		    euid);
		return 0;
	}
	tap(stopped == !strcmp(want, "held"),
	    "pid %d (new image's euid %ld) exec'd and was %s by a session of uid %d, euid %d",
	    pid, euid, stopped ? "stopped" : "not stopped", (int)getuid(),
	    (int)geteuid());
	return tap_status();
}

/* Waits for cmd_hold's go file (up to 30 s), then execs 'next'. */
static int cmd_hold_target(const char *next)
{
	char go[64];
	int i;

	snprintf(go, sizeof(go), HOLD_GO ".%d", getpid());
	for (i = 0; i < 3000 && access(go, F_OK); i++)
		uwt_sleep_ms(10);
	execl(next, next, "hold-execd", (char *)NULL);
	return 127;
}

/* ---- per-user limits ---- */

/* Opens sessions until one fails; 'want' of them must open, then EMFILE. */
static int cmd_sessions(const char *want)
{
	int n = strcmp(want, "any") ? atoi(want) : 64, i, fd = 0, err = 0;
	int fds[65];

	for (i = 0; i <= n && i < 65; i++) {
		fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			break;
		}
		fds[i] = fd;
	}
	if (!strcmp(want, "any"))
		tap(i >= n, "uid %d: %d sessions open, none refused (%s)",
		    (int)getuid(), i, err ? strerror(err) : "no error");
	else
		tap(i == n && err == EMFILE,
		    "uid %d: %d sessions open, the next refused with %s (want %d, EMFILE)",
		    (int)getuid(), i, err ? strerror(err) : "nothing", n);
	while (i-- > 0)
		close(fds[i]);
	return tap_status();
}

/* One START (and STOP) of rings of 'pages' data pages a CPU. */
static int rings_start(uint32_t pages)
{
	uint32_t pid = getpid();
	int fd = open(UWT_DEV, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = uwt_start(fd, UWPROF_START_CPU_CLOCK, 100, 8, pages, &pid, 1);
	if (!ret)
		uwt_ioctl(fd, UWPROF_IOC_STOP, NULL);
	close(fd);
	return ret;
}

/*
 * Ring pages are charged to the user's locked memory: with RLIMIT_MEMLOCK
 * 0, 16 MiB of rings a CPU are past the allowance (limited) or not (an
 * opener with CAP_IPC_LOCK); the default rings fit, and each START gives
 * its charge back (five in a row would not fit otherwise).
 */
static int cmd_rings(const char *want)
{
	struct rlimit rl = { 0, 0 };
	int big, i, ret = 0;

	if (setrlimit(RLIMIT_MEMLOCK, &rl)) {
		tap(false, "rings: setrlimit: %s", strerror(errno));
		return 1;
	}
	big = rings_start(4096);
	tap(!strcmp(want, "limited") ? big == -EPERM : big == 0,
	    "uid %d, RLIMIT_MEMLOCK 0: rings of 16 MiB a CPU: %s (%s)",
	    (int)getuid(), big ? strerror(-big) : "started",
	    !strcmp(want, "limited") ? "want EPERM" : "want started");
	for (i = 0; i < 5 && !ret; i++)
		ret = rings_start(0);
	tap(!ret, "uid %d: default rings started %d times in a row (%s)",
	    (int)getuid(), i, ret ? strerror(-ret) : "ok");
	return tap_status();
}

/*
 * Uploads 1 MiB-ish synthetic tables until refused: the user's sessions
 * hold at most 'want' MiB (ENOSPC after), or 64 MiB go in ('any').
 */
static int cmd_tables(const char *want)
{
	uint64_t cap = strcmp(want, "any") ? (uint64_t)atoi(want) << 20 : 0;
	uint64_t limit = cap ? cap + (8 << 20) : 64ULL << 20;
	struct uwprof_stats st;
	int fd = open(UWT_DEV, O_RDWR | O_CLOEXEC), ret = 0;
	uint64_t id;

	if (fd < 0) {
		tap(false, "tables: open: %s", strerror(errno));
		return 1;
	}
	for (id = 1; !ret; id++) {
		ret = uwg_add_synthetic(fd, id, 60000);
		if (uwt_stats(fd, &st) || st.table_bytes >= limit)
			break;
	}
	if (cap)
		tap(ret == -ENOSPC && st.table_bytes <= cap &&
		    st.table_bytes + (2 << 20) > cap,
		    "uid %d: %llu bytes of tables, then %s (want ENOSPC at %llu)",
		    (int)getuid(), (unsigned long long)st.table_bytes,
		    ret ? strerror(-ret) : "no refusal",
		    (unsigned long long)cap);
	else
		tap(!ret && st.table_bytes >= limit,
		    "uid %d: %llu bytes of tables, %s (want 64 MiB, no refusal)",
		    (int)getuid(), (unsigned long long)st.table_bytes,
		    ret ? strerror(-ret) : "no refusal");
	close(fd);
	return tap_status();
}

/* ---- mm ---- */

#define MM_TEST_PARAM	"/sys/module/uwprof/parameters/test_mm"

/* The word both processes keep at one address, each its own value. */
static volatile uint64_t mm_word;

static bool mm_read_is(const char *what, int err, unsigned long long word,
		       int want_err, uint64_t want_word, uint64_t other)
{
	bool ok = err == want_err && word == want_word;

	tap(ok, "%s: %s, word %#llx%s (want %s)", what,
	    err ? strerror(-err) : "read", word,
	    word && word == other ? ", the other process's" : "",
	    want_err ? "EFAULT and nothing read" : "its own word");
	return ok;
}

/*
 * module/mm_test.c: a kernel thread loads a child's (B's) page tables;
 * the walk's and the snapshot's readers must read B's word while B's mm
 * is current's, and nothing while this process's (A's) mm is, as prev's
 * is in __schedule() between switch_mm() and cpu_switch_to().
 */
static int cmd_mm(void)
{
	const uint64_t a_word = 0xa11ce5a11ce5a11cULL;
	const uint64_t b_word = 0xb0b5ecb0b5ecb0b5ULL;
	unsigned long long w[4];
	int err[4], pfd[2], fd, n;
	char buf[256], c;
	pid_t pid;

	if (access(MM_TEST_PARAM, W_OK)) {
		tap(true, "page tables of another process # SKIP the module lacks the UWPROF_TEST_MM=1 hook (%s)",
		    strerror(errno));
		return 0;
	}
	if (pipe(pfd)) {
		tap(false, "mm: pipe: %s", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		tap(false, "mm: fork: %s", strerror(errno));
		return 1;
	}
	if (!pid) {
		mm_word = b_word;
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	mm_word = a_word;
	if (read(pfd[0], &c, 1) != 1) {
		tap(false, "mm: the child did not start");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	n = snprintf(buf, sizeof(buf), "%d %llx", (int)pid,
		     (unsigned long long)(uintptr_t)&mm_word);
	fd = open(MM_TEST_PARAM, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, n) != n) {
		tap(false, "mm: write %s: %s", MM_TEST_PARAM, strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fd = open(MM_TEST_PARAM, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (sscanf(buf, "walk_own=%d:%llx walk_win=%d:%llx snap_own=%d:%llx snap_win=%d:%llx",
		   &err[0], &w[0], &err[1], &w[1], &err[2], &w[2],
		   &err[3], &w[3]) != 8) {
		tap(false, "mm: unexpected result '%s'", buf);
		return 1;
	}
	diag("B's word %#llx, A's %#llx, at %p", (unsigned long long)b_word,
	     (unsigned long long)a_word, (void *)&mm_word);
	mm_read_is("walk's reader, B's tables, B's mm current", err[0], w[0],
		   0, b_word, a_word);
	mm_read_is("walk's reader, B's tables, A's mm current", err[1], w[1],
		   -EFAULT, 0, b_word);
	mm_read_is("snapshot's reader, B's tables, B's mm current", err[2],
		   w[2], 0, b_word, a_word);
	mm_read_is("snapshot's reader, B's tables, A's mm current", err[3],
		   w[3], -EFAULT, 0, b_word);
	return tap_status();
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "open") && argc > 2)
		return cmd_open(argv[2]);
	if (!strcmp(cmd, "kaddr"))
		return cmd_kaddr();
	if (!strcmp(cmd, "nokernel"))
		return cmd_nokernel();
	if (!strcmp(cmd, "hold") && argc > 3)
		return cmd_hold(atoi(argv[2]), argv[3]);
	if (!strcmp(cmd, "hold-target") && argc > 2)
		return cmd_hold_target(argv[2]);
	if (!strcmp(cmd, "sessions") && argc > 2)
		return cmd_sessions(argv[2]);
	if (!strcmp(cmd, "rings") && argc > 2)
		return cmd_rings(argv[2]);
	if (!strcmp(cmd, "tables") && argc > 2)
		return cmd_tables(argv[2]);
	if (!strcmp(cmd, "mm"))
		return cmd_mm();
	if (!strcmp(cmd, "hold-execd")) {
		uwt_sleep_ms(2500);
		return 0;
	}
	fprintf(stderr, "usage: %s open OK|EPERM|EACCES | kaddr | nokernel | hold PID held|free|setuid | hold-target NEXT | sessions N|any | rings limited|free | tables MIB|any | mm\n",
		argv[0]);
	return 2;
}

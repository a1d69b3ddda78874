/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of the uwprof kselftests: opening the device (or a reason
 * to skip), synthetic and on-disk table blobs, a process's executable
 * mappings from /proc, target processes, and a ring reader that checks
 * every record it walks. Header-only so each test stays one static binary.
 */
#ifndef UWPROF_TEST_H
#define UWPROF_TEST_H

#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/uwprof.h>

#if defined(__x86_64__)
#define UWT_ARCH	UWPROF_ARCH_X86_64
#elif defined(__aarch64__)
#define UWT_ARCH	UWPROF_ARCH_ARM64
#else
#error "uwprof tests run on x86_64 and arm64"
#endif

#define UWT_DEV		"/dev/uwprof"

/*
 * Opens the device. Returns the fd, or -1 with 'why' set to a reason to
 * skip (no device, no privilege) the harness can print.
 */
static inline int uwt_open(const char **why)
{
	int fd = open(UWT_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			*why = UWT_DEV " missing: uwprof.ko not loaded";
		else if (errno == EACCES || errno == EPERM)
			*why = "needs CAP_PERFMON or CAP_SYS_ADMIN";
		else
			*why = strerror(errno);
	}
	return fd;
}

static inline int uwt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* ---- synthetic tables ---- */

/*
 * A blob with 'rows' rows, 16 bytes apart, all CFA=sp+8 but the last
 * (END), in pages of 256 bytes (16 rows each, the first at offset 0) that
 * share one palette: rule 0 END, rule 1 CFA=sp+8.
 */
struct uwt_blob {
	void *data;
	size_t size;
};

#define UWT_PAGE_SHIFT	8

static inline struct uwprof_table_hdr *uwt_hdr(struct uwt_blob *b)
{
	return b->data;
}

static inline struct uwprof_table_page *uwt_pages(struct uwt_blob *b)
{
	return (struct uwprof_table_page *)((char *)b->data +
					    UWPROF_TABLE_PAGES_OFF(uwt_hdr(b)));
}

static inline uint16_t *uwt_pcs(struct uwt_blob *b)
{
	return (uint16_t *)((char *)b->data + UWPROF_TABLE_PC_OFF(uwt_hdr(b)));
}

static inline uint8_t *uwt_slots(struct uwt_blob *b)
{
	return (uint8_t *)b->data + UWPROF_TABLE_SLOT_OFF(uwt_hdr(b));
}

static inline uint16_t *uwt_palette(struct uwt_blob *b)
{
	return (uint16_t *)((char *)b->data + UWPROF_TABLE_PALETTE_OFF(uwt_hdr(b)));
}

static inline struct uwprof_rule *uwt_rules(struct uwt_blob *b)
{
	return (struct uwprof_rule *)((char *)b->data +
				      UWPROF_TABLE_RULES_OFF(uwt_hdr(b)));
}

static inline int uwt_blob_make(struct uwt_blob *b, uint32_t rows)
{
	const uint32_t per_page = (1U << UWT_PAGE_SHIFT) / 16;
	struct uwprof_table_hdr h = {
		.magic = UWPROF_TABLE_MAGIC,
		.version = UWPROF_TABLE_VERSION,
		.arch = UWT_ARCH,
		.hdr_size = sizeof(h),
		.rule_size = sizeof(struct uwprof_rule),
		.nr_rows = rows,
		.nr_rules = 2,
		.base = 0x1000,
		.nr_pages = (rows + per_page - 1) / per_page,
		.nr_palette = 2,
		.page_shift = UWT_PAGE_SHIFT,
	};
	struct uwprof_rule *r;
	uint32_t i;

	b->size = UWPROF_TABLE_SIZE(&h);
	if (posix_memalign(&b->data, 8, b->size))
		return -ENOMEM;
	memset(b->data, 0, b->size);
	memcpy(b->data, &h, sizeof(h));
	for (i = 0; i < h.nr_pages; i++)
		uwt_pages(b)[i].row = i * per_page;
	uwt_pages(b)[h.nr_pages].row = rows;
	uwt_pages(b)[h.nr_pages].palette = 2;
	for (i = 0; i < rows; i++) {
		uwt_pcs(b)[i] = (uint16_t)(i % per_page * 16);
		uwt_slots(b)[i] = i + 1 < rows ? 1 : 0;
	}
	uwt_palette(b)[1] = 1;
	r = uwt_rules(b);
	r[0].cfa_type = UWPROF_CFA_END;
	r[1].cfa_type = UWPROF_CFA_SP;
	r[1].cfa_off = 8;
	r[1].fp_type = UWPROF_REG_SAME;
	r[1].ra_type = UWPROF_REG_AT_CFA;
	r[1].ra_off = -8;
	return 0;
}

/*
 * A blob of one row over [base, base + len), len below 64 KiB, with rule 1
 * (uwt_blob_make()'s, for the caller to change), and END after it.
 */
static inline int uwt_blob_one(struct uwt_blob *b, uint64_t base, uint32_t len)
{
	struct uwprof_table_hdr *h;

	if (!len || len > 0xffff || uwt_blob_make(b, 2))
		return -EINVAL;
	h = uwt_hdr(b);
	if (h->nr_pages != 1)
		return -EINVAL;
	h->base = base;
	h->page_shift = 16;
	uwt_pcs(b)[1] = (uint16_t)len;
	return 0;
}

static inline int uwt_table_add(int fd, uint64_t id, const void *data,
				uint64_t size)
{
	struct uwprof_table_add a = {
		.size = sizeof(a),
		.object_id = id,
		.data = (uintptr_t)data,
		.data_size = size,
	};

	return uwt_ioctl(fd, UWPROF_IOC_TABLE_ADD, &a);
}

/* Reads a blob written by 'uwprof table --blob' into 8-byte aligned memory. */
static inline int uwt_blob_read(const char *path, struct uwt_blob *b)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || posix_memalign(&b->data, 8, st.st_size + 8)) {
		close(fd);
		return -EIO;
	}
	n = read(fd, b->data, st.st_size);
	close(fd);
	if (n != st.st_size)
		return -EIO;
	b->size = st.st_size;
	return 0;
}

/* Reads or writes a number in a sysfs or procfs file. */
static inline int uwt_knob(const char *path, unsigned long long *val, bool set)
{
	FILE *f;
	int ok;

	f = fopen(path, set ? "we" : "re");
	if (!f)
		return -errno;
	ok = set ? fprintf(f, "%llu\n", *val) > 0 : fscanf(f, "%llu", val) == 1;
	/* A refused value shows as the write's errno, at fclose. */
	if (fclose(f))
		return -errno;
	return ok ? 0 : -EIO;
}

/* Reads or writes one of the module's parameters. */
static inline int uwt_param(const char *name, unsigned long long *val, bool set)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/uwprof/parameters/%s", name);
	return uwt_knob(path, val, set);
}

#define UWT_MAX_RATE	"/proc/sys/kernel/perf_event_max_sample_rate"

/* ---- mappings of a live process ---- */

/*
 * The load bias of the executable segments of the ELF file 'path' mapped
 * at 'start' from file offset 'off': object vaddr = pc - bias.
 */
static inline int uwt_elf_bias(const char *path, uint64_t start, uint64_t off,
			       uint64_t *bias)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i, ret = -ENOENT;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		close(fd);
		return -ENOEXEC;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD)
			continue;
		if (off < (ph.p_offset & ~0xfffULL) ||
		    off >= ph.p_offset + ph.p_filesz)
			continue;
		/* The executable one where two share the page (LLD, gold). */
		if (ret || (ph.p_flags & PF_X)) {
			*bias = start - off - (ph.p_vaddr - ph.p_offset);
			ret = 0;
		}
		if (ph.p_flags & PF_X)
			break;
	}
	close(fd);
	return ret;
}

/*
 * The executable mappings of 'pid' backed by the file 'path', with the
 * table 'id'. Returns how many were stored in maps[].
 */
static inline int uwt_proc_maps(pid_t pid, const char *path, uint64_t id,
				struct uwprof_map *maps, int max)
{
	char fn[64], line[PATH_MAX + 128], real[PATH_MAX];
	unsigned long long s, e, off;
	char perm[8], file[PATH_MAX];
	uint64_t bias = 0;
	int n = 0;
	FILE *f;

	if (!realpath(path, real))
		return -errno;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e,
			   perm, &off, file) < 4)
			continue;
		if (perm[2] != 'x' || strcmp(file, real))
			continue;
		maps[n].start = s;
		maps[n].end = e;
		maps[n].object_id = id;
		maps[n].flags = 0;
		maps[n].__reserved = 0;
		if (uwt_elf_bias(real, s, off, &bias))
			continue;
		maps[n++].bias = bias;
	}
	fclose(f);
	return n;
}

static inline int uwt_maps_set(int fd, pid_t pid, struct uwprof_map *maps,
			       uint32_t n)
{
	struct uwprof_maps_set a = {
		.size = sizeof(a),
		.pid = pid,
		.nr_maps = n,
		.maps = (uintptr_t)maps,
	};

	return uwt_ioctl(fd, UWPROF_IOC_MAPS_SET, &a);
}

/*
 * The fields of /proc/PID/stat after comm (which may hold spaces and
 * parentheses): a pointer into 'buf' at the space before the state, or
 * NULL when the process is gone.
 */
static inline const char *uwt_proc_stat(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return strrchr(buf, ')') ? strrchr(buf, ')') + 1 : NULL;
}

/* The process's state letter (R, S, T, ...), or 0 when it is gone. */
static inline char uwt_proc_state(pid_t pid)
{
	char buf[1024];
	const char *p = uwt_proc_stat(pid, buf, sizeof(buf));

	return p && p[0] == ' ' ? p[1] : 0;
}

/* Its start time in clock ticks since boot (field 22), or 0. */
static inline uint64_t uwt_proc_start_ticks(pid_t pid)
{
	char buf[1024];
	const char *p = uwt_proc_stat(pid, buf, sizeof(buf));
	unsigned long long t;

	if (!p || sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %*u %*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

/* ---- target processes ---- */

/*
 * Starts 'path' with 'arg' and returns its pid once the new program runs:
 * it writes a byte to fd 3 from main(). Waiting for /proc/PID/exe is not
 * enough: exec switches the file before it finishes (and before the
 * module's exec probe drops the process's mappings).
 */
static inline pid_t uwt_spawn2(const char *path, const char *arg,
				const char *arg2)
{
	struct pollfd p;
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (dup2(fds[1], 3) != 3)
			_exit(126);
		execl(path, path, arg, arg2, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	p.fd = fds[0];
	p.events = POLLIN;
	/* Minutes, not seconds: on the KASAN arm64 kernel under TCG a loaded
	 * host took over 10 s to bring a child to main(). */
	if (poll(&p, 1, 120000) != 1 || read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -ETIMEDOUT;
	}
	close(fds[0]);
	return pid;
}

static inline pid_t uwt_spawn(const char *path, const char *arg)
{
	return uwt_spawn2(path, arg, NULL);
}

/* A child that spins in user space until killed. */
static inline pid_t uwt_spinner(void)
{
	pid_t pid = fork();

	if (!pid) {
		volatile unsigned long x = 0;

		for (;;)
			x++;
	}
	return pid;
}

static inline void uwt_reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static inline void uwt_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Takes CPU cpu offline (on 0) or online (on 1); 0 or -errno. The kernel
 * itself may answer EBUSY (another hotplug operation, a stop_machine that
 * timed out under TCG): retried up to 20 times, 50 ms apart, each retry
 * counted in *retries when retries is not NULL.
 */
static inline int uwt_cpu_online(int cpu, int on, int *retries)
{
	char path[64];
	int fd, ret, tries = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	for (;;) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
		close(fd);
		if (ret != -EBUSY || tries++ == 20)
			return ret;
		if (retries)
			(*retries)++;
		uwt_sleep_ms(50);
	}
}

/* ---- cgroup v2 ---- */

/*
 * The cgroup v2 hierarchy's mount point, into root[len]. The guests' init
 * mounts none: then it is mounted at /sys/fs/cgroup. Returns 0 or -errno.
 */
static inline int uwt_cgroup2_root(char *root, size_t len)
{
	char dir[PATH_MAX], type[64];
	int ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%*s %4095s %63s %*[^\n]", dir, type) == 2) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(root, len, "%s", dir);
			ret = 0;
			break;
		}
	}
	fclose(f);
	if (!ret)
		return 0;
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return -errno;
	snprintf(root, len, "/sys/fs/cgroup");
	return 0;
}

/* A new cgroup named 'name' (made unique by our pid) under the root. */
static inline int uwt_cgroup_make(const char *name, char *path, size_t len)
{
	char root[PATH_MAX];
	int ret = uwt_cgroup2_root(root, sizeof(root));

	if (ret)
		return ret;
	if (snprintf(path, len, "%s/%s-%d", root, name, (int)getpid()) >= (int)len)
		return -ENAMETOOLONG;
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

/* Moves process 'pid' (all its threads) into the cgroup at 'path'. */
static inline int uwt_cgroup_enter(const char *path, pid_t pid)
{
	char fn[PATH_MAX + 16];
	int fd, ret = 0;

	snprintf(fn, sizeof(fn), "%s/cgroup.procs", path);
	fd = open(fn, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%d\n", (int)pid) < 0)
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/*
 * Removes a cgroup its processes left (reaped processes leave it at once,
 * but give the kernel a moment).
 */
static inline int uwt_cgroup_remove(const char *path)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		usleep(10000);
	}
	return -errno;
}

/* ---- sampling and rings ---- */

static inline int uwt_start_snap(int fd, uint32_t flags, uint32_t freq,
				 uint32_t depth, uint32_t ring_pages,
				 uint32_t snapshot_size, const uint32_t *pids,
				 uint32_t nr_pids)
{
	struct uwprof_start a = {
		.size = sizeof(a),
		.flags = flags,
		.freq_hz = freq,
		.max_depth = depth,
		.ring_pages = ring_pages,
		.nr_pids = nr_pids,
		.pids = (uintptr_t)pids,
		.snapshot_size = snapshot_size,
	};

	return uwt_ioctl(fd, UWPROF_IOC_START, &a);
}

static inline int uwt_start(int fd, uint32_t flags, uint32_t freq,
			    uint32_t depth, uint32_t ring_pages,
			    const uint32_t *pids, uint32_t nr_pids)
{
	return uwt_start_snap(fd, flags, freq, depth, ring_pages, 0, pids,
			      nr_pids);
}

/*
 * Overflow-handler calls that took no sample, by every skipped_* reason of
 * the uapi header's identity: once sampling stopped,
 * events == samples + lost_samples + this.
 */
static inline uint64_t uwt_events_skipped(const struct uwprof_stats *st)
{
	return st->skipped_kthread + st->skipped_compat + st->skipped_filter +
	       st->skipped_throttle;
}

static inline int uwt_stats(int fd, struct uwprof_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return uwt_ioctl(fd, UWPROF_IOC_STATS, st);
}

struct uwt_rings {
	struct uwprof_ring_info info;
	void *base;
};

static inline int uwt_rings_map(int fd, struct uwt_rings *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->info.size = sizeof(r->info);
	ret = uwt_ioctl(fd, UWPROF_IOC_RING_INFO, &r->info);
	if (ret)
		return ret;
	r->base = mmap(NULL, r->info.mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

static inline void uwt_rings_unmap(struct uwt_rings *r)
{
	if (r->base)
		munmap(r->base, r->info.mmap_size);
	r->base = NULL;
}

static inline struct uwprof_ring_ctl *uwt_ctl(struct uwt_rings *r, uint32_t i)
{
	return (struct uwprof_ring_ctl *)((char *)r->base + i * r->info.stride);
}

static inline struct uwprof_ring_tail *uwt_tail(struct uwt_rings *r,
						uint32_t i)
{
	return (struct uwprof_ring_tail *)((char *)uwt_ctl(r, i) +
					   getpagesize());
}

/* What the reader saw, summed over the rings. */
struct uwt_counts {
	uint64_t samples;
	uint64_t lost;		/* sum of LOST record counts */
	uint64_t unknown;
	uint64_t exits;
	uint64_t forks;
	uint64_t mmaps;
	uint64_t renames;
	uint64_t bad;		/* malformed records */
	uint64_t bytes;
};

/* Called for every sample with its record copied out of the ring. */
typedef void (*uwt_sample_fn)(const struct uwprof_rec_sample *s, uint32_t ring,
			      void *priv);
typedef void (*uwt_exit_fn)(const struct uwprof_rec_exit *e, void *priv);
typedef void (*uwt_mmap_fn)(const struct uwprof_rec_mmap *m, void *priv);
typedef void (*uwt_comm_fn)(const struct uwprof_rec_comm *c, void *priv);

struct uwt_reader {
	uwt_sample_fn on_sample;
	uwt_exit_fn on_exit;
	uwt_mmap_fn on_mmap;
	uwt_comm_fn on_comm;
	void *priv;
	struct uwt_counts c;
	uint64_t buf[UWPROF_MAX_DEPTH + 256 + (UWPROF_MAX_SNAPSHOT + 512) / 8];
};

static inline void uwt_copy_out(const char *data, uint64_t size, uint64_t pos,
				void *dst, uint64_t len)
{
	uint64_t off = pos & (size - 1);
	uint64_t first = len < size - off ? len : size - off;

	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, len - first);
}

/* An MMAP record's size, path and flags are what the header says. */
static inline bool uwt_mmap_ok(const struct uwprof_rec_mmap *m)
{
	uint32_t room = m->hdr.size - sizeof(*m);

	if (m->hdr.size < sizeof(*m) || m->path_size > room ||
	    room - m->path_size >= 8 || m->end <= m->start ||
	    !(m->prot & PROT_EXEC) || m->__reserved ||
	    (m->flags & ~(UWPROF_MMAP_VDSO | UWPROF_MMAP_PATH_CUT |
			  UWPROF_MMAP_EXEC)))
		return false;
	if (!m->path_size)
		return (m->flags & (UWPROF_MMAP_VDSO | UWPROF_MMAP_PATH_CUT)) != 0;
	return m->path[0] == '/' && !m->path[m->path_size - 1] &&
	       strlen(m->path) == m->path_size - 1;
}

/*
 * Consumes everything published in ring i: checks each record's type and
 * size, hands samples and exits to the callbacks, then releases the space.
 */
static inline void uwt_ring_drain(struct uwt_rings *r, uint32_t i,
				  struct uwt_reader *rd)
{
	struct uwprof_ring_ctl *ctl = uwt_ctl(r, i);
	const char *data = (const char *)ctl + ctl->data_offset;
	uint64_t size = ctl->data_size;
	uint64_t head = __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = uwt_tail(r, i)->tail;
	struct uwprof_rec_hdr h;

	while (tail < head) {
		uwt_copy_out(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > head - tail ||
		    h.size > sizeof(rd->buf)) {
			rd->c.bad++;
			tail = head;
			break;
		}
		uwt_copy_out(data, size, tail, rd->buf, h.size);
		switch (h.type) {
		case UWPROF_REC_SAMPLE: {
			const struct uwprof_rec_sample *s = (void *)rd->buf;

			uint64_t ips = sizeof(*s) + 8ULL * (s->nr_kernel + s->nr_user);

			/* A snapshot follows the ips: its own reader checks it. */
			if ((s->flags & UWPROF_SAMPLE_SNAPSHOT ?
			     h.size < ips + sizeof(struct uwprof_snapshot) :
			     h.size != ips) || s->cpu != i) {
				rd->c.bad++;
				break;
			}
			rd->c.samples++;
			if (rd->on_sample)
				rd->on_sample(s, i, rd->priv);
			break;
		}
		case UWPROF_REC_LOST:
			if (h.size != sizeof(struct uwprof_rec_lost))
				rd->c.bad++;
			else
				rd->c.lost += rd->buf[1];	/* ->count */
			break;
		case UWPROF_REC_UNKNOWN_MAP:
			if (h.size != sizeof(struct uwprof_rec_unknown_map))
				rd->c.bad++;
			rd->c.unknown++;
			break;
		case UWPROF_REC_EXIT:
			if (h.size != sizeof(struct uwprof_rec_exit))
				rd->c.bad++;
			rd->c.exits++;
			if (rd->on_exit)
				rd->on_exit((void *)rd->buf, rd->priv);
			break;
		case UWPROF_REC_FORK:
			if (h.size != sizeof(struct uwprof_rec_fork))
				rd->c.bad++;
			rd->c.forks++;
			break;
		case UWPROF_REC_COMM:
			if (h.size != sizeof(struct uwprof_rec_comm)) {
				rd->c.bad++;
				break;
			}
			rd->c.renames++;
			if (rd->on_comm)
				rd->on_comm((void *)rd->buf, rd->priv);
			break;
		case UWPROF_REC_MMAP:
			if (!uwt_mmap_ok((void *)rd->buf)) {
				rd->c.bad++;
				break;
			}
			rd->c.mmaps++;
			if (rd->on_mmap)
				rd->on_mmap((void *)rd->buf, rd->priv);
			break;
		default:
			rd->c.bad++;
			break;
		}
		rd->c.bytes += h.size;
		tail += h.size;
	}
	__atomic_store_n(&uwt_tail(r, i)->tail, tail, __ATOMIC_RELEASE);
}

static inline void uwt_rings_drain(struct uwt_rings *r, struct uwt_reader *rd)
{
	uint32_t i;

	for (i = 0; i < r->info.nr_rings; i++)
		uwt_ring_drain(r, i, rd);
}

static inline uint64_t uwt_ctl_lost(struct uwt_rings *r)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < r->info.nr_rings; i++)
		sum += uwt_ctl(r, i)->lost;
	return sum;
}

/*
 * A descriptor of CPython 3.11 on glibc 2.36, as tool/python_find.c finds
 * Debian 12's, at made-up addresses of the interpreter's key and code type.
 */
static inline void uwt_py311(struct uwprof_python *d, uint64_t key_addr,
			     uint64_t code_type)
{
	*d = (struct uwprof_python){
		.size = sizeof(*d), .flags = UWPROF_PY_CFRAME,
		.version = 0x030b, .key_addr = key_addr, .code_type = code_type,
		.pt_specific = 1296, .pt_tid = 720, .kd_size = 16,
		.kd_data = 8, .kd_per_block = 32, .ts_frame = 56,
		.cf_frame = 8, .cf_previous = 16, .fr_code = 32,
		.fr_previous = 48, .fr_instr = 56, .fr_entry = 68,
		.co_type = 8, .co_size = 16, .co_code = 184,
		.co_firstlineno = 72, .co_qualname = 128, .co_filename = 112,
	};
#if defined(__aarch64__)
	d->tp_pthread = -1856;
	d->pt_specific = 784;
	d->pt_tid = 208;
#endif
}

#endif /* UWPROF_TEST_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling session both front-ends run ('uwprof record', 'uwprof
 * agent'): SIGINT/SIGTERM/SIGHUP/SIGCHLD through a signalfd (SIGHUP
 * stops, or asks the agent to reload its --config), the device opened
 * and its START flags chosen from the options and what it can do, START
 * with the rings mapped and their reader thread running, the wait of the
 * main loop, and freeing the recorder's state.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cgroup.h"
#include "exit_status.h"
#include "recorder.h"

static int setup_signals(struct recorder *r)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return r->sigfd < 0 ? -errno : 0;
}

static void read_signals(struct recorder *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			rec_reap(r);
		else if (si.ssi_signo == SIGHUP && r->hup_reload)
			r->reload = 1;
		else
			r->stop = 1;
	}
}

/* Polls the device and the signals for up to 'ms'. */
void rec_wait_events(struct recorder *r, int ms, int extra_fd)
{
	struct pollfd p[4] = {
		{ .fd = r->sigfd, .events = POLLIN },
		{ .fd = r->dev.fd, .events = POLLIN },
		{ .fd = uwprof_rreader_fd(&r->rr), .events = POLLIN },
		{ .fd = extra_fd, .events = POLLIN },
	};

	if (poll(p, extra_fd >= 0 ? 4 : 3, ms) > 0 && (p[0].revents & POLLIN))
		read_signals(r);
}

void rec_free(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nr_objs; i++) {
		free(r->objs[i].path);
		rec_obj_tables_free(&r->objs[i]);
	}
	free(r->objs);
	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];
		int g;

		free(p->maps);
		free(p->pf_maps);
		free(p->cgroup);
		free(p->py);
		rec_mm_free(p);
		free(p->exec_ns);
		for (g = 0; g < REC_GENS; g++)
			free(p->gens[g].maps);
	}
	free(r->procs);
	uwprof_py_cache_free(&r->py_cache);
	rec_py_free(r);
	uwprof_snap_queue_free(&r->snapq);
	uwprof_rreader_free(&r->rr);
	uwprof_u64map_free(&r->tids);
	uwprof_u64map_free(&r->proc_idx);
	uwprof_u64map_free(&r->kips);
	if (r->cgroup_fd >= 0)
		close(r->cgroup_fd);
	free(r->o.pids);
	free(r->vdso_image);
	free(r->tees);
	if (r->sigfd >= 0)
		close(r->sigfd);
	uwprof_dev_close(&r->dev);
}

/*
 * --cgroup and --comm, which the module applies: its abilities checked,
 * the cgroup's directory opened. Returns 0 or the exit status.
 */
static int setup_filters(struct recorder *r, uint32_t *flags)
{
	uint32_t caps = r->dev.ver.caps;
	int fd;

	if ((r->o.cgroup && !(caps & UWPROF_CAP_CGROUP)) ||
	    (r->o.comm && !(caps & UWPROF_CAP_COMM))) {
		fprintf(stderr, "%s: %s: the loaded module does not offer this filter (an older module, or a kernel without cgroups)\n",
			r->name, r->o.cgroup ? "--cgroup" : "--comm");
		return UWPROF_EX_ERROR;
	}
	if (r->o.comm)
		*flags |= UWPROF_START_COMM;
	if (!r->o.cgroup)
		return 0;
	fd = uwprof_cgroup_open(r->o.cgroup, r->cgroup_path,
				sizeof(r->cgroup_path));
	if (fd < 0) {
		fprintf(stderr, "%s: --cgroup %s: %s\n", r->name, r->o.cgroup,
			fd == -ENODEV ? "no cgroup v2 hierarchy is mounted" :
			fd == -ENOTDIR ? "not a cgroup v2 directory" :
			strerror(-fd));
		return fd == -ENOENT ? UWPROF_EX_TARGET : UWPROF_EX_ERROR;
	}
	r->cgroup_fd = fd;
	*flags |= UWPROF_START_CGROUP;
	return 0;
}

/*
 * kernel.perf_event_max_sample_rate: perf_event_open() refuses more, and
 * the kernel lowers it itself when sample interrupts take long. The
 * module's events are not refused, but perf's core throttles them: an
 * event stops until the next tick at its ceil(limit / HZ)-th sample in a
 * tick. Sampling at the limit is throttled nearly every tick, and a
 * throttled event samples at fixed offsets from the tick, so a program
 * that repeats in step with it is sampled at one phase of its period. At
 * half the limit a tick rarely holds that many samples (an arm64 TCG
 * guest under a 500 Hz limit: 20 throttles in 1,974 samples at 250 Hz,
 * 4,064 in 3,978 at 500 Hz).
 */
unsigned long rec_kernel_max_rate(void)
{
	unsigned long max;
	FILE *f;
	int ok;

	f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	if (!f)
		return 0;
	ok = fscanf(f, "%lu", &max) == 1;
	fclose(f);
	return ok ? max : 0;
}

static void fit_freq(struct recorder *r)
{
	unsigned long max = rec_kernel_max_rate();
	uint32_t fit = max / 2 ? (uint32_t)(max / 2) : 1;

	if (!max || r->o.freq <= fit)
		return;
	fprintf(stderr,
		"%s: sampling at %u Hz, not %u: half the kernel's limit of %lu Hz (kernel.perf_event_max_sample_rate, which the kernel lowers when sample interrupts take long); nearer to it, the kernel throttles sampling into bursts at the tick\n",
		r->name, fit, r->o.freq, max);
	r->o.freq = fit;
}

/*
 * Signals, the device, and the START flags from the options and what the
 * device can do. Returns 0 or the exit status.
 */
int rec_setup(struct recorder *r, uint32_t *flagsp)
{
	char err[512];
	uint32_t flags = 0;
	int ret;

	/*
	 * First of all, so that a SIGINT or SIGTERM during the set-up (which
	 * can take seconds on a loaded machine) stops the recording cleanly
	 * instead of killing the recorder.
	 */
	ret = setup_signals(r);
	if (ret) {
		fprintf(stderr, "%s: signals: %s\n", r->name, strerror(-ret));
		return UWPROF_EX_ERROR;
	}
	ret = uwprof_dev_open(&r->dev, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", r->name, err);
		return uwprof_exit_for_errno(ret);
	}
	r->arch = (uint16_t)r->dev.ver.arch;
	r->elf_machine = r->arch == UWPROF_ARCH_ARM64 ? EM_AARCH64 : EM_X86_64;
	if (r->o.kernel && !(r->dev.ver.caps & UWPROF_CAP_KERNEL_STACK)) {
		fprintf(stderr, "%s: --kernel: this user may not see kernel addresses (needs CAP_PERFMON or root)\n",
			r->name);
		return UWPROF_EX_PERM;
	}
	if (!r->o.event)
		r->o.event = (r->dev.ver.caps & UWPROF_CAP_HW_CYCLES) ?
			     UWPROF_PF_EV_CYCLES : UWPROF_PF_EV_CPU_CLOCK;
	if (r->o.event == UWPROF_PF_EV_CYCLES &&
	    !(r->dev.ver.caps & UWPROF_CAP_HW_CYCLES)) {
		fprintf(stderr, "%s: -e cycles: no hardware cycles event on this machine (use -e cpu-clock)\n",
			r->name);
		return UWPROF_EX_ERROR;
	}
	flags |= r->o.event == UWPROF_PF_EV_CYCLES ? UWPROF_START_CYCLES :
						     UWPROF_START_CPU_CLOCK;
	fit_freq(r);
	if (r->o.kernel)
		flags |= UWPROF_START_KERNEL_STACK;
	if (r->o.no_fp)
		flags |= UWPROF_START_NO_FP_FALLBACK;
	if (r->o.mode != MODE_PIDS)
		flags |= UWPROF_START_SYSTEM_WIDE;
	/*
	 * A command's processes are this one's descendants: other processes
	 * are left out in the module, before their stacks are walked or
	 * copied, rather than here. An older module samples them all.
	 */
	if (r->o.mode == MODE_CMD && (r->dev.ver.caps & UWPROF_CAP_DESCENDANTS))
		flags |= UWPROF_START_DESCENDANTS;
	/*
	 * Samples of code not uploaded yet carry stack snapshots, finished
	 * here once the tables are; --hold-exec instead stops the command's
	 * processes at each exec until their new image is uploaded.
	 */
	if (r->o.mode == MODE_CMD && r->o.hold_exec)
		flags |= UWPROF_START_HOLD_EXEC;
	if (!(r->dev.ver.caps & UWPROF_CAP_SNAPSHOT))
		r->o.snapshot_size = 0;
	if (r->o.snapshot_size)
		flags |= UWPROF_START_SNAPSHOT;
	if (r->o.off_cpu && !(r->dev.ver.caps & UWPROF_CAP_OFF_CPU)) {
		fprintf(stderr, "%s: --off-cpu: the loaded module does not offer it (an older module, or no sched_switch tracepoint)\n",
			r->name);
		return UWPROF_EX_ERROR;
	}
	if (r->o.off_cpu)
		flags |= UWPROF_START_OFF_CPU;
	/*
	 * Executable mappings as they are made: a process gone before its
	 * maps could be read is still known, a library is known as it is
	 * mapped (so its process need not be polled for new mappings).
	 */
	if (r->dev.ver.caps & UWPROF_CAP_MMAP)
		flags |= UWPROF_START_MMAP;
	ret = setup_filters(r, &flags);
	if (ret)
		return ret;
	r->snapq.max_bytes = REC_SNAPQ_MAX;
	uwprof_tcache_init(&r->cache, r->o.cache_dir);
	*flagsp = flags;
	return 0;
}

/*
 * A failed START. EBUSY: only a module that samples one session at a
 * time says so to a session that is not sampling.
 */
static int start_failed(struct recorder *r, int ret)
{
	if (ret == -EBUSY && !(r->dev.ver.caps & UWPROF_CAP_SESSIONS)) {
		fprintf(stderr, "%s: another uwprof session is sampling (the loaded module samples one at a time; a newer one samples several)\n",
			r->name);
		return UWPROF_EX_BUSY;
	}
	fprintf(stderr, "%s: starting to sample: %s\n", r->name, strerror(-ret));
	return ret == -EBUSY ? UWPROF_EX_ERROR : uwprof_exit_for_errno(ret);
}

/* START, the rings mapped and their reader running. */
int rec_sampling_start(struct recorder *r, uint32_t flags)
{
	struct uwprof_start a = {
		.flags = flags,
		.freq_hz = r->o.freq,
		.max_depth = r->o.depth,
		.ring_pages = r->o.ring_pages,
		.snapshot_size = r->o.snapshot_size,
		.off_cpu_min_ns = r->o.off_cpu ? r->o.off_cpu_min_ns : 0,
		.cgroup_fd = r->cgroup_fd >= 0 ? r->cgroup_fd : 0,
	};
	int ret;

	if (r->o.mode == MODE_PIDS) {
		a.pids = (uintptr_t)r->o.pids;
		a.nr_pids = r->o.nr_pids;
	}
	if (r->o.comm)
		strncpy(a.comm, r->o.comm, sizeof(a.comm) - 1);
	ret = uwprof_dev_start(&r->dev, &a);
	/* The module's probe for MMAP records did not fit this kernel. */
	if (ret == -EOPNOTSUPP && (flags & UWPROF_START_MMAP)) {
		a.flags &= ~UWPROF_START_MMAP;
		ret = uwprof_dev_start(&r->dev, &a);
	}
	r->mmap_records_on = !ret && (a.flags & UWPROF_START_MMAP);
	/* The module holds the cgroup itself from START on. */
	if (r->cgroup_fd >= 0)
		close(r->cgroup_fd);
	r->cgroup_fd = -1;
	if (ret)
		return start_failed(r, ret);
	ret = uwprof_dev_rings_map(&r->dev);
	if (!ret)
		ret = uwprof_rreader_start(&r->rr, &r->dev, REC_RING_BUFFER_MAX);
	if (ret) {
		fprintf(stderr, "%s: reading the rings: %s\n", r->name,
			strerror(-ret));
		uwprof_dev_stop(&r->dev);
		return UWPROF_EX_ERROR;
	}
	r->t_start = mono_ns();
	return 0;
}

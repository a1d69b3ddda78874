// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof status': whether the module is loaded and what it offers (ABI,
 * architecture, capabilities, table memory cap, rings), plus the STATS
 * figures of a fresh session. The module keeps its counters per session,
 * so a fresh one shows zero samples and no tables: the module exposes
 * no figures across sessions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "exit_status.h"
#include "record.h"

static void status_usage(FILE *f)
{
	fprintf(f,
		"usage: uwprof status\n"
		"  Show whether the uwprof module is loaded, its ABI version,\n"
		"  architecture, capabilities, table memory cap and statistics.\n"
		"  exit: 0 loaded, 3 /dev/uwprof missing, 4 permission denied,\n"
		"        1 other error\n");
}

static void sysfs_line(const char *label, const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		printf("%-22s %s\n", label, buf);
	}
	fclose(f);
}

int uwprof_cmd_status(int argc, char **argv)
{
	struct uwprof_stats st;
	struct uwprof_dev d;
	char err[512];
	int ret, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			status_usage(stdout);
			return UWPROF_EX_OK;
		}
		fprintf(stderr, "uwprof status: unknown argument '%s'\n", argv[i]);
		status_usage(stderr);
		return UWPROF_EX_USAGE;
	}
	ret = uwprof_dev_open(&d, err, sizeof(err));
	if (ret) {
		printf("%-22s no\n", "module loaded:");
		fprintf(stderr, "uwprof status: %s\n", err);
		return uwprof_exit_for_errno(ret);
	}
	printf("%-22s yes (%s)\n", "module loaded:", UWPROF_DEV_PATH);
	sysfs_line("module version:", "/sys/module/uwprof/version");
	printf("%-22s %u\n", "abi version:", d.ver.abi_version);
	printf("%-22s %u\n", "table format:", d.ver.table_version);
	printf("%-22s %s\n", "arch:",
	       d.ver.arch == UWPROF_ARCH_X86_64 ? "x86_64" :
	       d.ver.arch == UWPROF_ARCH_ARM64 ? "arm64" : "unknown");
	printf("%-22s %s%s%s%s%s%s%s%s%s%s%s\n", "caps:",
	       d.ver.caps & UWPROF_CAP_HW_CYCLES ? "hw-cycles " : "cpu-clock-only ",
	       d.ver.caps & UWPROF_CAP_KERNEL_STACK ? "kernel-stacks" :
						      "no-kernel-stacks",
	       d.ver.caps & UWPROF_CAP_OFF_CPU ? " off-cpu" : "",
	       d.ver.caps & UWPROF_CAP_SESSIONS ? " sessions" : "",
	       d.ver.caps & UWPROF_CAP_CGROUP ? " cgroup" : "",
	       d.ver.caps & UWPROF_CAP_COMM ? " comm" : "",
	       d.ver.caps & UWPROF_CAP_MMAP ? " mmap-records" : "",
	       d.ver.caps & UWPROF_CAP_DESCENDANTS ? " descendants" : "",
	       d.ver.caps & UWPROF_CAP_WALK_TIME ? " walk-time-limit" : "",
	       d.ver.caps & UWPROF_CAP_RENAME ? " renames" : "",
	       d.ver.caps & UWPROF_CAP_PYTHON ? " python" : "");
	printf("%-22s %u\n", "cpus (rings):", d.ver.nr_cpus);
	printf("%-22s %llu bytes (%.1f MiB)\n", "table memory cap:",
	       (unsigned long long)d.ver.table_mem_max,
	       (double)d.ver.table_mem_max / (1 << 20));
	sysfs_line("walk cpu share (%):",
		   "/sys/module/uwprof/parameters/cpu_max_percent");
	sysfs_line("walk time limit (us):",
		   "/sys/module/uwprof/parameters/walk_max_us");
	sysfs_line("off-cpu walk limit (us):",
		   "/sys/module/uwprof/parameters/offcpu_walk_max_us");
	ret = uwprof_dev_stats(&d, &st);
	if (ret) {
		fprintf(stderr, "uwprof status: STATS: %s\n", strerror(-ret));
		uwprof_dev_close(&d);
		return UWPROF_EX_ERROR;
	}
	printf("%-22s ", "session stats:");
	printf("samples %llu, lost %llu, skipped over cpu share %llu, events %llu, tables %llu (%llu bytes), processes %llu\n",
	       (unsigned long long)st.samples,
	       (unsigned long long)st.lost,
	       (unsigned long long)st.skipped_throttle,
	       (unsigned long long)st.events,
	       (unsigned long long)st.tables,
	       (unsigned long long)st.table_bytes,
	       (unsigned long long)st.processes);
	printf("%-22s %llu samples, %llu bytes of stack, %llu cut for time\n",
	       "stack snapshots:", (unsigned long long)st.snapshots,
	       (unsigned long long)st.snapshot_bytes,
	       (unsigned long long)st.snapshots_time_cut);
	printf("%-22s %llu samples\n", "walks out of time:",
	       (unsigned long long)st.stop_time);
	printf("%-22s %llu samples\n", "Python chain unread:",
	       (unsigned long long)st.stop_python);
	printf("%-22s %llu of the samples\n", "taken in NMI:",
	       (unsigned long long)st.nmi_samples);
	printf("%-22s %llu times (kernel.perf_event_max_sample_rate)\n",
	       "kernel throttled:", (unsigned long long)st.kernel_throttles);
	printf("%-22s %llu samples of %llu blocks, %llu short, %llu dropped, %llu lost\n",
	       "off-cpu:", (unsigned long long)st.off_cpu_samples,
	       (unsigned long long)st.off_cpu_blocks,
	       (unsigned long long)st.off_cpu_short,
	       (unsigned long long)st.off_cpu_dropped,
	       (unsigned long long)st.off_cpu_lost);
	uwprof_dev_close(&d);
	return UWPROF_EX_OK;
}

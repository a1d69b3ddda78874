// SPDX-License-Identifier: GPL-2.0
/*
 * Guest smoke test: the freshly loaded module created /dev/uwprof with the
 * right mode, answers the version ioctl, unloads, and loads again.
 * Usage: smoke PATH-TO-uwprof.ko
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/uwprof.h>

static int nr;
static int failed;

static void tap(int ok, const char *what, const char *why)
{
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", ++nr, what,
	       why ? ": " : "", why ? why : "");
	if (!ok)
		failed = 1;
}

/* devtmpfs creates and removes nodes asynchronously; allow it a moment. */
static int wait_node(int present)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct stat st;

	for (int i = 0; i < 300; i++) {
		if ((stat("/dev/uwprof", &st) == 0) == present)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct stat st;
	int fd, ko;

	if (argc != 2) {
		fprintf(stderr, "usage: %s uwprof.ko\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..6\n");
	tap(wait_node(1) == 0 && stat("/dev/uwprof", &st) == 0 &&
	    S_ISCHR(st.st_mode) && (st.st_mode & 0777) == 0600,
	    "/dev/uwprof is a 0600 character device", NULL);

	fd = open("/dev/uwprof", O_RDWR | O_CLOEXEC);
	tap(fd >= 0, "open /dev/uwprof", fd < 0 ? strerror(errno) : NULL);
	tap(fd >= 0 && ioctl(fd, UWPROF_IOC_VERSION, &v) == 0 &&
	    v.abi_version == UWPROF_ABI_VERSION &&
	    v.table_version == UWPROF_TABLE_VERSION,
	    "version ioctl answers the ABI this test was built with", NULL);
	printf("# abi %u table %u arch %u caps %#x cpus %u\n", v.abi_version,
	       v.table_version, v.arch, v.caps, v.nr_cpus);
	if (fd >= 0)
		close(fd);

	tap(syscall(SYS_delete_module, "uwprof", O_NONBLOCK) == 0 &&
	    wait_node(0) == 0, "module unloads and its device goes away",
	    NULL);

	ko = open(argv[1], O_RDONLY | O_CLOEXEC);
	tap(ko >= 0 && syscall(SYS_finit_module, ko, "", 0) == 0,
	    "module loads again", ko < 0 ? strerror(errno) : NULL);
	if (ko >= 0)
		close(ko);
	tap(wait_node(1) == 0, "device is back after reload", NULL);
	return failed;
}

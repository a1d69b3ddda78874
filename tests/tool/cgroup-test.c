// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the tool's cgroup helpers (tool/cgroup.c), TAP output: the
 * container ids in the cgroup paths Docker, containerd, CRI-O, Podman and
 * Kubernetes give their containers, paths that name none, the subtree
 * test, this process's own cgroup against /proc/self/cgroup, and how a
 * --cgroup argument is read: the cgroup2 mount found in a mountinfo file,
 * cgroup paths and mount directories turned into the same path, and this
 * machine's own hierarchy opened when it has one.
 *
 * Usage: cgroup-test
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "tap.h"

#define ID "3f2a0e9c1b7d4e8fa6c5b3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2"

static void check_ids(void)
{
	static const char *const with[] = {
		"/system.slice/docker-" ID ".scope",
		"/docker/" ID,
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b.slice/cri-containerd-" ID ".scope",
		"/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9/" ID,
		"/machine.slice/libpod-" ID ".scope/container",
		"/system.slice/crio-" ID ".scope",
	};
	static const char *const without[] = {
		"/", "/user.slice/user-0.slice/session-3.scope",
		"/system.slice/ssh.service",
		/* 63 and 65 hex digits are no id */
		"/x/" ID "a", "/x/deadbeef" ID "0",
	};
	char id[UWPROF_CONTAINER_ID_LEN];
	size_t i;

	for (i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
		memset(id, 0, sizeof(id));
		ok(uwprof_container_id(with[i], id) == 1 && !strcmp(id, ID),
		   "container id found in %s", with[i]);
	}
	for (i = 0; i < sizeof(without) / sizeof(without[0]); i++)
		ok(uwprof_container_id(without[i], id) == 0,
		   "no container id in %.60s", without[i]);
}

static void check_under(void)
{
	ok(uwprof_cgroup_under("/a/b", "/a"), "/a/b is under /a");
	ok(uwprof_cgroup_under("/a", "/a"), "/a is under /a");
	ok(uwprof_cgroup_under("/a/b", "/a/"), "/a/b is under /a/");
	ok(!uwprof_cgroup_under("/ab", "/a"), "/ab is not under /a");
	ok(!uwprof_cgroup_under("/a", "/a/b"), "/a is not under /a/b");
	ok(uwprof_cgroup_under("/x/y", "/"), "every path is under /");
}

static void check_self(void)
{
	char mine[UWPROF_CGROUP_PATH_MAX], line[UWPROF_CGROUP_PATH_MAX + 8];
	char want[UWPROF_CGROUP_PATH_MAX + 8] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	int ret;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(want, sizeof(want), "%s", line + 3);
		}
	if (f)
		fclose(f);
	ret = uwprof_cgroup_of(getpid(), mine, sizeof(mine));
	if (want[0])
		ok(!ret && !strcmp(mine, want), "own cgroup read: %s", mine);
	else
		ok(ret == -ENOENT, "no cgroup v2 line: -ENOENT (got %d)", ret);
	ok(uwprof_cgroup_of(getpid(), mine, 2) == (want[0] && strlen(want) >= 2 ?
						   -ENAMETOOLONG : ret),
	   "a path longer than the buffer is refused");
	ok(uwprof_cgroup_of(0x7ffffffe, mine, sizeof(mine)) == -ESRCH,
	   "a process that does not exist: -ESRCH");
}

static void check_mount(void)
{
	static const char plain[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"30 22 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro\n";
	static const char info[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"30 22 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro\n"
		"31 30 0:27 /sub /elsewhere rw shared:9 - cgroup2 cgroup2 rw\n"
		"32 30 0:27 / /sys/fs/cgroup/my\\040v2 rw shared:9 - cgroup2 cgroup2 rw\n"
		"33 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
	char fn[] = "/tmp/uwprof-mountinfo-XXXXXX", mnt[PATH_MAX];
	int fd = mkstemp(fn);

	ok(fd >= 0 && write(fd, info, sizeof(info) - 1) == (ssize_t)sizeof(info) - 1,
	   "mountinfo file written");
	if (fd >= 0)
		close(fd);
	ok(!uwprof_cgroup2_mount(fn, mnt, sizeof(mnt)) &&
	   !strcmp(mnt, "/sys/fs/cgroup/my v2"),
	   "the cgroup2 mount of its root, escapes undone: '%s'", mnt);
	ok(uwprof_cgroup2_mount(fn, mnt, 8) == -ENAMETOOLONG,
	   "a mount point longer than the buffer is refused");
	fd = open(fn, O_WRONLY | O_TRUNC);
	if (fd >= 0) {
		ok(write(fd, plain, sizeof(plain) - 1) ==
		   (ssize_t)sizeof(plain) - 1, "mountinfo without cgroup2");
		close(fd);
	}
	ok(uwprof_cgroup2_mount(fn, mnt, sizeof(mnt)) == -ENODEV,
	   "no cgroup2 mount: -ENODEV");
	unlink(fn);
	ok(uwprof_cgroup2_mount("/nonexistent/mountinfo", mnt, sizeof(mnt)) ==
	   -ENOENT, "no mountinfo file: -ENOENT");
}

static void check_path(void)
{
	static const struct { const char *arg, *want; } cases[] = {
		{ "/system.slice/x.service", "/system.slice/x.service" },
		{ "/sys/fs/cgroup/system.slice/x.service/", "/system.slice/x.service" },
		{ "/sys/fs/cgroup", "/" },
		{ "/sys/fs/cgroup/", "/" },
		{ "/", "/" },
		{ "//a//b/", "/a/b" },
		/* Only a whole component of the mount point counts. */
		{ "/sys/fs/cgroupx/a", "/sys/fs/cgroupx/a" },
	};
	char path[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(!uwprof_cgroup_path("/sys/fs/cgroup/", cases[i].arg, path,
				       sizeof(path)) &&
		   !strcmp(path, cases[i].want), "--cgroup %s is %s (got %s)",
		   cases[i].arg, cases[i].want, path);
	ok(uwprof_cgroup_path("/sys/fs/cgroup", "rel/a", path, sizeof(path)) ==
	   -EINVAL, "a relative path: -EINVAL");
	ok(uwprof_cgroup_path("/sys/fs/cgroup", "/abcdefgh", path, 4) ==
	   -ENAMETOOLONG, "a path longer than the buffer: -ENAMETOOLONG");
}

/* This machine's hierarchy, when it has one: its root and our own cgroup. */
static void check_open(void)
{
	char mnt[PATH_MAX], path[UWPROF_CGROUP_PATH_MAX], mine[UWPROF_CGROUP_PATH_MAX];
	int fd;

	if (uwprof_cgroup2_mount("/proc/self/mountinfo", mnt, sizeof(mnt)) ||
	    uwprof_cgroup_of(getpid(), mine, sizeof(mine))) {
		ok(1, "# SKIP opening cgroups: no cgroup v2 hierarchy here");
		return;
	}
	fd = uwprof_cgroup_open(mine, path, sizeof(path));
	ok(fd >= 0 && !strcmp(path, mine), "own cgroup %s opened (%d)", mine, fd);
	if (fd >= 0)
		close(fd);
	fd = uwprof_cgroup_open(mnt, path, sizeof(path));
	ok(fd >= 0 && !strcmp(path, "/"), "the mount point %s opens the root", mnt);
	if (fd >= 0)
		close(fd);
	ok(uwprof_cgroup_open("/no-such-cgroup-here", path, sizeof(path)) ==
	   -ENOENT, "no such cgroup: -ENOENT");
	ok(uwprof_cgroup_open("/cgroup.procs", path, sizeof(path)) == -ENOTDIR,
	   "a file of the hierarchy: -ENOTDIR");
}

int main(void)
{
	check_ids();
	check_under();
	check_self();
	check_mount();
	check_path();
	check_open();
	return tap_done();
}

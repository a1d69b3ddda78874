// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the tool's cgroup helpers (tool/cgroup.c), TAP output: the
 * container ids in the cgroup paths Docker, containerd, CRI-O, Podman and
 * Kubernetes give their containers, paths that name none, the subtree
 * test, and this process's own cgroup against /proc/self/cgroup.
 *
 * Usage: cgroup-test
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
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

int main(void)
{
	check_ids();
	check_under();
	check_self();
	return tap_done();
}

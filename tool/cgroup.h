/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes' cgroups (v2) and the containers they show: the cgroup path a
 * process is in, the container id a path names (Docker, containerd, CRI-O,
 * Podman and Kubernetes all put the 64-hex-digit id in the last component
 * that holds one), and whether a path lies in a subtree.
 */
#ifndef UWPROF_TOOL_CGROUP_H
#define UWPROF_TOOL_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/* Longest cgroup path kept; deeper ones are refused (-ENAMETOOLONG). */
#define UWPROF_CGROUP_PATH_MAX	1024
/* A container id: 64 hex digits and the NUL. */
#define UWPROF_CONTAINER_ID_LEN	65

/*
 * The cgroup v2 path of process 'pid' ("/" for the root), from the "0::"
 * line of /proc/PID/cgroup. Returns 0, -ENOENT when the process has no v2
 * cgroup (a v1-only host), -ESRCH when it is gone, or another -errno.
 */
int uwprof_cgroup_of(pid_t pid, char *out, size_t len);

/*
 * The container id in a cgroup path: the last 64-hex-digit run in the
 * last component that has one, bounded by non-hex characters. Returns 1
 * with 'out' set, 0 when the path names none.
 */
int uwprof_container_id(const char *path, char out[UWPROF_CONTAINER_ID_LEN]);

/* Whether cgroup 'path' is 'top' or below it ('top' "/" is every path). */
int uwprof_cgroup_under(const char *path, const char *top);

#endif /* UWPROF_TOOL_CGROUP_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes' cgroups (v2) and the containers they show: the cgroup path a
 * process is in, the container id a path names (Docker, containerd, CRI-O,
 * Podman and Kubernetes all put the 64-hex-digit id in the last component
 * that holds one), whether a path lies in a subtree, and the directory
 * of a cgroup opened for the module's filter.
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

/*
 * The mount point of the cgroup v2 hierarchy in the mountinfo file
 * 'mountinfo' (/proc/self/mountinfo): the first cgroup2 mount of its
 * root. Returns 0, -ENODEV when none is mounted, or another -errno.
 */
int uwprof_cgroup2_mount(const char *mountinfo, char *out, size_t len);

/*
 * Where 'arg' points in the hierarchy mounted at 'mnt': a cgroup path as
 * /proc/PID/cgroup shows it (/system.slice/nginx.service), or the cgroup's
 * directory below 'mnt' (/sys/fs/cgroup/system.slice/nginx.service). Its
 * cgroup path goes to 'path', trailing and repeated slashes dropped.
 * Returns 0, -EINVAL for a relative path, -ENAMETOOLONG.
 */
int uwprof_cgroup_path(const char *mnt, const char *arg, char *path,
		       size_t len);

/*
 * Opens the cgroup v2 directory 'arg' names (as uwprof_cgroup_path()
 * reads it), O_RDONLY | O_DIRECTORY, for the module's cgroup filter.
 * Returns the fd with the cgroup path in 'path', or -errno: -ENODEV no
 * cgroup v2 hierarchy, -ENOENT no such cgroup, -ENOTDIR, -EINVAL.
 */
int uwprof_cgroup_open(const char *arg, char *path, size_t len);

#endif /* UWPROF_TOOL_CGROUP_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Processes' cgroup v2 paths, the container ids in them, and cgroup
 * directories opened for the module's filter.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup.h"

int uwprof_cgroup_of(pid_t pid, char *out, size_t len)
{
	char path[64], line[UWPROF_CGROUP_PATH_MAX + 8];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		if (strncmp(line, "0::", 3))
			continue;
		if (!line[n] && !feof(f)) {
			ret = -ENAMETOOLONG;
			break;
		}
		line[n] = 0;
		if (n - 3 >= len) {
			ret = -ENAMETOOLONG;
			break;
		}
		memcpy(out, line + 3, n - 2);
		ret = line[3] == '/' ? 0 : -EINVAL;
		break;
	}
	fclose(f);
	return ret;
}

/* The last run of exactly 64 hex digits in [p, end), or NULL. */
static const char *hex64_in(const char *p, const char *end)
{
	const char *found = NULL;

	while (p < end) {
		const char *q = p;

		while (q < end && isxdigit((unsigned char)*q))
			q++;
		if (q - p == 64)
			found = p;
		p = q < end ? q + 1 : q;
	}
	return found;
}

int uwprof_container_id(const char *path, char out[UWPROF_CONTAINER_ID_LEN])
{
	const char *end = path + strlen(path), *start, *id;

	while (end > path) {
		start = end;
		while (start > path && start[-1] != '/')
			start--;
		id = hex64_in(start, end);
		if (id) {
			memcpy(out, id, 64);
			out[64] = 0;
			return 1;
		}
		end = start > path ? start - 1 : path;
	}
	return 0;
}

int uwprof_cgroup_under(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (n == 1 && top[0] == '/')
		return path[0] == '/';
	return !strncmp(path, top, n) && (path[n] == 0 || path[n] == '/');
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void mountinfo_unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

int uwprof_cgroup2_mount(const char *mountinfo, char *out, size_t len)
{
	char line[PATH_MAX * 2 + 256], root[PATH_MAX], mnt[PATH_MAX];
	int ret = -ENODEV;
	const char *sep;
	FILE *f;

	f = fopen(mountinfo, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent major:minor root mount-point options ... - type */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    strcmp(root, "/"))
			continue;
		mountinfo_unescape(mnt);
		if (strlen(mnt) >= len) {
			ret = -ENAMETOOLONG;
			break;
		}
		strcpy(out, mnt);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int uwprof_cgroup_path(const char *mnt, const char *arg, char *path,
		       size_t len)
{
	size_t m = strlen(mnt), n = 0;
	const char *p = arg;

	while (m > 1 && mnt[m - 1] == '/')
		m--;
	if (m > 1 && !strncmp(arg, mnt, m) && (!arg[m] || arg[m] == '/'))
		p = arg + m;
	else if (arg[0] != '/')
		return -EINVAL;
	if (len < 2)
		return -ENAMETOOLONG;
	path[n++] = '/';
	for (; *p; p++) {
		if (*p == '/' && path[n - 1] == '/')
			continue;
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		path[n++] = *p;
	}
	if (n > 1 && path[n - 1] == '/')
		n--;
	path[n] = 0;
	return 0;
}

int uwprof_cgroup_open(const char *arg, char *path, size_t len)
{
	char mnt[PATH_MAX], dir[PATH_MAX + UWPROF_CGROUP_PATH_MAX];
	struct statfs sf;
	int fd, ret;

	ret = uwprof_cgroup2_mount("/proc/self/mountinfo", mnt, sizeof(mnt));
	if (!ret)
		ret = uwprof_cgroup_path(mnt, arg, path, len);
	if (ret)
		return ret;
	if (snprintf(dir, sizeof(dir), "%s%s", mnt, path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A directory of the mount, not of a file system mounted below it. */
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

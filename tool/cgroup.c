// SPDX-License-Identifier: GPL-2.0
/* Processes' cgroup v2 paths and the container ids in them. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

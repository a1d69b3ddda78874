// SPDX-License-Identifier: GPL-2.0
/*
 * The directory of 'uwprof agent --output-dir': one gzipped pprof per
 * window, named uwprof-YYYYMMDDTHHMMSSZ.pb.gz after its start (UTC), so
 * that a listing sorted by name is sorted by time. Each is written under
 * a temporary name and renamed (atomic_file.c): a reader never sees half
 * a profile. Before each write the oldest files are removed until the new
 * one fits within --keep-files and --keep-bytes, so a long run or a small
 * disk never holds more. Only files of that name pattern are counted or
 * removed; anything else in the directory is left alone.
 *
 * Called from the output thread only (agent_output.c); the counters are
 * read by /metrics meanwhile, hence the atomic adds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "atomic_file.h"

#define FILES_PREFIX	"uwprof-"
#define FILES_SUFFIX	".pb.gz"
/* uwprof-20240131T235959Z.pb.gz */
#define FILES_NAME_LEN	(sizeof(FILES_PREFIX) - 1 + 16 + sizeof(FILES_SUFFIX) - 1)
/* atomic_file's temporary name: ".NAME.XXXXXX" */
#define FILES_TMP_LEN	(1 + FILES_NAME_LEN + 7)

/* A failure that is not an errno: the profile alone exceeds --keep-bytes. */
#define FILES_TOO_LARGE	1023

struct file_ent {
	char		name[FILES_NAME_LEN + 1];
	uint64_t	size;
};

static void count(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* Whether 'name' is one of ours: prefix, 16 name characters, suffix. */
static int files_ours(const char *name)
{
	size_t n = strlen(name), i;

	if (n != FILES_NAME_LEN || strncmp(name, FILES_PREFIX,
					   sizeof(FILES_PREFIX) - 1) ||
	    strcmp(name + n - (sizeof(FILES_SUFFIX) - 1), FILES_SUFFIX))
		return 0;
	for (i = sizeof(FILES_PREFIX) - 1; i < n - (sizeof(FILES_SUFFIX) - 1); i++)
		if (!strchr("0123456789TZ", name[i]))
			return 0;
	return 1;
}

/* A temporary file of ours that a killed agent left behind. */
static int files_stale_tmp(const char *name)
{
	char base[FILES_NAME_LEN + 1];

	if (name[0] != '.' || strlen(name) != FILES_TMP_LEN ||
	    name[FILES_NAME_LEN + 1] != '.')
		return 0;
	memcpy(base, name + 1, FILES_NAME_LEN);
	base[FILES_NAME_LEN] = 0;
	return files_ours(base);
}

int agent_files_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
		int e = errno ? errno : ENOTDIR;

		if (!stat(dir, &st) && !S_ISDIR(st.st_mode))
			e = ENOTDIR;
		snprintf(err, errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	return 0;
}

int agent_files_init(struct agent_files *f, const char *dir,
		     uint64_t keep_files, uint64_t keep_bytes, char *err,
		     size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int ret;

	memset(f, 0, sizeof(*f));
	ret = agent_files_check(dir, err, errlen);
	if (ret)
		return ret;
	f->dir = strdup(dir);
	if (!f->dir) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->keep_files = keep_files;
	f->keep_bytes = keep_bytes;
	d = opendir(dir);
	while (d && (de = readdir(d)))
		if (files_stale_tmp(de->d_name))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct file_ent *)a)->name,
		      ((const struct file_ent *)b)->name);
}

/* Our files in the directory, oldest first. */
static int files_list(struct agent_files *f, struct file_ent **out,
		      size_t *nr)
{
	struct file_ent *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(f->dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st;

		if (!files_ours(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct file_ent *nv = realloc(v, c * sizeof(*nv));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = c;
		}
		memcpy(v[n].name, de->d_name, sizeof(v[n].name));	/* ours: that long */
		v[n].size = (uint64_t)st.st_size;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), ent_cmp);
	*out = v;
	*nr = n;
	return 0;
}

/*
 * Removes the oldest files until 'len' more bytes fit: at most
 * keep_files - 1 files and keep_bytes - len bytes are left. A file named
 * 'name' is counted as replaced, not kept.
 */
static int files_make_room(struct agent_files *f, const char *name,
			   uint64_t len)
{
	struct file_ent *v = NULL;
	uint64_t bytes = 0;
	size_t n = 0, i, kept;
	int ret;

	ret = files_list(f, &v, &n);
	if (ret)
		return ret;
	kept = n;
	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].name, name)) {
			kept--;
			v[i].size = 0;
		}
		bytes += v[i].size;
	}
	for (i = 0; i < n && (kept + 1 > f->keep_files ||
			      bytes + len > f->keep_bytes); i++) {
		char path[4096];

		if (!strcmp(v[i].name, name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, v[i].name);
		if (unlink(path) && errno != ENOENT) {
			ret = -errno;
			break;
		}
		kept--;
		bytes -= v[i].size;
		count(&f->removed, 1);
	}
	free(v);
	return ret;
}

static int files_write_at(const char *path, const uint8_t *buf, size_t len)
{
	struct uwprof_afile a;
	size_t done = 0;
	int ret;

	/* Whole-host profiles: function names, paths, pids. Owner only. */
	ret = uwprof_afile_open(&a, path, 0600);
	if (ret)
		return ret;
	while (done < len) {
		ssize_t n = write(a.fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			uwprof_afile_abort(&a);
			return ret;
		}
		done += (size_t)n;
	}
	return uwprof_afile_commit(&a);
}

static void files_say(struct agent_files *f, const char *name, int ret,
		      size_t len)
{
	unsigned int kind = ret == -FILES_TOO_LARGE ? FILES_TOO_LARGE :
			    (unsigned int)-ret;

	count(&f->errors, 1);
	if (!agent_once(&f->said, kind))
		return;
	if (kind == FILES_TOO_LARGE)
		fprintf(stderr,
			"uwprof agent: %s/%s: not written: the profile alone (%zu bytes) exceeds --keep-bytes (%llu)\n",
			f->dir, name, len, (unsigned long long)f->keep_bytes);
	else
		fprintf(stderr,
			"uwprof agent: %s/%s: %s (said once; every failed write is counted in /metrics)\n",
			f->dir, name, strerror(-ret));
}

int agent_files_write(struct agent_files *f, uint64_t start_real_ns,
		      const uint8_t *buf, size_t len)
{
	char name[FILES_NAME_LEN + 1], path[4096];
	time_t t = (time_t)(start_real_ns / 1000000000ULL);
	struct tm tm;
	int ret;

	gmtime_r(&t, &tm);
	strftime(name, sizeof(name), FILES_PREFIX "%Y%m%dT%H%M%SZ" FILES_SUFFIX,
		 &tm);
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if (len > f->keep_bytes)
		ret = -FILES_TOO_LARGE;
	else
		ret = files_make_room(f, name, len);
	if (!ret)
		ret = files_write_at(path, buf, len);
	if (ret) {
		files_say(f, name, ret, len);
		return ret == -FILES_TOO_LARGE ? -EFBIG : ret;
	}
	count(&f->written, 1);
	if (agent_once_over(&f->said))
		fprintf(stderr, "uwprof agent: %s: writing profiles again\n",
			f->dir);
	return 0;
}

void agent_files_fini(struct agent_files *f)
{
	free(f->dir);
	f->dir = NULL;
}

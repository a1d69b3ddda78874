// SPDX-License-Identifier: GPL-2.0
/*
 * Opening files an untrusted user controls (see file_open.h): resolve to an
 * O_PATH descriptor, look at that inode, and open it for reading only when
 * it is the regular file expected. Between the look and the open nothing
 * can be swapped: both are the same inode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "file_open.h"

static int fo_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fo_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/*
 * O_NOFOLLOW guards the last component only; openat2() (5.6+) refuses a
 * symlink anywhere. Without it, the last component is what can be checked.
 */
static int fo_path_fd(const char *path, unsigned int flags)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!(flags & UWPROF_FILE_NOFOLLOW))
		return open(path, O_PATH | O_CLOEXEC);
#ifdef SYS_openat2
	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return (int)fd;
#else
	(void)how;
#endif
	/* O_PATH | O_NOFOLLOW opens a symlink itself: fstat() says S_IFLNK. */
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return (int)fd;
}

static const char *fo_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	if (S_ISLNK(m))
		return "a symlink";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

static int fo_check(const char *path, const struct stat *s,
		    const struct uwprof_file_want *want, unsigned int flags,
		    char *err, size_t errlen)
{
	if (S_ISLNK(s->st_mode) && (flags & UWPROF_FILE_NOFOLLOW))
		return fo_fail(err, errlen, -ELOOP,
			       "%s: a symlink, refused (the mapped file was replaced)",
			       path);
	if (!S_ISREG(s->st_mode))
		return fo_fail(err, errlen, -ENOEXEC,
			       "%s: %s, not a regular file: refused", path,
			       fo_kind(s->st_mode));
	if (!want)
		return 0;
	if (s->st_ino != want->ino ||
	    (!(flags & UWPROF_FILE_INO_ONLY) &&
	     (major(s->st_dev) != want->dev_major ||
	      minor(s->st_dev) != want->dev_minor)))
		return fo_fail(err, errlen, -ESTALE,
			       "%s: device %u:%u inode %llu is not the mapped file (%u:%u inode %llu): refused",
			       path, major(s->st_dev), minor(s->st_dev),
			       (unsigned long long)s->st_ino, want->dev_major,
			       want->dev_minor, (unsigned long long)want->ino);
	return 0;
}

int uwprof_file_open(const char *path, unsigned int flags,
		     const struct uwprof_file_want *want, struct stat *st,
		     char *err, size_t errlen)
{
	struct stat s, s2;
	char self[48];
	int pfd, fd, ret;

	pfd = fo_path_fd(path, flags);
	if (pfd < 0) {
		ret = -errno;
		if (ret == -ELOOP)
			return fo_fail(err, errlen, -ELOOP,
				       "%s: a symlink in the path, refused", path);
		return fo_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	if (fstat(pfd, &s)) {
		ret = -errno;
		close(pfd);
		return fo_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	ret = fo_check(path, &s, want, flags, err, errlen);
	if (ret) {
		close(pfd);
		return ret;
	}
	/* The inode just checked, not whatever the path names by now. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	ret = fd < 0 ? -errno : 0;
	close(pfd);
	if (ret)
		return fo_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	if (fstat(fd, &s2) || s2.st_ino != s.st_ino || s2.st_dev != s.st_dev) {
		close(fd);
		return fo_fail(err, errlen, -ESTALE,
			       "%s: changed while being opened: refused", path);
	}
	if (st)
		*st = s2;
	return fd;
}

/*
 * Whether only root can change what 'path''s directory holds: every
 * directory from / down to it root's and writable by no group or other
 * user (a sticky /tmp is writable by all: not trusted). Each prefix is
 * stat()ed, following symlinks that root's directories hold (/lib).
 */
static int fo_dir_trusted(const char *path)
{
	char buf[PATH_MAX], *slash;
	struct stat s;
	size_t i, n;

	if (path[0] != '/' || strlen(path) >= sizeof(buf))
		return 0;
	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	n = (size_t)(slash - buf);
	for (i = 0; i <= n; i++) {
		size_t end = i ? i : 1;	/* the root: "/" */
		char c;
		int bad;

		if (buf[i] != '/')
			continue;
		c = buf[end];
		buf[end] = 0;
		bad = stat(buf, &s) || !S_ISDIR(s.st_mode) || s.st_uid ||
		      (s.st_mode & (S_IWGRP | S_IWOTH));
		buf[end] = c;
		if (bad)
			return 0;
	}
	return 1;
}

int uwprof_file_open_debug(const char *path, uid_t owner, struct stat *st,
			   char *err, size_t errlen)
{
	char self[48], real[PATH_MAX];
	int trusted = fo_dir_trusted(path), fd;
	struct stat s;
	ssize_t n;

	fd = uwprof_file_open(path, trusted ? 0 : UWPROF_FILE_NOFOLLOW, NULL,
			      &s, err, errlen);
	if (fd < 0)
		return fd;
	if (trusted) {
		/* Where the symlinks led: root's directories only. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		n = readlink(self, real, sizeof(real) - 1);
		if (n <= 0 || (real[n] = 0, !fo_dir_trusted(real))) {
			close(fd);
			return fo_fail(err, errlen, -EPERM,
				       "%s: leads to %s, in a directory others may change: refused",
				       path, n > 0 ? real : "?");
		}
	}
	/*
	 * Root's file in a directory others control: a hard link to it, made
	 * where protected_hardlinks is off, unless everyone may read it. A
	 * reader that is not root reads only what it may anyway: its own.
	 */
	if (s.st_uid != owner && (!geteuid() || s.st_uid != geteuid()) &&
	    (s.st_uid || (!trusted && !(s.st_mode & S_IROTH)))) {
		close(fd);
		return fo_fail(err, errlen, -EPERM,
			       "%s: owned by uid %u, not the object's owner (%u) nor root: refused",
			       path, (unsigned int)s.st_uid, (unsigned int)owner);
	}
	if (st)
		*st = s;
	return fd;
}

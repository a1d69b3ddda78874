// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of python_find.c against what a profiled user can do to the
 * files it reads as root (TAP). A copy of Debian's /usr/bin/python3.11
 * runs from the scratch directory, as a user's interpreter would; its
 * mappings are read as the recorder reads them, then the files they name
 * are swapped or replaced:
 *  - the interpreter's path swapped for a FIFO while it runs: read
 *    through /proc/PID/map_files it is still the mapped file, walked;
 *  - by path (the file it names mapped no more, or map_files refused):
 *    a FIFO, a symlink to /dev/zero, a symlink to a root-only
 *    interpreter, another regular file are each refused with a reason
 *    naming what it is;
 *  - files named as an interpreter that are garbage, a truncated copy, a
 *    copy whose .dynsym declares 512 MiB (in a sparse file that long):
 *    refused with a reason, at once, the reader's peak RSS small;
 *  - the C library's path swapped for a FIFO: the interpreter is not
 *    walked, and the reason says it is its C library.
 * Each check runs in a child with a time limit, so that a hang or a
 * signal fails it instead of the test.
 *
 *	pyfind-test SCRATCH_DIR
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "python.h"
#include "pyspawn.h"
#include "tap.h"

#define PYTHON		"/usr/bin/python3.11"
#if defined(__x86_64__)
#define ARCH_HOST	UWPROF_ARCH_X86_64
#else
#define ARCH_HOST	UWPROF_ARCH_ARM64
#endif

static char dir[PATH_MAX];

/* What one check finds, and what it must say. */
struct want {
	struct uwprof_pm *pm;
	pid_t		pid;
	int		found;
	const char	*why;		/* a part of out.why, or NULL */
};

static int find_check(void *arg)
{
	const struct want *w = arg;
	struct uwprof_py_cache c = { 0 };
	struct uwprof_py_proc out;

	uwprof_py_find(&c, w->pid, w->pm, ARCH_HOST, &out);
	uwprof_py_cache_free(&c);
	printf("# found %d, path '%s', why '%s'\n", out.found, out.path,
	       out.why);
	if (out.found != w->found)
		return 1;
	return w->why && !strstr(out.why, w->why);
}

/*
 * Runs fn(arg) in a child killed by SIGALRM after 'secs': 0 when it
 * returned 0, 1 when it returned non-zero, -signal when a signal ended it.
 * *rss_kb gets the child's peak resident size.
 */
static int in_child(int (*fn)(void *), void *arg, unsigned int secs,
		    long *rss_kb)
{
	struct rusage ru;
	int status, r;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		alarm(secs);
		r = fn(arg);
		fflush(stdout);
		_exit(r ? 1 : 0);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	*rss_kb = ru.ru_maxrss;
	if (WIFSIGNALED(status)) {
		printf("# child killed by signal %d (%s)\n", WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		return -WTERMSIG(status);
	}
	return WEXITSTATUS(status) ? 1 : 0;
}

static int run(const char *fmt, const char *a, const char *b)
{
	char cmd[3 * PATH_MAX];
	int r;

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	r = system(cmd);
	if (r)
		printf("# '%s' failed (%d)\n", cmd, r);
	return r;
}

static void check(struct want *w, const char *what)
{
	long rss = 0;
	int r = in_child(find_check, w, 20, &rss);

	ok(r == 0 && rss < 128 * 1024, "%s (peak RSS %ld KiB)", what, rss);
}

/*
 * An entry as /proc/PID/maps would show 'path' mapped, at an address no
 * mapping of the process has: map_files has no such link, so the file is
 * opened by its path, as when the mapping is gone or map_files is not
 * ours to follow. 'as' (may be NULL): whose device and inode it shows.
 */
static void entry_by_path(struct uwprof_pm_entry *e, char *path,
			  const char *as)
{
	struct stat st;

	memset(e, 0, sizeof(*e));
	if (stat(as ? as : path, &st))
		memset(&st, 0, sizeof(st));
	e->start = 0x7e0000000000ULL;
	e->end = e->start + 0x1000;
	e->dev_major = major(st.st_dev);
	e->dev_minor = minor(st.st_dev);
	e->inode = st.st_ino;
	e->kind = UWPROF_PM_FILE;
	e->pf = PF_R | PF_X;
	e->path = path;
}

/* The one entry in pm whose file name matches 'base'. */
static struct uwprof_pm_entry *entry_named(struct uwprof_pm *pm,
					   const char *base)
{
	const char *b;
	size_t i;

	for (i = 0; i < pm->n; i++) {
		b = strrchr(pm->v[i].path, '/');
		if (pm->v[i].kind == UWPROF_PM_FILE && b && !strcmp(b + 1, base))
			return &pm->v[i];
	}
	return NULL;
}

/* The section header of .dynsym in 'path': its file offset, or 0. */
static off_t dynsym_shdr(const char *path)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	off_t off = 0;
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && gelf_getehdr(e, &eh)) {
		while (!off && (scn = elf_nextscn(e, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
				off = (off_t)(eh.e_shoff +
					      elf_ndxscn(scn) * eh.e_shentsize);
	}
	if (e)
		elf_end(e);
	close(fd);
	return off;
}

/* A copy of the interpreter whose .dynsym says it is 'size' bytes long. */
static int big_dynsym(const char *path, uint64_t size)
{
	off_t sh;
	int fd, ret = -1;

	if (run("cp %s '%s'", PYTHON, path))
		return -1;
	sh = dynsym_shdr(path);
	fd = open(path, O_RDWR | O_CLOEXEC);
	/* Sparse: the file holds the section, nothing is written for it. */
	if (sh && fd >= 0 &&
	    pwrite(fd, &size, 8, sh + offsetof(Elf64_Shdr, sh_size)) == 8 &&
	    !ftruncate(fd, (off_t)size * 2))
		ret = 0;
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Files that are named as an interpreter but are not one to read. */
static void bad_files(struct want *w)
{
	static char path[PATH_MAX + 64];
	struct uwprof_pm pm = { 0 };
	struct uwprof_pm_entry e;
	char junk[PATH_MAX + 16];
	int fd;

	pm.v = &e;
	pm.n = 1;
	w->pm = &pm;
	w->found = 0;
	snprintf(path, sizeof(path), "%s/junk/python3.11", dir);
	snprintf(junk, sizeof(junk), "%s/junk", dir);
	mkdir(junk, 0755);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd >= 0) {
		/* An ELF magic, then nothing an ELF header holds. */
		ok(write(fd, "\177ELF\002\001\001garbage-garbage-garbage-"
			 "garbage-garbage-garbage-garbage-garbage-", 71) == 71,
		   "a garbage file named python3.11 written");
		close(fd);
	}
	entry_by_path(&e, path, NULL);
	w->why = "ELF";
	check(w, "garbage named python3.11: not walked, an ELF error said");

	run("head -c 1048576 %s > '%s'", PYTHON, path);
	entry_by_path(&e, path, NULL);
	w->why = "past the end of the file";
	check(w, "a copy cut at 1 MiB: not walked, 'past the end' said");

	/* 512 MiB in whole symbols: libelf itself refuses a part of one. */
	ok(!big_dynsym(path, ((512ULL << 20) / 24 + 1) * 24),
	   "a copy whose .dynsym declares 512 MiB, in a sparse file of 1 GiB");
	entry_by_path(&e, path, NULL);
	w->why = ".dynsym (536870928 bytes)";
	check(w, "... refused before it is read: not walked, the size said");
	unlink(path);
}

/* The interpreter's path, while it runs, swapped for other things. */
static void swaps(struct want *w, pid_t pid, char *exe)
{
	struct uwprof_pm pm = { 0 };
	struct uwprof_pm_entry *py, *libc, keep;
	char moved[PATH_MAX + 64], secret[PATH_MAX + 64], fifo[PATH_MAX + 64];

	w->pm = &pm;
	w->pid = pid;
	if (uwprof_pm_read(pid, &pm) || !(py = entry_named(&pm, "python3.11")) ||
	    !(libc = entry_named(&pm, "libc.so.6"))) {
		ok(0, "the copy's mappings read, its interpreter and C library among them");
		return;
	}
	w->found = 1;
	w->why = NULL;
	check(w, "the running copy is walked");

	snprintf(moved, sizeof(moved), "%s.moved", exe);
	ok(!rename(exe, moved) && !mkfifo(exe, 0644),
	   "its path swapped for a FIFO");
	check(w, "through map_files: still the mapped file, walked, no hang");

	/*
	 * A mapping whose range is gone is opened through the process's
	 * current mapping of the same file (procmaps.c): to reach the path,
	 * the entry names a file the process maps no more, an unmapped copy.
	 */
	snprintf(secret, sizeof(secret), "%s.unmapped", exe);
	run("cp %s '%s'", PYTHON, secret);
	keep = *py;
	entry_by_path(py, py->path, secret);
	w->found = 0;
	w->why = "not a regular file";
	check(w, "by path: the FIFO refused at once, and said");

	unlink(exe);
	ok(!symlink("/dev/zero", exe), "its path a symlink to /dev/zero");
	w->why = "a symlink, refused";
	check(w, "by path: the symlink to a device refused, and said");

	/* An interpreter the user may not read, reached through a symlink. */
	snprintf(secret, sizeof(secret), "%s/root-only", dir);
	mkdir(secret, 0700);
	snprintf(secret, sizeof(secret), "%s/root-only/python3.11", dir);
	run("cp %s '%s'", PYTHON, secret);
	chmod(secret, 0600);
	unlink(exe);
	ok(!symlink(secret, exe), "its path a symlink to a root-only interpreter");
	check(w, "by path: the symlink refused, the root-only file not read");

	unlink(exe);
	run("cp %s '%s'", PYTHON, exe);
	w->why = "not the file mapped";
	check(w, "by path: another regular file (a fresh copy) refused, and said");

	/* The interpreter as mapped; its C library's path now a FIFO. */
	*py = keep;
	keep = *libc;
	snprintf(fifo, sizeof(fifo), "%s/libc.so.6", dir);
	ok(!mkfifo(fifo, 0644), "a FIFO named libc.so.6");
	entry_by_path(libc, fifo, NULL);
	w->why = "its C library: its file cannot be read: not a regular file";
	check(w, "the C library a FIFO: not walked, and the C library named");
	*libc = keep;
	uwprof_pm_free(&pm);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX + 16], line[64];
	struct want w = { 0 };
	FILE *out = NULL;
	int status;
	pid_t pid;

	if (argc != 2 || !realpath(argv[1], dir)) {
		fprintf(stderr, "usage: pyfind-test SCRATCH_DIR\n");
		return 2;
	}
	if (access(PYTHON, X_OK)) {
		printf("1..0 # SKIP %s not installed\n", PYTHON);
		return 0;
	}
	w.pid = getpid();
	bad_files(&w);
	snprintf(exe, sizeof(exe), "%s/python3.11", dir);
	unlink(exe);
	pid = run("cp %s '%s'", PYTHON, exe) ? -1 : pyspawn_sleeper(exe, 120, &out);
	ok(pid > 0 && out && fgets(line, sizeof(line), out) &&
	   !strcmp(line, "ready\n"), "a copy of %s runs from %s", PYTHON, dir);
	if (pid > 0)
		swaps(&w, pid, exe);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (out)
		fclose(out);
	return tap_done();
}

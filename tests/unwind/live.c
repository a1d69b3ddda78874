// SPDX-License-Identifier: GPL-2.0
/*
 * Live targets for the unwinder host tests and benchmark (see live.h).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live.h"
#include "table.h"

int live_start(struct live *l, char *const argv[])
{
	int fds[2];
	char buf[16];
	ssize_t n;

	memset(l, 0, sizeof(*l));
	if (pipe(fds))
		return -errno;
	l->pid = fork();
	if (l->pid < 0)
		return -errno;
	if (!l->pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	l->out_fd = fds[0];
	n = read(l->out_fd, buf, sizeof(buf) - 1);
	if (n < 5 || memcmp(buf, "ready", 5)) {
		snprintf(l->err, sizeof(l->err), "%s did not start", argv[0]);
		live_kill(l);
		return -ECHILD;
	}
	return 0;
}

int live_stop(struct live *l)
{
	int st;

	if (kill(l->pid, SIGSTOP))
		return -errno;
	if (waitpid(l->pid, &st, WUNTRACED) != l->pid || !WIFSTOPPED(st))
		return -ECHILD;
	return 0;
}

int live_cont(struct live *l)
{
	return kill(l->pid, SIGCONT) ? -errno : 0;
}

void live_kill(struct live *l)
{
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
		l->pid = 0;
	}
	if (l->out_fd > 0)
		close(l->out_fd);
	l->out_fd = 0;
}

int live_regs(struct live *l, struct uwprof_regs *regs)
{
	int st, err = 0;

	if (ptrace(PTRACE_SEIZE, l->pid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, l->pid, 0, 0) ||
	    waitpid(l->pid, &st, __WALL) != l->pid) {
		err = -errno;
		goto detach;
	}
#if defined(__x86_64__)
	{
		struct user_regs_struct r;

		if (ptrace(PTRACE_GETREGS, l->pid, 0, &r)) {
			err = -errno;
			goto detach;
		}
		regs->pc = r.rip;
		regs->sp = r.rsp;
		regs->fp = r.rbp;
		regs->lr = 0;
	}
#elif defined(__aarch64__)
	{
		struct user_regs_struct r;
		struct iovec iov = { &r, sizeof(r) };

		if (ptrace(PTRACE_GETREGSET, l->pid, NT_PRSTATUS, &iov)) {
			err = -errno;
			goto detach;
		}
		regs->pc = r.pc;
		regs->sp = r.sp;
		regs->fp = r.regs[29];
		regs->lr = r.regs[30];
	}
#endif
detach:
	/* The group stop from SIGSTOP stays in force after the detach. */
	ptrace(PTRACE_DETACH, l->pid, 0, 0);
	return err;
}

/* vaddr of a file offset through the PT_LOAD segment holding it. */
static int elf_off_to_vaddr(const u8 *ehdr_buf, size_t len, int fd, u64 off, u64 *vaddr)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)ehdr_buf;
	Elf64_Phdr ph;
	unsigned int i;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	for (i = 0; i < eh->e_phnum; i++) {
		u64 at = eh->e_phoff + (u64)i * eh->e_phentsize;

		if (fd >= 0) {
			if (pread(fd, &ph, sizeof(ph), (off_t)at) != sizeof(ph))
				return -EIO;
		} else {
			if (at + sizeof(ph) > len)
				return -ENOEXEC;
			memcpy(&ph, ehdr_buf + at, sizeof(ph));
		}
		if (ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off < ph.p_offset + ph.p_filesz) {
			*vaddr = ph.p_vaddr + (off - ph.p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

static struct live_obj *obj_get(struct live *l, const char *path, u64 start, u64 end)
{
	struct uwprof_blob b;
	struct live_obj *o;
	u32 i;

	for (i = 0; i < l->nr_objs; i++)
		if (!strcmp(l->objs[i].path, path))
			return &l->objs[i];
	if (l->nr_objs == LIVE_MAX_OBJS)
		return NULL;
	o = &l->objs[l->nr_objs++];
	memset(o, 0, sizeof(*o));
	snprintf(o->path, sizeof(o->path), "%s", path);

	if (!strcmp(path, "[vdso]")) {
		char mem[64];
		u8 *img = malloc(end - start);
		int fd;

		snprintf(mem, sizeof(mem), "/proc/%d/mem", l->pid);
		fd = open(mem, O_RDONLY);
		if (!img || fd < 0 || pread(fd, img, end - start, (off_t)start) != (ssize_t)(end - start))
			o->err = -EIO;
		else
			o->err = uwprof_table_compile_mem(img, end - start, "[vdso]", &b, NULL);
		if (fd >= 0)
			close(fd);
		free(img);
	} else {
		o->err = uwprof_table_compile(path, &b, NULL);
	}
	if (o->err)
		return o;	/* no table: the walk falls back to fp there */

	o->blob = b.data;
	o->size = b.size;
	o->err = uwprof_table_check(o->blob, o->size);
	if (o->err) {
		snprintf(l->err, sizeof(l->err),
			 "%s: compiled table rejected by uwprof_table_check: %d", path, o->err);
		return o;
	}
	uwprof_table_init(&o->table, o->blob);
	o->rows = o->table.nr_rows;
	return o;
}

/* Load bias of one mapping of an object: runtime start - vaddr(offset). */
static int map_bias(struct live *l, const char *path, u64 start, u64 off, u64 *bias)
{
	u8 buf[4096];
	u64 vaddr;
	ssize_t n;
	int fd, err;

	if (!strcmp(path, "[vdso]")) {
		char mem[64];

		snprintf(mem, sizeof(mem), "/proc/%d/mem", l->pid);
		fd = open(mem, O_RDONLY);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, sizeof(buf), (off_t)start);
		close(fd);
		if (n <= 0)
			return -EIO;
		err = elf_off_to_vaddr(buf, (size_t)n, -1, off, &vaddr);
	} else {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, sizeof(buf), 0);
		err = n > 0 ? elf_off_to_vaddr(buf, (size_t)n, fd, off, &vaddr) : -EIO;
		close(fd);
	}
	if (!err)
		*bias = start - vaddr;
	return err;
}

int live_maps(struct live *l)
{
	char path[64], line[1024];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", l->pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	l->nr_maps = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perm[8], name[512] = "";
		struct uwprof_unwind_map *m;
		struct live_obj *o;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perm, &off, &pos) < 4)
			continue;
		sscanf(line + pos, " %511[^\n]", name);
		if (!strcmp(name, "[stack]")) {
			l->stack_lo = start;
			l->stack_hi = end;
		}
		if (perm[2] != 'x' || !strcmp(name, "[vsyscall]") ||
		    l->nr_maps == LIVE_MAX_MAPS)
			continue;
		m = &l->maps[l->nr_maps++];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		if (!name[0] || (name[0] == '[' && strcmp(name, "[vdso]"))) {
			m->flags = UWPROF_MAP_NO_TABLE;
			continue;
		}
		o = obj_get(l, name, start, end);
		if (!o)
			continue;
		if (o->err && l->err[0] && strstr(l->err, name))
			err = -EINVAL;
		if (o->err || map_bias(l, name, start, off, &m->bias))
			continue;
		m->table = &o->table;
	}
	fclose(f);
	return err;
}

void live_free(struct live *l)
{
	u32 i;

	live_kill(l);
	for (i = 0; i < l->nr_objs; i++) {
		free(l->objs[i].blob);
	}
	l->nr_objs = 0;
}

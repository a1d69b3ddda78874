// SPDX-License-Identifier: GPL-2.0
/*
 * CPython's frames as the module reads them, against the interpreter's own
 * account: a real interpreter (argv[1], Debian's /usr/bin/python3.11 by
 * default; with --root DIR, DIR's interpreter run chroot'ed into DIR, as
 * scripts/python-root unpacks trixie's 3.13 and sid's 3.14) prints its
 * version, the code objects and instruction offsets of its frames and the
 * invocations' C-stack nesting, then sleeps in the innermost one;
 * the test finds the interpreter in the process's files
 * (tool/python_find.c), stops it with ptrace, and reads its frame chain
 * with the module's own walk (module/unwind_py.c) over the host reader.
 * Checks: the descriptor is found and the module accepts it
 * (uwprof_py_check), every frame's code object and offset equals what
 * Python printed, invocation by invocation, and the marks rise up the
 * stack (3.11: each invocation's cframe; 3.13 on: its entry frame, which
 * is no Python frame); then a descriptor with broken offsets gives a stop
 * reason and no frame, and garbage descriptors are refused. From 3.13 on,
 * copies of the interpreter with a _Py_DebugOffsets made wrong in one way
 * each (cookie, version, free-threaded, an unknown minor version, an
 * offset outside its structure) are refused with a reason.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "elf_file.h"
#include "python.h"
#include "unwind.h"

/*
 * Three eval invocations: <module> calls g() from C through map(), so
 * g's frames run in a second invocation, and sorted(key=...) a third;
 * the innermost prints its own code object, then the chain from its
 * caller out (code object, offset), and sleeps. Python's f_lasti is in
 * bytes; the module counts code units.
 */
static const char py_script[] =
"import sys, time\n"
"def out(f):\n"
"    r = [str(sys.hexversion), str(id(sys._getframe().f_code))]\n"
"    while f is not None:\n"
"        r.append('%d %d' % (id(f.f_code), f.f_lasti // 2))\n"
"        f = f.f_back\n"
"    print(' '.join(r), flush=True)\n"
"    sys.stdin.readline()\n"
"    time.sleep(100)\n"
"def leaf():\n"
"    out(sys._getframe())\n"
"    return 0\n"
"class K:\n"
"    def meth(self, x):\n"
"        return leaf()\n"
"def inner(x):\n"
"    return K().meth(x)\n"
"def key(x):\n"
"    return inner(x)\n"
"def g(x):\n"
"    return sorted([x], key=key)\n"
"list(map(g, [1]))\n";

#define MAX_FRAMES	64

#if defined(__x86_64__)
#define ARCH_HOST	UWPROF_ARCH_X86_64
#else
#define ARCH_HOST	UWPROF_ARCH_ARM64
#endif

struct py_truth {
	uint64_t hexversion;		/* sys.hexversion */
	uint64_t sleeper;		/* the innermost frame's code object */
	uint64_t code[MAX_FRAMES];
	int64_t lasti[MAX_FRAMES];
	int n;
};

static int truth_parse(const char *line, struct py_truth *t)
{
	const char *p = line;
	unsigned long long s;
	int used;

	t->n = 0;
	if (sscanf(p, "%llu%n", &s, &used) != 1)
		return 0;
	t->hexversion = s;
	p += used;
	if (sscanf(p, "%llu%n", &s, &used) != 1)
		return 0;
	t->sleeper = s;
	p += used;
	while (t->n < MAX_FRAMES) {
		unsigned long long c;
		long long l;

		if (sscanf(p, "%llu %lld%n", &c, &l, &used) != 2)
			break;
		t->code[t->n] = c;
		t->lasti[t->n] = l;
		t->n++;
		p += used;
	}
	return t->n;
}

/* The thread pointer and sp of the stopped thread. */
static int thread_regs(pid_t pid, uint64_t *tp, uint64_t *sp)
{
#if defined(__x86_64__)
	struct user_regs_struct r;
	struct iovec io = { &r, sizeof(r) };

	if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &io))
		return -errno;
	*tp = r.fs_base;
	*sp = r.rsp;
	return 0;
#elif defined(__aarch64__)
	struct user_pt_regs r;
	uint64_t tls;
	struct iovec io = { &r, sizeof(r) }, io2 = { &tls, sizeof(tls) };

	if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &io) ||
	    ptrace(PTRACE_GETREGSET, pid, NT_ARM_TLS, &io2))
		return -errno;
	*tp = tls;
	*sp = r.sp;
	return 0;
#else
	(void)pid; (void)tp; (void)sp;
	return -ENOSYS;
#endif
}

/*
 * Every Python frame of the thread, invocation by invocation, as the
 * sample walk reads them when each mark is met; the marks into marks[].
 */
static u32 walk_all(struct uwprof_py_walk *pw, u64 *ips, u32 *nr,
		    u64 *marks, int *nr_marks)
{
	u32 ret = uwprof_py_start(pw);

	*nr = 0;
	*nr_marks = 0;
	while (!ret && pw->mark && *nr_marks < MAX_FRAMES) {
		marks[(*nr_marks)++] = pw->mark;
		ret = uwprof_py_frames(pw, ips, nr, 2 * MAX_FRAMES);
	}
	return ret;
}

static void check_chain(const struct uwprof_py_walk *base,
			const struct py_truth *t, uint64_t sp)
{
	struct uwprof_py_walk pw = *base;
	u64 ips[2 * MAX_FRAMES], marks[MAX_FRAMES];
	int nr_marks, i, same = 1, rising = 1;
	u32 nr, ret;

	ret = walk_all(&pw, ips, &nr, marks, &nr_marks);
	ok(ret == 0, "the chain reads to its end (stop %u)", ret ? ret - 1 : 0);
	ok((int)nr == 2 * (t->n + 1), "%u Python frames, Python says %d",
	   nr / 2, t->n + 1);
	ok(nr >= 2 && (ips[0] & UWPROF_IP_TAG_MASK) == UWPROF_IP_PYTHON &&
	   ips[1] == t->sleeper, "the innermost frame is the sleeping function");
	for (i = 0; i < t->n && i + 1 < (int)nr / 2; i++) {
		u64 w = ips[2 * i + 2];

		if ((w & UWPROF_IP_TAG_MASK) != UWPROF_IP_PYTHON ||
		    ips[2 * i + 3] != t->code[i] ||
		    UWPROF_IP_PY_LASTI(w) != t->lasti[i]) {
			same = 0;
			printf("# frame %d: code %#llx lasti %d, Python: %#llx %lld\n",
			       i + 1, (unsigned long long)ips[2 * i + 3],
			       UWPROF_IP_PY_LASTI(w),
			       (unsigned long long)t->code[i],
			       (long long)t->lasti[i]);
		}
	}
	ok(same, "every frame's code object and offset are Python's");
	ok(nr_marks == 3, "three eval invocations (map, sorted): %d", nr_marks);
	for (i = 0; i < nr_marks; i++)
		rising &= marks[i] > sp && (!i || marks[i] > marks[i - 1]);
	ok(rising, "each invocation's mark is on the stack, above the last");
}

/*
 * The filter the module wakes its reader by: a first walk finds every
 * code object new, a second none, and a filter that lost one entry that
 * one again.
 */
#define SEEN_N	(1U << UWPROF_PY_SEEN_BITS)

static void check_seen(const struct uwprof_py_walk *base)
{
	u64 seen[SEEN_N] = { 0 };
	u64 ips[2 * MAX_FRAMES], marks[MAX_FRAMES];
	struct uwprof_py_walk pw;
	int nr_marks, held = 1;
	u32 nr, i, k, filled;

	pw = *base;
	pw.seen = seen;
	ok(!walk_all(&pw, ips, &nr, marks, &nr_marks) && pw.fresh,
	   "a first walk names code objects new to the filter");
	for (i = 0; i + 1 < nr; i += 2) {
		for (k = 0; k < SEEN_N && seen[k] != ips[i + 1]; k++)
			;
		held &= k < SEEN_N;
	}
	for (k = filled = 0; k < SEEN_N; k++)
		filled += !!seen[k];
	ok(held && filled >= 1 && filled <= nr / 2,
	   "the filter holds each code object of the chain (%u entries, %u frames)",
	   filled, nr / 2);
	pw = *base;
	pw.seen = seen;
	ok(!walk_all(&pw, ips, &nr, marks, &nr_marks) && !pw.fresh,
	   "a second walk of the same chain names none new");
	for (k = 0; k < SEEN_N && seen[k] != ips[1]; k++)
		;
	if (k < SEEN_N)
		seen[k] = 0;
	pw = *base;
	pw.seen = seen;
	ok(!walk_all(&pw, ips, &nr, marks, &nr_marks) && pw.fresh &&
	   k < SEEN_N && seen[k] == ips[1],
	   "a code object the filter lost is new again, and put back");
}

static void check_broken(const struct uwprof_py_walk *base)
{
	struct uwprof_python d = *base->d;
	struct uwprof_py_walk pw = *base;
	u64 ips[2 * MAX_FRAMES], marks[MAX_FRAMES];
	int nr_marks;
	u32 nr, ret;

	/* The code slot moved: no object of the code type is found. */
	d.fr_code += 8;
	pw.d = &d;
	ret = walk_all(&pw, ips, &nr, marks, &nr_marks);
	ok(ret == UWPROF_STOP_PYTHON + 1 && nr == 0,
	   "a wrong frame layout stops the walk with no frame (stop %u, %u frames)",
	   ret ? ret - 1 : 0, nr / 2);
	/* Another thread's id: the thread pointer is not the sample's. */
	d = *base->d;
	pw = *base;
	pw.d = &d;
	ret = uwprof_py_start(&pw);
	ok(ret == 0, "the thread's own id is accepted");
	((struct uwprof_host_env *)pw.env)->tid ^= 1;
	ret = uwprof_py_start(&pw);
	((struct uwprof_host_env *)pw.env)->tid ^= 1;
	ok(ret == UWPROF_STOP_PYTHON + 1, "another thread's id is refused");
}

static void check_refused(const struct uwprof_python *good)
{
	static const struct {
		size_t off, size;
		uint64_t val;
		const char *what;
	} bad[] = {
		{ offsetof(struct uwprof_python, flags), 4, 1U << 7, "an unknown flag" },
		{ offsetof(struct uwprof_python, __reserved0), 4, 1, "a reserved field" },
		{ offsetof(struct uwprof_python, co_qualname), 4, 4, "a misaligned name field" },
		{ offsetof(struct uwprof_python, key_addr), 8, 0, "no key address" },
		{ offsetof(struct uwprof_python, key_addr), 8, ~0ULL - 2, "a kernel key address" },
		{ offsetof(struct uwprof_python, code_type), 8, 3, "a misaligned code type" },
		{ offsetof(struct uwprof_python, tp_pthread), 4, 1U << 20, "a far thread structure" },
		{ offsetof(struct uwprof_python, fr_code), 4, UWPROF_PY_MAX_OFF, "an offset at the limit" },
		{ offsetof(struct uwprof_python, fr_previous), 4, 12, "a misaligned pointer field" },
		{ offsetof(struct uwprof_python, kd_size), 4, 4, "key data of 4 bytes" },
		{ offsetof(struct uwprof_python, kd_data), 4, 64, "a value past its key data" },
		{ offsetof(struct uwprof_python, kd_per_block), 4, 24, "blocks not a power of two" },
	};
	struct uwprof_python d = *good;
	size_t i;

	ok(uwprof_py_check(good, 1ULL << 47) == 0, "the found descriptor passes the check");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct uwprof_python d = *good;

		memcpy((char *)&d + bad[i].off, &bad[i].val, bad[i].size);
		ok(uwprof_py_check(&d, 1ULL << 47) == -EINVAL, "refused: %s",
		   bad[i].what);
	}
	/* The marks of one mode in the other's descriptor. */
	if (good->flags & UWPROF_PY_CFRAME) {
		d.entry_value = 3;
		ok(uwprof_py_check(&d, 1ULL << 47) == -EINVAL,
		   "refused: an entry value with cframes");
	} else {
		d.entry_value = 256;
		ok(uwprof_py_check(&d, 1ULL << 47) == -EINVAL,
		   "refused: an entry value above a byte");
		d.entry_value = good->entry_value;
		d.cf_frame = 8;
		ok(uwprof_py_check(&d, 1ULL << 47) == -EINVAL,
		   "refused: a cframe field without cframes");
	}
}

/* The interpreter file's bytes and where its .PyRuntime is (file offset). */
static void *image_read(const char *path, size_t *size, uint64_t *rt_off,
			uint64_t *rt_vaddr)
{
	struct uwprof_elf *e;
	Elf_Scn *scn = NULL;
	char err[512];
	struct stat st;
	GElf_Shdr sh;
	size_t shstr;
	void *img;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || !(img = malloc(st.st_size)) ||
	    read(fd, img, st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	*size = st.st_size;
	*rt_off = 0;
	if (uwprof_elf_open_mem(img, *size, path, &e, err, sizeof(err)) ||
	    elf_getshdrstrndx(e->elf, &shstr)) {
		free(img);
		return NULL;
	}
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(e->elf, shstr, sh.sh_name);
		if (n && !strcmp(n, ".PyRuntime")) {
			*rt_off = sh.sh_offset;
			*rt_vaddr = sh.sh_addr;
		}
	}
	uwprof_elf_close(e);
	if (!*rt_off) {
		free(img);
		return NULL;
	}
	return img;
}

/* uwprof_pydo_read() of 'img' with the u64 at 'at' of the offsets set to v. */
static int pydo_patched(const void *img, size_t size, uint64_t rt_off,
			uint64_t rt_vaddr, size_t at, uint64_t v,
			uint64_t hexversion, char *why, size_t why_size)
{
	struct uwprof_pydo o;
	struct uwprof_elf *e;
	char err[512];
	uint8_t *copy = malloc(size);
	int ret;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, img, size);
	memcpy(copy + rt_off + at, &v, 8);
	why[0] = 0;
	ret = uwprof_elf_open_mem(copy, size, "copy", &e, err, sizeof(err));
	if (!ret) {
		ret = uwprof_pydo_read(e, rt_vaddr, hexversion, &o, why,
				       why_size);
		uwprof_elf_close(e);
	}
	free(copy);
	return ret;
}

/*
 * 3.13 on: the interpreter's _Py_DebugOffsets as found, and made wrong in
 * one way at a time. thread_state.current_frame is u64 slot 23 in 3.13's
 * struct, 26 in 3.14's (pycore_runtime.h, pycore_debug_offsets.h), its
 * group's size slot 19 and 22.
 */
static void check_debug_offsets(const char *path, uint64_t hexversion,
				const struct uwprof_python *found)
{
	uint64_t rt_off, rt_vaddr, cookie, size_at;
	unsigned int minor = hexversion >> 16 & 0xff;
	size_t n, frame_slot = minor == 13 ? 23 : 26;
	char why[96], want[96];
	void *img = image_read(path, &n, &rt_off, &rt_vaddr);
	int ret;

	ok(img != NULL, "%s read, with its .PyRuntime", path);
	if (!img)
		return;
	memcpy(&cookie, (char *)img + rt_off, 8);
	memcpy(&size_at, (char *)img + rt_off + 8 * (frame_slot - 4), 8);
	ret = pydo_patched(img, n, rt_off, rt_vaddr, 8 * frame_slot,
			   found->ts_frame, hexversion, why, sizeof(why));
	ok(ret == 0, "_Py_DebugOffsets as found is read (%s)", why);
	ret = pydo_patched(img, n, rt_off, rt_vaddr, 0, cookie ^ 1,
			   hexversion, why, sizeof(why));
	ok(ret == -ENOENT && strstr(why, "no _Py_DebugOffsets"),
	   "a wrong cookie: %d (%s)", ret, why);
	ret = pydo_patched(img, n, rt_off, rt_vaddr, 8, hexversion + 1,
			   hexversion, why, sizeof(why));
	ok(ret == -EINVAL && strstr(why, "says version"),
	   "another version than Py_Version: %d (%s)", ret, why);
	ret = pydo_patched(img, n, rt_off, rt_vaddr, 16, 1, hexversion, why,
			   sizeof(why));
	snprintf(want, sizeof(want),
		 "free-threaded CPython 3.%u: not supported", minor);
	ok(ret == -ENOTSUP && !strcmp(why, want),
	   "a free-threaded build: %d (%s)", ret, why);
	ret = pydo_patched(img, n, rt_off, rt_vaddr, 8, 0x030f00f0,
			   0x030f00f0, why, sizeof(why));
	ok(ret == -ENOTSUP && strstr(why, "CPython 3.15: not supported"),
	   "a minor version without a known layout: %d (%s)", ret, why);
	ret = pydo_patched(img, n, rt_off, rt_vaddr, 8 * frame_slot,
			   size_at, hexversion, why, sizeof(why));
	ok(ret == -EINVAL && strstr(why, "thread_state.current_frame"),
	   "an offset at its structure's end: %d (%s)", ret, why);
	free(img);
}

int main(int argc, char **argv)
{
	const char *root = argc > 2 && !strcmp(argv[1], "--root") ? argv[2] : NULL;
	const char *python = argc > (root ? 3 : 1) ? argv[root ? 3 : 1] :
			     "/usr/bin/python3.11";
	char path[4096];
	struct uwprof_host_env env = { .user_limit = 1ULL << 47 };
	struct uwprof_py_cache cache = { 0 };
	struct uwprof_py_proc found;
	struct uwprof_py_walk pw;
	struct py_truth t;
	struct uwprof_pm pm;
	int in[2], out[2], st;
	char line[8192];
	uint64_t sp = 0;
	FILE *f;
	pid_t pid;

	snprintf(path, sizeof(path), "%s%s", root ? root : "", python);
	if (access(path, X_OK)) {
		printf("Bail out! %s is not there\n", path);
		return 1;
	}
	if (pipe(in) || pipe(out))
		return 1;
	pid = fork();
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (root && (chroot(root) || chdir("/")))
			_exit(126);
		execl(python, python, "-c", py_script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || truth_parse(line, &t) < 6) {
		printf("Bail out! %s printed no frames\n", path);
		kill(pid, SIGKILL);
		return 1;
	}
	/* Past the readline: in the sleep, its frames as printed. */
	if (write(in[1], "\n", 1) != 1)
		return 1;
	usleep(200000);

	ok(uwprof_pm_read(pid, &pm) == 0, "the interpreter's mappings read");
	uwprof_py_find(&cache, pid, &pm, ARCH_HOST, &found);
	ok(found.found, "CPython found in %s (%s)", path,
	   found.found ? "ok" : found.why);
	ok(found.desc.version == t.hexversion >> 16,
	   "its version: %#x, Python's %#llx", found.desc.version,
	   (unsigned long long)t.hexversion);
	if (!found.found)
		goto out;
	check_refused(&found.desc);
	if (found.desc.version >= 0x030d) {
		struct uwprof_py_layout tab;

		/*
		 * python_layout.c's table came from offsetof() probes; the code
		 * type is the process's own.
		 */
		ok(!uwprof_py_layout_of(found.desc.version, &tab) &&
		   (tab.code_type = found.layout.code_type, 1) &&
		   !memcmp(&tab, &found.layout, sizeof(tab)),
		   "the naming layout _Py_DebugOffsets gives is the table's");
		check_debug_offsets(path, t.hexversion, &found.desc);
	}

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) || ptrace(PTRACE_INTERRUPT, pid, 0, 0) ||
	    waitpid(pid, &st, 0) != pid) {
		printf("Bail out! ptrace: %s\n", strerror(errno));
		goto out;
	}
	env.pid = pid;
	env.tid = (u32)pid;
	ok(thread_regs(pid, &env.tp, &sp) == 0, "the stopped thread's registers");
	pw = (struct uwprof_py_walk){
		.d = &found.desc, .env = &env, .limit = env.user_limit,
	};
	check_chain(&pw, &t, sp);
	check_seen(&pw);
	check_broken(&pw);
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	uwprof_pm_free(&pm);
	uwprof_py_cache_free(&cache);
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * CPython's frames as the module reads them, against the interpreter's own
 * account: a real interpreter (argv[1], Debian's /usr/bin/python3.11 by
 * default) prints the code objects and instruction offsets of its frames
 * and the invocations' C-stack nesting, then sleeps in the innermost one;
 * the test finds the interpreter in the process's files
 * (tool/python_find.c), stops it with ptrace, and reads its frame chain
 * with the module's own walk (module/unwind_py.c) over the host reader.
 * Checks: the descriptor is found and the module accepts it
 * (uwprof_py_check), every frame's code object and offset equals what
 * Python printed, invocation by invocation, and the marks rise up the
 * stack; then a descriptor with broken offsets gives a stop reason and no
 * frame, and garbage descriptors are refused.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
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
"    r = [str(id(sys._getframe().f_code))]\n"
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
		{ offsetof(struct uwprof_python, entry_value), 4, 3, "an entry value with cframes" },
	};
	size_t i;

	ok(uwprof_py_check(good, 1ULL << 47) == 0, "the found descriptor passes the check");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct uwprof_python d = *good;

		memcpy((char *)&d + bad[i].off, &bad[i].val, bad[i].size);
		ok(uwprof_py_check(&d, 1ULL << 47) == -EINVAL, "refused: %s",
		   bad[i].what);
	}
}

int main(int argc, char **argv)
{
	const char *python = argc > 1 ? argv[1] : "/usr/bin/python3.11";
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

	if (access(python, X_OK)) {
		printf("Bail out! %s is not there\n", python);
		return 1;
	}
	if (pipe(in) || pipe(out))
		return 1;
	pid = fork();
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(python, python, "-c", py_script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || truth_parse(line, &t) < 6) {
		printf("Bail out! %s printed no frames\n", python);
		kill(pid, SIGKILL);
		return 1;
	}
	/* Past the readline: in the sleep, its frames as printed. */
	if (write(in[1], "\n", 1) != 1)
		return 1;
	usleep(200000);

	ok(uwprof_pm_read(pid, &pm) == 0, "the interpreter's mappings read");
	uwprof_py_find(&cache, pid, &pm, ARCH_HOST, &found);
	ok(found.found, "CPython found in %s (%s)", python,
	   found.found ? "ok" : found.why);
	ok(found.desc.version == 0x030b, "its version: %#x", found.desc.version);
	if (!found.found)
		goto out;
	check_refused(&found.desc);

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
	check_broken(&pw);
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	uwprof_pm_free(&pm);
	uwprof_py_cache_free(&cache);
	return tap_done();
}

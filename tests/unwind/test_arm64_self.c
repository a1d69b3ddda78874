// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 walk on real arm64 stacks: a static aarch64 program (built
 * -O2 -fomit-frame-pointer -mbranch-protection=pac-ret, run under
 * qemu-aarch64) recurses, copies its own stack at the bottom, and unwinds
 * the copy with the core, using the table the host compiled from this very
 * binary (blobgen). The truth: each level stores __builtin_return_address(0)
 * on the way down. A second walk starts in a signal handler and must cross
 * the signal frame (recognised by the trampoline's code) to the interrupted
 * pc that the kernel (here: qemu) put in the ucontext.
 *
 * usage: test_arm64_self TABLE_BLOB
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "testlib.h"

#define LEVELS		60
#define MAX_FRAMES	512
#define VA_MASK		((1ULL << 48) - 1)

struct self {
	struct uwprof_unwind_map maps[32];
	u32 nr_maps;
	struct uwprof_table table;
	u64 ra[LEVELS + 1];		/* ra[n]: return address of level n */
	u64 capture_ra;
	u64 top;			/* copy the stack up to here */
	struct uwprof_regs regs;
	u8 *snap;
	u64 snap_lo, snap_size;
	u64 uc_pc;			/* interrupted pc from the ucontext */
	bool done;
};

static struct self self;	/* reached from a signal handler */
static volatile unsigned long sink;

static int load_table(const char *path)
{
	static u8 blob[4 << 20] __attribute__((aligned(8)));
	size_t n;
	FILE *f = fopen(path, "rb");
	int err;

	if (!f)
		return -errno;
	n = fread(blob, 1, sizeof(blob), f);
	fclose(f);
	err = uwprof_table_check(blob, n);
	if (err)
		return err;
	uwprof_table_init(&self.table, blob);
	return 0;
}

/* Executable mappings: this binary gets the table (static, bias 0). */
static int load_maps(void)
{
	char line[512], exe[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f || n <= 0)
		return -ENOENT;
	exe[n] = 0;
	while (fgets(line, sizeof(line), f) && self.nr_maps < 32) {
		unsigned long long s, e;
		char perm[8], name[256] = "";
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s%n", &s, &e, perm, &pos) < 3)
			continue;
		sscanf(line + pos, " %255[^\n]", name);
		if (perm[2] != 'x')
			continue;
		self.maps[self.nr_maps] = (struct uwprof_unwind_map){ .start = s, .end = e };
		if (!strcmp(name, exe))
			self.maps[self.nr_maps].table = &self.table;
		else
			self.maps[self.nr_maps].flags = UWPROF_MAP_NO_TABLE;
		self.nr_maps++;
	}
	fclose(f);
	return 0;
}

/* Registers here, and a copy of the stack from sp to the top. */
__attribute__((noinline)) static void capture(void)
{
	struct uwprof_regs r;

	__asm__ volatile("mov %0, sp\n\tmov %1, x29\n\tmov %2, x30\n\tadr %3, ."
		     : "=r"(r.sp), "=r"(r.fp), "=r"(r.lr), "=r"(r.pc));
	self.regs = r;
	self.snap_lo = r.sp;
	self.snap_size = self.top - r.sp;
	self.snap = malloc(self.snap_size);
	if (self.snap)
		memcpy(self.snap, (const void *)(uintptr_t)r.sp, self.snap_size);
	self.capture_ra = (u64)(uintptr_t)__builtin_return_address(0) & VA_MASK;
}

static void handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	(void)si;
	self.uc_pc = uc->uc_mcontext.pc;
	capture();
	sink++;		/* no tail call: the handler keeps its frame */
}

__attribute__((noinline)) static int level(int n, int sig)
{
	volatile char vla[16 + (n & 3) * 16];	/* some levels keep x29 as CFA */

	self.ra[n] = (u64)(uintptr_t)__builtin_return_address(0) & VA_MASK;
	vla[0] = (char)n;
	if (n == 0) {
		if (sig)
			raise(SIGUSR1);
		else
			capture();
		return vla[0];
	}
	sink += vla[0];
	return level(n - 1, sig) + (int)(sink & 1);
}

static u32 unwind(u64 *ips, struct uwprof_unwind_res *res)
{
	struct uwprof_host_env env = {
		.nr_regions = 1, .user_limit = 1ULL << 48, .va_bits = 48,
	};
	struct uwprof_unwind_req req = {
		.maps = self.maps, .nr_maps = self.nr_maps, .regs = self.regs,
		.ips = ips, .max_depth = MAX_FRAMES, .env = &env,
	};

	u32 k;

	env.region[0] = (struct uwprof_host_region){ self.snap_lo, self.snap_size, self.snap };
	/* Code without a table is read in place: the sigreturn check needs it. */
	for (k = 0; k < self.nr_maps && env.nr_regions < UWPROF_HOST_MAX_REGIONS; k++)
		if (!self.maps[k].table)
			env.region[env.nr_regions++] = (struct uwprof_host_region){
				self.maps[k].start, self.maps[k].end - self.maps[k].start,
				(const u8 *)(uintptr_t)self.maps[k].start,
			};
	return uwprof_unwind_user(&req, res);
}

/* Index of the first i >= from with ips[i..] == ra[0..LEVELS-1], or -1. */
static int find_chain(const u64 *ips, u32 nr, u32 from)
{
	u32 i, k;

	for (i = from; i + LEVELS <= nr; i++) {
		for (k = 0; k < LEVELS && ips[i + k] == self.ra[k]; k++)
			;
		if (k == LEVELS)
			return (int)i;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static u64 ips[MAX_FRAMES];
	struct uwprof_unwind_res res;
	struct sigaction sa;
	struct tap t = { 0 };
	u32 nr, i, pac = 0;
	int err, at;

	tap_diag("arm64 self-unwind under emulation");
	if (argc < 2)
		return 2;
	err = load_table(argv[1]);
	if (!tap_ok(&t, err == 0, "own table passes uwprof_table_check (%d)", err))
		return tap_done(&t);
	tap_ok(&t, self.table.nr_rows > 100, "own table has %u rows", self.table.nr_rows);
	err = load_maps();
	tap_ok(&t, err == 0 && self.nr_maps, "%u executable mappings", self.nr_maps);
	self.top = (u64)(uintptr_t)argv[0];

	level(LEVELS, 0);
	nr = unwind(ips, &res);
	for (i = 0; i < self.snap_size / 8; i++) {
		u64 v;

		memcpy(&v, self.snap + 8 * i, 8);
		if ((v & VA_MASK) == self.ra[3] && v != self.ra[3])
			pac++;
	}
	tap_diag("plain walk: %u frames, stop %u; signed copies of one return address on the stack: %u",
		 nr, res.stop, pac);
	tap_ok(&t, nr >= 3 && ips[0] == self.regs.pc && ips[1] == self.capture_ra,
	       "first frames: capture pc and its return address");
	at = find_chain(ips, nr, 2);
	tap_ok(&t, at == 2, "the %d recursion return addresses follow in order (at %d)",
	       LEVELS, at);
	tap_ok(&t, res.stop == UWPROF_STOP_OK && res.fp_frames == 0,
	       "walk ends at the outermost frame by the table (stop %u, fp frames %u)",
	       res.stop, res.fp_frames);
	free(self.snap);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	level(LEVELS, 1);
	nr = unwind(ips, &res);
	for (i = 0; i < nr && ips[i] != self.uc_pc; i++)
		;
	tap_diag("signal walk: %u frames, stop %u, interrupted pc %#llx at frame %u",
		 nr, res.stop, (unsigned long long)self.uc_pc, i);
	if (res.stop == UWPROF_STOP_NO_MAP) {
		u32 k;

		tap_diag("pc %#llx in no executable mapping of:",
			 (unsigned long long)res.unknown_pc);
		for (k = 0; k < self.nr_maps; k++)
			tap_diag("  %#llx-%#llx", (unsigned long long)self.maps[k].start,
				 (unsigned long long)self.maps[k].end);
	}
	/* capture, handler, trampoline, then the interrupted pc. */
	tap_ok(&t, i == 3 && i < nr, "signal frame crossed to the interrupted pc (frame %u)", i);
	at = find_chain(ips, nr, i);
	tap_ok(&t, at > (int)i, "recursion return addresses follow the signal frame (at %d)", at);
	tap_ok(&t, res.stop == UWPROF_STOP_OK, "signal walk ends at the outermost frame (stop %u)",
	       res.stop);
	free(self.snap);
	return tap_done(&t);
}

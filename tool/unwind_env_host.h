/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host environment of the unwinder core: the same names
 * unwind_env_kernel.h gives the module. User memory is either a snapshot
 * (the tool finishing a walk from a sample's stack copy, the benchmark,
 * synthetic stacks: a memcpy, inline) or a stopped live process
 * (process_vm_readv, in unwind_env_host.c). The arch is the host's unless
 * UWPROF_HOST_ARM64 is defined, which builds the arm64 core on any host for
 * synthetic-stack tests.
 */
#ifndef _UWPROF_UNWIND_ENV_HOST_H
#define _UWPROF_UNWIND_ENV_HOST_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

#ifndef BIT
#define BIT(n)		(1UL << (n))
#endif

#if defined(UWPROF_HOST_ARM64) || (defined(__aarch64__) && !defined(UWPROF_HOST_X86_64))
#define UWPROF_ENV_ARM64	1
#else
#define UWPROF_ENV_X86_64	1
#endif

/* One memory region copied out of a target: [start, start + size). */
struct uwprof_host_region {
	u64 start;
	u64 size;
	const u8 *data;
};

#define UWPROF_HOST_MAX_REGIONS	4

struct uwprof_host_env {
	int pid;		/* > 0: read this stopped process (no regions) */
	unsigned int nr_regions; /* else: read only these snapshot regions */
	struct uwprof_host_region region[UWPROF_HOST_MAX_REGIONS];
	u64 user_limit;		/* first address above user space */
	unsigned int va_bits;	/* arm64: bits kept by the PAC strip */
	u64 reads;		/* reads not from region 0, for the tests' figures */
	u64 read_errors;
	u64 fault_addr;		/* the first read that failed */
	/*
	 * Snapshots: reads outside every region (code the core inspects)
	 * go here when set; 0 or -EFAULT.
	 */
	int (*read_more)(void *arg, void *dst, u64 addr, size_t n);
	void *read_more_arg;
	/* The interrupted frame's registers by DWARF number, or NULL. */
	const u64 *gpr;
	unsigned int nr_gpr;
	/* The thread's pointer and id, for Python walks. */
	u64 tp;
	u32 tid;
};

/*
 * Every read the inline path below does not take: the process (pid > 0),
 * or snapshot regions after the first; 0 or -EFAULT. Counts them in reads.
 */
int uwprof_host_read_slow(struct uwprof_host_env *env, void *dst, u64 addr,
			  size_t n);

/* The core's largest single read: a signal frame's registers. */
#define UWPROF_HOST_READ_MAX	64

/*
 * Region 0 of a snapshot (the stack, in the benchmark) is read inline, a
 * bounds check and a copy, as the module's reader is a check and a load;
 * a process env leaves it empty. The rest goes through a buffer of our
 * own, so the core's destination never escapes into a call and its words
 * can stay in registers.
 */
static inline int uwprof_host_read(void *ctx, void *dst, u64 addr, size_t n)
{
	struct uwprof_host_env *env = ctx;
	const struct uwprof_host_region *r = &env->region[0];
	u64 o = addr - r->start;
	u8 buf[UWPROF_HOST_READ_MAX];

	/* o below size first: o + n cannot wrap then (n is small). */
	if (likely(o < r->size && o + n <= r->size)) {
		memcpy(dst, r->data + o, n);
		return 0;
	}
	if (n > sizeof(buf) || uwprof_host_read_slow(env, buf, addr, n))
		return -EFAULT;
	memcpy(dst, buf, n);
	return 0;
}

/* Deadlines of host walks (uwprof_unwind_req.deadline) are CLOCK_MONOTONIC ns. */
u64 uwprof_host_now(void);

#define UWPROF_ENV_READ(env, dst, addr, n)	uwprof_host_read((env), (dst), (addr), (n))
#define UWPROF_ENV_NOW(env)		uwprof_host_now()
#define UWPROF_ENV_USER_LIMIT(env)	(((struct uwprof_host_env *)(env))->user_limit)
#define UWPROF_ENV_STRIP_PAC(env, a)	uwprof_host_strip((env), (a))
#define UWPROF_ENV_GPR(env, regno, val)	uwprof_host_gpr((env), (regno), (val))
#define UWPROF_ENV_TP(env)		(((struct uwprof_host_env *)(env))->tp)

/* The words at base + off[i] (the kernel reads them in one window). */
static inline int uwprof_host_read_words(void *env, u64 base, u32 span,
					 const u32 *off, u64 *dst, u32 n)
{
	u32 i;

	(void)span;
	for (i = 0; i < n; i++)
		if (uwprof_host_read(env, &dst[i], base + off[i], 8))
			return -EFAULT;
	return 0;
}

#define UWPROF_ENV_READ_WORDS(env, base, span, off, dst, n)		\
	uwprof_host_read_words((env), (base), (span), (off), (dst), (n))
#define UWPROF_ENV_TID(env)		(((struct uwprof_host_env *)(env))->tid)

static inline bool uwprof_host_gpr(void *ctx, unsigned int regno, u64 *val)
{
	const struct uwprof_host_env *env = ctx;

	if (!env->gpr || regno >= env->nr_gpr)
		return false;
	*val = env->gpr[regno];
	return true;
}

static inline u64 uwprof_host_strip(void *ctx, u64 a)
{
	const struct uwprof_host_env *env = ctx;

	return env->va_bits >= 64 ? a : a & ((1ULL << env->va_bits) - 1);
}

#endif /* _UWPROF_UNWIND_ENV_HOST_H */

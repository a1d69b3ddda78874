// SPDX-License-Identifier: GPL-2.0
/*
 * The host environment's reads that are not inline: a ptrace-stopped
 * target with process_vm_readv(), one call per read, like the module's
 * copy_from_user_nofault() does per read, and the snapshot regions with
 * their fallback reader.
 */
#define _GNU_SOURCE
#include <sys/uio.h>
#include <time.h>

#include "unwind_env_host.h"

static int read_process(struct uwprof_host_env *env, void *dst, u64 addr,
			size_t n)
{
	struct iovec local = { .iov_base = dst, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };

	if (process_vm_readv(env->pid, &local, 1, &remote, 1, 0) != (ssize_t)n) {
		if (!env->read_errors++)
			env->fault_addr = addr;
		return -EFAULT;
	}
	return 0;
}

int uwprof_host_read_slow(struct uwprof_host_env *env, void *dst, u64 addr,
			  size_t n)
{
	unsigned int i;

	env->reads++;
	if (env->pid > 0)
		return read_process(env, dst, addr, n);
	for (i = 0; i < env->nr_regions; i++) {
		const struct uwprof_host_region *r = &env->region[i];

		if (addr >= r->start && n <= r->size && addr - r->start <= r->size - n) {
			memcpy(dst, r->data + (addr - r->start), n);
			return 0;
		}
	}
	if (env->read_more && !env->read_more(env->read_more_arg, dst, addr, n))
		return 0;
	if (!env->read_errors++)
		env->fault_addr = addr;
	return -EFAULT;
}

u64 uwprof_host_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (u64)t.tv_sec * 1000000000ULL + (u64)t.tv_nsec;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Live-process reader of the host environment: reads a ptrace-stopped
 * target with process_vm_readv(), one call per read, like the module's
 * copy_from_user_nofault() does per read.
 */
#define _GNU_SOURCE
#include <sys/uio.h>

#include "unwind_env_host.h"

int uwprof_host_read_process(struct uwprof_host_env *env, void *dst, u64 addr,
			     size_t n)
{
	struct iovec local = { .iov_base = dst, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };

	if (process_vm_readv(env->pid, &local, 1, &remote, 1, 0) != (ssize_t)n) {
		env->read_errors++;
		return -EFAULT;
	}
	return 0;
}

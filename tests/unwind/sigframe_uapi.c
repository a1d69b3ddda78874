// SPDX-License-Identifier: GPL-2.0
/*
 * Offsets of fp, sp and pc in the kernel uapi struct sigcontext
 * (<asm/sigcontext.h>), for test_sigframe.c; a unit of its own because the
 * uapi header and glibc's signal headers both define struct sigcontext.
 */
#include <stddef.h>
#include <asm/sigcontext.h>

void uapi_sigcontext_offsets(size_t *fp, size_t *sp, size_t *pc);

void uapi_sigcontext_offsets(size_t *fp, size_t *sp, size_t *pc)
{
#if defined(__x86_64__)
	*fp = offsetof(struct sigcontext, rbp);
	*sp = offsetof(struct sigcontext, rsp);
	*pc = offsetof(struct sigcontext, rip);
#elif defined(__aarch64__)
	*fp = offsetof(struct sigcontext, regs[29]);
	*sp = offsetof(struct sigcontext, sp);
	*pc = offsetof(struct sigcontext, pc);
#endif
}

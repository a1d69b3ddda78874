// SPDX-License-Identifier: GPL-2.0
/*
 * The image the churn's exec children run (uwprof_stress churn
 * exec=...): a static program without libc that exits at once. A fresh
 * address space is all the exec has to bring: the module sees the exec
 * and the exit, and nothing else slows the churn down (a static glibc
 * program measured half the churn rate in a TCG guest under sampling).
 * Built with -nostdlib -static.
 */
void _start(void);

void _start(void)
{
#if defined(__x86_64__)
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
#elif defined(__aarch64__)
	__asm__ volatile("mov x8, #93\n\tmov x0, #0\n\tsvc #0");
#else
#error "uwprof tests run on x86_64 and arm64"
#endif
	for (;;)
		;
}

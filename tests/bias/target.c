// SPDX-License-Identifier: GPL-2.0
/* Prints where its own function and its library's function are mapped. */
#include <stdio.h>
#include <unistd.h>

void *bias_lib_fn(void);

__attribute__((noinline)) void bias_exe_fn(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	char c;

	printf("bias_exe_fn %p\n", (void *)bias_exe_fn);
	printf("bias_lib_fn_body %p\nend\n", bias_lib_fn());
	fflush(stdout);
	return read(0, &c, 1) < 0;
}

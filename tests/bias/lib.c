// SPDX-License-Identifier: GPL-2.0
/* The library half of target.c: returns its own function's address. */
__attribute__((noinline, visibility("hidden"))) void *bias_lib_fn_body(void)
{
	return (void *)bias_lib_fn_body;
}

void *bias_lib_fn(void)
{
	return bias_lib_fn_body();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * uwprof module entry: registers the device on load and tears everything
 * down on unload. Process context only.
 */
#include <linux/module.h>

#include "internal.h"

static int __init uwprof_init(void)
{
	return uwprof_dev_init();
}

static void __exit uwprof_exit(void)
{
	uwprof_dev_exit();
}

module_init(uwprof_init);
module_exit(uwprof_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sampling profiler with in-kernel DWARF-table unwinding of user stacks");

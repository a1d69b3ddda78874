// SPDX-License-Identifier: GPL-2.0
/*
 * uwprof module entry: parameters, load and unload. Process context only.
 *
 * Unload is safe at any moment: open files and mappings of the rings pin
 * the module (the device's fops owner), so by the time uwprof_exit() runs
 * no session exists; what remains are the probes, the cpuhp state and RCU
 * callbacks, each torn down here.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>

#include "compat.h"
#include "internal.h"

/* Bytes of tables and mapping lists all sessions may hold together. */
unsigned long uwprof_table_mem_max = 512UL << 20;
module_param_named(table_mem_max, uwprof_table_mem_max, ulong, 0644);
MODULE_PARM_DESC(table_mem_max,
		 "Bytes of unwind tables and mappings all sessions may hold (default 512 MiB)");

/*
 * Share of each CPU's time the stack walks may take, as perf's
 * perf_cpu_time_max_percent bounds its own handlers: a deep stack at a high
 * rate on a slow (or debug) kernel would otherwise starve the CPU.
 */
unsigned int uwprof_cpu_max_percent = 25;

static int uwprof_cpu_max_percent_set(const char *val,
				      const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 100);
}

static const struct kernel_param_ops uwprof_cpu_max_percent_ops = {
	.set = uwprof_cpu_max_percent_set,
	.get = param_get_uint,
};

module_param_cb(cpu_max_percent, &uwprof_cpu_max_percent_ops,
		&uwprof_cpu_max_percent, 0644);
MODULE_PARM_DESC(cpu_max_percent,
		 "Percent of each CPU's time stack walks may use per 10 ms; over it samples are skipped and counted (1-100, default 25; 100: no limit)");

static int __init uwprof_init(void)
{
	int ret;

	ret = uwprof_sample_init();
	if (ret)
		return ret;
	ret = uwprof_lifecycle_init();
	if (ret)
		goto sample_exit;
	ret = uwprof_nmi_test_init();
	if (ret)
		goto lifecycle_exit;
	ret = uwprof_dev_init();
	if (ret)
		goto nmi_test_exit;
	return 0;

nmi_test_exit:
	uwprof_nmi_test_exit();
lifecycle_exit:
	uwprof_lifecycle_exit();
sample_exit:
	uwprof_sample_exit();
	return ret;
}

static void __exit uwprof_exit(void)
{
	uwprof_dev_exit();
	uwprof_nmi_test_exit();
	uwprof_lifecycle_exit();
	uwprof_sample_exit();
	/* Mapping lists dropped by the probes are freed by RCU callbacks. */
	rcu_barrier();
}

module_init(uwprof_init);
module_exit(uwprof_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sampling profiler with in-kernel DWARF-table unwinding of user stacks");

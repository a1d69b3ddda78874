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

/*
 * Time one stack walk may take, microseconds: the budget above is looked
 * at between walks, so without a limit within them a crafted stack of
 * max_depth frames costs milliseconds in NMI. Walks of max_depth (8192)
 * frames that miss the rule cache on every frame take 21 ns a frame on
 * current x86 hardware ('make -C tests/unwind bench'): about 170 us, so
 * 500 us stops no honest stack. Off CPU the walk holds the runqueue lock
 * with interrupts off and keeps at most UWPROF_OFF_CPU_DEPTH (512) frames,
 * about 11 us at that rate: 100 us leaves the same margin and keeps other
 * CPUs' wakeups of this one from waiting longer.
 */
unsigned int uwprof_walk_max_us = 500;
unsigned int uwprof_offcpu_walk_max_us = 100;

static int uwprof_walk_max_us_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 100000);
}

static const struct kernel_param_ops uwprof_walk_max_us_ops = {
	.set = uwprof_walk_max_us_set,
	.get = param_get_uint,
};

module_param_cb(walk_max_us, &uwprof_walk_max_us_ops, &uwprof_walk_max_us, 0644);
MODULE_PARM_DESC(walk_max_us,
		 "Microseconds one sample's stack walk and snapshot may take; the walk then stops with UWPROF_STOP_TIME (1-100000, default 500)");
module_param_cb(offcpu_walk_max_us, &uwprof_walk_max_us_ops,
		&uwprof_offcpu_walk_max_us, 0644);
MODULE_PARM_DESC(offcpu_walk_max_us,
		 "Microseconds one off-CPU stack walk may take, with the runqueue lock held (1-100000, default 100)");

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
	/* No session is left: only MMAP callbacks may still be queued. */
	uwprof_mmap_exit();
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

// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only check that the sample path reads no user memory through page
 * tables that are not current's, built only with UWPROF_TEST_MM=1
 * (tests/security: uwprof_security mm). The window it guards, an NMI in
 * __schedule() after switch_mm() loaded next's tables while current is
 * still prev, cannot be hit on demand, so this builds the same state: a
 * kernel thread loads process B's mm with kthread_use_mm(), then, with
 * interrupts off, names process A's mm as current's, as prev's still is
 * in that window, and reads through the walk's reader and the snapshot's.
 *
 * Process A writes "PID ADDR" to /sys/module/uwprof/parameters/test_mm:
 * B is PID, ADDR a word both map. Reading the file gives the outcome of
 * each read, "<errno>:<word as hex>", the word 0 when nothing was read:
 *	walk_own=... walk_win=... snap_own=... snap_win=...
 * where "own" is B's mm as current's (the reads must see B's word) and
 * "win" is A's (they must be refused).
 *
 * Contexts: the parameter's set and get in process context under the
 * parameter lock; the thread in process context, interrupts off for the
 * reads.
 */
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "unwind_env_kernel.h"

struct uwprof_mm_test_read {
	int err;
	u64 word;
};

struct uwprof_mm_test {
	struct mm_struct *a, *b;
	u64 addr;
	struct completion done;
	struct uwprof_mm_test_read walk_own, walk_win, snap_own, snap_win;
};

/* The last run's outcome; the parameter lock serializes runs and reads. */
static struct uwprof_mm_test uwprof_mm_test_last;
static bool uwprof_mm_test_ran;

/* Both readers, as the sample path calls them: faults off, interrupts off. */
static void uwprof_mm_test_reads(struct uwprof_mm_test *t,
				 struct uwprof_mm_test_read *walk,
				 struct uwprof_mm_test_read *snap)
{
	struct uwprof_kenv kenv = {};

	pagefault_disable();
	walk->err = uwprof_kenv_read(&kenv, &walk->word, t->addr, 8);
	snap->err = uwprof_compat_user_read_nofault(&snap->word,
						    u64_to_user_ptr(t->addr), 8);
	pagefault_enable();
}

static int uwprof_mm_test_thread(void *data)
{
	struct uwprof_mm_test *t = data;
	struct task_struct *tsk = current;

	kthread_use_mm(t->b);
	local_irq_disable();
	uwprof_mm_test_reads(t, &t->walk_own, &t->snap_own);
	local_irq_enable();

	/* kthread_use_mm()'s own locking: task_lock, then interrupts off. */
	task_lock(tsk);
	local_irq_disable();
	tsk->mm = t->a;
	uwprof_mm_test_reads(t, &t->walk_win, &t->snap_win);
	tsk->mm = t->b;
	local_irq_enable();
	task_unlock(tsk);
	kthread_unuse_mm(t->b);

	complete(&t->done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int uwprof_mm_test_set(const char *val, const struct kernel_param *kp)
{
	struct uwprof_mm_test *t = &uwprof_mm_test_last;
	struct task_struct *b, *k;
	unsigned long long addr;
	int pid, ret;

	if (sscanf(val, "%d %llx", &pid, &addr) != 2 || !addr)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	uwprof_mm_test_ran = false;
	t->addr = addr;
	init_completion(&t->done);
	rcu_read_lock();
	b = pid_task(find_vpid(pid), PIDTYPE_PID);
	if (b)
		get_task_struct(b);
	rcu_read_unlock();
	if (!b)
		return -ESRCH;
	t->b = get_task_mm(b);
	put_task_struct(b);
	t->a = get_task_mm(current);
	ret = -EINVAL;
	if (!t->a || !t->b || t->a == t->b)
		goto put_mm;
	k = kthread_run(uwprof_mm_test_thread, t, "uwprof_mm_test");
	ret = PTR_ERR_OR_ZERO(k);
	if (ret)
		goto put_mm;
	wait_for_completion(&t->done);
	kthread_stop(k);
	uwprof_mm_test_ran = true;
put_mm:
	if (t->a)
		mmput(t->a);
	if (t->b)
		mmput(t->b);
	t->a = NULL;
	t->b = NULL;
	return ret;
}

static int uwprof_mm_test_get(char *buf, const struct kernel_param *kp)
{
	const struct uwprof_mm_test *t = &uwprof_mm_test_last;

	if (!uwprof_mm_test_ran)
		return scnprintf(buf, PAGE_SIZE, "none\n");
	return scnprintf(buf, PAGE_SIZE,
			 "walk_own=%d:%llx walk_win=%d:%llx snap_own=%d:%llx snap_win=%d:%llx\n",
			 t->walk_own.err, t->walk_own.word,
			 t->walk_win.err, t->walk_win.word,
			 t->snap_own.err, t->snap_own.word,
			 t->snap_win.err, t->snap_win.word);
}

static const struct kernel_param_ops uwprof_mm_test_ops = {
	.set = uwprof_mm_test_set,
	.get = uwprof_mm_test_get,
};

module_param_cb(test_mm, &uwprof_mm_test_ops, NULL, 0600);
MODULE_PARM_DESC(test_mm,
		 "Test only: \"PID ADDR\" reads ADDR through PID's page tables while the writer's mm is current's (UWPROF_TEST_MM=1 builds)");

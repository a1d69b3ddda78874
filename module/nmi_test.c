// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only NMI source of samples, built only with UWPROF_TEST_NMI=1 on
 * x86_64 (tests/vm/run --nmi). The QEMU/TCG guests have no PMU, so
 * hardware cycles, the one sample source that runs in NMI context, never
 * fires there; the host injects NMIs instead (QMP inject-nmi) and this
 * handler runs the very sample path the perf overflow handler runs.
 *
 * It claims every NMI it sees. The kernel calls every NMI_LOCAL handler
 * for each NMI, so claiming takes nothing from the perf or backtrace
 * handlers; what it hides is the "unknown reason" report (and the SERR and
 * IOCHK checks) of NMIs nobody else claimed, which in these guests are the
 * injected ones. Not for production kernels.
 *
 * Contexts: the handler runs in NMI; init and exit in process context at
 * module load and unload.
 */
#include <linux/rculist.h>
#include <asm/nmi.h>

#include "internal.h"

/*
 * One sample for every sampling session, as each session's own perf
 * handler would take it. Context: NMI, possibly inside another session's
 * cpu-clock handler on this CPU. A sampler lives until a grace period
 * after its STOP, a session until one after its close.
 */
static int uwprof_nmi_test_handler(unsigned int type, struct pt_regs *regs)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		/* Not rate-driven: no period to weigh the sample by. */
		if (sp)
			uwprof_sample_take(sp, regs, 0);
	}
	rcu_read_unlock();
	return NMI_HANDLED;
}

int uwprof_nmi_test_init(void)
{
	return register_nmi_handler(NMI_LOCAL, uwprof_nmi_test_handler, 0,
				    "uwprof_test");
}

/* unregister_nmi_handler() waits until no handler runs any more. */
void uwprof_nmi_test_exit(void)
{
	unregister_nmi_handler(NMI_LOCAL, "uwprof_test");
}

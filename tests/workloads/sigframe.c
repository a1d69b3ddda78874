// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: a signal handler running on the interrupted stack.
 * sig_spin loops; an interval timer delivers SIGALRM every 4 ms and the
 * handler on_alarm spends about 2 ms of CPU time in sig_work (CPU, not
 * wall time: on a loaded host a guest gets a fraction of each wall
 * millisecond, and the leaf set would shrink with it). A sample in
 * sig_work must unwind through the kernel's signal frame (the sigreturn
 * trampoline: libc's __restore_rt on x86_64, the vDSO's
 * __kernel_rt_sigreturn on arm64) back into sig_spin and main.
 *
 * Usage: sigframe [SECONDS]
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "acc.h"

volatile uint64_t acc_sink;
static volatile sig_atomic_t ticks;
/* Set while sig_spin runs: only signals that interrupt it do the work. */
static volatile sig_atomic_t spinning;

/*
 * Bursts of work between reads of the clock. A CPU-time clock has no vDSO
 * path: each read is a system call, which an emulated guest makes slowly,
 * and samples taken in it have the clock, not sig_work, for their leaf.
 * The burst doubles until a handler reads the clock at most 16 times.
 */
static unsigned int burst = 2000;

/* About 2 ms of CPU per signal, however fast or loaded the machine. */
ACC_NOINLINE static uint64_t sig_work(uint64_t x)
{
	double end = acc_cpu_now() + 0.002;
	unsigned int reads = 0;

	do {
		x = acc_burn(x, burst);
		reads++;
	} while (acc_cpu_now() < end);
	if (reads > 16 && burst < 1u << 24)
		burst *= 2;
	return x;
}

ACC_NOINLINE static void on_alarm(int sig)
{
	ticks++;
	if (spinning)
		acc_sink += sig_work(acc_sink + (uint64_t)sig);
}

/*
 * No calls in the loop: the timer's tick count ends it. A slow machine
 * may deliver a signal before the loop starts or after it ends (on the
 * way back from setitimer, say); 'spinning' keeps the handler's work to
 * the signals that interrupt sig_spin itself, so the expected chain has
 * one shape.
 */
ACC_NOINLINE static void sig_spin(int limit)
{
	uint64_t x = 0;

	spinning = 1;
	while (ticks < limit)
		x = acc_burn(x, 1000);
	spinning = 0;
	acc_sink += x;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 4000 }, { 0, 4000 } };
	int limit = (int)(acc_seconds(argc, argv, 1) * 250);
	struct itimerval off;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return 1;
	sig_spin(limit);
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
	return 0;
}

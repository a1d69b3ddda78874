// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: C++ throwing and catching. cx_inner throws through
 * cx_outer, whose local Guard runs cx_dtor_work while the exception unwinds
 * (the landing pad runs in cx_outer's frame), and cx_run catches it and
 * runs cx_catch_work in the handler. Two hot leaves:
 *   main > cx_run > cx_catch_work
 *   main > cx_run > cx_outer > cx_dtor_work
 * The leaves do far more work than a throw costs, even where the unwinder
 * in libgcc runs slowly (emulated guests), so most samples land in them.
 * The workload's functions have C linkage so their names read the same in
 * every symbolizer, demangling or not.
 *
 * Usage: cxxthrow [SECONDS]
 */
#include <cstdint>

#include "acc.h"

volatile uint64_t acc_sink;

struct CxError {
	uint64_t v;
};

extern "C" {

ACC_NOINLINE uint64_t cx_dtor_work(uint64_t x)
{
	return acc_burn(x, 1000000);
}

ACC_NOINLINE uint64_t cx_catch_work(uint64_t x)
{
	return acc_burn(x, 1000000);
}

}

struct Guard {
	uint64_t x;
	~Guard()
	{
		acc_sink += cx_dtor_work(x);
	}
};

extern "C" {

ACC_NOINLINE void cx_inner(uint64_t x)
{
	if (acc_sink != 1)	// always, but the compiler cannot know
		throw CxError{ x };
}

ACC_NOINLINE uint64_t cx_outer(uint64_t x)
{
	Guard g{ x };

	cx_inner(x + 1);
	return x;
}

ACC_NOINLINE void cx_run(double secs)
{
	double end = acc_now() + secs;

	while (acc_now() < end) {
		try {
			acc_sink += cx_outer(acc_sink);
		} catch (const CxError &e) {
			acc_sink += cx_catch_work(e.v);
		}
	}
}

}

int main(int argc, char **argv)
{
	cx_run(acc_seconds(argc, argv, 1));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: a library loaded at run time with dlopen (after the
 * profiler attached, so its mapping is new to it) and called through a
 * pointer from dlsym. Hot leaf: accdl_leaf, chain
 * main > dl_run > accdl_outer > accdl_leaf.
 *
 * Usage: dlopen [SECONDS]   (libaccdl.so is looked for beside the program)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "acc.h"

volatile uint64_t acc_sink;

ACC_NOINLINE static void dl_run(uint64_t (*outer)(uint64_t), double secs)
{
	double end = acc_now() + secs;

	while (acc_now() < end)
		acc_sink += outer(acc_sink);
}

int main(int argc, char **argv)
{
	char path[4096];
	const char *slash = strrchr(argv[0], '/');
	int dirlen = slash ? (int)(slash - argv[0]) : 1;
	const char *dir = slash ? argv[0] : ".";
	uint64_t (*outer)(uint64_t);
	void *h;

	snprintf(path, sizeof(path), "%.*s/libaccdl.so", dirlen, dir);
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&outer = dlsym(h, "accdl_outer");
	if (!outer) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	dl_run(outer, acc_seconds(argc, argv, 1));
	dlclose(h);
	return 0;
}

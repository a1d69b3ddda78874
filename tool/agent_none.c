// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent' in a build without libmicrohttpd (the arm64 cross-build's
 * sysroot has none): says so instead of serving.
 */
#include <stdio.h>

#include "agent.h"
#include "exit_status.h"

int uwprof_cmd_agent(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr,
		"uwprof agent: this uwprof was built without libmicrohttpd (install libmicrohttpd-dev and rebuild)\n");
	return UWPROF_EX_ERROR;
}

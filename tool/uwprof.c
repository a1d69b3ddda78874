// SPDX-License-Identifier: GPL-2.0
/*
 * The uwprof command: finds the subcommand named by argv[1] in one table and
 * runs it with the remaining arguments. Each subcommand lives in its own
 * file with a header declaring its entry point; adding one is an #include
 * and one line in cmds[].
 */
#include <stdio.h>
#include <string.h>

#include "exit_status.h"
#include "agent.h"
#include "otlp.h"
#include "record.h"
#include "report.h"
#include "script.h"
#include "table_cmd.h"

struct uwprof_cmd {
	const char	*name;
	int		(*fn)(int argc, char **argv);	/* argv[0]: its name */
	const char	*summary;
};

static int cmd_help(int argc, char **argv);

#ifndef UWPROF_VERSION
#define UWPROF_VERSION	"unknown"
#endif

static const struct uwprof_cmd cmds[] = {
	{ "table", uwprof_cmd_table,
	  "compile an object's unwind info into a table (text or blob)" },
	{ "record", uwprof_cmd_record,
	  "sample call stacks of a command, processes or the system to a file" },
	{ "agent", uwprof_cmd_agent,
	  "sample continuously; serve pprof profiles over HTTP" },
	{ "status", uwprof_cmd_status,
	  "is the module loaded; its ABI, capabilities, limits and counters" },
	{ "report", uwprof_cmd_report,
	  "top functions, folded stacks, pprof, OTLP or SVG flamegraph of a profile" },
	{ "script", uwprof_cmd_script,
	  "print every sample of a profile in 'perf script' layout" },
	{ "help", cmd_help, "show the subcommands, or one's usage" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct uwprof_cmd *cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: uwprof <command> [options]\n"
		"       uwprof --version\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n%s\n",
		"'uwprof help <command>' or 'uwprof <command> --help' shows a command's options.");
}

static int cmd_help(int argc, char **argv)
{
	const struct uwprof_cmd *c;
	char *hv[] = { NULL, "--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	c = cmd_find(argv[1]);
	if (!c || c->fn == cmd_help) {
		if (!c)
			fprintf(stderr, "uwprof: unknown command '%s'\n", argv[1]);
		usage(c ? stdout : stderr);
		return c ? 0 : UWPROF_EX_USAGE;
	}
	hv[0] = argv[1];
	return c->fn(2, hv);
}

int main(int argc, char **argv)
{
	const struct uwprof_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return UWPROF_EX_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version")) {
		/* and the formats whose published versions it writes */
		printf("uwprof %s\nOTLP profiles: opentelemetry-proto %s (%s)\n",
		       UWPROF_VERSION, UWPROF_OTLP_PROTO_VERSION,
		       UWPROF_OTLP_PROTO_COMMIT);
		return fflush(stdout) ? UWPROF_EX_ERROR : UWPROF_EX_OK;
	}
	c = cmd_find(argv[1]);
	if (!c) {
		fprintf(stderr, "uwprof: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return UWPROF_EX_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Folded stacks (the FlameGraph input format): one line per distinct stack,
 * frames root to leaf joined by ';', a space, the number of samples. The
 * root frame is the command name (as stackcollapse-perf.pl does); kernel
 * frames follow the user leaf with an "_[k]" suffix. Lines are sorted.
 * Also used by the SVG writer. Called from the report command.
 */
#ifndef UWPROF_TOOL_FOLDED_H
#define UWPROF_TOOL_FOLDED_H

#include <stdint.h>
#include <stdio.h>

struct uwprof_rep;

struct uwprof_folded_stack {
	char		*line;		/* frames joined by ';', no count */
	/* samples, or ns for a profile with off-CPU samples (report_model.h) */
	uint64_t	count;
};

/* Distinct stacks, sorted by line. Returns 0 or -ENOMEM. */
int uwprof_folded_collect(const struct uwprof_rep *r,
			  struct uwprof_folded_stack **out, size_t *nr);
void uwprof_folded_free(struct uwprof_folded_stack *v, size_t nr);

/* Write the folded text. Returns 0 or -errno. */
int uwprof_folded_write(const struct uwprof_rep *r, FILE *f);

#endif /* UWPROF_TOOL_FOLDED_H */

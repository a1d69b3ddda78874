/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interactive SVG flamegraph: one self-contained file (inline script for
 * zoom on click, search, and hover details), frames coloured by the object
 * they belong to. Called from the report command.
 */
#ifndef UWPROF_TOOL_SVG_H
#define UWPROF_TOOL_SVG_H

#include <stdio.h>

struct uwprof_rep;

/* Write the SVG to 'f'; 'title' heads it. Returns 0 or a negative errno. */
int uwprof_svg_write(const struct uwprof_rep *r, FILE *f, const char *title);

#endif /* UWPROF_TOOL_SVG_H */

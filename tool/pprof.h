/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pprof output: the profile.proto message (github.com/google/pprof,
 * proto/profile.proto) encoded by hand and gzip-compressed with zlib.
 * Sample types samples/count and cpu/nanoseconds; locations carry the
 * sampled addresses and their mapping (with build-id), functions carry
 * names and, with --lines, file and line. Called from the report command.
 */
#ifndef UWPROF_TOOL_PPROF_H
#define UWPROF_TOOL_PPROF_H

#include <stdio.h>

struct uwprof_rep;

/* Write the gzipped profile to 'f'. Returns 0 or a negative errno. */
int uwprof_pprof_write(const struct uwprof_rep *r, FILE *f);

#endif /* UWPROF_TOOL_PPROF_H */

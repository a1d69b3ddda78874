/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug files by build-id from the debuginfod servers named in
 * DEBUGINFOD_URLS, for the symbolizer when an object has no symbols on
 * this machine. libdebuginfod does the fetching and caching (its cache
 * directory, DEBUGINFOD_CACHE_PATH; its timeout, DEBUGINFOD_TIMEOUT). It
 * is loaded with dlopen on first use, as libdw itself does, so the tool
 * neither needs libcurl nor loads it when DEBUGINFOD_URLS is unset, and
 * the arm64 build links nothing more. Called from the symbolizer only;
 * single-threaded.
 */
#ifndef UWPROF_TOOL_DEBUGINFOD_H
#define UWPROF_TOOL_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

struct uwprof_dbgd;

/* NULL only when out of memory; nothing is loaded or asked yet. */
struct uwprof_dbgd *uwprof_dbgd_new(void);
void uwprof_dbgd_free(struct uwprof_dbgd *d);

/*
 * Ask for the debug file of the object with this build-id. Returns 0 with
 * '*path' (malloc'd) naming the file in libdebuginfod's cache, -EOPNOTSUPP
 * when DEBUGINFOD_URLS is unset or empty (nothing asked, no message), or
 * another negative errno with one line in 'msg'. A build-id that failed
 * once fails again at once, without asking the servers again, so an
 * unreachable server costs its timeout once per object; the message is
 * then empty.
 */
int uwprof_dbgd_find(struct uwprof_dbgd *d, const uint8_t *build_id,
		     size_t size, char **path, char *msg, size_t msglen);

#endif /* UWPROF_TOOL_DEBUGINFOD_H */

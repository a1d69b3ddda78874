/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference uwprof cares about lives here, so the .c
 * files stay free of #if. Supported: 6.1 and 6.12 (Debian 12 and its
 * backports), x86_64 and arm64.
 */
#ifndef _UWPROF_COMPAT_H
#define _UWPROF_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>

#endif /* _UWPROF_COMPAT_H */

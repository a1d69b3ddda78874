/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared by the uwprof module's files (device, sessions,
 * tables, rings, sampling, lifecycle). Not seen by userspace.
 */
#ifndef _UWPROF_INTERNAL_H
#define _UWPROF_INTERNAL_H

#include <linux/types.h>

int uwprof_dev_init(void);
void uwprof_dev_exit(void);

#endif /* _UWPROF_INTERNAL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/* Interface between the live test target and its shared library. */
#ifndef _UWPROF_TARGET_H
#define _UWPROF_TARGET_H

/* Calls cb(n - 1)-like recursion back into the caller's object. */
int uwt_lib_recurse(int n, int (*cb)(int));
/* Burns CPU in the library (a leaf in another object). */
unsigned long uwt_lib_spin(unsigned long rounds);

#endif /* _UWPROF_TARGET_H */

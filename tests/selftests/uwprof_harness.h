/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftest harness with a longer limit per test. Its 30 s is too
 * short where these tests also run: a debug (KASAN, lockdep) arm64 kernel
 * under TCG, where starting one test program takes seconds and a test
 * that samples for 4 s of its own ran past 30 s. A test that hangs is
 * still stopped, later.
 */
#ifndef UWPROF_HARNESS_H
#define UWPROF_HARNESS_H

#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#endif

# SPDX-License-Identifier: GPL-2.0
"""Shared by the Python accuracy workloads: the run time (the last
argument, seconds) and a leaf that spins in pure Python, so that its
samples are taken while the interpreter runs Python code."""
import sys
import time


def seconds():
    return float(sys.argv[-1]) if len(sys.argv) > 1 else 1.5


def deadline():
    return time.monotonic() + seconds()


def leaf(n=2000):
    s = 0
    for i in range(n):
        s += i * i
    return s

# SPDX-License-Identifier: GPL-2.0
"""Python recursion DEPTH deep (argv[1]), spinning at the bottom:
<module> main rec*DEPTH leaf."""
import sys
import time

from common import deadline, leaf


def rec(n, end):
    if n > 1:
        return rec(n - 1, end)
    while time.monotonic() < end:
        leaf()
    return 0


def main():
    depth = int(sys.argv[1])
    sys.setrecursionlimit(depth + 100)
    rec(depth, deadline())


main()

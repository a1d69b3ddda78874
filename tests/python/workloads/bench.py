# SPDX-License-Identifier: GPL-2.0
"""Fixed work at a fixed Python stack depth, for tests/bench/python-cost:
DEPTH frames of rec (argv[1]), then ROUNDS (argv[2]) calls of leaf at the
bottom. Prints its own wall and CPU time."""
import sys
import time

from common import leaf


def rec(n, rounds):
    if n > 1:
        return rec(n - 1, rounds)
    for _ in range(rounds):
        leaf(100)
    return 0


def main():
    depth, rounds = int(sys.argv[1]), int(sys.argv[2])
    sys.setrecursionlimit(depth + 100)
    w0, c0 = time.monotonic(), time.process_time()
    rec(depth, rounds)
    print('pybench: depth %d rounds %d wall %.6f cpu %.6f' %
          (depth, rounds, time.monotonic() - w0, time.process_time() - c0))


main()

# SPDX-License-Identifier: GPL-2.0
"""A generator driven by a for loop and one by next(): each resumption
runs the generator's frame above its consumer:
<module> main consume produce leaf, <module> main step produce leaf."""
import time

from common import deadline, leaf


def produce():
    while True:
        yield leaf(500)


def consume(end):
    for _ in produce():
        if time.monotonic() >= end:
            return


def step(g):
    return next(g)


def main():
    end = deadline()
    half = (time.monotonic() + end) / 2
    consume(half)
    g = produce()
    while time.monotonic() < end:
        step(g)


main()

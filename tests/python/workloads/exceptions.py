# SPDX-License-Identifier: GPL-2.0
"""Raising and catching, the handler doing the work:
<module> main catcher thrower leaf (before the raise),
<module> main catcher handle leaf (in the handler)."""
import time

from common import deadline, leaf


class Oops(Exception):
    pass


def thrower():
    leaf(300)
    raise Oops()


def handle():
    return leaf(300)


def catcher():
    try:
        thrower()
    except Oops:
        handle()


def main():
    end = deadline()
    while time.monotonic() < end:
        catcher()


main()

# SPDX-License-Identifier: GPL-2.0
"""Four threads, each with its own chain (worker_K calls level K times):
Thread._bootstrap Thread._bootstrap_inner Thread.run worker level*K leaf."""
import threading
import time

from common import deadline, leaf


def level(k, end):
    if k > 1:
        return level(k - 1, end)
    while time.monotonic() < end:
        leaf(500)


def worker(k, end):
    level(k, end)


def main():
    end = deadline()
    ts = [threading.Thread(target=worker, args=(k, end)) for k in (1, 2, 3, 4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


main()

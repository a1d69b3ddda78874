# SPDX-License-Identifier: GPL-2.0
"""C calling back into Python: sorted(key=...) and map(), each a nested
eval invocation under the interpreter's own C frames:
<module> main by_sort [C] sort_key leaf, <module> main by_map [C] map_fn leaf."""
import time

from common import deadline, leaf


def sort_key(x):
    return leaf(300) + x


def map_fn(x):
    return leaf(300) - x


def by_sort():
    return sorted(range(20), key=sort_key)


def by_map():
    return list(map(map_fn, range(20)))


def main():
    end = deadline()
    while time.monotonic() < end:
        by_sort()
        by_map()


main()

# SPDX-License-Identifier: GPL-2.0
#
# The live process tests/tool/pycode-test.c reads code objects from: runs a
# few kinds of Python frames (nested functions, a method, a lambda, a
# function with a non-ASCII name, a generator), prints what CPython itself
# says of each frame and its code object, then sleeps until killed.
#
# One line per frame, innermost first, tab-separated:
#   frame ADDR LASTI LINENO SIZE FIRSTLINENO QUALNAME_ADDR FILENAME_ADDR
#         QUALNAME FILENAME
# then per distinct code object its co_lines(), in code units:
#   lines ADDR START:END:LINE ...   (LINE -1: None)
# then "ready".
import sys
import time


def report():
    out = sys.stdout.buffer
    seen = {}
    f = sys._getframe(1)
    while f is not None:
        co = f.f_code
        seen[id(co)] = co
        out.write(('frame\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n' % (
            id(co), f.f_lasti // 2, f.f_lineno, len(co.co_code) // 2,
            co.co_firstlineno, id(co.co_qualname), id(co.co_filename),
            co.co_qualname, co.co_filename)).encode('utf-8'))
        f = f.f_back
    for addr, co in seen.items():
        ranges = ['%d:%d:%d' % (s // 2, e // 2, -1 if ln is None else ln)
                  for s, e, ln in co.co_lines()]
        out.write(('lines\t%d\t%s\n' % (addr, ' '.join(ranges))).encode())
    out.write(b'ready\n')
    out.flush()
    while True:
        time.sleep(3600)


class Widget:
    def method(self, n):
        if n:
            return self.method(n - 1)
        return größe_ñ()


def größe_ñ():
    x = [1, 2, 3]
    return sum(y for y in x if report())


def outer():
    def inner():
        call = lambda: Widget().method(1)  # noqa: E731
        return call()
    return inner()


outer()

# SPDX-License-Identifier: GPL-2.0
# Run by gdb (-x) on a stopped process: print sp and every frame's pc, type
# and function, newest first, for test_live's frame-by-frame comparison.
import gdb

gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
gdb.execute("set backtrace limit 8192")
f = gdb.newest_frame()
print("UWSP %#x" % int(f.read_register("sp")))
while f is not None:
    print("UWF %#x %d %s" % (f.pc(), f.type(), f.name() or "??"))
    f = f.older()

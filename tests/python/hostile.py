# SPDX-License-Identifier: GPL-2.0
"""A CPython 3.11 program that lies about its own frames while it is
sampled: for SECONDS (argv[1], default 5) it writes garbage into the
interpreter state the profiler reads -- its callers' frames (code object,
previous frame, instruction pointer, entry flag) and the invocations'
cframes -- spins a little in pure Python, then puts everything back before
any of it is used again, so the program itself runs on unharmed and exits
0. The garbage: zero, kernel and unmapped addresses, misaligned pointers,
cycles (a frame naming itself or a later frame as its caller), a bytes
buffer dressed as a code object with a huge size, and valid objects of
other types. Prints 'hostile: N rounds'."""
import ctypes
import gc
import random
import sys
import time

# CPython 3.11's layouts (Include/internal/pycore_frame.h,
# Include/cpython/pystate.h, Include/cpython/code.h), both arches.
FR_CODE, FR_PREVIOUS, FR_INSTR, FR_ENTRY = 32, 48, 56, 68
TS_CFRAME, CF_PREVIOUS = 56, 16
PYFRAME_F_FRAME = 24            # PyFrameObject.f_frame

assert sys.version_info[:2] == (3, 11), sys.version

rng = random.Random(1)
fake = ctypes.create_string_buffer(512)
# ob_refcnt, ob_type = the code type, ob_size = 2**31: every offset fits.
ctypes.memmove(fake, (ctypes.c_uint64 * 3)(1 << 40, id(type((lambda: 0).__code__)),
                                           1 << 31), 24)
FAKE = ctypes.addressof(fake)


def word(addr):
    return ctypes.c_uint64.from_address(addr)


def interp_frame(frame):
    return word(id(frame) + PYFRAME_F_FRAME).value


def garbage(frames):
    return rng.choice([
        0, 1, 8, 0xffff888000000000, 0xfffffffffffff000, 0x7ffffffff000,
        FAKE, FAKE + 4, id(rng), id(frames), rng.choice(frames),
        rng.choice(frames) + 8, rng.getrandbits(64), rng.getrandbits(47)])


def lie(frames, cframes):
    """Scribble, return the saved words to put back."""
    saved = []
    for _ in range(rng.randrange(1, 6)):
        if cframes and rng.randrange(4) == 0:
            addr = rng.choice(cframes) + CF_PREVIOUS
        else:
            addr = rng.choice(frames) + rng.choice(
                (FR_CODE, FR_PREVIOUS, FR_INSTR, FR_ENTRY - 4))
        w = word(addr)
        saved.append((w, w.value))
        w.value = garbage(frames)
    return saved


def spin(frames, cframes, rounds):
    for _ in range(rounds):
        saved = lie(frames, cframes)
        s = 0
        for i in range(300):
            s += i * i
        for w, v in reversed(saved):
            w.value = v
    return s


def leaf(deadline):
    # The callers' frames and the cframes of the invocations around us.
    frames = []
    f = sys._getframe(1)
    while f is not None:
        frames.append(interp_frame(f))
        f = f.f_back
    ts = ctypes.pythonapi.PyThreadState_Get
    ts.restype = ctypes.c_void_p
    cf = word(ts() + TS_CFRAME).value
    cframes = []
    while cf and len(cframes) < 16:
        nxt = word(cf + CF_PREVIOUS).value
        if not nxt:
            break
        cframes.append(cf)
        cf = nxt
    # The innermost cframe's previous is read when this invocation
    # returns: fine to lie about it until then.
    global ROUNDS
    while time.monotonic() < deadline:
        spin(frames, cframes, 50)
        ROUNDS += 50
    return deadline


def middle(deadline, depth):
    if depth:
        return middle(deadline, depth - 1)
    # Through C: sorted() calls key in a nested invocation; then direct.
    half = (deadline + time.monotonic()) / 2
    sorted([half], key=leaf)
    return leaf(deadline)


ROUNDS = 0


def main():
    # A collection would walk the frames we lie about.
    gc.disable()
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        middle(min(deadline, time.monotonic() + 0.5), 20)
    print('hostile: %d rounds' % ROUNDS)


main()

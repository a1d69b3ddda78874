# SPDX-License-Identifier: GPL-2.0
"""C extensions: zlib compressing in native code, re calling a Python
replacement function, json calling an object hook:
<module> main squeeze [zlib], <module> main substitute [re] repl leaf,
<module> main decode [json] hook leaf."""
import json
import re
import time
import zlib

from common import deadline, leaf

DATA = bytes(range(256)) * 256
TEXT = 'ab ' * 200
PAT = re.compile(r'ab')
DOC = json.dumps([{'k': i} for i in range(50)])


def repl(m):
    leaf(200)
    return 'x'


def hook(d):
    leaf(200)
    return d


def squeeze():
    return zlib.compress(DATA, 9)


def substitute():
    return PAT.sub(repl, TEXT)


def decode():
    return json.loads(DOC, object_hook=hook)


def main():
    end = deadline()
    while time.monotonic() < end:
        squeeze()
        substitute()
        decode()


main()

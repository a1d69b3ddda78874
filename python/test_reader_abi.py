#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test (TAP): uwprof_reader.py mirrors include/uapi/linux/uwprof.h.

The reader restates the ABI in Python (constants, ioctl numbers, ctypes
structs, struct.Struct record layouts) and the stop-reason names of the
tool. Nothing ties those copies to the header, so this test asks the C
compiler: it reads the header for every UWPROF_ constant and every struct
member, writes a C program that prints their values, sizes and offsets
(and the tool's stop names, from tool/profile_file.c), builds and runs it,
and compares the output with the reader. A constant, struct or stop name
changed on the C side alone makes it fail.

  python/test_reader_abi.py SCRATCH_DIR
"""
import ctypes
import os
import re
import struct
import subprocess
import sys

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), '..'))
HDR = os.path.join(TOP, 'include', 'uapi', 'linux', 'uwprof.h')
sys.path.insert(0, os.path.join(TOP, 'python'))
import uwprof_reader as ur  # noqa: E402

# Families of constants the reader must have, whole: everything it passes
# to or reads from the module. The table format (TABLE_, CFA_, REG_, RULE_)
# is the tool's business: the reader uploads blobs it does not look into.
REQUIRED = ('ABI_VERSION', 'ARCH_', 'CAP_', 'MAP_', 'START_', 'SAMPLE_', 'IP_',
            'REC_', 'IOC_', 'MAX_DEPTH', 'STOP__COUNT', 'STATS_STOPS')
# The reader's ctypes structs and the uapi structs they mirror.
CTYPES = {'_Version': 'uwprof_version', '_TableAdd': 'uwprof_table_add',
          '_ObjectDel': 'uwprof_object_del', '_Map': 'uwprof_map',
          '_MapsSet': 'uwprof_maps_set', '_ProcessDel': 'uwprof_process_del',
          '_Start': 'uwprof_start', '_Stats': 'uwprof_stats',
          '_RingInfo': 'uwprof_ring_info'}
# Its struct.Struct record decoders: (struct, whole record or a prefix).
RECORDS = {'_SAMPLE': ('uwprof_rec_sample', True),
           '_LOST': ('uwprof_rec_lost', True),
           '_UNKNOWN': ('uwprof_rec_unknown_map', True),
           '_EXIT': ('uwprof_rec_exit', False),
           '_FORK': ('uwprof_rec_fork', True),
           '_COMM': ('uwprof_rec_comm', True)}

n_test = n_fail = 0


def tap(ok, desc, diag=None):
    global n_test, n_fail
    n_test += 1
    n_fail += not ok
    print('%s %d - %s' % ('ok' if ok else 'not ok', n_test, desc))
    if not ok and diag:
        for line in str(diag).splitlines()[:40]:
            print('#   ' + line)
    return ok


def parse_header(text):
    """(constant names, {struct: [(member, flexible array, struct type)]})."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    consts = re.findall(r'^#define\s+(UWPROF_\w+)[ \t]+\S', text, re.M)
    for body in re.findall(r'^enum\s+\w+\s*\{(.*?)\};', text, re.M | re.S):
        consts += re.findall(r'\b(UWPROF_\w+)\b', body)
    structs = {}
    for name, body in re.findall(r'^struct\s+(\w+)\s*\{(.*?)^\};', text,
                                 re.M | re.S):
        members = []
        for decl in body.split(';'):
            m = re.search(r'(?:struct\s+(\w+)\s+)?(\w+)\s*(\[[^\]]*\])?$',
                          decl.strip())
            if m:
                members.append((m.group(2), m.group(3) == '[]', m.group(1)))
        structs[name] = members
    return consts, structs


# Python frame tag words whose fields the header's macros decode.
PY_WORDS = (0xfe00000000000000, 0xfe123456ffffffff, 0xfeffffff7fffffff,
            0xfe00000580000000, 0xfe00001200000011)


def c_program(consts, structs):
    out = ['#include <stddef.h>', '#include <stdio.h>',
           '#include <linux/uwprof.h>', '#include "profile_file.h"', '',
           'int main(void)', '{', '\tunsigned int i;', '']
    for c in consts:
        out.append('\tprintf("const %s %%llu\\n", (unsigned long long)(%s));'
                   % (c, c))
    for s, members in structs.items():
        out.append('\tprintf("sizeof %s %%zu\\n", sizeof(struct %s));' % (s, s))
        for f, flex, _ in members:
            size = '0' if flex else 'sizeof(((struct %s *)0)->%s)' % (s, f)
            out.append('\tprintf("member %s %s %%zu %%zu\\n", '
                       'offsetof(struct %s, %s), (size_t)%s);'
                       % (s, f, s, f, size))
    for w in PY_WORDS:
        out.append('\tprintf("pyword %%llu %%d %%u\\n", %#xULL, '
                   'UWPROF_IP_PY_LASTI(%#xULL), UWPROF_IP_PY_FP(%#xULL));'
                   % (w, w, w))
    out += ['\tfor (i = 0; i < UWPROF_STOP__COUNT; i++)',
            '\t\tprintf("stop %u %s\\n", i,',
            '\t\t       uwprof_pf_stop_name(uwprof_pf_stop_of_module(i)));',
            '\treturn 0;', '}', '']
    return '\n'.join(out)


def c_values(scratch, consts, structs):
    src = os.path.join(scratch, 'abi-dump.c')
    exe = os.path.join(scratch, 'abi-dump')
    with open(src, 'w') as f:
        f.write(c_program(consts, structs))
    subprocess.run([os.environ.get('HOSTCC', 'cc'), '-std=c11', '-Wall',
                    '-Werror', '-D_DEFAULT_SOURCE',
                    '-I' + os.path.join(TOP, 'include', 'uapi'),
                    '-I' + os.path.join(TOP, 'tool'), '-o', exe, src,
                    os.path.join(TOP, 'tool', 'profile_file.c'),
                    os.path.join(TOP, 'tool', 'profile_decode.c'),
                    os.path.join(TOP, 'tool', 'profile_write.c'),
                    os.path.join(TOP, 'tool', 'atomic_file.c'),
                    os.path.join(TOP, 'tool', 'u64map.c')], check=True)
    out = subprocess.run([exe], check=True, capture_output=True,
                         text=True).stdout
    const, size, member, stops = {}, {}, {}, []
    pywords = []
    for line in out.splitlines():
        w = line.split()
        if w[0] == 'const':
            const[w[1]] = int(w[2])
        elif w[0] == 'sizeof':
            size[w[1]] = int(w[2])
        elif w[0] == 'member':
            member.setdefault(w[1], []).append((w[2], int(w[3]), int(w[4])))
        elif w[0] == 'stop':
            stops.append(w[2])
        elif w[0] == 'pyword':
            pywords.append((int(w[1]), int(w[2]), int(w[3])))
    return const, size, member, stops, pywords


def flat(s, structs, member, base=0):
    """Leaf members of struct s as (offset, size), nested structs opened."""
    out = []
    for (f, off, sz), (_, _, inner) in zip(member[s], structs[s]):
        if inner:
            out += flat(inner, structs, member, base + off)
        else:
            out.append((base + off, sz))
    return out


def struct_items(fmt):
    """(offset, size) of each item of a struct module format."""
    items, prefix = [], fmt[0]
    for code in re.findall(r'\d*[a-zA-Z]', fmt[1:]):
        start = struct.calcsize(prefix)
        prefix += code
        items.append((start, struct.calcsize(prefix) - start))
    return items


def main():
    scratch = sys.argv[1] if len(sys.argv) > 1 else '/tmp/uwprof-reader-abi'
    os.makedirs(scratch, exist_ok=True)
    with open(HDR) as f:
        text = f.read()
    consts, structs = parse_header(text)
    try:
        const, size, member, stops, pywords = c_values(scratch, consts,
                                                       structs)
    except (subprocess.CalledProcessError, OSError) as e:
        tap(False, 'the header dump program builds and runs', e)
        print('1..%d' % n_test)
        return 1
    tap(len(const) == len(consts) and len(size) == len(structs) and
        len(const) > 50 and len(size) > 15,
        'header dump: %d constants, %d structs' % (len(const), len(size)))

    # Every constant the reader has must be the header's; every one of
    # the families it speaks must be there.
    bad = []
    for c, v in sorted(const.items()):
        py = c[len('UWPROF_'):]
        if hasattr(ur, py):
            if getattr(ur, py) != v:
                bad.append('%s: reader %#x, header %#x' %
                           (py, getattr(ur, py), v))
        elif py.startswith(REQUIRED) and not py.endswith('_MAGIC'):
            bad.append('%s (%#x) missing from the reader' % (py, v))
    tap(not bad, 'reader constants equal the header\'s; none missing',
        '\n'.join(bad))

    bad = []
    for cls, cs in CTYPES.items():
        py = getattr(ur, cls)
        if ctypes.sizeof(py) != size[cs]:
            bad.append('%s: sizeof %d, struct %s %d' %
                       (cls, ctypes.sizeof(py), cs, size[cs]))
        names = [f for f, _ in py._fields_]
        want = [f.lstrip('_') for f, _, _ in member[cs]]
        if names != want:
            bad.append('%s: fields %s, struct %s %s' % (cls, names, cs, want))
            continue
        for (f, off, sz) in member[cs]:
            d = getattr(py, f.lstrip('_'))
            if (d.offset, d.size) != (off, sz):
                bad.append('%s.%s: offset %d size %d, header %d %d' %
                           (cls, f, d.offset, d.size, off, sz))
    tap(not bad, 'ctypes structs: same members, offsets, sizes as the '
        'header (%d structs)' % len(CTYPES), '\n'.join(bad))

    bad = []
    for name, (cs, whole) in RECORDS.items():
        fmt = getattr(ur, name, None)
        if fmt is None:
            bad.append('%s missing from the reader' % name)
            continue
        items = struct_items(fmt.format)
        want = flat(cs, structs, member)
        want = [w for w in want if w[1]]          # not ips[]
        if not whole:
            want = want[:len(items)]
        if items != want or whole and fmt.size != size[cs]:
            bad.append('%s %r: items %s size %d; struct %s %s size %d' %
                       (name, fmt.format, items, fmt.size, cs, want, size[cs]))
    for name, (cs, f) in {'_CTL_HEAD': ('uwprof_ring_ctl', 'head'),
                          '_CTL_LOST': ('uwprof_ring_ctl', 'lost')}.items():
        off = [o for m, o, _ in member[cs] if m == f]
        if getattr(ur, name) != off[0]:
            bad.append('%s %d, offsetof(struct %s, %s) %d' %
                       (name, getattr(ur, name), cs, f, off[0]))
    tap(not bad, 'ring record decoders and ring control offsets match the '
        'header', '\n'.join(bad))

    tap(list(ur.STOP_NAMES) == stops and
        len(stops) == const['UWPROF_STOP__COUNT'],
        'stop names are the tool\'s, one per enum uwprof_stop value',
        'reader %s\ntool   %s' % (list(ur.STOP_NAMES), stops))

    bad = []
    for w, lasti, fp in pywords:
        got = ur.split_ips([0x401000, w, 0x7f0000001000, 0x402000],
                           ur.SAMPLE_PYTHON)
        want = [0x401000, ur.PyFrame(0x7f0000001000, lasti, fp), 0x402000]
        if got != want:
            bad.append('%#x: reader %s, header %s' % (w, got, want))
    if ur.split_ips([ur.IP_PYTHON, 1], 0) != [ur.IP_PYTHON, 1]:
        bad.append('without SAMPLE_PYTHON the words are native addresses')
    tap(len(pywords) == len(PY_WORDS) and not bad,
        'split_ips: Python frames decoded as the header\'s UWPROF_IP_PY_* '
        'macros (%d words)' % len(pywords), '\n'.join(bad))

    print('1..%d' % n_test)
    return 1 if n_fail else 0


if __name__ == '__main__':
    sys.exit(main())

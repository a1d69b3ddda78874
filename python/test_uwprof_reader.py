#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test of uwprof_reader.py against the running module (run in a guest by
tests/tool/guest-run): uploads the bundled demo's tables and mappings,
samples it live for two seconds (longer, up to MAX_SECONDS, until
libdemo.so has MIN_LEAVES leaves) and checks that at least 99% of the samples
whose leaf is in libdemo.so carry main -> run_pipeline -> stage_hash ->
demo_checksum (-> demo_mix), that the ring accounting adds up, and that the
docstring's "top" example runs.

Usage: test_uwprof_reader.py UWPROF WORKLOADS_DIR SCRATCH_DIR
Prints '# ' diagnostics; exits 0 on success, 1 on failure.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uwprof_reader as ur  # noqa: E402

MIN_LEAVES = 30
MAX_SECONDS = 30.0
CHAIN = ['demo_mix', 'demo_checksum', 'stage_hash', 'run_pipeline', 'main']


def blob(uwprof, obj, out):
    subprocess.run([uwprof, 'table', '--quiet', '--blob', out, obj], check=True)
    with open(out, 'rb') as f:
        return f.read()


def wait_mapped(pid, path, secs=10):
    end = time.time() + secs
    while time.time() < end:
        with open('/proc/%d/maps' % pid) as f:
            if path in f.read():
                return True
        time.sleep(0.05)
    return False


def complete(names):
    """Leaf-first names are a leaf-side part of CHAIN ending at main
    (compiler clones such as stage_hash.constprop.0 count as stage_hash)."""
    names = [n.split('.')[0] for n in names]
    if not names or names[0] not in CHAIN:
        return False
    j = CHAIN.index(names[0])
    want = CHAIN[j:]
    return names[:len(want)] == want


def main():
    uwprof, wl, scratch = sys.argv[1:4]
    os.makedirs(scratch, exist_ok=True)
    demo = os.path.realpath(os.path.join(wl, 'demo'))
    lib = os.path.realpath(os.path.join(wl, 'libdemo.so'))
    failures = []
    child = subprocess.Popen([demo, '60'], stdout=subprocess.DEVNULL)
    try:
        if not wait_mapped(child.pid, lib):
            print('# libdemo.so never mapped')
            return 1
        syms = {1: ur.Symbols(demo), 2: ur.Symbols(lib)}
        with ur.Session() as s:
            v = s.version()
            print('# version', v)
            s.table_add(1, blob(uwprof, demo, os.path.join(scratch, 'demo.blob')))
            s.table_add(2, blob(uwprof, lib, os.path.join(scratch, 'lib.blob')))
            maps = ur.proc_maps(child.pid, {demo: 1, lib: 2})
            s.maps_set(child.pid, maps)
            oid = {}
            for st, en, _, o, _ in maps:
                oid[(st, en)] = o

            def name(ip):
                for (st, en), o in oid.items():
                    if st <= ip < en and o:
                        return syms[o].name(ip - s.bias(child.pid, ip))
                return '[unknown]'

            n = leaf = ok = others = 0
            bad = []
            # At least 2 s; longer, within a cap, when the guest runs the
            # demo slowly, until libdemo.so has leaves enough to judge.
            t0 = time.monotonic()

            def enough():
                return leaf >= MIN_LEAVES and time.monotonic() - t0 >= 2.0
            for smp in s.samples(pids=[child.pid], duration=MAX_SECONDS,
                                 until=enough, freq=999):
                n += 1
                if smp.pid != child.pid:
                    others += 1
                u = smp.user_ips
                if not u or s.bias(child.pid, u[0]) == 0 or \
                        name(u[0]) not in ('demo_mix', 'demo_checksum'):
                    continue
                leaf += 1
                names = [name(u[0])] + [name(a - 1) for a in u[1:6]]
                if complete(names):
                    ok += 1
                elif len(bad) < 5:
                    bad.append((smp.stop, names))
            st = s.stats()
            print('# samples %d in %.1f s, libdemo leaves %d, complete %d, lost %d' %
                  (n, time.monotonic() - t0, leaf, ok, s.lost))
            print('# module: samples %d lost %d stops %s' %
                  (st['samples'], st['lost'], st['stop']))
            for b in bad:
                print('# incomplete:', b)
            if leaf < MIN_LEAVES:
                failures.append('too few samples in libdemo.so (%d)' % leaf)
            elif ok * 100 < leaf * 99:
                failures.append('only %d of %d complete' % (ok, leaf))
            if others:
                failures.append('%d samples of other processes' % others)
            if st['samples'] != n:
                failures.append('module wrote %d samples, reader saw %d' %
                                (st['samples'], n))
            taken = (st['samples'] + st['lost_samples'] +
                     st['skipped_kthread'] + st['skipped_compat'] +
                     st['skipped_filter'] + st['skipped_throttle'])
            if st['events'] != taken:
                failures.append('events %d, accounted for %d' %
                                (st['events'], taken))
            if st['lost'] != s.lost:
                failures.append('module lost %d, LOST records say %d' %
                                (st['lost'], s.lost))
        # The docstring's example, as a program, for two seconds.
        doc = ur.__doc__
        code = doc[doc.index('    import collections'):doc.index('Memory ordering')]
        code = '\n'.join(line[4:] for line in code.splitlines())
        code = code.replace('duration=10', 'duration=1')
        blob(uwprof, demo, demo + '.blob')
        r = subprocess.run([sys.executable, '-c', code, str(child.pid), demo],
                           env=dict(os.environ, PYTHONPATH=os.path.dirname(
                               os.path.abspath(__file__))),
                           capture_output=True, text=True, timeout=60,
                           cwd=scratch)
        print('# top example: exit %d: %s %s' % (r.returncode, r.stdout.strip(),
                                                 r.stderr.strip()[-300:]))
        if r.returncode != 0 or not any(
                f in r.stdout for f in ('tree_walk', 'cmp_u32', 'stage_', 'main')):
            failures.append('top example failed')
    finally:
        child.kill()
        child.wait()
    for f in failures:
        print('# FAIL:', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0
"""Host benchmark figures against the last recorded ones.

tests/bench/recorded keeps one line per figure: name, median, low, high,
unit, runs, commit, UTC date, load average when taken. The benches
(tests/table/bench, tests/unwind/bench-runs) print each figure's median and
range, then a verdict against the recorded median: 'regressed' when the
median is above it by more than the figure's tolerance, else 'ok'. With
RECORD=1 in the environment they rewrite their own lines instead.

Timings vary with the machine's load; instruction counts (callgrind) do
not, so their tolerance is tight and theirs is the verdict to trust on a
busy machine.
"""
import os
import statistics
import subprocess
import time

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'recorded')
FIELDS = ('name', 'median', 'low', 'high', 'unit', 'runs', 'commit', 'date',
          'load')
# Largest median / recorded median still reported as ok, by unit.
TOLERANCE = {'instr': 1.01, 'instr/frame': 1.01}
TIME_TOLERANCE = 1.10


def tolerance(unit):
    env = os.environ.get('BENCH_TOLERANCE')
    if env:
        return float(env)
    return TOLERANCE.get(unit, TIME_TOLERANCE)


def read(path=RECORDED):
    """name -> dict of FIELDS, from the recorded file (empty if none)."""
    out = {}
    try:
        with open(path) as f:
            for ln in f:
                if not ln.strip() or ln.startswith('#'):
                    continue
                v = ln.split()
                if len(v) != len(FIELDS):
                    raise ValueError('%s: bad line: %s' % (path, ln.rstrip()))
                out[v[0]] = dict(zip(FIELDS, v))
    except FileNotFoundError:
        pass
    return out


def _commit():
    top = os.path.dirname(os.path.dirname(os.path.dirname(RECORDED)))
    try:
        return subprocess.run(['git', '-C', top, 'describe', '--always',
                               '--dirty', '--abbrev=7'],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True,
                              check=True).stdout.strip() or '-'
    except (OSError, subprocess.CalledProcessError):
        return '-'


def _fmt(x, unit=''):
    if unit == 'instr':
        return '%d' % round(x)
    return '%.2f' % x if unit == 'instr/frame' else '%.4g' % x


def write(figures, path=RECORDED):
    """Replace (or add) the lines of 'figures' (name -> dict), keep the rest."""
    header, lines, done = [], [], set()
    try:
        with open(path) as f:
            for ln in f:
                if ln.startswith('#') or not ln.strip():
                    if not lines:
                        header.append(ln.rstrip('\n'))
                    continue
                name = ln.split()[0]
                if name in figures:
                    ln = ' '.join(figures[name][k] for k in FIELDS) + '\n'
                    done.add(name)
                lines.append(ln.rstrip('\n'))
    except FileNotFoundError:
        header = ['# ' + ' '.join(FIELDS)]
    for name in sorted(set(figures) - done):
        lines.append(' '.join(figures[name][k] for k in FIELDS))
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write('\n'.join(header + lines) + '\n')
    os.replace(tmp, path)


def report(name, values, unit, label):
    """Print the median of 'values' and their range, and the verdict
    against the recorded figure; with RECORD=1 return the line to record,
    else None."""
    lo, hi = min(values), max(values)
    med = statistics.median(values)
    if len(values) > 1:
        spread = 'median of %d, range %s-%s' % (len(values), _fmt(lo, unit),
                                                _fmt(hi, unit))
    else:
        spread = 'one run'
    print('  %-34s %s %s (%s)' % (label + ':', _fmt(med, unit), unit, spread))
    rec = read().get(name)
    if rec:
        ratio = med / float(rec['median']) if float(rec['median']) else 0.0
        verdict = 'regressed' if ratio > tolerance(unit) else 'ok'
        print('  %-34s %s: %.3fx the recorded %s %s (%s, %s, load %s; '
              'tolerance %.2fx)' %
              ('', verdict, ratio, rec['median'], unit, rec['commit'],
               rec['date'], rec['load'], tolerance(unit)))
    else:
        print('  %-34s no recorded figure (RECORD=1 records one)' % '')
    if os.environ.get('RECORD') != '1':
        return None
    return {'name': name, 'median': _fmt(med, unit), 'low': _fmt(lo, unit),
            'high': _fmt(hi, unit), 'unit': unit, 'runs': str(len(values)),
            'commit': _commit(),
            'date': time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime()),
            'load': '%.2f' % os.getloadavg()[0]}


def record(figures):
    """Write the figures report() returned, if RECORD=1 asked for them."""
    figures = {f['name']: f for f in figures if f}
    if figures:
        write(figures)
        print('  recorded in %s: %s' % (os.path.relpath(RECORDED),
                                        ' '.join(sorted(figures))))

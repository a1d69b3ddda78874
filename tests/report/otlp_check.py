# SPDX-License-Identifier: GPL-2.0
#
# Checks of 'uwprof report --otlp' output, for tests/report/run: the
# gzipped request decoded by protoc against the project's own schema
# (tool/proto/otlp/), its dictionary checked (index 0 the zero value,
# every index in range), and its samples turned back into
# (sample type, pid, thread, stack of function names) -> values and
# compared with what the pprof of the same profile (decoded by protoc too,
# tool/proto/pprof/) says. Every function returns a list of problems:
# empty when all is well.
import collections
import gzip
import subprocess

OTLP_MSG = ('opentelemetry.proto.collector.profiles.v1development.'
            'ExportProfilesServiceRequest')
PPROF_MSG = 'perftools.profiles.Profile'
FRAME_TYPES = ('native', 'kernel', 'jit', 'cpython')


def decode(path, proto_dir, schema, msg):
    """protoc --decode of the gunzipped file: (returncode, text, stderr)."""
    with open(path, 'rb') as f:
        raw = gzip.decompress(f.read())
    r = subprocess.run(['protoc', '-I', proto_dir, '--decode=' + msg,
                        schema], input=raw, capture_output=True)
    return r.returncode, r.stdout.decode('utf-8', 'replace'), \
        r.stderr.decode('utf-8', 'replace')


def _unquote(s):
    """A protoc text-format string literal (C escapes) to str."""
    out = bytearray()
    i = 1
    esc = {'n': 10, 't': 9, 'r': 13, '"': 34, "'": 39, '\\': 92}
    while i < len(s) - 1:
        c = s[i]
        if c != '\\':
            out += c.encode('utf-8')
            i += 1
        elif s[i + 1] in esc:
            out.append(esc[s[i + 1]])
            i += 2
        else:                                   # \ooo octal
            j = i + 1
            while j < i + 4 and s[j] in '01234567':
                j += 1
            out.append(int(s[i + 1:j], 8))
            i = j
    return out.decode('utf-8', 'replace')


def parse_text(text):
    """protoc's text format: a message is {field name: [values]}."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
        elif line.endswith('{'):
            m = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(m)
            stack.append(m)
        else:
            name, val = line.split(':', 1)
            val = val.strip()
            if val.startswith('"'):
                v = _unquote(val)
            elif val in ('true', 'false'):
                v = val == 'true'
            else:
                v = int(val)
            stack[-1][name].append(v)
    return root


def one(m, name, default=0):
    v = m.get(name, [])
    return v[0] if v else default


def _anyvalue(v):
    for k in ('string_value', 'int_value', 'bool_value'):
        if k in v:
            return v[k][0]
    return None


def check_dict(req):
    """Index 0 of each table the zero value; every index in range; every
    entry but the zero ones referenced."""
    bad = []
    dicts = req.get('dictionary', [])
    if len(dicts) != 1:
        return ['%d dictionaries' % len(dicts)]
    d = dicts[0]
    n = {t: len(d.get(t, [])) for t in (
        'mapping_table', 'location_table', 'function_table', 'link_table',
        'string_table', 'attribute_table', 'stack_table')}
    for t, c in n.items():
        if not c:
            bad.append('%s is empty: entry 0 must be present' % t)
    if bad:
        return bad
    for t in ('mapping_table', 'location_table', 'function_table',
              'attribute_table', 'stack_table'):
        if dict(d[t][0]):
            bad.append('%s[0] is not the zero value: %s' % (t, dict(d[t][0])))
    if d['string_table'][0] != '':
        bad.append('string_table[0] is %r' % d['string_table'][0])
    link0 = d['link_table'][0]
    if any(set(x) - {'\0'} for k in link0 for x in link0[k]):
        bad.append('link_table[0] is not all zero: %s' % dict(link0))

    used = collections.defaultdict(set)

    def rng(what, idx, table):
        used[table].add(idx)
        if not 0 <= idx < n[table]:
            bad.append('%s: index %d outside %s (%d entries)' %
                       (what, idx, table, n[table]))

    def attrs(what, m):
        keys = []
        for a in m.get('attribute_indices', []):
            rng(what + ' attribute', a, 'attribute_table')
            if 0 <= a < n['attribute_table']:
                keys.append(one(d['attribute_table'][a], 'key_strindex'))
        if len(keys) != len(set(keys)):
            bad.append('%s: an attribute key twice' % what)

    for i, a in enumerate(d['attribute_table'][1:], 1):
        rng('attribute %d key' % i, one(a, 'key_strindex'), 'string_table')
        rng('attribute %d unit' % i, one(a, 'unit_strindex'), 'string_table')
    for i, m in enumerate(d['mapping_table']):
        rng('mapping %d filename' % i, one(m, 'filename_strindex'),
            'string_table')
        attrs('mapping %d' % i, m)
    for i, f in enumerate(d['function_table']):
        for k in ('name_strindex', 'system_name_strindex',
                  'filename_strindex'):
            rng('function %d %s' % (i, k), one(f, k), 'string_table')
    for i, loc in enumerate(d['location_table']):
        rng('location %d mapping' % i, one(loc, 'mapping_index'),
            'mapping_table')
        for ln in loc.get('lines', []):
            rng('location %d line' % i, one(ln, 'function_index'),
                'function_table')
        attrs('location %d' % i, loc)
    for i, s in enumerate(d['stack_table']):
        for x in s.get('location_indices', []):
            rng('stack %d' % i, x, 'location_table')
    for rp in req.get('resource_profiles', []):
        for sp in rp.get('scope_profiles', []):
            for p in sp.get('profiles', []):
                for vt in p.get('sample_type', []) + p.get('period_type', []):
                    rng('value type', one(vt, 'type_strindex'),
                        'string_table')
                    rng('value type', one(vt, 'unit_strindex'),
                        'string_table')
                attrs('profile', p)
                for s in p.get('samples', []):
                    rng('sample stack', one(s, 'stack_index'), 'stack_table')
                    rng('sample link', one(s, 'link_index'), 'link_table')
                    attrs('sample', s)
    for t in n:
        orphans = set(range(1, n[t])) - used[t]
        if orphans and t != 'link_table':
            bad.append('%s: %d entries nothing refers to (%s...)' %
                       (t, len(orphans), sorted(orphans)[:5]))
    return bad


def _attr_map(d, m):
    out = {}
    for a in m.get('attribute_indices', []):
        e = d['attribute_table'][a]
        out[d['string_table'][one(e, 'key_strindex')]] = \
            _anyvalue(one(e, 'value', {}))
    return out


def _res_attrs(rp):
    out = {}
    for res in rp.get('resource', []):
        for kv in res.get('attributes', []):
            out[one(kv, 'key', '')] = _anyvalue(one(kv, 'value', {}))
    return out


def otlp_samples(req):
    """(type, pid, thread, (names leaf first)) -> sorted values, and
    problems: values and timestamps of different lengths, timestamps out
    of the profile's span."""
    d = req['dictionary'][0]
    strs = d['string_table']
    out = collections.defaultdict(list)
    bad = []

    def names(stack_idx):
        r = []
        for x in d['stack_table'][stack_idx].get('location_indices', []):
            loc = d['location_table'][x]
            fi = one(one(loc, 'lines', {}), 'function_index')
            r.append(strs[one(d['function_table'][fi], 'name_strindex')])
        return tuple(r)

    for rp in req.get('resource_profiles', []):
        pid = _res_attrs(rp).get('process.pid')
        for sp in rp.get('scope_profiles', []):
            for p in sp.get('profiles', []):
                st = one(p, 'sample_type', {})
                typ = (strs[one(st, 'type_strindex')],
                       strs[one(st, 'unit_strindex')])
                t0 = one(p, 'time_unix_nano')
                t1 = t0 + one(p, 'duration_nano')
                for s in p.get('samples', []):
                    vals = s.get('values', [])
                    ts = s.get('timestamps_unix_nano', [])
                    if len(vals) != len(ts):
                        bad.append('sample: %d values, %d timestamps' %
                                   (len(vals), len(ts)))
                    if any(not t0 <= t < t1 for t in ts):
                        bad.append('sample: a timestamp outside [%d, %d)' %
                                   (t0, t1))
                    thread = _attr_map(d, s).get('thread.name')
                    out[(typ[0], pid, thread,
                         names(one(s, 'stack_index')))] += vals
    return {k: sorted(v) for k, v in out.items()}, bad


def pprof_samples(prof):
    """The same from a pprof: a sample goes to the type of its nonzero
    nanosecond value (cpu or off_cpu)."""
    strs = prof['string_table']
    types = [strs[one(t, 'type')] for t in prof.get('sample_type', [])]
    funcs = {one(f, 'id'): f for f in prof.get('function', [])}
    locs = {one(x, 'id'): x for x in prof.get('location', [])}
    out = collections.defaultdict(list)
    for s in prof.get('sample', []):
        labels = {strs[one(lb, 'key')]: (strs[one(lb, 'str')]
                                          if 'str' in lb else one(lb, 'num'))
                  for lb in s.get('label', [])}
        names = tuple(strs[one(funcs[one(one(locs[i], 'line', {}),
                                            'function_id')], 'name')]
                      for i in s.get('location_id', []))
        vals = dict(zip(types, s.get('value', [])))
        typ = 'off_cpu' if vals.get('off_cpu') else 'cpu'
        out[(typ, labels.get('pid'), labels.get('thread'), names)].append(
            vals.get(typ, 0))
    return {k: sorted(v) for k, v in out.items()}


def pprof_lines(prof):
    """{(address, function name): (file, line)} of the pprof's locations
    whose function has a file name."""
    strs = prof['string_table']
    funcs = {one(f, 'id'): f for f in prof.get('function', [])}
    out = {}
    for x in prof.get('location', []):
        ln = one(x, 'line', {})
        f = funcs[one(ln, 'function_id')]
        if one(f, 'filename'):
            out[(one(x, 'address'), strs[one(f, 'name')])] = \
                (strs[one(f, 'filename')], one(ln, 'line'))
    return out


def otlp_locations(req):
    """{(address, function name): (file, line, frame type)}, and the
    locations without a line, a function name or one frame type."""
    d = req['dictionary'][0]
    strs = d['string_table']
    out, bad = {}, []
    for i, x in enumerate(d['location_table'][1:], 1):
        lines = x.get('lines', [])
        f = d['function_table'][one(lines[0], 'function_index')] \
            if lines else {}
        name = strs[one(f, 'name_strindex')] if f else ''
        typ = _attr_map(d, x).get('profile.frame.type')
        if not lines or not name or typ not in FRAME_TYPES:
            bad.append('location %d: lines %d, name %r, frame type %r' %
                       (i, len(lines), name, typ))
            continue
        out[(one(x, 'address'), name)] = (strs[one(f, 'filename_strindex')],
                                          one(lines[0], 'line'), typ)
    return out, bad


def mapping_build_ids(req):
    """{memory_start: process.executable.build_id.gnu} of the mappings."""
    d = req['dictionary'][0]
    return {one(m, 'memory_start'):
            _attr_map(d, m).get('process.executable.build_id.gnu')
            for m in d['mapping_table'][1:]}


def pprof_build_ids(prof):
    strs = prof['string_table']
    return {one(m, 'memory_start'): strs[one(m, 'build_id')] or None
            for m in prof.get('mapping', [])}


def resources(req):
    """[resource attributes] in order."""
    return [_res_attrs(rp) for rp in req.get('resource_profiles', [])]


def sample_attrs(req):
    """{pid: set of (key, value) of its samples' attributes}."""
    d = req['dictionary'][0]
    out = collections.defaultdict(set)
    for rp in req.get('resource_profiles', []):
        pid = _res_attrs(rp).get('process.pid')
        for sp in rp.get('scope_profiles', []):
            for p in sp.get('profiles', []):
                for s in p.get('samples', []):
                    out[pid] |= set(_attr_map(d, s).items())
    return out


def compare(req, prof):
    """Every problem between an OTLP request and the pprof of the same
    profile: dictionary, samples, stacks, values, lines, build-ids."""
    bad = check_dict(req)
    if bad:
        return bad
    got, bad = otlp_samples(req)
    want = pprof_samples(prof)
    for k in sorted(set(got) | set(want), key=repr):
        if got.get(k) != want.get(k):
            bad.append('%s: otlp %s, pprof %s' % (k, got.get(k)[:5] if
                       got.get(k) else None, want.get(k, [])[:5] or None))
    locs, lbad = otlp_locations(req)
    bad += lbad
    for k, (fname, line) in pprof_lines(prof).items():
        if k not in locs or locs[k][:2] != (fname, line):
            bad.append('location %#x %s: otlp %s, pprof %s:%d' %
                       (k[0], k[1], locs.get(k), fname, line))
    want_ids = {k: v for k, v in pprof_build_ids(prof).items() if v}
    got_ids = {k: v for k, v in mapping_build_ids(req).items() if v}
    if got_ids != want_ids:
        bad.append('build-ids: otlp %s, pprof %s' % (got_ids, want_ids))
    return bad

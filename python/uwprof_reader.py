# SPDX-License-Identifier: GPL-2.0
"""Live reader of the uwprof kernel module, in plain Python (stdlib only).

Opens /dev/uwprof, uploads unwind-table blobs (written by
``uwprof table --blob OUT FILE``) and a process's mappings, starts sampling,
maps the per-CPU rings and yields samples as they arrive, following the ring
protocol of include/uapi/linux/uwprof.h; then stops. It needs what the
module needs: root or CAP_PERFMON.

A live "top" of the functions a process spends its time in::

    import collections, sys
    from uwprof_reader import Session, proc_maps, Symbols
    pid, exe = int(sys.argv[1]), sys.argv[2]   # uwprof table --blob EXE.blob EXE
    with Session() as s:
        s.table_add(1, open(exe + '.blob', 'rb').read())
        s.maps_set(pid, proc_maps(pid, {exe: 1}))
        top, syms = collections.Counter(), Symbols(exe)
        for smp in s.samples(pids=[pid], duration=10):
            top[syms.name(smp.user_ips[0] - s.bias(pid, smp.user_ips[0]))] += 1
        print(top.most_common(10))

Memory ordering. The module publishes a record with a release store of the
ring's 'head' and reuses space only after an acquire load of 'tail'. This
reader reads 'head' and writes 'tail' as naturally aligned 8-byte words
through ctypes (c_uint64.from_buffer), which x86_64 and arm64 both perform
as single-copy-atomic loads and stores: no torn values. Ordering is the
other half:

* x86_64 (TSO): loads are not reordered with older loads, and stores not
  with older loads or stores, so a plain load of 'head' already has acquire
  semantics for the record reads after it, and a plain store of 'tail'
  release semantics for the reads before it. The interpreter reaches each
  access through opaque C calls, so the compiler cannot reorder them either.
* arm64: plain LDR/STR may be reordered with other accesses, so an aligned
  8-byte access alone is NOT enough. The reader therefore executes a real
  barrier: a two-instruction function (``dmb ish; ret``) placed in an
  executable page with mmap and called through ctypes, after loading 'head'
  (acquire) and before storing 'tail' (release). If the system forbids
  executable anonymous memory, Session() raises instead of reading unsafely.
"""

import collections
import ctypes
import errno
import fcntl
import mmap
import os
import platform
import select
import struct
import time

__all__ = ['Session', 'Sample', 'proc_maps', 'elf_bias', 'Symbols',
           'UwprofError']

# ---- ABI constants (include/uapi/linux/uwprof.h)
ABI_VERSION = 1
TABLE_MAGIC = 0x55575442          # "UWTB"
ARCH_X86_64, ARCH_ARM64 = 1, 2

START_SYSTEM_WIDE = 1 << 0
START_KERNEL_STACK = 1 << 1
START_CPU_CLOCK = 1 << 2
START_CYCLES = 1 << 3
START_NO_FP_FALLBACK = 1 << 4
START_HOLD_EXEC = 1 << 5
START_SNAPSHOT = 1 << 6
START_OFF_CPU = 1 << 7
START_CGROUP = 1 << 8
START_COMM = 1 << 9
START_MMAP = 1 << 10
START_DESCENDANTS = 1 << 11
MAP_NO_TABLE = 1 << 0
MAPS_START_TIME = 1 << 0
MAPS_PYTHON = 1 << 1
CAP_HW_CYCLES = 1 << 0
CAP_KERNEL_STACK = 1 << 1
CAP_SNAPSHOT = 1 << 2
CAP_OFF_CPU = 1 << 3
CAP_SESSIONS = 1 << 4
CAP_CGROUP = 1 << 5
CAP_COMM = 1 << 6
CAP_MMAP = 1 << 7
CAP_DESCENDANTS = 1 << 8
CAP_MAPS_START = 1 << 9
CAP_WALK_TIME = 1 << 10
CAP_RENAME = 1 << 11
CAP_PYTHON = 1 << 12

REC_SAMPLE, REC_LOST, REC_UNKNOWN_MAP, REC_EXIT, REC_FORK, REC_MMAP, \
    REC_COMM = 1, 2, 3, 4, 5, 6, 7
SAMPLE_STOP_MASK = 0xff
SAMPLE_FP_USED = 1 << 8
SAMPLE_IN_KERNEL = 1 << 9
SAMPLE_SNAPSHOT = 1 << 10
SAMPLE_OFF_CPU = 1 << 11
SAMPLE_EXEC = 1 << 12
SAMPLE_PYTHON = 1 << 13
# A Python frame takes two user ips: a tag word (IP_PYTHON in its top
# byte, the instruction offset in code units in its low 32 bits, signed,
# the low 24 bits of the code object's size above them), then the code
# object's address. See split_ips().
IP_PYTHON = 0xfe00000000000000
IP_TAG_MASK = 0xff00000000000000
# By enum uwprof_stop value: the names of uwprof(1) STOP REASONS, which
# the tool prints too.
STOP_NAMES = ('complete', 'fp-chain-end', 'max-depth', 'no-mapping',
              'no-table-row', 'unsupported-rule', 'stack-unreadable', 'bad-sp',
              'bad-pc', 'process-not-uploaded-yet', 'walk-time-limit',
              'python-chain')
STOP__COUNT = len(STOP_NAMES)
# Reasons counted in stats' stop[]; the later ones have fields of their own.
STATS_STOPS = 10
MAX_DEPTH = 8192


class _Version(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('abi_version', ctypes.c_uint32),
                ('table_version', ctypes.c_uint32), ('arch', ctypes.c_uint32),
                ('caps', ctypes.c_uint32), ('nr_cpus', ctypes.c_uint32),
                ('table_mem_max', ctypes.c_uint64),
                ('reserved', ctypes.c_uint64 * 4)]


class _TableAdd(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('flags', ctypes.c_uint32),
                ('object_id', ctypes.c_uint64), ('data', ctypes.c_uint64),
                ('data_size', ctypes.c_uint64)]


class _ObjectDel(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('flags', ctypes.c_uint32),
                ('object_id', ctypes.c_uint64)]


class _Map(ctypes.Structure):
    _fields_ = [('start', ctypes.c_uint64), ('end', ctypes.c_uint64),
                ('bias', ctypes.c_uint64), ('object_id', ctypes.c_uint64),
                ('flags', ctypes.c_uint32), ('reserved', ctypes.c_uint32)]


class _MapsSet(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('flags', ctypes.c_uint32),
                ('pid', ctypes.c_uint32), ('nr_maps', ctypes.c_uint32),
                ('maps', ctypes.c_uint64), ('start_time', ctypes.c_uint64),
                ('python', ctypes.c_uint64)]


class _ProcessDel(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('pid', ctypes.c_uint32)]


class _Start(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('flags', ctypes.c_uint32),
                ('freq_hz', ctypes.c_uint32), ('max_depth', ctypes.c_uint32),
                ('ring_pages', ctypes.c_uint32), ('nr_pids', ctypes.c_uint32),
                ('pids', ctypes.c_uint64), ('snapshot_size', ctypes.c_uint32),
                ('reserved', ctypes.c_uint32),
                ('off_cpu_min_ns', ctypes.c_uint64),
                ('cgroup_fd', ctypes.c_int32), ('reserved2', ctypes.c_uint32),
                ('comm', ctypes.c_char * 16)]


_STATS_FIELDS = ['samples', 'frames', 'lost', 'skipped_kthread',
                 'skipped_compat', 'skipped_filter', 'fp_frames',
                 'unknown_maps']


# The counters after nmi_samples, in the header's order.
_LATER_STATS = ['off_cpu_blocks', 'off_cpu_samples', 'off_cpu_short',
                'off_cpu_dropped', 'off_cpu_lost', 'mmap_records',
                'kernel_throttles', 'mmap_throttled', 'stop_time',
                'snapshots_time_cut', 'lifecycle_lost', 'stop_python',
                'unwind_ns']


class _Stats(ctypes.Structure):
    _fields_ = ([('size', ctypes.c_uint32), ('reserved0', ctypes.c_uint32)] +
                [(f, ctypes.c_uint64) for f in _STATS_FIELDS] +
                [('stop', ctypes.c_uint64 * STATS_STOPS),
                 ('unwind_ns_hist', ctypes.c_uint64 * 16),
                 ('tables', ctypes.c_uint64), ('table_bytes', ctypes.c_uint64),
                 ('processes', ctypes.c_uint64),
                 ('processes_dropped', ctypes.c_uint64),
                 ('events', ctypes.c_uint64), ('lost_samples', ctypes.c_uint64),
                 ('exit_records', ctypes.c_uint64),
                 ('processes_inherited', ctypes.c_uint64),
                 ('skipped_throttle', ctypes.c_uint64),
                 ('snapshots', ctypes.c_uint64),
                 ('snapshot_bytes', ctypes.c_uint64),
                 ('fork_records', ctypes.c_uint64),
                 ('nmi_samples', ctypes.c_uint64)] +
                [(f, ctypes.c_uint64) for f in _LATER_STATS])


class _RingInfo(ctypes.Structure):
    _fields_ = [('size', ctypes.c_uint32), ('nr_rings', ctypes.c_uint32),
                ('stride', ctypes.c_uint64), ('data_size', ctypes.c_uint64),
                ('mmap_size', ctypes.c_uint64)]


# The C compiler's sizes for the uapi structs (static checks, like the C side).
for _s, _n in ((_Version, 64), (_TableAdd, 32), (_ObjectDel, 16), (_Map, 40),
               (_MapsSet, 40), (_ProcessDel, 8), (_Start, 72), (_Stats, 488),
               (_RingInfo, 32)):
    assert ctypes.sizeof(_s) == _n, (_s.__name__, ctypes.sizeof(_s))


def _ioc(direction, nr, size):
    # asm-generic/ioctl.h, used by x86_64 and arm64: dir<<30 | size<<16 | type<<8 | nr
    return (direction << 30) | (size << 16) | (0xb7 << 8) | nr


_W, _R = 1, 2
IOC_VERSION = _ioc(_R | _W, 0x00, ctypes.sizeof(_Version))
IOC_TABLE_ADD = _ioc(_W, 0x01, ctypes.sizeof(_TableAdd))
IOC_OBJECT_DEL = _ioc(_W, 0x02, ctypes.sizeof(_ObjectDel))
IOC_MAPS_SET = _ioc(_W, 0x03, ctypes.sizeof(_MapsSet))
IOC_PROCESS_DEL = _ioc(_W, 0x04, ctypes.sizeof(_ProcessDel))
IOC_START = _ioc(_W, 0x05, ctypes.sizeof(_Start))
IOC_STOP = _ioc(0, 0x06, 0)
IOC_STATS = _ioc(_R | _W, 0x07, ctypes.sizeof(_Stats))
IOC_RING_INFO = _ioc(_R | _W, 0x08, ctypes.sizeof(_RingInfo))

# uwprof_ring_ctl: head at byte 24, lost at 32; the tail page follows it.
_CTL_HEAD, _CTL_LOST = 24, 32
_HDR = struct.Struct('<II')
_SAMPLE = struct.Struct('<IIQIIIIHHIQ')        # 48 bytes, then ips
_UNKNOWN = struct.Struct('<IIQIIQ')
_EXIT = struct.Struct('<IIQII')                # then comm[16]
_FORK = struct.Struct('<IIQII')
_COMM = struct.Struct('<IIQII16s16s')
_LOST = struct.Struct('<IIQ')


# A Python frame of a sample: its code object's address in the process,
# the instruction it ran (code units from the code's start, -1 before the
# first) and the low 24 bits of the code object's size in code units (to
# tell a code object from another later at the same address).
PyFrame = collections.namedtuple('PyFrame', 'code lasti fingerprint')


def split_ips(ips, flags=SAMPLE_PYTHON):
    """A sample's user ips (leaf first) as its frames in order: an int, a
    native frame's address, or a PyFrame for each two-word Python frame.
    The Python frames an invocation of CPython's eval function runs follow
    that invocation's native frame, innermost first. Without SAMPLE_PYTHON
    in the sample's flags every ip is native; a tag whose address was cut
    off ends the list."""
    if not flags & SAMPLE_PYTHON:
        return list(ips)
    out, i = [], 0
    while i < len(ips):
        w = ips[i]
        if w & IP_TAG_MASK != IP_PYTHON:
            out.append(w)
            i += 1
            continue
        if i + 1 == len(ips):
            break
        lasti = w & 0xffffffff
        out.append(PyFrame(ips[i + 1], lasti - (1 << 32) if lasti >> 31
                           else lasti, (w >> 32) & 0xffffff))
        i += 2
    return out


class UwprofError(OSError):
    """An operation on /dev/uwprof failed; errno and a message naming it."""


class Sample:
    """One sampled stack. user_ips are leaf first; kernel_ips come first in
    the record and are empty unless kernel stacks were asked for."""
    __slots__ = ('time_ns', 'pid', 'tid', 'cpu', 'flags', 'period',
                 'kernel_ips', 'user_ips')

    def __init__(self, time_ns, pid, tid, cpu, flags, period, kips, uips):
        self.time_ns, self.pid, self.tid, self.cpu = time_ns, pid, tid, cpu
        self.flags, self.period = flags, period
        self.kernel_ips, self.user_ips = kips, uips

    @property
    def stop(self):
        """Why the user stack ended (a name from STOP_NAMES, or in-execve:
        taken inside execve while the image was being replaced, no user
        frames)."""
        if self.flags & SAMPLE_EXEC:
            return 'in-execve'
        n = self.flags & SAMPLE_STOP_MASK
        return STOP_NAMES[n] if n < len(STOP_NAMES) else str(n)

    @property
    def frames(self):
        """The user frames, leaf first: native addresses (int) and Python
        frames (PyFrame), as split_ips() gives them."""
        return split_ips(self.user_ips, self.flags)

    def __repr__(self):
        return ('Sample(pid=%d tid=%d cpu=%d stop=%s user=[%s])' %
                (self.pid, self.tid, self.cpu, self.stop,
                 ' '.join('%#x' % a for a in self.user_ips)))


def _barrier_fn():
    """A callable full memory barrier (see the module docstring)."""
    machine = platform.machine()
    if machine in ('x86_64', 'AMD64'):
        return lambda: None
    if machine not in ('aarch64', 'arm64'):
        raise UwprofError(errno.ENOSYS, 'uwprof reader: unsupported CPU %s' % machine)
    code = struct.pack('<II', 0xd5033bbf, 0xd65f03c0)   # dmb ish; ret
    page = mmap.mmap(-1, mmap.PAGESIZE,
                     prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    fn = ctypes.CFUNCTYPE(None)(addr)
    fn._page = page     # keep the mapping alive with the function
    return fn


class Session:
    """One open /dev/uwprof: tables, mappings and a sampling run belong to
    it and go away when it is closed (also by ``with``)."""

    def __init__(self, path='/dev/uwprof'):
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            raise UwprofError(errno.ENOENT, '%s missing: load it with '
                              '`modprobe uwprof` or install it with '
                              '`make dkms-install`' % path) from None
        except PermissionError as e:
            raise UwprofError(e.errno, '%s: %s: needs root or CAP_PERFMON' %
                              (path, e.strerror)) from None
        self._mm = None
        self._barrier = _barrier_fn()
        self.lost = 0
        self.unknown = []       # (pid, tid, addr) of UNKNOWN_MAP records
        self.exits = []         # (pid, exec) of EXIT records
        self.forks = []         # (pid, ppid) of FORK records
        self.renames = []       # (time_ns, pid, tid, old name, new name)
        self._maps = {}
        v = self.version()
        if v['abi_version'] != ABI_VERSION:
            self.close()
            raise UwprofError(errno.EPROTO, 'module ABI %d, this reader speaks %d' %
                              (v['abi_version'], ABI_VERSION))
        self._table_version = v['table_version']

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Unmaps the rings and closes the device (which stops sampling)."""
        if self._mm is not None:
            self._views = None
            try:
                self._mm.close()
            except BufferError:
                pass
            self._mm = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _ioctl(self, name, cmd, arg):
        try:
            fcntl.ioctl(self.fd, cmd, arg, True) if arg is not None else \
                fcntl.ioctl(self.fd, cmd, 0)
        except OSError as e:
            raise UwprofError(e.errno, 'uwprof %s: %s' % (name, e.strerror)) from None

    def version(self):
        """VERSION: abi_version, table_version, arch, caps, nr_cpus, table_mem_max."""
        v = _Version(size=ctypes.sizeof(_Version))
        self._ioctl('VERSION', IOC_VERSION, v)
        return {f: getattr(v, f) for f, _ in _Version._fields_
                if f not in ('size', 'reserved')}

    def table_add(self, object_id, blob):
        """Uploads a table blob (bytes) under a non-zero object id."""
        # A blob of another format is refused as malformed (EINVAL); say why.
        if len(blob) >= 6 and struct.unpack_from('<I', blob)[0] == TABLE_MAGIC:
            fmt = struct.unpack_from('<H', blob, 4)[0]
            if fmt != self._table_version:
                raise UwprofError(errno.EPROTO,
                                  'table blob format %d, the module reads %d: '
                                  'write it again with a matching uwprof' %
                                  (fmt, self._table_version))
        buf = ctypes.create_string_buffer(bytes(blob), len(blob))
        a = _TableAdd(size=ctypes.sizeof(_TableAdd), object_id=object_id,
                      data=ctypes.addressof(buf), data_size=len(blob))
        self._ioctl('TABLE_ADD', IOC_TABLE_ADD, a)

    def object_del(self, object_id):
        self._ioctl('OBJECT_DEL', IOC_OBJECT_DEL,
                    _ObjectDel(size=ctypes.sizeof(_ObjectDel), object_id=object_id))

    def maps_set(self, pid, maps):
        """Replaces a process's mappings: (start, end, bias, object_id, flags)
        tuples, sorted and non-overlapping (proc_maps() builds them)."""
        maps = sorted(maps)
        arr = (_Map * max(len(maps), 1))()
        for i, (s, e, b, o, f) in enumerate(maps):
            arr[i].start, arr[i].end, arr[i].bias = s, e, b
            arr[i].object_id, arr[i].flags = o, f
        a = _MapsSet(size=ctypes.sizeof(_MapsSet), pid=pid, nr_maps=len(maps),
                     maps=ctypes.addressof(arr))
        self._ioctl('MAPS_SET', IOC_MAPS_SET, a)
        self._maps[pid] = maps

    def bias(self, pid, ip):
        """The bias of the uploaded mapping of 'pid' holding 'ip' (0: none)."""
        for s, e, b, _, _ in self._maps.get(pid, ()):
            if s <= ip < e:
                return b
        return 0

    def process_del(self, pid):
        self._ioctl('PROCESS_DEL', IOC_PROCESS_DEL,
                    _ProcessDel(size=ctypes.sizeof(_ProcessDel), pid=pid))

    def stats(self):
        """STATS of this session, as a dict (stop: {name: count})."""
        st = _Stats(size=ctypes.sizeof(_Stats))
        self._ioctl('STATS', IOC_STATS, st)
        d = {f: getattr(st, f) for f in _STATS_FIELDS +
             ['tables', 'table_bytes', 'processes', 'processes_dropped',
              'events', 'lost_samples', 'exit_records',
              'processes_inherited', 'skipped_throttle', 'snapshots',
              'snapshot_bytes', 'fork_records', 'nmi_samples'] +
             _LATER_STATS}
        d['stop'] = dict(zip(STOP_NAMES, list(st.stop) +
                             [st.stop_time, st.stop_python]))
        return d

    def start(self, pids=None, freq=999, max_depth=128, kernel=False,
              cpu_clock=True, fp_fallback=True, ring_pages=0,
              off_cpu_min_ns=None, cgroup=None, comm=None):
        """START: the given tgids, or every process when pids is None; then
        maps the rings. off_cpu_min_ns: also off-CPU samples (flag
        SAMPLE_OFF_CPU, period in ns) of blocks at least that long.
        cgroup: the directory of a cgroup v2 group (e.g.
        '/sys/fs/cgroup/system.slice/x.service'), comm: a thread name of
        at most 15 bytes; only tasks that pass them are sampled (modules
        with CAP_CGROUP and CAP_COMM; others refuse with EINVAL)."""
        flags = (START_CPU_CLOCK if cpu_clock else 0) | \
                (START_KERNEL_STACK if kernel else 0) | \
                (0 if fp_fallback else START_NO_FP_FALLBACK) | \
                (START_OFF_CPU if off_cpu_min_ns is not None else 0) | \
                (START_CGROUP if cgroup is not None else 0) | \
                (START_COMM if comm is not None else 0)
        arr = None
        if pids is None:
            flags |= START_SYSTEM_WIDE
            n, addr = 0, 0
        else:
            arr = (ctypes.c_uint32 * len(pids))(*pids)
            n, addr = len(pids), ctypes.addressof(arr)
        name = comm.encode() if comm is not None else b''
        if comm is not None and not 1 <= len(name) <= 15:
            raise ValueError('comm: 1 to 15 bytes')
        a = _Start(size=ctypes.sizeof(_Start), flags=flags, freq_hz=freq,
                   max_depth=max_depth, ring_pages=ring_pages, nr_pids=n,
                   pids=addr, off_cpu_min_ns=off_cpu_min_ns or 0, comm=name)
        if self._mm is not None:
            self._views = None
            self._mm.close()
            self._mm = None
        cg = None
        if cgroup is not None:
            cg = os.open(cgroup, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            a.cgroup_fd = cg
        try:
            self._ioctl('START', IOC_START, a)
        finally:
            # The module holds the cgroup from START on.
            if cg is not None:
                os.close(cg)
        ri = _RingInfo(size=ctypes.sizeof(_RingInfo))
        self._ioctl('RING_INFO', IOC_RING_INFO, ri)
        self._ri = ri
        self._mm = mmap.mmap(self.fd, ri.mmap_size, mmap.MAP_SHARED,
                             mmap.PROT_READ | mmap.PROT_WRITE)
        page = mmap.PAGESIZE
        # Aligned 8-byte views of each ring's 'head' and 'tail' words.
        self._views = [(ctypes.c_uint64.from_buffer(self._mm, i * ri.stride + _CTL_HEAD),
                        ctypes.c_uint64.from_buffer(self._mm, i * ri.stride + page),
                        i * ri.stride + 2 * page)
                       for i in range(ri.nr_rings)]

    def stop(self):
        """STOP: no more samples; what is in the rings stays readable."""
        self._ioctl('STOP', IOC_STOP, None)

    def _copy(self, data_off, pos, n):
        size = self._ri.data_size
        off = pos & (size - 1)
        first = min(n, size - off)
        b = self._mm[data_off + off:data_off + off + first]
        if first < n:
            b += self._mm[data_off:data_off + n - first]
        return b

    def records(self):
        """Consumes every published record of every ring: yields
        (type, bytes, ring). The space is released ring by ring."""
        for ring, (head_v, tail_v, data_off) in enumerate(self._views):
            head = head_v.value         # aligned 8-byte load ...
            self._barrier()             # ... made an acquire
            tail = tail_v.value
            while tail < head:
                rtype, rsize = _HDR.unpack(self._copy(data_off, tail, 8))
                if rsize < 8 or rsize & 7 or rsize > head - tail:
                    raise UwprofError(errno.EPROTO, 'ring %d: malformed record '
                                      'of size %d at %d' % (ring, rsize, tail))
                yield rtype, self._copy(data_off, tail, rsize), ring
                tail += rsize
            self._barrier()             # record reads done before ...
            tail_v.value = tail         # ... the release of their space

    def _decode(self, rtype, b):
        if rtype == REC_SAMPLE:
            (_, size, t, pid, tid, cpu, flags, nk, nu, _, period) = _SAMPLE.unpack_from(b)
            if size != 48 + 8 * (nk + nu):
                raise UwprofError(errno.EPROTO, 'sample record of size %d '
                                  'with %d+%d frames' % (size, nk, nu))
            ips = struct.unpack_from('<%dQ' % (nk + nu), b, 48)
            return Sample(t, pid, tid, cpu, flags, period, ips[:nk], ips[nk:])
        if rtype == REC_LOST:
            self.lost += _LOST.unpack_from(b)[2]
        elif rtype == REC_UNKNOWN_MAP:
            _, _, _, pid, tid, addr = _UNKNOWN.unpack_from(b)
            self.unknown.append((pid, tid, addr))
        elif rtype == REC_EXIT:
            _, _, _, pid, ex = _EXIT.unpack_from(b)
            self.exits.append((pid, ex))
        elif rtype == REC_FORK:
            _, _, _, pid, ppid = _FORK.unpack_from(b)
            self.forks.append((pid, ppid))
        elif rtype == REC_COMM:
            _, _, t, pid, tid, comm, old = _COMM.unpack_from(b)
            self.renames.append((t, pid, tid,
                                 old.rstrip(b'\0').decode(errors='replace'),
                                 comm.rstrip(b'\0').decode(errors='replace')))
        return None

    def poll(self, timeout=0.25):
        """Waits until a ring has data or 'timeout' seconds pass."""
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        p.poll(int(timeout * 1000))

    def samples(self, pids=None, duration=None, start=True, until=None,
                **start_args):
        """Starts sampling (unless start=False) and yields Sample objects
        as they arrive, until 'duration' seconds passed (forever when None)
        or 'until' (a callable, asked about every 0.1 s) returns true; then
        stops and yields what is left. Closing the generator stops too, but
        leaves the rest unread. LOST, UNKNOWN_MAP, EXIT and FORK records
        update self.lost, self.unknown, self.exits and self.forks."""
        if start:
            self.start(pids=pids, **start_args)
        end = None if duration is None else time.monotonic() + duration
        try:
            while (end is None or time.monotonic() < end) and \
                    not (until is not None and until()):
                self.poll(0.1 if end is None else
                          max(0.0, min(0.1, end - time.monotonic())))
                for rtype, b, _ in self.records():
                    s = self._decode(rtype, b)
                    if s is not None:
                        yield s
        finally:
            try:
                self.stop()
            except UwprofError:
                pass
        for rtype, b, _ in self.records():
            s = self._decode(rtype, b)
            if s is not None:
                yield s


# ---- ELF helpers (64-bit little-endian objects, as on x86_64 and arm64)

PF_X, PF_W, PF_R = 1, 2, 4

def _elf_phdrs(data):
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        raise ValueError('not a 64-bit little-endian ELF object')
    phoff, = struct.unpack_from('<Q', data, 32)
    phentsize, phnum = struct.unpack_from('<HH', data, 54)
    for i in range(phnum):
        yield struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)


def elf_bias(path, start, offset, flags=PF_R | PF_X):
    """Bias of a mapping of 'path' at 'start' from file 'offset' with the
    permissions 'flags' (PF_R | PF_W | PF_X): object vaddr = pc - bias.
    Linkers may start a segment in the file page where the previous one
    ends (LLD, gold), so the PT_LOAD is chosen by offset and permissions."""
    with open(path, 'rb') as f:
        head = f.read(65536)
    page = mmap.PAGESIZE
    found = None
    for p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ in _elf_phdrs(head):
        if p_type != 1 or not (p_offset & ~(page - 1)) <= offset < p_offset + max(p_filesz, 1):
            continue
        if found is None:
            found = (p_offset, p_vaddr)
        if not (p_flags ^ flags) & PF_X:
            found = (p_offset, p_vaddr)
            break
    if found is None:
        raise ValueError('%s: no PT_LOAD holds offset %#x' % (path, offset))
    return start - offset - (found[1] - found[0])


def proc_maps(pid, objects):
    """The executable mappings of process 'pid' of the objects in
    'objects' ({path: object_id}), as maps_set() takes them; mappings of
    other files get UWPROF_MAP_NO_TABLE (frame-pointer fallback)."""
    real = {os.path.realpath(p): oid for p, oid in objects.items()}
    out = []
    with open('/proc/%d/maps' % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 5 or 'x' not in parts[1]:
                continue
            start, end = (int(x, 16) for x in parts[0].split('-'))
            if start >= 1 << 56:
                continue                # [vsyscall]: kernel half
            offset = int(parts[2], 16)
            flags = PF_X | (PF_R if parts[1][0] == 'r' else 0) | \
                (PF_W if parts[1][1] == 'w' else 0)
            path = parts[5].strip() if len(parts) > 5 else ''
            oid = real.get(path)
            if oid:
                out.append((start, end, elf_bias(path, start, offset, flags),
                            oid, 0))
            else:
                out.append((start, end, start - offset, 0, MAP_NO_TABLE))
    return out


class Symbols:
    """Function symbols of one ELF file (.symtab, else .dynsym) by address."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            data = f.read()
        shoff, = struct.unpack_from('<Q', data, 40)
        shentsize, shnum = struct.unpack_from('<HH', data, 58)
        secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
                for i in range(shnum)]
        syms = []
        for want in (2, 11):            # SHT_SYMTAB, then SHT_DYNSYM
            for _, stype, _, _, off, size, link, _, _, entsize in secs:
                if stype != want or not entsize:
                    continue
                stroff, strsize = secs[link][4], secs[link][5]
                for i in range(size // entsize):
                    name, info, _, _, value, ssize = struct.unpack_from(
                        '<IBBHQQ', data, off + i * entsize)
                    if info & 0xf != 2 or not value:      # STT_FUNC
                        continue
                    end = data.index(b'\0', stroff + name, stroff + strsize)
                    syms.append((value, ssize, data[stroff + name:end].decode()))
            if syms:
                break
        syms.sort()
        self._addr = [s[0] for s in syms]
        self._syms = syms

    def name(self, vaddr):
        """The function holding object address 'vaddr', or '[unknown]'."""
        import bisect
        i = bisect.bisect_right(self._addr, vaddr) - 1
        if i < 0:
            return '[unknown]'
        a, size, n = self._syms[i]
        return n if not size or vaddr < a + size else '[unknown]'

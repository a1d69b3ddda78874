/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * uwprof: sampling profiler with in-kernel DWARF-table unwinding of user stacks.
 *
 * This header is the contract between the uwprof module and its userspace
 * (the uwprof tool, the Python reader). It uses only <linux/types.h>, every
 * structure is naturally aligned with explicit padding, and every size is a
 * multiple of 8 so 32- and 64-bit userspace see the same layout.
 *
 * Growth rules: every ioctl structure starts with a __u32 'size' that the
 * caller sets to the sizeof() it was built with. The module accepts a smaller
 * size (older callers; missing fields read as zero) and a larger one only if
 * the extra bytes are zero. The size field of the ioctl command number is
 * not looked at, so commands built with an older struct keep working.
 * Reserved fields must be zero. Unknown flags are rejected with EINVAL.
 * Unknown ioctl commands answer ENOTTY.
 */
#ifndef _UAPI_LINUX_UWPROF_H
#define _UAPI_LINUX_UWPROF_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * Changes only when a caller built for the previous version would be
 * misunderstood. Additions (flags, struct growth, record types) keep the
 * version and say so with a UWPROF_CAP_* bit.
 */
#define UWPROF_ABI_VERSION	1

/* ------------------------------------------------------------------------
 * Unwind tables
 *
 * One table describes one ELF object (executable, shared library, vDSO).
 * Its addresses are the object's own virtual addresses (as readelf prints
 * them); a mapping's 'bias' turns a runtime pc into one (vaddr = pc - bias).
 *
 * A table blob is laid out as
 *
 *	struct uwprof_table_hdr		hdr;
 *	struct uwprof_table_page	page[nr_pages + 1];
 *	__u16				pc[nr_rows];	  (offset in the row's page)
 *	__u8				slot[nr_rows];	  (index into the page's palette)
 *	(zero padding to a multiple of 2 bytes)
 *	__u16				palette[nr_palette]; (indexes into rules[])
 *	(zero padding to a multiple of 8 bytes)
 *	struct uwprof_rule		rules[nr_rules];
 *
 * The code from base on is cut into pages of 1 << page_shift bytes: page p
 * covers [base + (p << page_shift), base + ((p + 1) << page_shift)) and
 * holds rows page[p].row .. page[p + 1].row - 1, at least one, the first at
 * offset 0, offsets strictly increasing and below 1 << page_shift, so
 * finding a row never leaves its page. A row applies from its address to
 * the next row's, or to its page's end. Row i of page p has the rule
 * rules[palette[page[p].palette + slot[i]]]: pages with the same few rules
 * can share a palette. The last row is an END row; the table covers
 * [base, base + ((nr_pages - 1) << page_shift) + pc[nr_rows - 1]).
 * page[nr_pages] closes the last page: { nr_rows, nr_palette }. END rows
 * also mark the gaps between functions.
 *
 * A row costs 3 bytes. Identical rules are shared, and the tool gives a
 * table with at most 256 rules one palette for all its pages: over the
 * objects of Debian 12's /usr/lib/x86_64-linux-gnu, /usr/bin and
 * /usr/aarch64-linux-gnu/lib, blobs hold 3.3 bytes per row in all, header,
 * pages, palettes and rules included (6.2 in format 3, whose rows were 6
 * bytes; 4.2 with 4-byte rows naming rules directly). The tool takes the
 * largest pages whose palettes fit a slot: 64 KiB for all of those objects
 * but one (16 KiB); pages of 256 bytes, the smallest, hold at most 256
 * rows.
 *
 * The module accepts only blobs of its own UWPROF_TABLE_VERSION (else
 * EINVAL), which UWPROF_IOC_VERSION reports: the version changes with
 * any change of this layout.
 * ------------------------------------------------------------------------
 */
#define UWPROF_TABLE_MAGIC	0x55575442	/* "UWTB" */
#define UWPROF_TABLE_VERSION	4
#define UWPROF_TABLE_MAX_ROWS	(1U << 24)
#define UWPROF_TABLE_MAX_RULES	(1U << 16)
#define UWPROF_TABLE_MAX_PALETTE	(1U << 24)
#define UWPROF_TABLE_MIN_PAGE_SHIFT	8
#define UWPROF_TABLE_MAX_PAGE_SHIFT	16

enum uwprof_arch {
	UWPROF_ARCH_X86_64	= 1,
	UWPROF_ARCH_ARM64	= 2,
};

/* How the canonical frame address (the caller's sp) is computed. */
enum uwprof_cfa {
	UWPROF_CFA_END		= 0,	/* no unwind info here: gap or table end */
	UWPROF_CFA_SP		= 1,	/* CFA = sp + cfa_off */
	UWPROF_CFA_FP		= 2,	/* CFA = fp + cfa_off (rbp / x29) */
	/*
	 * x86_64 lazy PLT entries (16 bytes each):
	 * CFA = sp + cfa_off + ((pc & 15) >= cfa_arg ? 8 : 0)
	 */
	UWPROF_CFA_PLT		= 3,
	/*
	 * An expression or register the module cannot evaluate: the walk
	 * stops here (UWPROF_STOP_UNSUPPORTED).
	 */
	UWPROF_CFA_UNSUPPORTED	= 4,
	/*
	 * A saved sp read from the stack: CFA = *(sp + cfa_off) + cfa_arg
	 * (DW_OP_breg<sp> cfa_off; DW_OP_deref; DW_OP_plus_uconst cfa_arg:
	 * OpenSSL's assembly), and the same from fp (GCC's stack realignment).
	 */
	UWPROF_CFA_DEREF_SP	= 5,
	UWPROF_CFA_DEREF_FP	= 6,
	/*
	 * CFA = register cfa_arg (DWARF number) + cfa_off (ld.so's lazy
	 * resolver, OpenSSL's assembly). The register's value in this frame:
	 * the one a frame stepped through saved (saved_reg), or the
	 * interrupted frame's while no frame stepped through had
	 * UWPROF_RULE_REGS; else the walk stops (UWPROF_STOP_UNSUPPORTED).
	 */
	UWPROF_CFA_REG		= 7,
};

/* Where the caller's value of a register (fp or return address) is. */
enum uwprof_reg_rule {
	UWPROF_REG_SAME		= 0,	/* unchanged: still in the register */
	UWPROF_REG_UNDEF	= 1,	/* undefined: for ra, outermost frame */
	UWPROF_REG_AT_CFA	= 2,	/* saved at CFA + off */
	UWPROF_REG_VAL_CFA	= 3,	/* value is CFA + off (DW_CFA_val_offset) */
	UWPROF_REG_IN_REG	= 4,	/* copied into DWARF register number 'off' */
	UWPROF_REG_UNSUPPORTED	= 5,	/* expression: not evaluated */
};

/* uwprof_rule.flags */
#define UWPROF_RULE_SIGNAL	(1U << 0)	/* FDE of a signal trampoline ('S') */
#define UWPROF_RULE_PAC		(1U << 1)	/* arm64: ra is signed (negate_ra_state) */
/*
 * The frame keeps a general register other than sp, fp and ra somewhere
 * else (saved on the stack, in another register): in its caller that
 * register no longer has the interrupted frame's value. Also set when
 * saved_type records the register.
 */
#define UWPROF_RULE_REGS	(1U << 2)

/*
 * 24 bytes. Offsets are in bytes and signed, so any frame up to 2 GiB is
 * described exactly; CFI whose offsets do not fit becomes an unsupported
 * rule in the tool, never a cut one. Fields a rule does not use are zero.
 *
 * saved_*: one general register other than sp, fp and ra that the frame
 * saved on the stack, so that a caller's UWPROF_CFA_REG can be based on
 * it. Of the callee-saved registers saved at CFA offsets that fit in 16
 * bits, the lowest-numbered: rbx, r12 .. r15 on x86_64, x19 .. x28 on
 * arm64 (rbx and x19 are what CFAs are based on in practice). A register
 * whose offset does not fit is not recorded, never recorded cut.
 */
struct uwprof_rule {
	__u8	cfa_type;	/* enum uwprof_cfa */
	__u8	fp_type;	/* enum uwprof_reg_rule: rbp / x29 */
	__u8	ra_type;	/* enum uwprof_reg_rule: return address / x30 */
	__u8	flags;		/* UWPROF_RULE_* */
	__s32	cfa_off;
	__s32	fp_off;		/* register number for UWPROF_REG_IN_REG */
	__s32	ra_off;		/* register number for UWPROF_REG_IN_REG */
	/*
	 * UWPROF_CFA_PLT: the (pc & 15) threshold, 0..15; UWPROF_CFA_REG: the
	 * DWARF register number, 0..31; UWPROF_CFA_DEREF_*: the unsigned
	 * addend; otherwise zero.
	 */
	__u32	cfa_arg;
	/*
	 * UWPROF_REG_AT_CFA: the caller's value of DWARF register saved_reg
	 * is saved at CFA + saved_off. UWPROF_REG_SAME: none recorded,
	 * saved_reg and saved_off zero. No other type.
	 */
	__u8	saved_type;	/* enum uwprof_reg_rule */
	__u8	saved_reg;	/* x86_64: 0..15, arm64: 0..29 */
	__s16	saved_off;
};

struct uwprof_table_hdr {
	__u32	magic;		/* UWPROF_TABLE_MAGIC */
	__u16	version;	/* UWPROF_TABLE_VERSION */
	__u16	arch;		/* enum uwprof_arch */
	__u32	hdr_size;	/* sizeof(struct uwprof_table_hdr) */
	__u32	rule_size;	/* sizeof(struct uwprof_rule) */
	__u32	nr_rows;
	__u32	nr_rules;
	__u64	base;		/* vaddr of page 0's first byte */
	__u8	build_id[20];	/* GNU build-id, zero padded (informational) */
	__u32	build_id_size;
	__u32	nr_pages;	/* page[] holds one more, closing the last */
	__u32	nr_palette;
	__u32	page_shift;	/* UWPROF_TABLE_MIN_PAGE_SHIFT .. _MAX_ */
	__u32	__reserved;	/* must be zero */
};

/* One page of a table: where its rows and its palette start. */
struct uwprof_table_page {
	__u32	row;		/* index of the page's first row */
	__u32	palette;	/* index of its palette's first entry */
};

/* Offsets in the blob and its size, for both sides to agree on. */
#define UWPROF_TABLE_PAGES_OFF(h)	((__u64)(h)->hdr_size)
#define UWPROF_TABLE_PC_OFF(h)		\
	(UWPROF_TABLE_PAGES_OFF(h) + 8ULL * ((__u64)(h)->nr_pages + 1))
#define UWPROF_TABLE_SLOT_OFF(h)	(UWPROF_TABLE_PC_OFF(h) + 2ULL * (h)->nr_rows)
#define UWPROF_TABLE_PALETTE_OFF(h)	\
	((UWPROF_TABLE_SLOT_OFF(h) + (h)->nr_rows + 1) & ~1ULL)
#define UWPROF_TABLE_RULES_OFF(h)	\
	((UWPROF_TABLE_PALETTE_OFF(h) + 2ULL * (h)->nr_palette + 7) & ~7ULL)
#define UWPROF_TABLE_SIZE(h)		\
	(UWPROF_TABLE_RULES_OFF(h) + (__u64)(h)->rule_size * (h)->nr_rules)

/* ------------------------------------------------------------------------
 * ioctls
 *
 * Every ioctl checks all of its input before it changes any state, and
 * answers 0 or -1 with errno:
 *   EINVAL  malformed: size below the struct's first version, unknown flag,
 *           reserved field set, value out of range, table blob or mapping
 *           list invalid (unsorted, overlapping, empty range, beyond user
 *           space), a field whose flag is not set (not zero), a comm that
 *           is empty or not NUL-padded, STOP when not sampling,
 *           RING_INFO/mmap without rings
 *   E2BIG   a count above its UWPROF_MAX_* / UWPROF_TABLE_MAX_* limit, a
 *           blob larger than any valid table, a struct size above 4096, or
 *           non-zero bytes beyond the struct the module knows
 *   EFAULT  a pointer that cannot be read or written
 *   EBADF   START with UWPROF_START_CGROUP and a cgroup_fd that is not an
 *           open directory of the cgroup v2 hierarchy
 *   ENOMEM  out of kernel memory
 *   ENOSPC  TABLE_ADD or MAPS_SET would exceed the module's table_mem_max
 *           parameter (bytes of tables and mapping lists, all sessions)
 *           or user_mem_max (the same, all sessions of the opener's uid,
 *           unless it has CAP_SYS_ADMIN)
 *   ENOENT  OBJECT_DEL / PROCESS_DEL of an unknown id or pid; MAPS_SET
 *           naming an object id that was not added; START with
 *           UWPROF_START_CGROUP and a cgroup that was removed
 *   ESRCH   MAPS_SET with UWPROF_MAPS_START_TIME for a process that is
 *           not (or no longer) the one that started then
 *   EEXIST  TABLE_ADD with an object id already in use
 *   EBUSY   START while this session samples, or while its previous run's
 *           rings are still mmapped
 *   EPERM   START with UWPROF_START_KERNEL_STACK for an opener that may
 *           not see kernel addresses; START whose rings would take the
 *           opener's user past its locked-memory allowance (the pages
 *           are charged to it as perf charges its rings: ring_mlock_kb
 *           per online CPU plus RLIMIT_MEMLOCK, unless CAP_IPC_LOCK)
 *   EOPNOTSUPP  START with UWPROF_START_CYCLES and no hardware cycles
 *           event, with UWPROF_START_OFF_CPU and no sched_switch
 *           tracepoint, with UWPROF_START_CGROUP on a kernel without
 *           cgroups, or with UWPROF_START_MMAP where the module's probe
 *           cannot be placed (no kprobes, or no perf_event_mmap)
 *   ENOTTY  unknown command
 * open() answers EPERM without CAP_PERFMON (or CAP_SYS_ADMIN), and EMFILE
 * when the opener's uid has user_sessions_max sessions open already
 * (unless it has CAP_SYS_ADMIN).
 * Output-only structs (VERSION, STATS, RING_INFO) need only 'size' set
 * (at least 8); the module fills min(size, its sizeof) bytes, zeroes the
 * rest, and stores its own sizeof in 'size' when that fits.
 * Tables, mappings and processes belong to the open file; closing it stops
 * sampling and frees them. After STOP the rings stay readable until the
 * next START or close.
 *
 * Sessions: every open file is a session of its own, and several may
 * sample at once (UWPROF_CAP_SESSIONS; before it, a START while any other
 * session sampled answered EBUSY). Each has its own perf events, filter,
 * rings and statistics and sees none of another's tables or records. What
 * they share are the module's limits: table_mem_max (of which one user's
 * sessions hold at most user_mem_max), and cpu_max_percent,
 * one share of each CPU's time for the stack walks of every session
 * together (samples over it are skipped_throttle in the session that
 * would have taken them).
 * ------------------------------------------------------------------------
 */

/* uwprof_version.caps */
#define UWPROF_CAP_HW_CYCLES	(1U << 0)	/* a hardware cycles event opens */
#define UWPROF_CAP_KERNEL_STACK	(1U << 1)	/* caller may see kernel addresses */
#define UWPROF_CAP_SNAPSHOT	(1U << 2)	/* START takes UWPROF_START_SNAPSHOT */
#define UWPROF_CAP_OFF_CPU	(1U << 3)	/* START takes UWPROF_START_OFF_CPU */
#define UWPROF_CAP_SESSIONS	(1U << 4)	/* several sessions sample at once */
#define UWPROF_CAP_CGROUP	(1U << 5)	/* START takes UWPROF_START_CGROUP */
#define UWPROF_CAP_COMM		(1U << 6)	/* START takes UWPROF_START_COMM */
#define UWPROF_CAP_MMAP		(1U << 7)	/* START takes UWPROF_START_MMAP */
#define UWPROF_CAP_DESCENDANTS	(1U << 8)	/* START takes UWPROF_START_DESCENDANTS */
#define UWPROF_CAP_MAPS_START	(1U << 9)	/* MAPS_SET takes UWPROF_MAPS_START_TIME */
/*
 * Every walk has a time limit (module parameters walk_max_us and
 * offcpu_walk_max_us): UWPROF_STOP_TIME, UWPROF_SNAP_TIME and the stats'
 * stop_time and snapshots_time_cut exist.
 */
#define UWPROF_CAP_WALK_TIME	(1U << 10)
#define UWPROF_CAP_RENAME	(1U << 11)	/* threads' renames come as UWPROF_REC_COMM */
#define UWPROF_CAP_PYTHON	(1U << 12)	/* MAPS_SET takes UWPROF_MAPS_PYTHON */

struct uwprof_version {
	__u32	size;		/* in: sizeof(struct uwprof_version) */
	__u32	abi_version;	/* out: UWPROF_ABI_VERSION */
	__u32	table_version;	/* out: UWPROF_TABLE_VERSION */
	__u32	arch;		/* out: enum uwprof_arch */
	__u32	caps;		/* out: UWPROF_CAP_* */
	__u32	nr_cpus;	/* out: number of rings (nr_cpu_ids) */
	__u64	table_mem_max;	/* out: table memory cap, bytes */
	__u64	__reserved[4];
};

struct uwprof_table_add {
	__u32	size;
	__u32	flags;		/* must be zero */
	__u64	object_id;	/* caller's key, non-zero; see uwprof_map */
	__u64	data;		/* pointer to the table blob */
	__u64	data_size;	/* bytes at 'data' */
};

struct uwprof_object_del {
	__u32	size;
	__u32	flags;		/* must be zero */
	__u64	object_id;
};

/* uwprof_map.flags */
#define UWPROF_MAP_NO_TABLE	(1U << 0)	/* known code without table: use fp */

struct uwprof_map {
	__u64	start;		/* runtime [start, end) */
	__u64	end;
	__u64	bias;		/* object vaddr = pc - bias */
	__u64	object_id;	/* table to use; 0 with UWPROF_MAP_NO_TABLE */
	__u32	flags;		/* UWPROF_MAP_* */
	__u32	__reserved;
};

#define UWPROF_MAX_MAPS		65536

/*
 * A process forked from one with mappings starts with a copy of its
 * parent's list (best effort); exec and exit drop a process's list.
 */
struct uwprof_maps_set {
	__u32	size;
	__u32	flags;		/* UWPROF_MAPS_* */
	__u32	pid;		/* thread-group id; replaces its whole list */
	__u32	nr_maps;	/* sorted by start, non-overlapping */
	__u64	maps;		/* pointer to struct uwprof_map[nr_maps] */
	/*
	 * With UWPROF_MAPS_START_TIME (else zero): the process's start time
	 * in clock ticks since boot, /proc/PID/stat's field 22 as read in
	 * the initial time namespace. The list is then bound to that process:
	 * ESRCH when 'pid' names no process, a later one (the number was
	 * reused), or one that exits before the list is in place, so a list
	 * read from a process that is gone never applies to its successor.
	 * Without the flag a list is bound to the number alone.
	 */
	__u64	start_time;
	/*
	 * With UWPROF_MAPS_PYTHON (else zero): pointer to the process's
	 * struct uwprof_python, which then lives and dies with the list.
	 */
	__u64	python;
};

#define UWPROF_MAPS_START_TIME	(1U << 0)
#define UWPROF_MAPS_PYTHON	(1U << 1)

/* ------------------------------------------------------------------------
 * Python frames (UWPROF_CAP_PYTHON)
 *
 * A process running CPython gets, in every sample whose native walk passes
 * through the interpreter's eval function, the Python frames each
 * invocation of that function runs, read from the interpreter's own frame
 * chain. The reader describes the interpreter once per process (struct
 * uwprof_python, with the mapping list): how to find the sampled thread's
 * PyThreadState from its thread
 * pointer (x86_64 fs base, arm64 tpidr_el0) through the C library's
 * thread-specific data, and the offsets of the few fields the walk reads.
 * Nothing in it is trusted: every address read is checked against user
 * space and read without faulting; a chain that cannot be read, or that
 * does not fit the native stack, ends the walk with UWPROF_STOP_PYTHON.
 *
 * The walk, for the thread's state ts (see the fields below):
 *
 *	key = *(u32 *)key_addr
 *	pt  = thread pointer + tp_pthread, where *(u32 *)(pt + pt_tid) must
 *	      be the sampled thread's id (in its own pid namespace)
 *	l1  = *(u64 *)(pt + pt_specific + 8 * (key / kd_per_block))
 *	ts  = *(u64 *)(l1 + kd_size * (key % kd_per_block) + kd_data)
 *
 * UWPROF_PY_CFRAME (CPython 3.11): each invocation of the eval function
 * keeps a "cframe" in its own native stack frame; ts + ts_frame holds the
 * innermost one, cframe + cf_previous the next outer one, cframe +
 * cf_frame the invocation's innermost Python frame, and its Python frames
 * run along frame + fr_previous up to and including the first whose byte
 * at fr_entry is non-zero.
 *
 * Otherwise (CPython 3.12 on): ts + ts_frame holds the innermost Python
 * frame, and each invocation starts with an entry frame in its own native
 * stack frame, one whose byte at fr_entry is entry_value: the Python
 * frames before it in the chain are the invocation's, the entry frame
 * itself is not a Python frame.
 *
 * An invocation's frames belong to the native frame whose stack [sp, CFA)
 * holds its cframe or entry frame: a local of the eval function, so the
 * walk needs no address of its code. A thread without a state runs no
 * Python; a marker the native walk steps past without reaching it, or
 * one left over at the outermost frame, ends the walk with
 * UWPROF_STOP_PYTHON. A Python frame is recorded as the address of its code
 * object (frame + fr_code, with the low UWPROF_PY_CODE_TAG_BITS cleared
 * under UWPROF_PY_CODE_TAGGED), which must be an object whose type (at
 * co_type) is code_type, its instruction offset in code units:
 * (*(frame + fr_instr) - (code + co_code)) / 2, -1 .. the code object's
 * size in code units (at co_size) - 1, and a fingerprint of the object
 * (UWPROF_PY_FINGERPRINT of its size, first line (the int at
 * co_firstlineno) and the addresses of its qualified name and file name),
 * so that a reader naming the code object later tells it from another
 * one at the same address.
 * ------------------------------------------------------------------------
 */
#define UWPROF_PY_MAX_OFF	4096	/* any field offset below */
#define UWPROF_PY_CODE_TAG_BITS	3

/* uwprof_python.flags */
#define UWPROF_PY_CFRAME	(1U << 0)
#define UWPROF_PY_CODE_TAGGED	(1U << 1)

struct uwprof_python {
	__u32	size;		/* sizeof(struct uwprof_python) */
	__u32	flags;		/* UWPROF_PY_* */
	__u32	version;	/* PY_VERSION_HEX >> 16 (0x030b): for the reader */
	__u32	__reserved0;	/* must be zero */
	__u64	key_addr;	/* the u32 pthread key of the thread states */
	__u64	code_type;	/* runtime address of PyCode_Type */
	__s32	tp_pthread;	/* C library: thread pointer to struct pthread */
	__u32	pt_specific;	/* ... to its array of key-data blocks */
	__u32	pt_tid;		/* ... to the thread's id */
	__u32	kd_size;	/* bytes of one key's data, 8 .. 64 */
	__u32	kd_data;	/* the value's offset in it */
	__u32	kd_per_block;	/* keys per block, a power of two */
	__u32	ts_frame;	/* PyThreadState: cframe or current frame */
	__u32	cf_frame;	/* UWPROF_PY_CFRAME: _PyCFrame fields */
	__u32	cf_previous;
	__u32	fr_code;	/* interpreter frame fields */
	__u32	fr_previous;
	__u32	fr_instr;
	__u32	fr_entry;	/* a byte: is_entry, or owner */
	__u32	entry_value;	/* without UWPROF_PY_CFRAME: 0 .. 255 */
	__u32	co_type;	/* code object: ob_type */
	__u32	co_size;	/* ob_size, code units */
	__u32	co_code;	/* first code unit */
	__u32	co_firstlineno;	/* int */
	__u32	co_qualname;	/* str * */
	__u32	co_filename;	/* str * */
};

/* 24 bits of a code object's identity (see above); u64 arguments. */
#define UWPROF_PY_FP_MIX(size, line, qual, file)			\
	((size) ^ ((__u64)(__u32)(line) << 24) ^ ((qual) >> 4) ^ ((file) << 20))
#define UWPROF_PY_FINGERPRINT(size, line, qual, file)			\
	((__u32)(UWPROF_PY_FP_MIX(size, line, qual, file) ^			\
		 (UWPROF_PY_FP_MIX(size, line, qual, file) >> 24) ^		\
		 (UWPROF_PY_FP_MIX(size, line, qual, file) >> 48)) & 0xffffffU)

struct uwprof_process_del {
	__u32	size;
	__u32	pid;
};

/* uwprof_start.flags */
#define UWPROF_START_SYSTEM_WIDE	(1U << 0)	/* every process, not pids[] */
#define UWPROF_START_KERNEL_STACK	(1U << 1)	/* kernel frames first */
#define UWPROF_START_CPU_CLOCK		(1U << 2)	/* force cpu-clock */
#define UWPROF_START_CYCLES		(1U << 3)	/* force hardware cycles */
#define UWPROF_START_NO_FP_FALLBACK	(1U << 4)	/* tables only */
/*
 * Stop (SIGSTOP) a process this session has mappings for at the moment it
 * execs, before the new image runs an instruction, until MAPS_SET or
 * PROCESS_DEL for it, STOP, close, or 500 ms at the latest (then SIGCONT):
 * a reader that uploads every exec'd image at once (its EXIT record wakes
 * the reader) loses no sample of it. Meant for a command the reader
 * started; other processes see a stop and a continue. Only processes the
 * opener could ptrace-attach to are held: the opener has CAP_SYS_PTRACE,
 * or its real uid and gid equal every uid and gid of the new image and
 * the image is dumpable (never a setuid or setgid exec). A process several
 * sessions hold continues once the last of them let go (a session taking
 * its hold sees the others': every hold of an exec is taken before any
 * session's EXIT record of it is written).
 */
#define UWPROF_START_HOLD_EXEC		(1U << 5)
/*
 * Samples whose walk reached code the session has no mappings for (stop
 * NO_PROCESS or NO_MAP: a process or library the reader has not uploaded
 * yet) carry a snapshot of the user stack and registers at the frame the
 * walk stopped at (UWPROF_SAMPLE_SNAPSHOT), so the reader can finish the
 * walk once it has the tables. Never for the process that started the
 * session: the reader does not finish walks of itself; nor when the walk
 * stopped below a Python invocation (UWPROF_CAP_PYTHON), whose frames a
 * walk resumed from the stack alone would leave out.
 */
#define UWPROF_START_SNAPSHOT		(1U << 6)
/*
 * Off-CPU samples besides the on-CPU ones: when a traced thread blocks
 * (switched out in any state but running: a sleep, a lock, I/O, a stop;
 * a preempted thread is still runnable and not counted) its user stack is
 * walked, with kernel frames under UWPROF_START_KERNEL_STACK, and when it
 * is switched in again a sample flagged UWPROF_SAMPLE_OFF_CPU is written
 * whose period is the nanoseconds it was off CPU (blocked plus waiting
 * for a CPU after its wakeup), if at least off_cpu_min_ns. At most
 * UWPROF_OFF_CPU_SLOTS threads are tracked blocked at once and off-CPU
 * stacks keep at most UWPROF_OFF_CPU_DEPTH user frames.
 */
#define UWPROF_START_OFF_CPU		(1U << 7)
/*
 * Filters besides the pids. A task is sampled (on and off CPU) only when
 * it passes every filter given: its tgid is in pids[] (unless
 * UWPROF_START_SYSTEM_WIDE), and with these flags it is in the cgroup v2
 * directory cgroup_fd names or below it, and its comm (the thread's name,
 * as /proc/PID/task/TID/comm shows it) is 'comm'. Each sample checks the
 * task as it is at that moment: a task moved into the cgroup, or renamed,
 * is sampled from then on. Samples of other tasks count as
 * skipped_filter. The EXIT and FORK records say which processes they
 * are sent for.
 */
#define UWPROF_START_CGROUP		(1U << 8)
#define UWPROF_START_COMM		(1U << 9)
/*
 * With UWPROF_START_SYSTEM_WIDE, a filter like the two above: the task
 * descends from the process that issued START (its parent, its parent's
 * parent, ..., at most UWPROF_MAX_ANCESTORS up), which itself does not.
 * For a command the reader starts: neither other processes' samples nor
 * their MMAP records and execs reach the ring, and no stack of theirs is
 * copied. The parent links are read as they are at the sample: a process
 * whose parent exited was re-parented (to init or a subreaper) and no
 * longer descends from the owner.
 */
#define UWPROF_START_DESCENDANTS	(1U << 11)
/*
 * UWPROF_REC_MMAP records for every executable mapping a traced process
 * makes (a file's code, the vDSO), written from the mmap itself: the reader
 * learns of a process's code even if the process is gone before it could
 * read /proc/PID/maps, and of a library as it is mapped. Offered where
 * UWPROF_CAP_MMAP says so; START still answers EOPNOTSUPP if the probe
 * cannot be placed. The session owner's own mappings are left out. At
 * most UWPROF_MMAP_RATE records a second per CPU (stats: mmap_throttled).
 */
#define UWPROF_START_MMAP		(1U << 10)
#define UWPROF_MMAP_RATE		1000

#define UWPROF_MAX_DEPTH	8192
#define UWPROF_MAX_PIDS		1024
#define UWPROF_MAX_ANCESTORS	256
#define UWPROF_MAX_FREQ		100000
#define UWPROF_MAX_RING_PAGES	4096	/* data pages per CPU */
#define UWPROF_SNAPSHOT_DEFAULT	16384	/* stack bytes per snapshot */
#define UWPROF_MAX_SNAPSHOT	65536
#define UWPROF_OFF_CPU_SLOTS	256
#define UWPROF_OFF_CPU_DEPTH	512

struct uwprof_start {
	__u32	size;
	__u32	flags;		/* UWPROF_START_* */
	__u32	freq_hz;	/* 1 .. UWPROF_MAX_FREQ */
	__u32	max_depth;	/* user frames, 1 .. UWPROF_MAX_DEPTH */
	/*
	 * Data pages per CPU: a power of two, at most UWPROF_MAX_RING_PAGES,
	 * large enough for two records of max_depth, all rings at most 1 GiB
	 * (else E2BIG); 0: the default.
	 */
	__u32	ring_pages;
	__u32	nr_pids;	/* without SYSTEM_WIDE: 1 .. UWPROF_MAX_PIDS */
	__u64	pids;		/* pointer to __u32 tgids[nr_pids] */
	/*
	 * With UWPROF_START_SNAPSHOT: stack bytes copied per snapshot, a
	 * multiple of 8 up to UWPROF_MAX_SNAPSHOT (else EINVAL / E2BIG), 0:
	 * UWPROF_SNAPSHOT_DEFAULT. Must be 0 without the flag.
	 */
	__u32	snapshot_size;
	__u32	__reserved;	/* must be zero */
	/*
	 * With UWPROF_START_OFF_CPU: blocks shorter than this many ns write
	 * no record (they cost the walk at switch-out, no ring space). Must
	 * be 0 without the flag.
	 */
	__u64	off_cpu_min_ns;
	/*
	 * With UWPROF_START_CGROUP: an open file descriptor (O_RDONLY or
	 * O_PATH) of a cgroup v2 directory; the module holds a reference on
	 * the cgroup until the next START or close, so the caller may close
	 * the fd after START. Must be 0 without the flag.
	 */
	__s32	cgroup_fd;
	__u32	__reserved2;	/* must be zero */
	/*
	 * With UWPROF_START_COMM: the task name to sample, 1 to 15 bytes,
	 * NUL-padded to 16. All zero without the flag.
	 */
	char	comm[16];
};

/* Why a user stack ended; uwprof_sample.flags low byte and stats index. */
enum uwprof_stop {
	UWPROF_STOP_OK = 0,		/* outermost frame reached (ra undefined) */
	/*
	 * The frame-pointer chain ended at zero, or (arm64) at a frame it
	 * cannot place: one whose row needs the sp a frame-pointer step does
	 * not give (UWPROF_SNAP_SP_LOW) and keeps no frame record.
	 */
	UWPROF_STOP_FP_END,
	UWPROF_STOP_DEPTH,		/* max_depth frames kept, more follow */
	UWPROF_STOP_NO_MAP,		/* pc in no known mapping */
	UWPROF_STOP_NO_ROW,		/* mapped, but no row and no fp fallback */
	UWPROF_STOP_UNSUPPORTED,	/* row with an unsupported rule */
	UWPROF_STOP_READ,		/* user memory not readable (not resident) */
	UWPROF_STOP_BAD_SP,		/* sp did not increase or went out of range */
	UWPROF_STOP_BAD_PC,		/* return address outside user space */
	UWPROF_STOP_NO_PROCESS,		/* no mappings uploaded for the process */
	/*
	 * The walk reached its time limit (module parameter walk_max_us, or
	 * offcpu_walk_max_us off CPU): the frames kept are right, the stack
	 * goes on. UWPROF_CAP_WALK_TIME.
	 */
	UWPROF_STOP_TIME,
	/*
	 * The interpreter's frame chain could not be read, or did not fit
	 * the native stack (UWPROF_CAP_PYTHON): the frames kept are right.
	 */
	UWPROF_STOP_PYTHON,
	UWPROF_STOP__COUNT,
};

/*
 * The stop reasons uwprof_stats.stop[] counts: those of the first version
 * of the struct, whose layout cannot grow in the middle. The counter of
 * each later reason is a field at the end of the struct (stop_time).
 */
#define UWPROF_STATS_STOPS	10

/* uwprof_sample.flags */
#define UWPROF_SAMPLE_STOP_MASK		0xffU	/* enum uwprof_stop */
#define UWPROF_SAMPLE_FP_USED		(1U << 8)	/* some frame used fp fallback */
#define UWPROF_SAMPLE_IN_KERNEL		(1U << 9)	/* the sample hit kernel mode */
#define UWPROF_SAMPLE_SNAPSHOT		(1U << 10)	/* struct uwprof_snapshot follows */
/*
 * An off-CPU sample (UWPROF_START_OFF_CPU): time_ns is when the thread
 * blocked, period the ns until it ran again, cpu the one it ran again on
 * (whose ring carries the record); the stack is the one it blocked with.
 */
#define UWPROF_SAMPLE_OFF_CPU		(1U << 11)
/*
 * Taken inside execve after the old image's address space was replaced,
 * where the user registers and the process's uploaded mappings belong to
 * different images: the sample has no user frames, and UWPROF_STOP_READ
 * as its stop reason.
 */
#define UWPROF_SAMPLE_EXEC		(1U << 12)
/* ips[] holds Python frames (UWPROF_IP_PYTHON). */
#define UWPROF_SAMPLE_PYTHON		(1U << 13)

/*
 * A Python frame among a sample's user frames takes two entries of ips[]:
 * a word with UWPROF_IP_PYTHON in its top byte, the frame's instruction
 * offset in its low 32 bits (signed: -1 before the first instruction) and
 * its code object's fingerprint (UWPROF_PY_FINGERPRINT) above them, then
 * the code object's address. The Python frames an invocation of the eval
 * function runs follow that invocation's native frame (the one ips[] has
 * just before them), innermost first. No user or kernel address has that
 * top byte.
 */
#define UWPROF_IP_PYTHON		0xfe00000000000000ULL
#define UWPROF_IP_TAG_MASK		0xff00000000000000ULL
#define UWPROF_IP_PY_LASTI(w)		((__s32)(__u32)(w))
#define UWPROF_IP_PY_FP(w)		((__u32)((w) >> 32) & 0xffffffU)

#define UWPROF_HIST_BUCKETS	16	/* bucket i: [2^i, 2^(i+1)) x 64 ns */

struct uwprof_stats {
	__u32	size;
	__u32	__reserved0;
	__u64	samples;		/* sample records written */
	__u64	frames;			/* user frames in them */
	__u64	lost;			/* records dropped: ring full or nested */
	__u64	skipped_kthread;
	__u64	skipped_compat;
	__u64	skipped_filter;		/* not a traced pid, cgroup, comm or tree */
	__u64	fp_frames;		/* frames found by fp fallback */
	__u64	unknown_maps;		/* UWPROF_REC_UNKNOWN_MAP records written */
	__u64	stop[UWPROF_STATS_STOPS];	/* see stop_time for the rest */
	/* Samples by the time their stack walks took, kernel and user. */
	__u64	unwind_ns_hist[UWPROF_HIST_BUCKETS];
	__u64	tables;			/* objects loaded */
	__u64	table_bytes;
	__u64	processes;		/* processes with mappings */
	__u64	processes_dropped;	/* freed on exit or exec */
	/*
	 * Accounting identities, exact once sampling stopped:
	 *   events == samples + lost_samples + skipped_kthread
	 *             + skipped_compat + skipped_filter + skipped_throttle
	 *   lost == sum of every ring's uwprof_ring_ctl.lost
	 *        == sum of the counts of the UWPROF_REC_LOST records
	 * ('lost' counts records of every type, 'lost_samples' samples only).
	 */
	__u64	events;			/* overflow-handler calls */
	__u64	lost_samples;		/* samples in 'lost' */
	__u64	exit_records;		/* UWPROF_REC_EXIT records written */
	__u64	processes_inherited;	/* forked children given the parent's maps */
	/*
	 * Samples not taken because this CPU's stack walks, those of every
	 * session together, had used their share of its time (module
	 * parameter cpu_max_percent, per 10 ms).
	 */
	__u64	skipped_throttle;
	__u64	snapshots;		/* samples carrying a stack snapshot */
	__u64	snapshot_bytes;		/* stack bytes in them */
	__u64	fork_records;		/* UWPROF_REC_FORK records written */
	/*
	 * Samples in 'samples' taken in NMI context: x86 hardware cycles, or
	 * the NMIs of the test-only build (UWPROF_TEST_NMI=1); the rest came
	 * from hard IRQ. nmi_samples <= samples.
	 */
	__u64	nmi_samples;
	/*
	 * UWPROF_START_OFF_CPU. Once sampling stopped:
	 *   off_cpu_blocks == off_cpu_samples + off_cpu_short
	 *                     + off_cpu_dropped + off_cpu_lost
	 *                     + threads still blocked at STOP
	 */
	__u64	off_cpu_blocks;		/* blocks of traced threads seen */
	__u64	off_cpu_samples;	/* off-CPU sample records written */
	__u64	off_cpu_short;		/* shorter than off_cpu_min_ns */
	/* Not recorded: every slot taken, walk budget used, or ring busy. */
	__u64	off_cpu_dropped;
	__u64	off_cpu_lost;		/* records in 'lost': ring full */
	__u64	mmap_records;		/* UWPROF_REC_MMAP records written */
	/*
	 * Times the kernel stopped one of the session's sampling events until
	 * its next tick because it overflowed more often than
	 * kernel.perf_event_max_sample_rate allows (the kernel lowers that
	 * limit itself when sample interrupts take long). A throttled event
	 * samples in bursts at the tick, not evenly: a program that repeats
	 * in step with the tick is then sampled at one phase of its period.
	 */
	__u64	kernel_throttles;
	/*
	 * MMAP records not written because the session had written
	 * UWPROF_MMAP_RATE of them on that CPU in the current second (a
	 * process looping over mmap or mprotect): the reader learns of
	 * those mappings from /proc/PID/maps or a sample's snapshot.
	 */
	__u64	mmap_throttled;
	/*
	 * UWPROF_CAP_WALK_TIME. stop_time: samples whose walk stopped with
	 * UWPROF_STOP_TIME (stop[] ends before it). snapshots_time_cut:
	 * snapshots copied shorter than snapshot_size (UWPROF_SNAP_TIME),
	 * counted in 'snapshots' too.
	 */
	__u64	stop_time;
	__u64	snapshots_time_cut;
	/*
	 * Exits, execs and forks of processes the session had mappings for
	 * whose bookkeeping the module could not hand to process context
	 * (every slot of its pool of pending work in use). Never a wrong
	 * stack: the process's samples get no frames until its mappings are
	 * uploaded again, an exec goes unheld, a child starts without its
	 * parent's mappings.
	 */
	__u64	lifecycle_lost;
	/* Samples whose walk stopped with UWPROF_STOP_PYTHON. */
	__u64	stop_python;
	/*
	 * Nanoseconds the samples' stack walks (and snapshots) took in all,
	 * kernel and user: unwind_ns_hist counts the same by size.
	 */
	__u64	unwind_ns;
};

struct uwprof_ring_info {
	__u32	size;
	__u32	nr_rings;	/* one per possible CPU */
	__u64	stride;		/* bytes from one ring's control page to the next */
	__u64	data_size;	/* bytes of data per ring, a power of two */
	__u64	mmap_size;	/* nr_rings * stride: the only valid mmap length */
};

#define UWPROF_IOC_MAGIC	0xb7

#define UWPROF_IOC_VERSION	_IOWR(UWPROF_IOC_MAGIC, 0x00, struct uwprof_version)
#define UWPROF_IOC_TABLE_ADD	_IOW(UWPROF_IOC_MAGIC, 0x01, struct uwprof_table_add)
#define UWPROF_IOC_OBJECT_DEL	_IOW(UWPROF_IOC_MAGIC, 0x02, struct uwprof_object_del)
#define UWPROF_IOC_MAPS_SET	_IOW(UWPROF_IOC_MAGIC, 0x03, struct uwprof_maps_set)
#define UWPROF_IOC_PROCESS_DEL	_IOW(UWPROF_IOC_MAGIC, 0x04, struct uwprof_process_del)
#define UWPROF_IOC_START	_IOW(UWPROF_IOC_MAGIC, 0x05, struct uwprof_start)
#define UWPROF_IOC_STOP		_IO(UWPROF_IOC_MAGIC, 0x06)
#define UWPROF_IOC_STATS	_IOWR(UWPROF_IOC_MAGIC, 0x07, struct uwprof_stats)
#define UWPROF_IOC_RING_INFO	_IOWR(UWPROF_IOC_MAGIC, 0x08, struct uwprof_ring_info)

/* ------------------------------------------------------------------------
 * Rings
 *
 * After UWPROF_IOC_START, mmap(NULL, mmap_size, PROT_READ | PROT_WRITE,
 * MAP_SHARED, fd, 0) maps one ring per possible CPU, ring i at i * stride:
 *
 *	page 0:	struct uwprof_ring_ctl, written by the module only
 *	page 1:	struct uwprof_ring_tail, written by the reader only
 *	then data_size bytes of records
 *
 * Positions are free-running byte counts; a record at position p starts at
 * data[p & (data_size - 1)] and may wrap around the end of the data area.
 * Records are 8-byte aligned and start with struct uwprof_rec_hdr.
 *
 * Ordering: the module writes a record, then publishes it with a release
 * store of 'head' (smp_store_release). The reader loads 'head' with acquire
 * (__atomic_load_n(..., __ATOMIC_ACQUIRE)), reads records up to it, then
 * stores its new 'tail' with release; the module reads 'tail' with acquire
 * before it reuses space. The module never trusts 'tail': a value outside
 * [head - data_size, head] makes the ring count as full. The control page
 * is informational: the module keeps its own copy of 'head' and 'lost'.
 *
 * When a record does not fit, the module counts it as lost; the next record
 * that fits is preceded by UWPROF_REC_LOST carrying the exact count. Space
 * for one LOST record is always kept free, so STOP can flush the final
 * count: after STOP, the LOST records of a ring sum to its 'lost'.
 * Records from a nested context (an NMI while the same CPU writes its
 * ring) are lost the same way. poll() reports POLLIN while any ring holds
 * unread records, but sleepers are woken only when a ring's unread part
 * crosses a quarter of its size, at once for EXIT records, for the
 * UNKNOWN_MAP records of processes that have mappings (stop NO_MAP) and
 * for samples whose Python frames name a code object the CPU's samples
 * have not carried lately (the reader names code objects while they
 * live), and by STOP. Readers that want samples sooner poll with a timeout.
 * ------------------------------------------------------------------------
 */
#define UWPROF_RING_VERSION	1

struct uwprof_ring_ctl {
	__u32	version;	/* UWPROF_RING_VERSION */
	__u32	cpu;
	__u64	data_offset;	/* from this page to the data area */
	__u64	data_size;
	__u64	head;		/* producer position (release) */
	__u64	lost;		/* records lost on this ring, running total */
	__u64	__reserved[3];
};

struct uwprof_ring_tail {
	__u64	tail;		/* consumer position (release) */
};

enum uwprof_rec_type {
	UWPROF_REC_SAMPLE	= 1,
	UWPROF_REC_LOST		= 2,
	UWPROF_REC_UNKNOWN_MAP	= 3,
	UWPROF_REC_EXIT		= 4,
	UWPROF_REC_FORK		= 5,
	UWPROF_REC_MMAP		= 6,
	UWPROF_REC_COMM		= 7,
};

struct uwprof_rec_hdr {
	__u32	type;		/* enum uwprof_rec_type */
	__u32	size;		/* whole record, multiple of 8 */
};

struct uwprof_rec_sample {
	struct uwprof_rec_hdr hdr;
	__u64	time_ns;	/* CLOCK_MONOTONIC */
	__u32	pid;		/* thread-group id */
	__u32	tid;
	__u32	cpu;
	__u32	flags;		/* UWPROF_SAMPLE_*, stop reason in the low byte */
	/*
	 * Kernel frames, first in ips[]: with UWPROF_START_KERNEL_STACK and a
	 * sample that hit the kernel, the interrupted kernel pc then its
	 * callers (at most 128); just the pc when the walk did not reach it.
	 */
	__u16	nr_kernel;
	__u16	nr_user;	/* user frames, leaf first, after the kernel ones */
	__u32	__reserved;
	__u64	period;
	__u64	ips[];
};

/*
 * uwprof_snapshot.flags: what is known of the frame the walk stopped at.
 * All clear: the interrupted frame itself.
 */
#define UWPROF_SNAP_CALLER	(1U << 0)	/* pc is a return address */
#define UWPROF_SNAP_NO_FP	(1U << 1)	/* fp is not the frame's value */
#define UWPROF_SNAP_NO_LR	(1U << 2)	/* lr is not its return address */
#define UWPROF_SNAP_NO_GPR	(1U << 3)	/* no gpr[]: other registers unknown */
#define UWPROF_SNAP_CUT		(1U << 4)	/* the stack goes on past stack[] */
/*
 * The copy was shortened before it began to what the walk's time limit
 * and the CPU's walk budget had left (UWPROF_CAP_WALK_TIME), and has
 * UWPROF_SNAP_CUT if it reached that length; stack_size may be 0.
 */
#define UWPROF_SNAP_TIME	(1U << 5)
/*
 * sp is a lower bound, the frame's own lies above it: the walk reached
 * this frame by a frame-pointer step on arm64, whose record need not sit
 * at the top of its frame. A resumed walk then needs a frame record to
 * place an sp-based frame (see the module's design notes).
 */
#define UWPROF_SNAP_SP_LOW	(1U << 6)

/*
 * Follows ips[] of a sample with UWPROF_SAMPLE_SNAPSHOT; pc is the last
 * user ip. Then gpr[nr_gpr] (the general registers by DWARF number: x86_64
 * rax .. r15, arm64 x0 .. x30 and sp), then stack_size bytes of user memory
 * from sp, then zero padding to the record's size. The copy ends early at
 * the first unreadable page; UWPROF_SNAP_CUT says it ended at the
 * session's snapshot_size instead.
 */
struct uwprof_snapshot {
	__u64	pc;
	__u64	sp;
	__u64	fp;
	__u64	lr;		/* arm64 x30 */
	__u32	flags;		/* UWPROF_SNAP_* */
	__u32	nr_gpr;
	__u32	stack_size;
	__u32	__reserved;
};

struct uwprof_rec_lost {
	struct uwprof_rec_hdr hdr;
	__u64	count;
};

/*
 * A sampled pc fell in no uploaded mapping (or the process has none):
 * upload the process's maps. Repeats for the same process and page in a
 * row on one CPU are suppressed.
 */
struct uwprof_rec_unknown_map {
	struct uwprof_rec_hdr hdr;
	__u64	time_ns;
	__u32	pid;
	__u32	tid;
	__u64	addr;
};

/*
 * A process exited (its last thread) or exec'd while sampling ran; its
 * mappings, if it had any, were dropped. Sent for the pids being traced;
 * system-wide, for the exits of processes that had mappings in the
 * session. An exec is sent when the exec'ing task passes the session's
 * filters with its new name, or when the session had mappings for it.
 */
struct uwprof_rec_exit {
	struct uwprof_rec_hdr hdr;
	__u64	time_ns;
	__u32	pid;
	__u32	exec;		/* 1 when it exec'd, 0 when it exited */
	char	comm[16];	/* exec: the new program's name, NUL padded */
};

/*
 * A process forked from one with mappings in the sampling session and was
 * given a copy of them (see UWPROF_IOC_MAPS_SET): its samples unwind with
 * its parent's list until it execs or the reader replaces the list. Sent
 * when the new process passes the session's filters.
 */
struct uwprof_rec_fork {
	struct uwprof_rec_hdr hdr;
	__u64	time_ns;
	__u32	pid;		/* the new process */
	__u32	ppid;		/* the thread-group id it copied its list from */
};

/*
 * A thread renamed itself (prctl(PR_SET_NAME), pthread_setname_np(), a
 * write to /proc/PID/task/TID/comm) while sampling ran: it was named
 * 'old_comm' until time_ns and 'comm' from then on, as perf's COMM events
 * say. An exec's new name comes this way too, just before the exec's EXIT
 * record. Sent when the thread passes the session's filters under either
 * name (UWPROF_CAP_RENAME).
 */
struct uwprof_rec_comm {
	struct uwprof_rec_hdr hdr;
	__u64	time_ns;
	__u32	pid;
	__u32	tid;
	char	comm[16];	/* the new name, NUL padded */
	char	old_comm[16];
};

/* uwprof_rec_mmap.flags */
#define UWPROF_MMAP_VDSO	(1U << 0)	/* the vDSO: no file, no path */
/* Path unknown or too long, none: the file only by device and inode. */
#define UWPROF_MMAP_PATH_CUT	(1U << 1)
/*
 * Made by execve while it loaded the new image (the program and its
 * interpreter): such records are dated before the exec's UWPROF_REC_EXIT
 * (they may follow it in the ring), and the process's earlier mappings
 * are gone.
 */
#define UWPROF_MMAP_EXEC	(1U << 2)

/*
 * A traced process mapped executable code (UWPROF_START_MMAP): [start, end)
 * of the file at 'path' (as seen from the process's root) from byte 'pgoff'
 * on, the file's identity when it was mapped, then the NUL-terminated path
 * padded with zeros to the record's size. time_ns is the mapping's; the
 * record is written when the mapping task returns to user space, before
 * it runs the code, on the CPU it returns on: order records by time_ns,
 * not by their place in the rings. The reader is woken at once when the
 * process has mappings in the session (a library loaded into a profiled
 * process).
 */
struct uwprof_rec_mmap {
	struct uwprof_rec_hdr hdr;
	__u64	time_ns;
	__u32	pid;
	__u32	tid;
	__u64	start;
	__u64	end;
	__u64	pgoff;		/* file offset of 'start', bytes */
	__u64	ino;
	__u32	dev_major;
	__u32	dev_minor;
	__u32	flags;		/* UWPROF_MMAP_* */
	__u32	prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	__u32	path_size;	/* bytes of path with its NUL, 0: none */
	__u32	__reserved;
	char	path[];
};

#endif /* _UAPI_LINUX_UWPROF_H */

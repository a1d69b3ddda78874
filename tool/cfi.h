/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF call-frame information: CIE/FDE parsing of one .eh_frame or
 * .debug_frame section and the CFA state machine that turns an FDE's
 * program into rows of struct uwprof_rule, with the reason a row is
 * unsupported. Called from the table compiler (table.c) only; all state
 * lives in struct uwprof_cfi. table.h includes it for enum uwprof_unsup,
 * which its statistics count by.
 */
#ifndef UWPROF_TOOL_CFI_H
#define UWPROF_TOOL_CFI_H

#include <stddef.h>
#include <stdint.h>

#include <linux/uwprof.h>

#include "u64map.h"

/*
 * Why a row got an unsupported rule (the 'reason' of uwprof_cfi_row_fn);
 * index of uwprof_table_stats.unsupported[].
 */
enum uwprof_unsup {
	UWPROF_UNSUP_CFA_EXPR = 0,	/* CFA expression other than the PLT forms */
	UWPROF_UNSUP_CFA_REG,		/* CFA register other than sp / fp */
	UWPROF_UNSUP_FP_EXPR,		/* fp saved by an expression */
	UWPROF_UNSUP_RA_EXPR,		/* ra saved by an expression */
	UWPROF_UNSUP_RANGE,		/* offset or register outside the row format */
	UWPROF_UNSUP_STACK_SWITCH,	/* Go code on a switched stack, not decoded */
	UWPROF_UNSUP__COUNT,
};

/* 'reason' of a supported row. */
#define UWPROF_CFI_NO_REASON	0xff

struct uwprof_cfi_fde {
	uint64_t	lo;		/* [lo, hi): code the FDE describes */
	uint64_t	hi;
	uint64_t	off;		/* entry offset in the section */
	uint64_t	insn;		/* program: [insn, end) section offsets */
	uint64_t	end;
	uint32_t	cie;		/* index into uwprof_cfi.cies, or a marker */
	/* the CIE index of an FDE whose 'cie' a marker replaced (outermost.h) */
	uint32_t	cfi_cie;
};

struct uwprof_cfi_cie;

/* Receives the rows of one FDE in address order. */
typedef int (*uwprof_cfi_row_fn)(void *ctx, uint64_t addr,
				 const struct uwprof_rule *rule,
				 uint8_t reason);

struct uwprof_cfi {
	/* in */
	const uint8_t	*data;		/* section bytes */
	size_t		size;
	uint64_t	addr;		/* section vaddr, base of pcrel */
	const char	*sec_name;	/* for messages */
	const char	*path;		/* for messages */
	int		is_eh;		/* .eh_frame rules, else .debug_frame */
	int		stop_at_zero;	/* a zero length ends the section */
	uint16_t	arch;		/* enum uwprof_arch */
	uint64_t	text_addr;	/* DW_EH_PE_textrel base */
	uint64_t	data_addr;	/* DW_EH_PE_datarel base */
	char		*err;
	size_t		errlen;
	/* out */
	struct uwprof_cfi_cie *cies;
	size_t		nr_cies;
	size_t		cap_cies;
	struct uwprof_u64map cie_by_off; /* section offset -> index in cies */
	struct uwprof_cfi_fde *fdes;
	size_t		nr_fdes;
	size_t		cap_fdes;
};

/* Parse every CIE and FDE; FDEs with an empty range are left out. */
int uwprof_cfi_parse(struct uwprof_cfi *c);

/* A new, zeroed FDE at the end of c->fdes, or NULL when out of memory. */
struct uwprof_cfi_fde *uwprof_cfi_fde_add(struct uwprof_cfi *c);

/* Whether the CIE of 'f' marks a signal trampoline ('S'). */
int uwprof_cfi_fde_signal(const struct uwprof_cfi *c,
			  const struct uwprof_cfi_fde *f);

/* Run the program of 'f' and hand each row to 'fn' (addresses ascending). */
int uwprof_cfi_run(struct uwprof_cfi *c, const struct uwprof_cfi_fde *f,
		   uwprof_cfi_row_fn fn, void *ctx);

/* Read an encoded pointer of .eh_frame_hdr (pcrel relative to 'addr'). */
int uwprof_cfi_read_hdr_ptr(const uint8_t *p, size_t avail, uint8_t enc,
			    uint64_t addr, uint64_t *val, size_t *used);

void uwprof_cfi_free(struct uwprof_cfi *c);

#endif /* UWPROF_TOOL_CFI_H */

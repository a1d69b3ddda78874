/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hand-written .debug_frame (and no .eh_frame) for the synthetic tests:
 * CIEs with "zR"/"zPR" augmentations and udata2/4/8, sdata2/4/8 and
 * aligned pointer encodings, a version 4 CIE, 64-bit DWARF entries,
 * several FDEs sharing a CIE, out-of-order FDEs and two overlapping ones.
 */
	.text
	.globl	g0
g0:	.skip	64, 0x90
g1:	.skip	64, 0x90
g2:	.skip	64, 0x90
g3:	.skip	64, 0x90
g4:	.skip	64, 0x90
g5:	.skip	64, 0x90
g6:	.skip	128, 0x90
g7:	.skip	64, 0x90

	.section .debug_frame,"",@progbits
.Lsec:

/* CIE: "zR", FDE pointers udata8, RA at CFA-8. */
.Lcie8:
	.long	.Lcie8_end - .Lcie8_body
.Lcie8_body:
	.long	0xffffffff
	.byte	1
	.asciz	"zR"
	.uleb128 1
	.sleb128 -8
	.byte	16
	.uleb128 1
	.byte	0x04
	.byte	0x0c, 7, 8		/* def_cfa rsp+8 */
	.byte	0x90, 1			/* offset rip, cfa-8 */
	.balign	4, 0
.Lcie8_end:

/* A function described after the one that follows it in memory. */
	.long	.Lf1_end - .Lf1_body
.Lf1_body:
	.long	.Lcie8 - .Lsec
	.quad	g1
	.quad	64
	.uleb128 0
	.byte	0x41, 0x0e, 16		/* +1: def_cfa_offset 16 */
	.byte	0x86, 2			/* offset rbp, cfa-16 */
	.byte	0x7e, 0x0e, 8		/* +62: def_cfa_offset 8 */
	.balign	4, 0
.Lf1_end:

	.long	.Lf0_end - .Lf0_body
.Lf0_body:
	.long	.Lcie8 - .Lsec
	.quad	g0
	.quad	64
	.uleb128 0
	.byte	0x44, 0x0e, 32		/* +4: def_cfa_offset 32 */
	.balign	4, 0
.Lf0_end:

/* CIE: "zR" udata4; and one with udata2. */
.Lcie4:
	.long	.Lcie4_end - .Lcie4_body
.Lcie4_body:
	.long	0xffffffff
	.byte	3
	.asciz	"zR"
	.uleb128 1
	.sleb128 -8
	.uleb128 16
	.uleb128 1
	.byte	0x03
	.byte	0x0c, 7, 8
	.byte	0x90, 1
	.balign	4, 0
.Lcie4_end:

	.long	.Lf2_end - .Lf2_body
.Lf2_body:
	.long	.Lcie4 - .Lsec
	.long	g2
	.long	64
	.uleb128 0
	.byte	0x42, 0x0e, 24
	.balign	4, 0
.Lf2_end:

.Lcie2:
	.long	.Lcie2_end - .Lcie2_body
.Lcie2_body:
	.long	0xffffffff
	.byte	1
	.asciz	"zR"
	.uleb128 1
	.sleb128 -8
	.byte	16
	.uleb128 1
	.byte	0x02
	.byte	0x0c, 7, 8
	.byte	0x90, 1
	.balign	4, 0
.Lcie2_end:

	.long	.Lf3_end - .Lf3_body
.Lf3_body:
	.long	.Lcie2 - .Lsec
	.short	g3
	.short	64
	.uleb128 0
	.byte	0x43, 0x0e, 40
	.balign	4, 0
.Lf3_end:

/* CIE: "zPR", an aligned personality pointer, FDE pointers sdata8. */
.Lciep:
	.long	.Lciep_end - .Lciep_body
.Lciep_body:
	.long	0xffffffff
	.byte	1
	.asciz	"zPR"
	.uleb128 1
	.sleb128 -8
	.byte	16
	.uleb128 .Laug_end - .Laug
.Laug:
	.byte	0x50			/* aligned absptr */
	.balign	8, 0
	.quad	0x1234
	.byte	0x0c			/* sdata8 */
.Laug_end:
	.byte	0x0c, 7, 8
	.byte	0x90, 1
	.balign	4, 0
.Lciep_end:

	.long	.Lf4_end - .Lf4_body
.Lf4_body:
	.long	.Lciep - .Lsec
	.quad	g4
	.quad	64
	.uleb128 0
	.byte	0x45, 0x0e, 48
	.balign	4, 0
.Lf4_end:

/* Version 4 CIE: address and segment sizes, no augmentation. */
.Lcie4v:
	.long	.Lcie4v_end - .Lcie4v_body
.Lcie4v_body:
	.long	0xffffffff
	.byte	4
	.asciz	""
	.byte	8, 0
	.uleb128 1
	.sleb128 -8
	.uleb128 16
	.byte	0x0c, 7, 8
	.byte	0x90, 1
	.balign	4, 0
.Lcie4v_end:

	.long	.Lf5_end - .Lf5_body
.Lf5_body:
	.long	.Lcie4v - .Lsec
	.quad	g5
	.quad	64
	.byte	0x46, 0x0e, 56
	.byte	0x02, 20, 0x0e, 8	/* advance_loc1 20 */
	.balign	4, 0
.Lf5_end:

/* 64-bit DWARF: CIE and FDE with 8-byte lengths and ids. */
.Lcie64:
	.long	0xffffffff
	.quad	.Lcie64_end - .Lcie64_body
.Lcie64_body:
	.quad	0xffffffffffffffff
	.byte	1
	.asciz	""
	.uleb128 1
	.sleb128 -8
	.byte	16
	.byte	0x0c, 7, 8
	.byte	0x90, 1
	.balign	4, 0
.Lcie64_end:

	.long	0xffffffff
	.quad	.Lf6_end - .Lf6_body
.Lf6_body:
	.quad	.Lcie64 - .Lsec
	.quad	g6
	.quad	128
	.byte	0x47, 0x0e, 64
	.byte	0x03, 0x64, 0x00, 0x0e, 8	/* advance_loc2 100 */
	.balign	4, 0
.Lf6_end:

/* Overlapping g6's second half: the earlier start keeps it. */
	.long	.Lf7_end - .Lf7_body
.Lf7_body:
	.long	.Lcie8 - .Lsec
	.quad	g6 + 64
	.quad	128
	.uleb128 0
	.byte	0x0e, 72
	.byte	0x48, 0x0e, 80
	.balign	4, 0
.Lf7_end:

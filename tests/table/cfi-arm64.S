/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aarch64 functions for the synthetic tests: a PAC-signed frame
 * (negate_ra_state, remembered and restored), the B-key augmentation, an
 * outermost frame (undefined x30), a frame-pointer CFA, a signal
 * trampoline, a CFA in a register the unwinder does not track, and a lazy
 * resolver entered from PLT0 (x30 saved above the CFA, as glibc's CFI
 * says).
 */
	.text

	.globl	a_pac
	.type	a_pac, %function
a_pac:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	.cfi_def_cfa 29, 32
	.cfi_remember_state
	ldp	x29, x30, [sp], #32
	.cfi_def_cfa 31, 0
	.cfi_restore 29
	.cfi_restore 30
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_restore_state
	nop
	ldp	x29, x30, [sp], #32
	.cfi_restore 29
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	retaa
	.cfi_endproc
	.size	a_pac, . - a_pac

	.globl	a_bkey
	.type	a_bkey, %function
a_bkey:
	.cfi_startproc
	.cfi_b_key_frame
	pacibsp
	.cfi_negate_ra_state
	str	x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 30, -16
	ldr	x30, [sp], #16
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	retab
	.cfi_endproc
	.size	a_bkey, . - a_bkey

	.globl	a_start
	.type	a_start, %function
a_start:
	.cfi_startproc
	.cfi_undefined 30
	mov	x29, #0
	bl	a_pac
	.cfi_register 29, 19
	nop
	.cfi_def_cfa 19, 16
	nop
	.cfi_endproc
	.size	a_start, . - a_start

	.globl	a_sig
	.type	a_sig, %function
	nop
a_sig:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_escape 0x0f, 0x03, 0x8f, 0x80, 0x01	/* breg31 +128 */
	mov	x8, #139
	svc	#0
	.cfi_endproc
	.size	a_sig, . - a_sig

	/*
	 * A frame larger than 64 KiB with x29 and x30 saved at its bottom,
	 * as glibc's arm64 build has one of 33392 bytes.
	 */
	.globl	a_big
	.type	a_big, %function
a_big:
	.cfi_startproc
	sub	sp, sp, #0x12, lsl #12
	.cfi_def_cfa_offset 0x12000
	stp	x29, x30, [sp]
	.cfi_offset 29, -0x12000
	.cfi_offset 30, -0x11ff8
	mov	x29, sp
	ldp	x29, x30, [sp]
	.cfi_restore 29
	.cfi_restore 30
	add	sp, sp, #0x12, lsl #12
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	a_big, . - a_big

	.globl	a_resolver
	.type	a_resolver, %function
a_resolver:
	.cfi_startproc
	nop
	.cfi_rel_offset 30, 8
	stp	x8, x9, [sp, #-32]!
	.cfi_adjust_cfa_offset 32
	.cfi_rel_offset 8, 0
	.cfi_rel_offset 9, 8
	ldp	x8, x9, [sp], #32
	.cfi_adjust_cfa_offset -32
	ldp	x17, x30, [sp], #16
	.cfi_adjust_cfa_offset -16
	br	x16
	.cfi_endproc
	.size	a_resolver, . - a_resolver

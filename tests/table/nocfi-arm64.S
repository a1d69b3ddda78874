/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aarch64 functions without CFI between two with CFI, for tests/table/nocfi:
 * each label's comment says what rows the analysis must give it. The
 * nocfi_ symbols are there for the test to find the code, not for the
 * analysis, which does not read symbols.
 */
	.text
	.globl	cfi_before
	.type	cfi_before, %function
cfi_before:
	.cfi_startproc
	ret
	.cfi_endproc

/* OpenSSL's AES-GCM shape: a leaf saving callee-saved registers below sp. */
	.p2align 4
	.globl	nocfi_leaf_frame
nocfi_leaf_frame:
	cbz	x1, 1f
	stp	x19, x20, [sp, #-112]!
	stp	d8, d9, [sp, #48]
	add	x19, x0, x1
	ldp	d8, d9, [sp, #48]
	ldp	x19, x20, [sp], #112
1:	ret

/* A frame record and a call. */
	.p2align 4
	.globl	nocfi_framed
nocfi_framed:
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	x19, [sp, #16]
	bl	cfi_before
	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	ret

/* Two paths into one epilogue, both with the same frame. */
	.p2align 4
	.globl	nocfi_shared_exit
nocfi_shared_exit:
	sub	sp, sp, #64
	cbz	x0, 2f
	add	x0, x0, #1
	b	3f
2:	sub	x0, x0, #1
3:	add	sp, sp, #64
	ret

/* sp realigned: the CFA is found from x29 while sp is unknown. */
	.p2align 4
	.globl	nocfi_realign
nocfi_realign:
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	sub	x9, sp, #64
	and	sp, x9, #~63
	bl	cfi_before
	mov	sp, x29
	ldp	x29, x30, [sp], #16
	ret

/* Refused: the paths join with different frames. */
	.p2align 4
	.globl	nocfi_conflict
nocfi_conflict:
	cbz	x0, 4f
	sub	sp, sp, #16
4:	add	x0, x0, #1
	ret

/* Refused: returns without freeing its frame. */
	.p2align 4
	.globl	nocfi_bad_ret
nocfi_bad_ret:
	sub	sp, sp, #16
	ret

/* Refused: lr overwritten unsaved, then returned through. */
	.p2align 4
	.globl	nocfi_lr_lost
nocfi_lr_lost:
	bl	cfi_before
	ret

/* Data after a return: no row. */
	.p2align 4
	.globl	nocfi_data
nocfi_data:
	.word	0x12345678, 0x9abcdef0, 0x00000000, 0x14000000

	.p2align 4
	.globl	cfi_after
	.type	cfi_after, %function
cfi_after:
	.cfi_startproc
	ret
	.cfi_endproc

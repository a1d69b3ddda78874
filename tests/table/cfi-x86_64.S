/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86_64 functions whose CFI uses every DW_CFA form the table compiler
 * handles, for the synthetic tests (tests/table/synthetic). The code is
 * never run; only its .eh_frame matters. Raw opcodes go through
 * .cfi_escape where the assembler has no directive.
 */
	.text
.Lpers:
	ret

	.globl	f_frame
	.type	f_frame, @function
f_frame:
	.cfi_startproc
	.cfi_personality 0x1b, .Lpers
	.cfi_lsda 0x1b, .Lpers
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	.skip	100, 0x90		/* advance_loc1 */
	.cfi_remember_state
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_restore_state
	.skip	300, 0x90		/* advance_loc2 */
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	.skip	70000, 0x90		/* advance_loc4 */
	ret
	.cfi_endproc
	.size	f_frame, . - f_frame

	.globl	f_ops
	.type	f_ops, @function
f_ops:
	.cfi_startproc
	nop
	.cfi_escape 0x12, 0x07, 0x7e		/* def_cfa_sf rsp, -2 (x -8 = 16) */
	nop
	.cfi_escape 0x11, 0x06, 0x7d		/* offset_extended_sf rbp, -3 */
	nop
	.cfi_val_offset %rbp, -24
	nop
	.cfi_escape 0x2f, 0x06, 0x02		/* GNU_negative_offset_extended rbp, 2 */
	nop
	.cfi_escape 0x2e, 0x10			/* GNU_args_size 16 */
	nop
	.cfi_escape 0x13, 0x7c			/* def_cfa_offset_sf -4 (32) */
	nop
	.cfi_escape 0x05, 0x06, 0x05		/* offset_extended rbp, 5 (-40) */
	nop
	.cfi_escape 0x15, 0x10, 0x7f		/* val_offset_sf rip, -1 (+8) */
	nop
	.cfi_register %rip, %rax
	nop
	.cfi_undefined %rip
	nop
	.cfi_same_value %rbp
	nop
	.cfi_escape 0x0f, 0x02, 0x77, 0x08	/* def_cfa_expression: not a PLT */
	nop
	.cfi_def_cfa %rsp, 8
	.cfi_escape 0x10, 0x06, 0x02, 0x77, 0x10	/* expression rbp */
	nop
	.cfi_escape 0x16, 0x10, 0x02, 0x77, 0x10	/* val_expression rip */
	nop
	.cfi_def_cfa %r10, 0
	nop
	.cfi_def_cfa %rsp, 0x12345
	.cfi_offset %rbp, -0x12340		/* fp offset beyond 16 bits */
	nop
	.cfi_offset %rbp, -0x100000000		/* beyond 32 bits */
	nop
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	.cfi_restore %rip
	ret
	.cfi_endproc
	.size	f_ops, . - f_ops

	/* Lazy-PLT-like entries: the expression binutils emits, two thresholds. */
	.p2align 4
	.globl	f_plt
	.type	f_plt, @function
f_plt:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	.skip	32, 0x90
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22
	.skip	32, 0x90
	.cfi_escape 0x0f, 0x0c, 0x77, 0x10, 0x80, 0x00, 0x3f, 0x1a, 0x08, 0x05, 0x2a, 0x33, 0x24, 0x22
	.skip	16, 0x90
	.cfi_endproc
	.size	f_plt, . - f_plt

	/* A gap, then a signal trampoline: 'S' in its CIE. */
	.skip	64, 0xcc
	.globl	f_sig
	.type	f_sig, @function
	nop
f_sig:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_escape 0x0f, 0x03, 0x77, 0xa0, 0x01	/* breg7 +160 */
	.cfi_escape 0x10, 0x10, 0x02, 0x77, 0x08
	mov	$15, %rax
	syscall
	.cfi_endproc
	.size	f_sig, . - f_sig

	/* Two FDEs for overlapping code: the earlier start wins. */
	.globl	f_over
	.type	f_over, @function
f_over:
	.cfi_startproc
	push	%rbx
	.cfi_def_cfa_offset 16
	.skip	32, 0x90
	pop	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	f_over, . - f_over

	/*
	 * CFA from an sp saved on the stack (OpenSSL's assembly, GCC's stack
	 * realignment), then two expressions outside that form.
	 */
	.globl	f_deref
	.type	f_deref, @function
f_deref:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 0x05, 0x77, 0x30, 0x06, 0x23, 0x08	/* *(rsp+48)+8 */
	nop
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06	/* *(rbp-8) */
	nop
	.cfi_escape 0x0f, 0x04, 0x77, 0x00, 0x06, 0x06	/* two derefs */
	nop
	.cfi_escape 0x0f, 0x05, 0x70, 0x10, 0x06, 0x23, 0x08	/* from rax */
	nop
	.cfi_escape 0x0f, 0x06, 0x77, 0x30, 0x06, 0x23, 0xac, 0x02	/* *(rsp+48)+300 */
	nop
	/* *(rsp+48)+2^32: an addend no rule holds */
	.cfi_escape 0x0f, 0x09, 0x77, 0x30, 0x06, 0x23, 0x80, 0x80, 0x80, 0x80, 0x10
	nop
	/* *(rsp+2^31): a breg offset no rule holds */
	.cfi_escape 0x0f, 0x07, 0x77, 0x80, 0x80, 0x80, 0x80, 0x08, 0x06
	nop
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	f_deref, . - f_deref

	/*
	 * Callee-saved registers at CFA offsets: the row records the
	 * lowest-numbered one whose offset fits 16 bits (rbx before r12);
	 * restore and restore_state bring rbx back, another rule for it or an
	 * offset past 16 bits leaves r12.
	 */
	.globl	f_saved
	.type	f_saved, @function
f_saved:
	.cfi_startproc
	push	%r12
	.cfi_def_cfa_offset 16
	.cfi_offset %r12, -16
	push	%rbx
	.cfi_def_cfa_offset 24
	.cfi_offset %rbx, -24
	.cfi_remember_state
	nop
	.cfi_restore %rbx
	nop
	.cfi_restore_state
	nop
	.cfi_register %rbx, %rax
	nop
	.cfi_offset %rbx, -40000
	nop
	.cfi_val_offset %rbx, -24
	nop
	.cfi_offset %rbx, -24
	.cfi_same_value %r12
	pop	%rbx
	pop	%r12
	ret
	.cfi_endproc
	.size	f_saved, . - f_saved

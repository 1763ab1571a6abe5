/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Green-thread context switch for x86-64 (System V ABI).
 *
 * void hg_gt_switch(void **save_sp, void *load_sp)
 *   Saves the callee-saved state of the caller on its stack (rbp, rbx,
 *   r12-r15, MXCSR and the x87 control word; RIP is the return address
 *   already there), stores RSP in *save_sp, loads load_sp and restores the
 *   same state from there. Returns in the other context.
 *
 * hg_gt_trampoline: where a new green thread's first switch "returns" to;
 *   calls r12(r13) on an aligned stack. The function never returns.
 */
	.text
	.globl	hg_gt_switch
	.hidden	hg_gt_switch
	.type	hg_gt_switch, @function
hg_gt_switch:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.size	hg_gt_switch, .-hg_gt_switch

	.globl	hg_gt_trampoline
	.hidden	hg_gt_trampoline
	.type	hg_gt_trampoline, @function
hg_gt_trampoline:
	movq	%r13, %rdi
	andq	$-16, %rsp
	callq	*%r12
	ud2
	.size	hg_gt_trampoline, .-hg_gt_trampoline

	.section .note.GNU-stack,"",@progbits

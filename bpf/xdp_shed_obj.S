/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The XDP program's object file (bpf/xdp_shed.c, built by clang) as bytes
 * in the daemon: a daemon needs no install path to find its program
 * (slowpath/xdp_link.c hands it to the PMD through a memfd).
 */
	.section .rodata
	.balign 8
	.global hg_xdp_obj_start
	.global hg_xdp_obj_end
hg_xdp_obj_start:
	.incbin HG_XDP_OBJ
hg_xdp_obj_end:
	.section .note.GNU-stack,"",@progbits

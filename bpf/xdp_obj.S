/* SPDX-License-Identifier: BSD-3-Clause
 *
 * An XDP program's object file (built by clang) as bytes in the binary
 * that loads it: no install path to find it. HG_XDP_OBJ names the file,
 * HG_XDP_SYM the symbols (SYM_start, SYM_end): hg_xdp_obj for the
 * daemon's bpf/xdp_shed.c (slowpath/xdp_link.c hands it to the PMD
 * through a memfd), hgr_obj and hgb_obj for hgload's bpf/xdp_replay.c
 * and bpf/xdp_bounce.c.
 */
#define HG_CAT(a, b) a##b
#define HG_SYM(s, part) HG_CAT(s, part)

	.section .rodata
	.balign 8
	.global HG_SYM(HG_XDP_SYM, _start)
	.global HG_SYM(HG_XDP_SYM, _end)
HG_SYM(HG_XDP_SYM, _start):
	.incbin HG_XDP_OBJ
HG_SYM(HG_XDP_SYM, _end):
	.section .note.GNU-stack,"",@progbits

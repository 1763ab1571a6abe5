/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What hgload's link replay (hgload --replay over kernel sockets) shares
 * with its XDP program (bpf/xdp_replay.c): one array map, hgr_conf, an
 * entry per load.
 *
 * The replay puts a flood on a kernel link as a NIC's DMA would: the frame
 * is built once, and the kernel's BPF_PROG_RUN in live-frames mode runs
 * the program over copies of it and transmits what it returns (XDP_TX out
 * of the interface named as the frame's ingress). The program only gives
 * each copy its flow's source port; nothing else is built per frame.
 *
 * Each load's frame carries its entry's index in the IPv4 header's id
 * field. One writer per entry: hgload writes it before the load starts;
 * the program then advances `next`, from the one sender thread of that
 * load (a test run runs on the caller's CPU).
 *
 * Compiled by clang -target bpf and by the host compiler: kernel types
 * only.
 */
#ifndef HG_PROTO_XDP_REPLAY_H
#define HG_PROTO_XDP_REPLAY_H

#include <linux/types.h>

#define HGR_LOADS 4u		/* = hgload's MAX_LOADS (asserted there) */
#define HGR_FLOWS 64u		/* source ports a load cycles through */

struct hgr_conf {
	__u32 ifindex;		/* the link's: frames of another ingress pass */
	__u32 flows;		/* sport[0..flows-1] in use, 1..HGR_FLOWS */
	__u64 next;		/* frames given a port so far */
	__u16 sport[HGR_FLOWS];	/* network order */
};

_Static_assert(sizeof(struct hgr_conf) == 16 + 2 * HGR_FLOWS, "no padding");
_Static_assert((HGR_FLOWS & (HGR_FLOWS - 1)) == 0, "a power of two");

#endif /* HG_PROTO_XDP_REPLAY_H */

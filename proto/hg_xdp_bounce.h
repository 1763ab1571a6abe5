/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What hgload's link bounce (hgload --bounce) shares with its XDP program
 * (bpf/xdp_bounce.c): hgb_conf, an entry per load, and hgb_count, per-CPU
 * counters: each load's turned answers, then the frames passed.
 *
 * The bounce measures a server's echo throughput with the server as the
 * bound on a kernel that refuses a live-frames replay: the program,
 * attached to the client's end of the link, turns every answer from the
 * target around as a new request (a redirect out of the link it came in
 * on), so that a few thousand requests go round between server and link
 * without a sender; hgload's sender only tops up what the link or the
 * server dropped.
 *
 * One writer per entry: hgload's thread of that load writes it before
 * and after its run (on = 0: its target's answers pass); the program only
 * reads them.
 *
 * Compiled by clang -target bpf and by the host compiler: kernel types
 * only.
 */
#ifndef HG_PROTO_XDP_BOUNCE_H
#define HG_PROTO_XDP_BOUNCE_H

#include <linux/types.h>

#define HGB_LOADS 4u		/* = hgload's MAX_LOADS (asserted there) */

struct hgb_conf {
	__u32 ip;		/* the target's address, network order */
	__u16 port;		/* its UDP port, network order */
	__u16 on;		/* 0: every frame passes */
};

/* hgb_count's entries: 0..HGB_LOADS-1 each load's answers sent back as
 * requests, then every other frame while any load was on */
#define HGB_PASSED HGB_LOADS
#define HGB_COUNTERS (HGB_LOADS + 1)

_Static_assert(sizeof(struct hgb_conf) == 8, "no padding");

#endif /* HG_PROTO_XDP_BOUNCE_H */

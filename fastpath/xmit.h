/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The NIC send (xmit.c), shared by SCHED, RX's replies and the credit
 * updates. Frames are staged on the core and handed to the PMD once per
 * pass (hg_fp_flush), as DPDK's l2fwd does: on net_af_packet every
 * rte_eth_tx_burst is a sendto(), and a call per tenant batch made that
 * system call the biggest cost of a datagram (12,600 cycles).
 * Each frame keeps who it was sent for, so the flush bills every tenant
 * its share of the call, by the frames it had in it.
 */
#ifndef HG_FASTPATH_XMIT_H
#define HG_FASTPATH_XMIT_H

#include "dp.h"

/* Who a staged frame is for: HG_STAGE_CORE for the core's own (ARP,
 * ICMP), else the tenant slot, its point and whether its work is billed
 * to its budget. */
#define HG_STAGE_CORE 0xffffu

/* Stages n mbufs for tenant t (or HG_STAGE_CORE) at point pt; flushes
 * first if they would not fit. */
void hg_fp_xmit(struct hg_dp *dp, struct hg_fp_core *c, struct rte_mbuf **m,
		unsigned n, unsigned t, enum hg_point pt, int billed);

/* Hands every staged frame to the PMD in one call per ring (two if a
 * ring wrapped), bills the frames that left and keeps what it refused
 * for the next flush. Returns the frames sent. */
unsigned hg_fp_flush(struct hg_dp *dp, struct hg_fp_core *c);
/* Whose frame goes when the link refuses frames and the stage is full:
 * the tenant with the most bytes staged, the one that sends the most
 * into the link, not whoever staged last (make demo: the victim's answers
 * were dropped as nic_tx_full behind a neighbour's flood of them). By
 * bytes, not frames: on a shared queue a victim's 64 B answers, released
 * in a clump after waiting behind the ring, outnumbered a neighbour's
 * 1400 B ones and were the ones dropped. (Its budget is no better guide:
 * a neighbour on unbilled slack keeps a full bank, and a funded victim
 * lost its answers to one.) Its frame count may be 0: nobody's staged. */
unsigned hg_stage_loser(struct hg_fp_core *c);

/* The order a flush hands each tenants' group's TX ring its frames in
 * (links with a ring per group, hg_link_tx_per_tenant): the ring with the
 * fewest frames first, ties in group order. Each ring's send copies its
 * frames and may wake its peer (a system call): in group order, a
 * victim's one answer waited for a flood's 32 of 1400 B and their
 * wake-up. Shortest first, the long ring waits for a short one's send;
 * nobody waits for a long one's. An insertion sort: n <= HG_MAX_TXQ. */
static inline void
hg_flush_order(const uint16_t *frames, unsigned n, uint8_t *order)
{
	unsigned g, j;

	RTE_ASSERT(n <= HG_MAX_TXQ);
	for (g = 0; g < n; g++) {
		for (j = g; j > 0 && frames[order[j - 1]] > frames[g]; j--)
			order[j] = order[j - 1];
		order[j] = (uint8_t)g;
	}
}

#endif /* HG_FASTPATH_XMIT_H */

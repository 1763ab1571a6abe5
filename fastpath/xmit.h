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
 * the staged tenant with the least of its budget left (hg_bank_share:
 * out of budget first), among equals the one with the most frames
 * staged, not whoever staged last (make demo: the victim's answers were
 * dropped as nic_tx_full behind a neighbour's flood of them; on a shared
 * queue a funded victim's answers, released in a clump after waiting
 * behind the ring, outnumbered a capped neighbour's and were the ones
 * dropped). Its frame count may be 0: nobody's is staged. */
unsigned hg_stage_loser(const struct hg_dp *dp, struct hg_fp_core *c);

#endif /* HG_FASTPATH_XMIT_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The port's bursts: an ethdev's, or the daemon's own memif link's
 * (memif.h) where --memif made one. The branch is the same every call,
 * so the CPU predicts it.
 */
#ifndef HG_FASTPATH_LINK_H
#define HG_FASTPATH_LINK_H

#include <rte_ethdev.h>

#include "dp.h"
#include "memif.h"

_Static_assert(HG_BATCH <= HG_MIF_BURST, "a burst fits a memif queue's stash");
_Static_assert(HG_MAX_FP_CORES * HG_MAX_TXQ <= HG_MIF_TX_RINGS,
	       "every core's every TX group has a ring");

/* Up to n frames from RX queue q; *seen: the frames taken off the link
 * (those peek dropped in place too, where the link lets it look: memif). */
static inline uint16_t
hg_link_rx(struct hg_dp *dp, struct hg_fp_core *c, const struct hg_rxq *q,
	   struct rte_mbuf **pkts, uint16_t n, hg_mif_peek peek, void *arg,
	   uint16_t *seen)
{
	uint16_t got;

	if (dp->mif != NULL)
		return hg_mif_rx(dp->mif, q->id, c->pool, pkts, n,
				 &c->drops[HG_DROP_LINK_DESC], peek, arg, seen);
	got = rte_eth_rx_burst(q->port, q->id, pkts, n);
	*seen = got;
	return got;
}

/* Up to n frames onto TX ring q: an S2C ring of the memif link (the
 * core's, or a tenants' group's: hg_link_tx_per_tenant), else the core's ethdev
 * queue (hg_dp_set_rxq, hg_dp_spread_rxq). */
static inline uint16_t
hg_link_tx(struct hg_dp *dp, struct hg_fp_core *c, uint16_t q,
	   struct rte_mbuf **pkts, uint16_t n)
{
	if (dp->mif != NULL)
		return hg_mif_tx(dp->mif, q, pkts, n, &c->drops[HG_DROP_LINK_DESC]);
	return rte_eth_tx_burst(c->tx_port, c->tx_queue, pkts, n);
}

/* Has RX queue q frames waiting, as far as the link can tell at the cost
 * of a load: a memif ring can; an ethdev's answer would cost a PMD call
 * (or is not offered), so it says no. */
static inline int
hg_link_rx_waiting(const struct hg_dp *dp, uint16_t q)
{
	return dp->mif != NULL && hg_mif_rx_waiting(dp->mif, q);
}

/* Whether each tenant's frames leave by a TX ring of its own group,
 * ring idx x txq_per_core + its txq (--tx-queues): a memif peer that gave
 * as many (a NIC's TX queue per tenant, so that an answer waits behind
 * its own tenant's only, whatever the RX queues); else every frame goes
 * on the core's ring, idx. */
static inline int
hg_link_tx_per_tenant(const struct hg_dp *dp)
{
	return dp->mif != NULL && dp->txq_per_core > 1 &&
	       hg_mif_tx_rings(dp->mif) >= dp->n_cores * dp->txq_per_core;
}

/* Tenant t's TX group on every core: an index below txq_per_core, the
 * core's own frames (ARP, ICMP) group 0's. A compare, not a modulo: it is
 * asked for every frame a flush sends. */
static inline unsigned
hg_link_txq(const struct hg_dp *dp, int t)
{
	unsigned g = t < 0 ? 0 : hg_view(dp, (unsigned)t)->txq;

	return g < dp->txq_per_core ? g : 0;
}

/* The ring of TX group g on core c, where hg_link_tx_per_tenant. */
static inline uint16_t
hg_link_tx_ring(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned g)
{
	RTE_ASSERT(g < dp->txq_per_core);
	return (uint16_t)(c->idx * dp->txq_per_core + g);
}

/* A ring that had frames within this long needs no early kick
 * (hg_mif_kick_ahead): its peer is awake, or kicked by every send. */
#define HG_KICK_AHEAD_QUIET_US 10u

/* Tenant t has frames on their way to the link on core c (TX took its
 * app's answers at TSC now): wakes the memif peer that sleeps on the ring
 * they will leave by, where that ring is the tenant's group's own
 * (hg_mif_kick_ahead). On a ring every tenant shares, a flood's answers
 * would have it kicked twice each pass. */
static inline void
hg_link_kick_ahead(struct hg_dp *dp, const struct hg_fp_core *c, unsigned t, uint64_t now)
{
	if (hg_link_tx_per_tenant(dp))
		hg_mif_kick_ahead(dp->mif, hg_link_tx_ring(dp, c, hg_link_txq(dp, (int)t)),
				  now, c->tsc_us * HG_KICK_AHEAD_QUIET_US);
}

#endif /* HG_FASTPATH_LINK_H */

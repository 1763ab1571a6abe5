/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Who else has work on a core right now (hg_others_waiting): the look a
 * long stage takes before it goes on for one tenant, so that it yields to
 * another's datagram instead of making it wait the stage out (SCHED's
 * batches, RX's second burst). Apart so that a unit test can drive it
 * against a daemon state of its own (tests/unit/test_sched_pick.c).
 */
#ifndef HG_FASTPATH_WAITING_H
#define HG_FASTPATH_WAITING_H

#include "doorbell.h"
#include "dp.h"
#include "link.h"

/* Has anyone but tenant t work on this core now: a frame staged for the
 * pass's send (it leaves only when the pass ends), a datagram this pass
 * delivered (its doorbell is rung after the pass, and its answer comes
 * after that), TX pending here, a descriptor on a hot tenant's transmit
 * ring, or frames on an RX queue whose last tenant was another (a shared
 * queue's always count; not those of a queue RX holds for its tenant's
 * full rings, which no pass would take)? A few loads per queue and hot
 * tenant: the walk is bounded by HG_BELLS, HG_MAX_RXQ and the hot set,
 * which holds the tenants with recent work. Staged frames count since a
 * victim's answer, served first, waited for the flood's batch after it
 * in the same pass: up to 31 datagrams, ~23 us at 1400 B. */
static inline int
hg_others_waiting(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned t)
{
	unsigned i;
	int u;

	if (c->stage.n > c->stage.of[t % HG_MAX_TENANTS])
		return 1;
	for (i = 0; i < c->n_bell; i++)
		if (c->bell[i].tenant != t)
			return 1;
	HG_TSET_FOREACH(u, &c->pend)
		if ((unsigned)u != t)
			return 1;
	for (i = 0; i < c->n_rxq; i++) {
		const struct hg_rxq *q = &c->rxq[i];

		if ((q->tenant != (int32_t)t || hg_rxq_shared(dp, c, q)) &&
		    !q->blocked && hg_link_rx_waiting(dp, q->id))
			return 1;
	}
	HG_TSET_FOREACH(u, &c->hot)
		if ((unsigned)u != t && hg_tx_waiting(dp, c, (unsigned)u))
			return 1;
	return 0;
}

/* Would a worker this pass delivered to wait for another tenant's
 * answers before its doorbell rings: it armed its bell, and a tenant
 * other than its own has transmit work here (pending, or a descriptor on
 * its ring) that TX and SCHED would serve first? Then the pass rings its
 * doorbells right after RX (loop.c), and the worker wakes while the core
 * serves the others. Rung at the pass's end, a victim's wake-up waited
 * for a flood's batch and its flush, and by then its CPU had gone idle,
 * which on a VM makes the wake-up itself slower (bench/isolation, 1024
 * B: RX to doorbell 5 us against 2 alone). A lone tenant's bells still
 * ring after its own answers left. The walk is bounded by HG_BELLS and
 * the pending and hot sets. */
static inline int
hg_bells_behind(const struct hg_dp *dp, const struct hg_fp_core *c)
{
	unsigned i;
	int u;

	for (i = 0; i < c->n_bell; i++) {
		const struct hg_bell *b = &c->bell[i];

		if (!hg_bell_armed(&dp->tenant[b->tenant], b->ctx))
			continue;
		HG_TSET_FOREACH(u, &c->pend)
			if ((unsigned)u != b->tenant)
				return 1;
		HG_TSET_FOREACH(u, &c->hot)
			if ((unsigned)u != b->tenant && hg_tx_waiting(dp, c, (unsigned)u))
				return 1;
	}
	return 0;
}

#endif /* HG_FASTPATH_WAITING_H */

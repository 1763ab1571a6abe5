/* SPDX-License-Identifier: BSD-3-Clause
 *
 * SCHED's choice of whom to serve (sched.c), apart from the serving, so
 * that a unit test can drive it against a daemon state of its own
 * (tests/unit/test_sched_pick.c): deficit round robin over the tenants
 * with pending work, and a weighted lottery when none of them is funded.
 */
#ifndef HG_FASTPATH_SCHED_PICK_H
#define HG_FASTPATH_SCHED_PICK_H

#include "dp.h"
#include "link.h"
#include "rx_gate.h"

/* Does any tenant with pending work here have budget left? RX's gate
 * asks the same (hg_funded_pending). */
static inline int
hg_sched_any_funded(const struct hg_dp *dp, struct hg_fp_core *c)
{
	return hg_funded_pending(dp, c);
}

/* The next tenant of the lap that started at start, from t (a member, or
 * -1 at the lap's end) on, that SCHED serves: a funded one, or any with
 * protection off. Those passed over are counted as throttled. -1 once the
 * lap is done. */
static inline int
hg_sched_next(const struct hg_dp *dp, struct hg_fp_core *c, int t, unsigned start,
	      int protect)
{
	for (; t >= 0; t = hg_tset_lap_next(&c->pend, t, start)) {
		if (!protect || hg_topup_funded(dp, c, (unsigned)t))
			return t;
		c->t[t].throttles[HG_PT_SCHED]++;
	}
	return -1;
}

/* Do the frames staged so far leave before SCHED serves tenant next
 * after tenant t, instead of at the pass's end? With protection on,
 * where each tenants' group answers on a TX ring of its own (a NIC's TX queue
 * per tenant; memif), so that the flush makes no more calls than the
 * pass's own would: a funded tenant's answer then waits for nobody's
 * batch served after it. At the pass's end it waited for a flood's
 * batch and its copy, and its client's CPU had gone idle meanwhile
 * (bench/isolation, 1024 B: SCHED to the wire 6-8 us against 1-2 alone). */
static inline int
hg_sched_flush_between(const struct hg_dp *dp, const struct hg_fp_core *c, int protect,
		       int t, int next)
{
	return protect && next >= 0 && next != t && c->stage.n > 0 &&
	       hg_link_tx_per_tenant(dp);
}

/* How long after RX last saw its shared queue back up (hg_rx_note_backlog)
 * SCHED still holds its slack back: a few passes; every full burst while
 * the queue backs up renews it. */
#define HG_SLACK_HOLD_US 20u

/* Is slack held back on core c? While a shared RX queue backs up on a
 * saturated core, a funded tenant's datagram may sit in it unseen
 * (rx_gate.h), and every cycle spent on an unfunded tenant's answers
 * makes the queue drain later: RX sheds the unfunded tenant's datagrams
 * at ~30 cycles each, SCHED serving them as slack took the core from the
 * drain (bench/isolation, shared queue, 1400 B: the adversary charged
 * 0.93 of the core against its 0.43 share, the victim's p50 1.7 ms). */
static inline int
hg_slack_held(const struct hg_fp_core *c)
{
	/* rx_backlog may be later than the pass's start: RX ran first */
	return c->now < c->rx_backlog + c->tsc_us * HG_SLACK_HOLD_US &&
	       hg_core_saturated(c, c->now);
}

/* The tenant that takes a pass in which no funded tenant has work: one
 * drawn by weight (hg_lottery); -1 if nobody has work, or slack is held
 * back (hg_slack_held). */
static inline int
hg_sched_slack(const struct hg_dp *dp, struct hg_fp_core *c)
{
	if (hg_slack_held(c)) {
		c->slack_held++;
		return -1;
	}
	return hg_lottery(&c->pend, dp->view, &c->rng);
}

#endif /* HG_FASTPATH_SCHED_PICK_H */

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

/* The tenant that takes a pass in which no funded tenant has work: one
 * drawn by weight (hg_lottery), or -1 if nobody has work. */
static inline int
hg_sched_slack(const struct hg_dp *dp, struct hg_fp_core *c)
{
	return hg_lottery(&c->pend, dp->view, &c->rng);
}

#endif /* HG_FASTPATH_SCHED_PICK_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon state RX's shedding tests start from (test_rx_gate,
 * test_xdp_shed): core 0 of a daemon of the test's own, with an injected
 * clock, serving two active tenants of a quarter of the core each, a
 * victim with its budget left and a flood that has spent it, protection
 * on. */
#ifndef HG_TEST_FLOOD_PAIR_H
#define HG_TEST_FLOOD_PAIR_H

#include "../../fastpath/dp.h"

#define US 1000u		/* TSC ticks per microsecond, here */
#define T0 (10u * 1000 * US)
#define VICTIM 0
#define FLOOD 1

/* Fills dp (and views, which must outlive it) as above; returns core 0. */
static inline struct hg_fp_core *
flood_pair(struct hg_dp *dp, struct hg_tenant_view view[2])
{
	struct hg_fp_core *c = &dp->core[0];

	c->tsc_us = US;
	c->now = T0;
	for (int t = 0; t < 2; t++) {
		view[t] = (struct hg_tenant_view){ .state = HG_TENANT_ACTIVE,
						   .quantum = 1000000 };
		dp->view[t] = &view[t];
		dp->tenant_live[t].rate = HG_RATE_ONE / 4;
		c->t[t].bud = (struct hg_budget){ .granted = 1000000, .last = T0 };
	}
	c->t[FLOOD].bud.consumed = 1500000;	/* spent */
	dp->live.protection = dp->live.rx_drop = 1;
	return c;
}

#endif

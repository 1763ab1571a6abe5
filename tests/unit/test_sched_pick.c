/* SPDX-License-Identifier: BSD-3-Clause
 *
 * SCHED's choice (sched_pick.h) against a daemon state of the test's own:
 * the round robin's lap, who is passed over, and the weighted lottery
 * that hands out a pass no funded tenant wants. */
#include <criterion/criterion.h>

#include "../../fastpath/sched_pick.h"

static struct hg_dp *dp;
static struct hg_fp_core *c;
static struct hg_tenant_view view[16];

static void
setup(void)
{
	dp = hg_dp_new(1);
	cr_assert(dp != NULL);
	c = &dp->core[0];
	c->now = 1000;
	c->rng = 12345;
	for (int t = 0; t < 16; t++) {
		view[t] = (struct hg_tenant_view){ .state = HG_TENANT_ACTIVE,
						   .quantum = 100000, .weight = 100 };
		dp->view[t] = &view[t];
		c->t[t].bud = (struct hg_budget){ .granted = 50000, .last = 1000 };
	}
}

static void
teardown(void)
{
	hg_dp_free(dp);
}

TestSuite(sched_pick, .init = setup, .fini = teardown);

/* The tenants one lap from start serves, in order, into out[]. */
static unsigned
lap(unsigned start, int protect, int *out)
{
	unsigned n = 0;
	int t;

	for (t = hg_sched_next(dp, c, hg_tset_next(&c->pend, start), start, protect);
	     t >= 0; t = hg_sched_next(dp, c, hg_tset_lap_next(&c->pend, t, start), start,
				       protect))
		out[n++] = t;
	return n;
}

Test(sched_pick, a_lap_goes_round_from_where_the_last_one_stopped)
{
	int out[16];

	hg_tset_add(&c->pend, 3);
	hg_tset_add(&c->pend, 7);
	hg_tset_add(&c->pend, 9);
	cr_assert_eq(lap(5, 1, out), 3);
	cr_assert(out[0] == 7 && out[1] == 9 && out[2] == 3);
	cr_assert_eq(lap(0, 1, out), 3);
	cr_assert(out[0] == 3 && out[1] == 7 && out[2] == 9);
}

Test(sched_pick, an_unfunded_tenant_is_passed_over_and_counted)
{
	int out[16];

	hg_tset_add(&c->pend, 3);
	hg_tset_add(&c->pend, 7);
	hg_tset_add(&c->pend, 9);
	c->t[9].bud.consumed = 60000;		/* in debt */
	cr_assert_eq(lap(5, 1, out), 2);
	cr_assert(out[0] == 7 && out[1] == 3);
	cr_assert_eq(c->t[9].throttles[HG_PT_SCHED], 1);
	cr_assert(hg_sched_any_funded(dp, c));
	/* protection off: everyone is served, nobody throttled */
	cr_assert_eq(lap(5, 0, out), 3);
	cr_assert_eq(c->t[9].throttles[HG_PT_SCHED], 1);
	/* a budget refills with time: funded again once its debt is paid */
	dp->tenant_live[9].rate = HG_RATE_ONE;
	c->now += 20000;
	cr_assert_eq(lap(5, 1, out), 3);
}

Test(sched_pick, slack_goes_by_weight_when_nobody_is_funded)
{
	unsigned got[2] = { 0, 0 }, i;

	hg_tset_add(&c->pend, 1);
	hg_tset_add(&c->pend, 2);
	view[1].weight = 300;
	view[2].weight = 100;
	c->t[1].bud.consumed = c->t[2].bud.consumed = 60000;
	cr_assert(!hg_sched_any_funded(dp, c));
	for (i = 0; i < 40000; i++)
		got[hg_sched_slack(dp, c) == 1 ? 0 : 1]++;
	/* 3:1 within a point */
	cr_assert(got[0] > 29600 && got[0] < 30400, "%u of 40000", got[0]);
	hg_tset_del(&c->pend, 1);
	hg_tset_del(&c->pend, 2);
	cr_assert_eq(hg_sched_slack(dp, c), -1, "nobody has work");
}

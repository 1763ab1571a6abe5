/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Credit control: the pool's AIMD update and the per-session grant, driven
 * by an injected sequence of delay measurements (one per update period). */
#include <criterion/criterion.h>

#include "../../fastpath/credit_rules.h"

#define DT 50
#define MAX 4096.0

Test(aimd, additive_increase_below_the_target)
{
	cr_assert_float_eq(hg_credit_aimd(10, 0, DT, 1, 0.02, MAX), 11, 1e-9);
	cr_assert_float_eq(hg_credit_aimd(10, 49, DT, 2.5, 0.02, MAX), 12.5, 1e-9);
}

Test(aimd, multiplicative_decrease_proportional_to_the_excess)
{
	/* D_m = 2 D_t: 1 - 0.02 x 1 = 0.98 */
	cr_assert_float_eq(hg_credit_aimd(100, 100, DT, 1, 0.02, MAX), 98, 1e-9);
	/* D_m = D_t exactly: not below the target, factor 1 */
	cr_assert_float_eq(hg_credit_aimd(100, 50, DT, 1, 0.02, MAX), 100, 1e-9);
	/* a huge excess is floored at halving */
	cr_assert_float_eq(hg_credit_aimd(100, 1000000, DT, 1, 0.02, MAX), 50, 1e-9);
}

Test(aimd, bounds)
{
	cr_assert_float_eq(hg_credit_aimd(1, 1000000, DT, 1, 0.02, MAX), 1, 1e-9);
	cr_assert_float_eq(hg_credit_aimd(MAX, 0, DT, 1, 0.02, MAX), MAX, 1e-9);
	cr_assert_float_eq(hg_credit_aimd(5000, 0, DT, 1, 0.02, MAX), MAX, 1e-9,
			   "a lowered ceiling (fewer sessions) pulls the pool down");
}

Test(aimd, shrinks_under_a_burst_and_grows_back)
{
	double pool = 64;
	int i;

	/* a burst: the oldest waiting request ages past the target */
	for (i = 0; i < 20; i++)
		pool = hg_credit_aimd(pool, 300, DT, 1, 0.02, MAX);
	cr_assert_lt(pool, 64 * 0.5);
	/* it drains: delay back under the target, one credit per update */
	for (i = 0; i < 100; i++)
		pool = hg_credit_aimd(pool, 10, DT, 1, 0.02, MAX);
	cr_assert_gt(pool, 64);
}

Test(grant, grows_to_demand_plus_one_while_the_pool_has_room)
{
	cr_assert_eq(hg_credit_grant(1, 5, 100, 10, 1, 0), 6);
	cr_assert_eq(hg_credit_grant(1, 5, 100, 98, 1, 0), 3, "only the room there is");
	cr_assert_eq(hg_credit_grant(1, 500, 1000, 0, 1, 0), HG_CREDIT_MAX_SESSION);
	cr_assert_eq(hg_credit_grant(8, 0, 100, 10, 1, 0), 1, "no demand: back to one");
}

Test(grant, no_more_than_a_fair_share_of_the_pool)
{
	cr_assert_eq(hg_credit_grant(1, 50, 40, 10, 8, 0), 5, "40 credits, 8 sessions");
	cr_assert_eq(hg_credit_grant(1, 50, 4, 0, 8, 0), 1, "a share below one is one");
	cr_assert_eq(hg_credit_grant(9, 50, 40, 10, 8, 0), 5, "above its share: cut back");
}

Test(grant, revokes_one_per_answer_when_overcommitted)
{
	cr_assert_eq(hg_credit_grant(8, 20, 100, 120, 1, 0), 7);
	cr_assert_eq(hg_credit_grant(1, 20, 100, 100, 1, 0), 1,
		     "an active session keeps one while the pool covers it");
	cr_assert_eq(hg_credit_grant(1, 20, 100, 120, 1, 0), 0,
		     "more sessions than the pool holds: drained");
	cr_assert_eq(hg_credit_grant(1, 20, 100, 120, 1, 1), 0, "overloaded: drained");
	cr_assert_eq(hg_credit_grant(0, 3, 100, 120, 1, 1), 0);
}

/* Credits follow the budget: out of budget, the pool is driven
 * as if the delay were D_t x (1 + its shortfall in caps), at most 10 D_t. */
Test(credits, out_of_budget_counts_as_delay_above_the_target)
{
	const uint64_t dt = 50, cap = 15000;
	double pool = 100, cut, deep;

	cr_assert_eq(hg_credit_budget_delay(10, dt, 0, -5000, cap, 0), 10,
		     "a funded tenant keeps its measured delay");
	cr_assert_eq(hg_credit_budget_delay(10, dt, 1, 0, cap, 0), dt,
		     "at the mark: as if at D_t, so the pool stops growing");
	cr_assert_eq(hg_credit_budget_delay(10, dt, 1, -15000, cap, 0), 2 * dt,
		     "a cap's worth of debt: one D_t more");
	cr_assert_eq(hg_credit_budget_delay(10, dt, 1, -1000000, cap, 0), 10 * dt,
		     "bounded");
	cr_assert_eq(hg_credit_budget_delay(900, dt, 1, 0, cap, 0), 900,
		     "never below what was measured");
	cr_assert_eq(hg_credit_budget_delay(10, dt, 1, 0, cap, 0.5), dt + dt / 2,
		     "a mark above zero counts the shortfall from the mark");
	/* the pool: grows while funded, holds at the mark, shrinks below it,
	 * the deeper the more */
	cr_assert_gt(hg_credit_aimd(pool, hg_credit_budget_delay(10, dt, 0, 0, cap, 0), dt,
				    1, 0.02, 1000), pool);
	cut = hg_credit_aimd(pool, hg_credit_budget_delay(10, dt, 1, 0, cap, 0), dt, 1, 0.02,
			     1000);
	deep = hg_credit_aimd(pool, hg_credit_budget_delay(10, dt, 1, -60000, cap, 0), dt, 1,
			      0.02, 1000);
	cr_assert_eq(cut, pool);
	cr_assert_lt(deep, cut);
}

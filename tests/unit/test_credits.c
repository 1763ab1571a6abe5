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

/* A session as credit_sessions.c keeps it: the window, and how far past it
 * the client's requests may still come (the bound less the window). */
struct sess {
	uint32_t window, bound, outstanding;
};

static void
tell(struct sess *s, uint32_t w, uint32_t answered)
{
	s->bound = hg_credit_bound(s->bound, w, answered);
	s->window = w;
}

static int
admit(struct sess *s)
{
	if (s->outstanding >= s->bound)
		return 0;
	s->outstanding++;
	return 1;
}

/* What bench/feedback's held queue did: a client sent all three requests
 * its window allowed; they waited in the link while scans took two of its
 * credits back. Each arrived past the new window, and the last was turned
 * away as no_credit, leaving the session drained. Requests sent before
 * the client heard are within its bound; one past it still is not. */
Test(grant, requests_sent_before_a_smaller_window_arrived_are_admitted)
{
	struct sess s = { .window = 3, .bound = 3 };

	tell(&s, 2, 0);
	tell(&s, 1, 0);
	cr_assert_eq(s.bound, 3, "revokes answer nothing: three may still come");
	cr_assert(admit(&s) && admit(&s) && admit(&s));
	cr_assert(!admit(&s), "a fourth is past what it was ever told");
	/* each answer tells it 1 and takes one off what may still come */
	s.outstanding--;
	tell(&s, 1, 1);
	cr_assert_eq(s.bound, 2);
	s.outstanding--;
	tell(&s, 1, 1);
	cr_assert_eq(s.bound, 1, "down to the window once it has heard");
	cr_assert(!admit(&s), "one out, window 1");
}

Test(grant, a_grant_cut_by_more_than_one_lets_the_requests_in_flight_land)
{
	/* nine out, one of them here yet */
	struct sess s = { .window = 9, .bound = 9, .outstanding = 1 };
	uint32_t i;

	/* its share fell: the answer cuts it to 5 (see above) */
	s.outstanding--;
	tell(&s, hg_credit_grant(9, 50, 40, 10, 8, 0), 1);
	cr_assert_eq(s.window, 5);
	for (i = 0; i < 8; i++)
		cr_assert(admit(&s), "request %u of the eight on their way", i);
	cr_assert(!admit(&s));
	cr_assert_eq(hg_credit_bound(8, 5, 3), 5, "never below the window");
	cr_assert_eq(hg_credit_bound(2, 0, 5), 0, "nor below nothing");
}

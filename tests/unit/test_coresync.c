/* SPDX-License-Identifier: BSD-3-Clause
 *
 * CoreSync's Algorithm 1 as plain functions (policy/coresync.c, issue
 * 13's first part) with an injected clock: no park while a session is
 * drained; park only after the proportional revocation took effect; one
 * worker parks at a time; wake on delay; persistent overload forbids
 * parking. */
#include <criterion/criterion.h>

#include "../../policy/coresync.h"

static const struct hg_cs_params P = { .r = 50, .poll_ns = 2000 };

static struct hg_cs_view
view(uint64_t now, int64_t issued, uint32_t drained)
{
	return (struct hg_cs_view){ .now_ns = now, .issued = issued, .sessions = 10,
				    .drained = drained, .workers = 4 };
}

Test(coresync, polls_first_then_parks_when_credits_are_proportional)
{
	struct hg_cs_worker w = { 0 };
	struct hg_cs_view v = view(1000, 100, 0);	/* excess 90 <= 50 x 4 */
	double rev;

	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL, "poll_ns first");
	v.now_ns = 2999;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL);
	v.now_ns = 3000;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_PARK);
	cr_assert_eq(rev, 0, "nothing to revoke");
}

Test(coresync, no_park_while_a_session_is_drained)
{
	struct hg_cs_worker w = { 0 };
	struct hg_cs_view v = view(1000, 10, 1);
	double rev;

	hg_cs_idle(&w, &P, &v, &rev);
	v.now_ns = 1000000;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL);
	v.drained = 0;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_PARK);
}

Test(coresync, park_only_after_the_revocation_took_effect)
{
	struct hg_cs_worker w = { 0 };
	struct hg_cs_view v = view(1000, 410, 0);	/* excess 400 > 200 */
	double rev;

	hg_cs_idle(&w, &P, &v, &rev);
	v.now_ns = 5000;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_REVOKE);
	cr_assert_float_eq(rev, 100.0, 1e-9, "(issued - sessions) / workers");
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL, "waits, revokes once");
	cr_assert_eq(rev, 0);
	v.issued = 250;				/* clients were told: 240 <= 200? no */
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL);
	v.issued = 210;				/* 200 <= 200 */
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_PARK);
	cr_assert_float_eq(hg_cs_busy(&w), 100.0, 1e-9, "given back on wake-up");
	cr_assert_eq(w.idle_since, 0);
	cr_assert_eq(w.parking, 0);
}

Test(coresync, one_worker_parks_at_a_time)
{
	struct hg_cs_worker w = { 0 };
	struct hg_cs_view v = view(1000, 20, 0);
	double rev;

	hg_cs_idle(&w, &P, &v, &rev);
	v.now_ns = 10000;
	v.other_parking = 1;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL);
	v.other_parking = 0;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_PARK);
}

Test(coresync, wakes_one_on_delay)
{
	cr_assert(hg_cs_wake(6000, 5000, 1));
	cr_assert_not(hg_cs_wake(4000, 5000, 1), "below the threshold");
	cr_assert_not(hg_cs_wake(60000, 5000, 0), "nobody parked");
}

Test(coresync, persistent_overload_forbids_parking)
{
	struct hg_cs_overload o = { .last_pool = 100 };
	struct hg_cs_worker w = { 0 };
	struct hg_cs_view v = view(1000, 20, 0);
	double rev;

	cr_assert_not(hg_cs_overload(&o, 90, 0, 3), "one decrease: a spike");
	cr_assert_not(hg_cs_overload(&o, 80, 0, 3));
	v.overloaded = hg_cs_overload(&o, 70, 0, 3);
	cr_assert(v.overloaded, "three decreases in a row");
	hg_cs_idle(&w, &P, &v, &rev);
	v.now_ns = 100000;
	cr_assert_eq(hg_cs_idle(&w, &P, &v, &rev), HG_CS_POLL);
	cr_assert_not(hg_cs_overload(&o, 75, 0, 3), "an increase ends it");
	cr_assert(hg_cs_overload(&o, 75, 2, 3), "drained sessions: overloaded");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The dispatch policies of policy/dispatch.c as plain functions over queue
 * state: Synergy's Algorithm 2 order, DARC's reservation
 * (Algorithm 2), its profiling windows and updates, its worker choice
 * (Algorithm 1) with short-on-long stealing allowed and long-on-short
 * refused, and flat combining's election and hand-off. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "../../policy/dispatch.h"
#include "../../proto/hg_shm.h"

#define EMPTY UINT64_MAX

Test(synergy, algorithm_2_order)
{
	enum hg_src s[5];

	cr_assert_eq(hg_synergy_order(0, 1, 1, 1, s), 4);
	cr_assert(s[0] == HG_SRC_LOCAL && s[1] == HG_SRC_WAIT_QUEUE &&
		  s[2] == HG_SRC_OWN_PREEMPTED && s[3] == HG_SRC_STEAL);
	cr_assert_eq(hg_synergy_order(1, 1, 1, 1, s), 5);
	cr_assert_eq(s[0], HG_SRC_WAIT_QUEUE, "a congested wait queue first");
	cr_assert_eq(hg_synergy_order(1, 0, 0, 0, s), 1, "plain hg_recv: its queue");
	cr_assert_eq(s[0], HG_SRC_LOCAL);
}

/* Extreme: 99.5% 0.5 us, 0.5% 500 us. */
static const double S[HG_CLASSES] = { 500, 500000 };
static const double R[HG_CLASSES] = { 0.995, 0.005 };

Test(darc, reservation_from_a_profile)
{
	struct hg_darc d;
	uint32_t w;

	hg_darc_init(&d, 16);
	hg_darc_reserve(&d, S, R);
	/* short demand 0.4975 / 2.9975 x 16 = 2.66 -> 3 workers; long
	 * 13.3 -> 13: workers 3..14 and the spillway 15 */
	cr_assert_eq(d.reserved[0], 0x7ull);
	cr_assert_eq(d.reserved[1], 0xfff8ull);
	cr_assert_eq(d.n_order, 2);
	cr_assert_eq(d.order[0], 0, "shortest first");
	for (w = 0; w < 16; w++)
		cr_assert(d.eligible[0] & (1ull << w), "short may steal worker %u", w);
	for (w = 0; w < 3; w++)
		cr_assert_not(d.eligible[1] & (1ull << w),
			      "long may never run on short's worker %u", w);
	cr_assert_eq(d.eligible[2], 1ull << 15, "a class not seen: the spillway");
}

Test(darc, short_on_long_allowed_long_on_short_refused)
{
	uint64_t head[HG_CLASSES] = { EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY,
				      EMPTY, EMPTY };
	struct hg_darc d;

	hg_darc_init(&d, 16);
	hg_darc_reserve(&d, S, R);
	head[1] = 100;			/* a long request waits */
	cr_assert_eq(hg_darc_pick(&d, 0, head), -1, "short's worker stays idle");
	cr_assert_eq(hg_darc_pick(&d, 5, head), 1);
	head[0] = 200;			/* and a short, newer */
	cr_assert_eq(hg_darc_pick(&d, 5, head), 0, "shortest class first");
	cr_assert_eq(hg_darc_pick(&d, 1, head), 0);
	/* Algorithm 1 on arrival: a reserved worker if one is idle */
	cr_assert_eq(hg_darc_worker_for(&d, 0, (1ull << 2) | (1ull << 9)), 2);
	cr_assert_eq(hg_darc_worker_for(&d, 0, 1ull << 9), 9, "else steal");
	cr_assert_eq(hg_darc_worker_for(&d, 1, 1ull << 2), -1, "never the reverse");
}

Test(darc, first_window_is_cfcfs_then_reserves)
{
	uint64_t head[HG_CLASSES] = { 300, 100, EMPTY, EMPTY, EMPTY, EMPTY,
				      EMPTY, EMPTY };
	struct hg_darc d;
	uint32_t i;

	hg_darc_init(&d, 16);
	d.min_samples = 1000;
	cr_assert_eq(hg_darc_pick(&d, 0, head), 1, "oldest head while profiling");
	for (i = 0; i < 999; i++)
		cr_assert_eq(hg_darc_complete(&d, i % 200 ? 0 : 1,
					      i % 200 ? 500 : 500000), 0);
	cr_assert_eq(hg_darc_complete(&d, 0, 500), 1, "the window closes");
	cr_assert(d.active);
	cr_assert_eq(d.updates, 1);
	cr_assert_eq(d.reserved[0], 0x7ull);
	cr_assert_eq(hg_darc_pick(&d, 0, head), 0, "now shortest first");
}

Test(darc, updates_only_when_the_profile_moves)
{
	struct hg_darc d;
	uint32_t i, k;

	hg_darc_init(&d, 16);
	d.min_samples = 1000;
	for (k = 0; k < 5; k++)		/* the same mix, window after window */
		for (i = 0; i < 1000; i++)
			hg_darc_complete(&d, i % 200 ? 0 : 1, i % 200 ? 500 : 500000);
	cr_assert_eq(d.updates, 1, "a steady profile keeps its reservation");
	/* the short class gets 10x slower: its demand moves far past 10% */
	for (k = 0; k < 5; k++)
		for (i = 0; i < 1000; i++)
			hg_darc_complete(&d, i % 200 ? 0 : 1, i % 200 ? 5000 : 500000);
	cr_assert_geq(d.updates, 2, "counted");
	cr_assert_gt(__builtin_popcountll(d.reserved[0]), 3,
		     "more workers for the class that costs more");
}

Test(fc, one_combiner_at_a_time)
{
	struct hg_fc f;

	hg_fc_init(&f);
	cr_assert(hg_fc_try_combine(&f, 3));
	cr_assert_not(hg_fc_try_combine(&f, 5), "the lock is held");
	hg_fc_release(&f, 5);			/* not the owner: no effect */
	cr_assert_not(hg_fc_try_combine(&f, 5));
	hg_fc_release(&f, 3);
	cr_assert(hg_fc_try_combine(&f, 5), "handed back, another wins");
	cr_assert_eq(f.combines, 2);
}

Test(fc, one_request_to_each_idle_worker_the_rest_central)
{
	struct hg_fc f;
	uint64_t idle = (1ull << 1) | (1ull << 4) | (1ull << 6);

	hg_fc_init(&f);
	cr_assert_eq(hg_fc_target(&f, &idle, 6), 1);
	cr_assert_eq(hg_fc_target(&f, &idle, 6), 4, "round robin");
	cr_assert_eq(idle, 1ull << 6, "each got one: busy now");
	cr_assert_eq(hg_fc_target(&f, &idle, 6), -1,
		     "the rest go central, where the combiner takes its own");
	idle = (1ull << 1) | (1ull << 4);
	cr_assert_eq(hg_fc_target(&f, &idle, 6), 1, "wraps");
	cr_assert_eq(f.handed, 3);
}

/* A preempted request pushed at the head runs before those queued
 * (Shinjuku's multi-queue policy), across the ring's wrap; a full FIFO
 * refuses it. */
Test(fifo, push_head_goes_first_and_respects_the_bound)
{
	struct hg_dq_req mem[4], r = { 0 };
	struct hg_dq_fifo f;
	uint64_t i;

	hg_dq_fifo_init(&f, mem, 4);
	for (i = 1; i <= 3; i++) {
		r.cookie = i;
		cr_assert_eq(hg_dq_push(&f, &r), 0);
	}
	r.cookie = 9;
	cr_assert_eq(hg_dq_push_head(&f, &r), 0, "wraps below slot 0");
	cr_assert_eq(hg_dq_push_head(&f, &r), -1, "full");
	for (i = 0; i < 4; i++) {
		cr_assert_eq(hg_dq_pop(&f, &r), 0);
		cr_assert_eq(r.cookie, i == 0 ? 9 : i);
	}
	cr_assert_eq(hg_dq_pop(&f, &r), -1);
}

/* The class histograms' bins (proto/hg_shm.h): 4 per power of two, a
 * bin's bound at most 25% above any value in it, monotonic. */
Test(hist, bins_bound_their_values)
{
	uint64_t v, prev = 0;
	uint32_t b, last = 0;

	cr_assert_eq(hg_hist_bin(0, HG_HIST_SVC_BASE), 0);
	cr_assert_eq(hg_hist_bin(255, HG_HIST_SVC_BASE), 0);
	cr_assert_eq(hg_hist_bin(256, HG_HIST_SVC_BASE), 1);
	for (v = 1; v < (1ull << 32); v = v * 9 / 8 + 1) {
		b = hg_hist_bin(v, HG_HIST_SLOW_BASE);
		cr_assert_geq(b, last, "monotonic at %lu", (unsigned long)v);
		if (b == HG_HIST_BINS - 1)
			break;		/* the last bin takes what is above */
		cr_assert_geq(hg_hist_high(b, HG_HIST_SLOW_BASE), v);
		if (b > 0)
			cr_assert_leq(hg_hist_high(b, HG_HIST_SLOW_BASE), v + v / 4 + 1,
				      "%lu in bin %u", (unsigned long)v, b);
		last = b;
		prev = v;
	}
	cr_assert_eq(hg_hist_bin(~0ull, HG_HIST_SVC_BASE), HG_HIST_BINS - 1);
	(void)prev;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * SCHED's choice (sched_pick.h) against a daemon state of the test's own:
 * the round robin's lap, who is passed over, and the weighted lottery
 * that hands out a pass no funded tenant wants. */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "../../fastpath/memif.h"
#include "../../fastpath/sched_pick.h"
#include "../../fastpath/waiting.h"

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

/* While a shared RX queue backs up on a saturated core, a funded
 * tenant's datagram may wait in it unseen, and SCHED serves no slack:
 * every cycle on an unfunded tenant's answers made the queue drain later
 * (bench/isolation, shared queue, 1400 B: the flood charged 0.93 of the
 * core against its 0.43 share, the victim's p50 at 1.7 ms). */
Test(sched_pick, slack_is_held_while_a_shared_queue_backs_up)
{
	const uint64_t us = 1000;

	hg_tset_add(&c->pend, 1);
	c->t[1].bud.consumed = 60000;
	c->tsc_us = us;
	c->now = 100000 * us;
	c->last_empty = c->now - 5000 * us;	/* saturated */
	c->busy_streak = 10000;
	c->rx_backlog = c->now + 3;		/* RX ran after the pass began */
	cr_assert_eq(hg_sched_slack(dp, c), -1);
	cr_assert_eq(c->slack_held, 1);
	c->now += (HG_SLACK_HOLD_US + 1) * us;
	cr_assert_eq(hg_sched_slack(dp, c), 1, "the queue stopped backing up");
	c->rx_backlog = c->now;
	c->last_empty = c->now - 10 * us;
	cr_assert_eq(hg_sched_slack(dp, c), 1, "a core with time to spare");
	cr_assert_eq(c->slack_held, 1);
}

/* A memif link of the test's own: ring q's peer published `ahead`
 * frames beyond what the core took. */
static struct hg_mif mif;
static struct hg_mif_conn *conn;
static struct hg_memif_ring ring[3];

static void
link_with_rings(unsigned n)
{
	conn = calloc(1, sizeof(*conn));
	cr_assert(conn != NULL);
	conn->n_rx = n;
	for (unsigned q = 0; q < n; q++)
		conn->rx[q] = (struct hg_mif_ring){ .ring = &ring[q], .mask = 1023, .efd = -1 };
	mif.conn = conn;
	dp->mif = &mif;
}

static void
frames_on(unsigned q, uint16_t ahead)
{
	ring[q].head = (uint16_t)(conn->rx[q].next + ahead);
}

/* What bench/isolation's combined throughput (0.67-0.72 of unprotected)
 * came to: a flood's SCHED batch was cut to its allowance whenever the
 * victim was attached, though the victim had nothing waiting, and the
 * pass's fixed cost was paid every 7 datagrams. A batch now yields only
 * to another tenant's work. */
Test(sched_pick, only_another_tenants_work_makes_a_batch_yield)
{
	hg_dp_set_rxq(dp, HG_RX_PEER, 3);
	link_with_rings(3);
	c->rxq[0].tenant = 0;		/* the victim's queue */
	c->rxq[1].tenant = 1;		/* the flood's */
	dp->rxq_tenants[0] = dp->rxq_tenants[1] = 1;
	hg_tset_add(&c->pend, 1);
	frames_on(1, 32);
	cr_assert(!hg_others_waiting(dp, c, 1), "its own work waits for nobody");
	hg_tset_add(&c->hot, 0);	/* hot, nothing on its rings */
	cr_assert(!hg_others_waiting(dp, c, 1));
	/* the victim's datagram on its queue */
	frames_on(0, 1);
	cr_assert(hg_others_waiting(dp, c, 1));
	frames_on(0, 0);
	/* delivered this pass: its doorbell and its answer are to come */
	c->bell[c->n_bell++] = (struct hg_bell){ .tenant = 0, .ctx = 0 };
	cr_assert(hg_others_waiting(dp, c, 1));
	c->n_bell = 0;
	/* its answers pending here */
	hg_tset_add(&c->pend, 0);
	cr_assert(hg_others_waiting(dp, c, 1));
	cr_assert(hg_others_waiting(dp, c, 0), "and the flood's, for the victim");
	hg_tset_del(&c->pend, 0);
	/* on a queue that two tenants share, the frames may be anyone's */
	dp->rxq_tenants[1] = 2;
	cr_assert(hg_others_waiting(dp, c, 1));
	dp->mif = NULL;
	free(conn);
}

/* A queue RX holds for its tenant's full rings (hg_rx_room) has frames in
 * the link that no pass will take: they are nobody's work, and a victim's
 * batch beside it need not yield to them. */
Test(sched_pick, a_held_queue_is_no_ones_work)
{
	hg_dp_set_rxq(dp, HG_RX_PEER, 3);
	link_with_rings(3);
	c->rxq[0].tenant = 0;
	c->rxq[1].tenant = 1;
	dp->rxq_tenants[0] = dp->rxq_tenants[1] = 1;
	frames_on(1, 1024);
	cr_assert(hg_others_waiting(dp, c, 0), "the flood's frames, to be taken");
	c->rxq[1].blocked = 1;
	cr_assert(!hg_others_waiting(dp, c, 0), "held: its rings are full");
	c->rxq[1].blocked = 0;
	dp->mif = NULL;
	free(conn);
}

/* A frame staged for the pass's one send leaves only when the pass ends:
 * a victim's answer, served first, waited for the flood's batch behind it
 * (up to 31 datagrams of 1400 B, ~23 us). Another tenant's staged frame
 * is work waiting; the tenant's own are not. */
Test(sched_pick, a_frame_staged_for_another_is_work_waiting)
{
	struct hg_tx_stage *s = &c->stage;

	cr_assert(!hg_others_waiting(dp, c, 1), "nothing anywhere");
	s->who[s->n++] = (struct hg_stage_who){ .tenant = 1, .len = 1400 };
	s->of[1] = 1;
	cr_assert(!hg_others_waiting(dp, c, 1), "its own frame");
	s->who[s->n++] = (struct hg_stage_who){ .tenant = 0, .len = 64 };
	s->of[0] = 1;
	cr_assert(hg_others_waiting(dp, c, 1), "the victim's answer");
	cr_assert(hg_others_waiting(dp, c, 0), "... and the flood's, for the victim");
	s->n = 0;
	s->of[0] = s->of[1] = 0;
}

/* A worker that armed its doorbell is woken right after RX when another
 * tenant's answers would go first (hg_bells_behind): rung at the pass's
 * end, a victim's wake-up waited for a flood's batch and its flush. A
 * lone tenant's doorbells still wait for its own answers to leave, and a
 * context that is not asleep needs no early ring. */
Test(sched_pick, a_sleeping_worker_is_woken_before_a_neighbours_answers)
{
	static struct hg_ctx_shm shm[2][2];

	dp->tenant[0].ctx_shm = shm[0];
	dp->tenant[1].ctx_shm = shm[1];
	c->bell[c->n_bell++] = (struct hg_bell){ .tenant = 0, .ctx = 1 };
	hg_tset_add(&c->pend, 1);
	cr_assert(!hg_bells_behind(dp, c), "its worker is awake");
	shm[0][1].armed = 1;
	cr_assert(hg_bells_behind(dp, c), "asleep, with the flood's answers pending");
	hg_tset_del(&c->pend, 1);
	hg_tset_add(&c->pend, 0);
	cr_assert(!hg_bells_behind(dp, c), "only its own tenant's answers");
	hg_tset_del(&c->pend, 0);
	c->n_bell = 0;
	cr_assert(!hg_bells_behind(dp, c), "nobody delivered to");
}

/* Where each tenants' group answers on a TX ring of its own, what SCHED
 * staged leaves before the next tenant's batch is built
 * (hg_sched_flush_between): a victim's answer served first waited for the
 * flood's batch and its copy. So too behind one shared RX queue (the
 * groups are TX's: --tx-queues). Not on one shared ring, not with
 * protection off, not at the lap's end or for the same tenant, and not
 * with nothing staged. */
Test(sched_pick, a_funded_answer_leaves_before_the_next_tenants_batch)
{
	struct hg_tx_stage *s = &c->stage;

	hg_dp_set_rxq(dp, HG_RX_SHARED, 1);
	dp->txq_per_core = 3;
	link_with_rings(1);
	conn->n_tx = 3;
	s->who[s->n++] = (struct hg_stage_who){ .tenant = 0, .len = 64 };
	cr_assert(hg_sched_flush_between(dp, c, 1, 0, 1));
	cr_assert(!hg_sched_flush_between(dp, c, 0, 0, 1), "protection off");
	cr_assert(!hg_sched_flush_between(dp, c, 1, 0, -1), "the lap is over");
	cr_assert(!hg_sched_flush_between(dp, c, 1, 0, 0), "the same tenant again");
	conn->n_tx = 1;
	cr_assert(!hg_sched_flush_between(dp, c, 1, 0, 1), "one ring for all");
	conn->n_tx = 3;
	dp->txq_per_core = 1;
	cr_assert(!hg_sched_flush_between(dp, c, 1, 0, 1), "one TX group");
	dp->txq_per_core = 3;
	s->n = 0;
	cr_assert(!hg_sched_flush_between(dp, c, 1, 0, 1), "nothing staged");
	dp->mif = NULL;
	free(conn);
}

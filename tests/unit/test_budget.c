/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Budgets, refill and the DRR choice, with an injected clock. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../../fastpath/credit_rules.h"
#include "../../fastpath/dp.h"
#include "../../slowpath/config.h"
#include "../../slowpath/credit_pool.h"
#include "../../slowpath/preempt_timer.h"
#include "../../slowpath/publish.h"
#include "../../slowpath/refill.h"

#define B 0.85

/* Virtuoso eq. 1 in one call: e = B (tau' - tau) w / sum(w) and
 * b' = min(C, b + e); the daemon takes the two steps apart (the rate is
 * published, the grant taken where a point looks). */
static uint64_t
hg_budget_refill(uint64_t granted, uint64_t consumed, uint64_t elapsed,
		 double boost, uint64_t weight, uint64_t weight_sum, uint64_t cap)
{
	return hg_budget_grant(granted, consumed, elapsed,
			       hg_budget_rate(boost, weight, weight_sum), cap);
}

Test(refill, formula_weights_and_cap)
{
	/* e = B * elapsed * w / sum(w) */
	cr_assert_eq(hg_budget_refill(0, 0, 1000, B, 1, 2, 1 << 30), 425);
	cr_assert_eq(hg_budget_refill(0, 0, 1000, B, 3, 4, 1 << 30), 637);
	cr_assert_eq(hg_budget_refill(0, 0, 1000, B, 1, 4, 1 << 30), 212);
	/* min(C, b + e) */
	cr_assert_eq(hg_budget_refill(14000, 0, 100000, B, 1, 1, 15000), 15000);
	cr_assert_eq(hg_budget_refill(15000, 0, 100000, B, 1, 1, 15000), 15000);
	/* granted and consumed are running totals: only the difference counts */
	cr_assert_eq(hg_budget_refill(1000500, 1000000, 1000, B, 1, 1, 15000),
		     1000500 + 850);
	/* a lowered cap pulls the budget down at once */
	cr_assert_eq(hg_budget_refill(50000, 0, 1000, B, 1, 1, 15000), 15000);
	/* no tenants: nothing to hand out */
	cr_assert_eq(hg_budget_refill(7, 0, 1000, B, 0, 0, 15000), 7);
}

Test(refill, debt_is_repaid_before_the_tenant_is_funded_again)
{
	/* a 32-packet batch overran by 40000 cycles */
	uint64_t granted = 15000, consumed = 55000;
	int ticks = 0;
	struct hg_budget b;

	while ((int64_t)(granted - consumed) <= 0) {
		granted = hg_budget_refill(granted, consumed, 3000, B, 1, 2, 15000);
		ticks++;
	}
	/* 40000 of debt at 1275 cycles per tick: ceil(40000 / 1275) = 32 */
	cr_assert_eq(ticks, 32);
	b = (struct hg_budget){ .granted = granted, .consumed = consumed, .last = 5 };
	cr_assert_gt(hg_budget_left(&b, 0, 15000, 5), 0);
	hg_budget_charge(&b, 100000);
	cr_assert_lt(hg_budget_left(&b, 0, 15000, 5), 0);
}

/* RX's shedding is billed to the shed tenant's debt, never past one
 * quantum below zero: a flood pays for being dropped, and is funded again
 * within quantum / rate cycles of its end. */
Test(refill, shedding_goes_to_the_debt_within_one_quantum)
{
	struct hg_budget b = { .granted = 1000, .consumed = 0, .last = 1 };

	hg_budget_charge_debt(&b, 600, 5000);
	cr_assert_eq((int64_t)(b.granted - b.consumed), 400, "charged in full while funded");
	hg_budget_charge_debt(&b, 3000, 5000);
	cr_assert_eq((int64_t)(b.granted - b.consumed), -2600, "into debt");
	hg_budget_charge_debt(&b, 100000, 5000);
	cr_assert_eq((int64_t)(b.granted - b.consumed), -5000, "no deeper than the quantum");
	hg_budget_charge_debt(&b, 7, 5000);
	cr_assert_eq((int64_t)(b.granted - b.consumed), -5000, "at the floor nothing more");
	/* refill alone brings it back: 0.5 of each cycle after 20,000 */
	cr_assert_gt(hg_budget_left(&b, HG_RATE_ONE / 2, 15000, 1 + 20000), 0);
}

Test(refill, the_core_tops_up_by_itself_between_ticks)
{
	uint64_t rate = hg_budget_rate(B, 1, 2);	/* 0.425 per cycle */
	struct hg_budget b = { .last = 0 };

	cr_assert_eq(hg_budget_left(&b, rate, 15000, 100), 15000,
		     "never topped up: a new tenant starts full");
	hg_budget_charge(&b, 15000);
	cr_assert_eq(hg_budget_left(&b, rate, 15000, 100), 0);
	cr_assert_eq(hg_budget_left(&b, rate, 15000, 1100), 425);
	cr_assert_eq(hg_budget_left(&b, rate, 15000, 3100), 425 + 850);
	cr_assert_eq(hg_budget_peek(&b, rate, 15000, 4100), 425 + 850 + 425,
		     "the slow path's view");
	cr_assert_eq(b.last, 3100, "a peek writes nothing");
	cr_assert_eq(hg_budget_left(&b, rate, 15000, 3000), 1275,
		     "a clock behind the last top-up adds nothing");
	cr_assert_eq(hg_budget_left(&b, rate, 15000, 1u << 30), 15000, "capped");
	cr_assert_eq(hg_budget_left(&b, rate, 4000, 1u << 30), 4000,
		     "a lowered cap cuts at the next look");
}

Test(drr, slack_lottery_follows_weights)
{
	static struct hg_tenant_view v[HG_MAX_TENANTS];
	static const struct hg_tenant_view *wq[HG_MAX_TENANTS];
	static int n[HG_MAX_TENANTS];
	struct hg_tset s = { 0 }, none = { 0 };
	uint64_t rng = 7;
	int i;

	for (i = 0; i < (int)HG_MAX_TENANTS; i++)
		wq[i] = &v[i];
	v[1].weight = 300;
	v[4000].weight = 100;
	v[9].weight = 900;	/* not in the set */
	hg_tset_add(&s, 1);
	hg_tset_add(&s, 4000);
	for (i = 0; i < 40000; i++)
		n[hg_lottery(&s, wq, &rng)]++;
	cr_assert_eq(n[9], 0);
	cr_assert(n[1] > 29000 && n[1] < 31000, "%d", n[1]);
	cr_assert_eq(n[1] + n[4000], 40000);
	cr_assert_eq(hg_lottery(&none, wq, &rng), -1);
}

Test(drr, batches_are_sized_to_the_budget)
{
	cr_assert_eq(hg_batch_size(100000, 0, 32), 32, "cost unknown: full burst");
	cr_assert_eq(hg_batch_size(100000, 1000, 32), 32, "cheap: full burst");
	cr_assert_eq(hg_batch_size(15000, 5000, 32), 4, "3 covered + 1 overrun");
	cr_assert_eq(hg_batch_size(15000, 100000, 32), 1, "expensive: one");
	cr_assert_eq(hg_batch_size(-5, 1000, 32), 1, "at least one");
	cr_assert_eq(hg_batch_size(15000, 100, 7), 7, "within room");
	cr_assert_eq(hg_cost_avg(0, 8000, 4), 2000);
	cr_assert_eq(hg_cost_avg(2000, 10000, 1), 2000 - 250 + 1250);
}

Test(drr, a_batch_spends_at_most_the_quantum)
{
	/* a banked effective cap of 1.28M at 40,000 cycles per datagram: one
	 * datagram per batch at the 15,000 quantum, not 32 */
	cr_assert_eq(hg_batch_size(hg_batch_allowance(1280000, 15000, 0), 40000, 32), 1);
	cr_assert_eq(hg_batch_allowance(1280000, 15000, 0), 15000, "banked: the quantum");
	cr_assert_eq(hg_batch_allowance(9000, 15000, 0), 9000, "less left: what is left");
	cr_assert_eq(hg_batch_allowance(-500, 15000, 0), -500, "in debt: one datagram");
	cr_assert_eq(hg_batch_allowance(-500, 15000, 1), 15000, "slack: one quantum");
	cr_assert_eq(hg_batch_size(hg_batch_allowance(1280000, 15000, 0), 1000, 32), 16,
		     "cheap datagrams: 15 covered + 1 overrun");
}

/* A batch nobody waited behind looked at the others every 8 datagrams:
 * of 1400 B (~1,800 cycles each) that was ~6 us, three times RX's look.
 * It looks every 2 us of the tenant's datagrams, at most every 8. */
Test(drr, a_batch_looks_at_the_others_every_two_microseconds_of_it)
{
	const uint64_t us2 = 2 * 2400;		/* a 2.4 GHz TSC */

	cr_assert_eq(hg_sched_chunk(us2, 1800, 8), 2, "1400 B: every 2, not 8");
	cr_assert_eq(hg_sched_chunk(us2, 300, 8), 8, "64 B: every 8 at most");
	cr_assert_eq(hg_sched_chunk(us2, 100000, 8), 1, "dear ones: every one");
	cr_assert_eq(hg_sched_chunk(us2, 0, 8), 8, "cost unknown: every 8");
}

Test(tset, round_robin_order_from_the_pointer)
{
	struct hg_tset m = { 0 };
	unsigned rr = 8;
	int order[3], i, t;

	cr_assert_eq(hg_tset_next(&m, 5), -1);
	hg_tset_add(&m, 2);
	hg_tset_add(&m, 7);
	hg_tset_add(&m, 4095);
	cr_assert_eq(hg_tset_next(&m, 0), 2);
	cr_assert_eq(hg_tset_next(&m, 3), 7);
	cr_assert_eq(hg_tset_next(&m, 8), 4095);
	cr_assert_eq(hg_tset_next(&m, 4096), 2, "wraps");
	for (i = 0; i < 3; i++) {
		t = hg_tset_next(&m, rr);
		order[i] = t;
		hg_tset_del(&m, (unsigned)t);
		rr = (unsigned)t + 1;
	}
	cr_assert(order[0] == 4095 && order[1] == 2 && order[2] == 7);
	cr_assert(hg_tset_empty(&m));
}

Test(tset, a_lap_visits_each_member_once_from_any_start)
{
	static const unsigned mem[] = { 0, 63, 64, 65, 1000, 2047, 4032, 4095 };
	struct hg_tset m = { 0 };
	unsigned start, i, n;
	int t;

	for (i = 0; i < RTE_DIM(mem); i++)
		hg_tset_add(&m, mem[i]);
	for (start = 0; start < HG_MAX_TENANTS; start += 7) {
		n = 0;
		for (t = hg_tset_next(&m, start); t >= 0; t = hg_tset_lap_next(&m, t, start))
			n++;
		cr_assert_eq(n, RTE_DIM(mem), "start %u: %u visits", start, n);
	}
	/* removing the current member mid-lap loses nothing */
	n = 0;
	for (t = hg_tset_next(&m, 100); t >= 0; t = hg_tset_lap_next(&m, t, 100)) {
		hg_tset_del(&m, (unsigned)t);
		n++;
	}
	cr_assert_eq(n, RTE_DIM(mem));
	cr_assert(hg_tset_empty(&m));
}

Test(tset, marks_are_taken_once_and_none_is_lost)
{
	struct hg_aset shared = { 0 };
	struct hg_tset got = { 0 };
	int t, n = 0;

	hg_aset_mark(&shared, 5);
	hg_aset_mark(&shared, 5);
	hg_aset_mark(&shared, 3000);
	hg_aset_take(&shared, &got);
	cr_assert(hg_aset_empty(&shared));
	HG_TSET_FOREACH(t, &got)
		n++;
	cr_assert_eq(n, 2);
	cr_assert(hg_tset_has(&got, 5) && hg_tset_has(&got, 3000));
	hg_aset_add(&shared, 70);
	hg_aset_del(&shared, 70);
	cr_assert(hg_aset_empty(&shared));
}

/* ---- the slow path's tick over a registry, without EAL ---- */

static struct hg_dp *dp;
static struct hg_registry *reg;

/* The test clock starts at T0; budgets start empty there (a real new
 * tenant's start full: never topped up). */
#define T0 1000000u

static void changed(void);

static void
setup(void)
{
	hg_config_defaults();
	dp = hg_dp_new(2);
	reg = calloc(1, sizeof(*reg));
	cr_assert(dp != NULL && reg != NULL);
	reg->dp = dp;
	for (int i = 0; i < 2; i++) {
		reg->t[i].used = 1;
		reg->t[i].state = HG_TENANT_ACTIVE;
		reg->t[i].cfg.cap = 15000;
		dp->core[0].t[i].bud.last = dp->core[1].t[i].bud.last = T0;
	}
	reg->t[0].cfg.weight = 3 * HG_WEIGHT_ONE;
	reg->t[1].cfg.weight = 1 * HG_WEIGHT_ONE;
	changed();
}

/* What the control path does after a tenant set: the cores get a view
 * with the new settings (no qsbr here: the old one goes at once), and the
 * slow path's ticks look at the tenants. */
static void
changed(void)
{
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(hg_publish_settings(reg, i, HG_TCFG_PUB_BUDGET), 0);
		hg_tset_add(&reg->awake, (unsigned)i);
	}
}

static void
teardown(void)
{
	hg_publish_fini(reg);
	hg_dp_free(dp);
	free(reg);
}

/* What a core sees when it looks at tenant t at TSC now. */
static int64_t
left(int core, int t, uint64_t now)
{
	dp->core[core].now = now;
	return hg_topup_left(dp, &dp->core[core], (unsigned)t);
}

TestSuite(tick, .init = setup, .fini = teardown);

Test(tick, publishes_rates_by_weight_once_per_period)
{
	struct hg_refill r;

	hg_refill_init(&r, T0);
	cr_assert_eq(hg_refill_tick(reg, &r, T0 + 999, 1000), 0, "too early");
	cr_assert_eq(hg_refill_tick(reg, &r, T0 + 1000, 1000), 1);
	cr_assert_eq(left(0, 0, T0 + 1000), 637);	/* 0.85 * 1000 * 3/4 */
	cr_assert_eq(left(1, 0, T0 + 1000), 637);
	cr_assert_eq(left(0, 1, T0 + 1000), 212);	/* 0.85 * 1000 * 1/4 */
	/* no tick for 2000 cycles: the cores refill all the same */
	cr_assert_eq(left(0, 0, T0 + 3000), 637 + 1275);
	cr_assert_eq(left(0, 1, T0 + 3000), 212 + 425);
	/* a live weight change shows from the next tick */
	reg->t[1].cfg.weight = 3 * HG_WEIGHT_ONE;
	changed();
	hg_refill_tick(reg, &r, T0 + 3000, 1000);
	cr_assert_eq(left(0, 1, T0 + 4000), 212 + 425 + 425);
}

Test(tick, an_idle_tenants_budget_never_exceeds_its_cap)
{
	struct hg_refill r;
	uint64_t now;

	hg_refill_init(&r, T0);
	for (now = T0 + 1000; now <= T0 + 10000000; now += 1000) {
		hg_refill_tick(reg, &r, now, 1000);
		cr_assert_leq(left(0, 0, now), 15000);
		cr_assert_leq(left(1, 1, now), 15000);
	}
	cr_assert_eq(left(0, 0, now), 15000);
	cr_assert(!hg_tset_has(&reg->awake, 0), "a full, quiet tenant settles");
	reg->t[0].cfg.cap = 4000;		/* lowered live */
	changed();
	hg_refill_tick(reg, &r, now, 1000);
	cr_assert_eq(left(0, 0, now), 4000);
	cr_assert_eq(r.last_busy, T0, "no core did anything");
}

/* A tenant set while it sleeps, then settled by the next refill before a
 * credit tick ran: the fast path must see its new D_t and D_drop, not the
 * old ones (it turned the next requests away as overload). */
Test(tick, a_settling_tenant_publishes_its_credit_settings)
{
	struct hg_sessions *ss[2];
	struct hg_refill r;

	for (int c = 0; c < 2; c++) {
		ss[c] = calloc(1, sizeof(*ss[c]));
		cr_assert(ss[c] != NULL);
		dp->core[c].sess = ss[c];
		dp->core[c].t[0].bud.granted = 15000;	/* full */
	}
	reg->tsc_us = 1000;
	reg->t[0].cfg.credit = (struct hg_credit_cfg){ .rpc_lo = 9, .rpc_hi = 9,
						   .dt_us = 2000, .ddrop_us = 5000 };
	reg->t[0].pool = HG_CREDIT_MAX_SESSION;
	reg->t[0].dm_tsc = 777;				/* from before it slept */
	dp->tenant_live[0].dm_tsc = 777;
	/* the set: D_t and D_drop are in the view the set publishes */
	cr_assert_eq(hg_publish_settings(reg, 0, HG_TCFG_PUB_CREDIT), 0);
	cr_assert_eq(hg_view(dp, 0)->ddrop_tsc, 5000u * 1000);
	cr_assert_eq(hg_view(dp, 0)->dt_tsc, 2000u * 1000);
	hg_refill_init(&r, T0);
	hg_refill_tick(reg, &r, T0 + 1000, 1000);
	cr_assert(!hg_tset_has(&reg->awake, 0), "full and quiet: settled");
	cr_assert_eq(dp->tenant_live[0].dm_tsc, 0);
	cr_assert_eq(dp->tenant_live[0].pool, HG_CREDIT_MAX_SESSION);
	for (int c = 0; c < 2; c++) {
		dp->core[c].sess = NULL;
		free(ss[c]);
	}
}

Test(tick, deleted_tenants_get_nothing_and_consumption_is_noticed)
{
	struct hg_refill r;

	hg_refill_init(&r, T0);
	reg->t[1].releasing = 1;
	changed();
	hg_refill_tick(reg, &r, T0 + 1000, 1000);
	cr_assert_eq(left(0, 0, T0 + 1000), 850, "weight sum is the live tenants only");
	cr_assert_eq(left(0, 1, T0 + 1000), 0);
	hg_budget_charge(&dp->core[1].t[0].bud, 5000);
	hg_touch(&dp->core[1], 0);
	dp->core[1].busy_passes++;
	hg_refill_tick(reg, &r, T0 + 2000, 1000);
	cr_assert_eq(r.last_busy, T0 + 2000);
	cr_assert_eq(left(1, 0, T0 + 2000), 850 + 850 - 5000, "debt carried");
}

/* Datagrams of tenant 0 at cost cycles each, as the points count them. */
static void
work(unsigned n, uint64_t cost)
{
	for (unsigned k = 0; k < n; k++) {
		hg_charge(&dp->core[0].t[0], HG_PT_RX, cost / 4, 1, 1);
		hg_charge(&dp->core[0].t[0], HG_PT_SCHED, cost - cost / 4, 1, 1);
	}
	hg_touch(&dp->core[0], 0);
}

Test(tick, the_cap_follows_the_measured_cost_per_datagram)
{
	struct hg_refill r;

	hg_refill_init(&r, T0);
	work(100, 50000);
	hg_refill_tick(reg, &r, T0 + 1000, 1000);
	cr_assert_eq(reg->t[0].cost, 50000);
	cr_assert_eq(hg_tenant_cap(dp, 0, hg_view(dp, 0)), 2 * HG_BATCH * 50000,
		     "two batches of it");
	cr_assert_eq(hg_refill_cap(&reg->t[0]), hg_tenant_cap(dp, 0, hg_view(dp, 0)));
	work(100, 10000);			/* cheaper now: the average moves */
	hg_refill_tick(reg, &r, T0 + 2000, 1000);
	cr_assert_eq(reg->t[0].cost, (3 * 50000 + 10000) / 4);
	work(8, 90000);				/* too few for a sample */
	hg_refill_tick(reg, &r, T0 + 3000, 1000);
	cr_assert_eq(reg->t[0].cost, (3 * 50000 + 10000) / 4);
	reg->t[0].cfg.cap = 9000000;		/* a configured cap above it wins */
	cr_assert_eq(hg_refill_cap(&reg->t[0]), 9000000);
	reg->t[0].cost = 10000000;		/* bounded whatever it costs */
	cr_assert_eq(hg_refill_cap(&reg->t[0]), 50000000);
	hg_cfg.cap_batches = 0;			/* off: the configured cap */
	cr_assert_eq(hg_refill_cap(&reg->t[0]), 9000000);
	cr_assert_eq(hg_tenant_cap(dp, 1, hg_view(dp, 1)), 15000,
		     "a tenant with no traffic keeps its cap");
}

/* A core that is saturated by two backlogged tenants, simulated with the
 * fast path's own choice functions: SCHED serves one tenant a batch at a
 * time, each batch costs the same, the core tops budgets up as it looks
 * and the slow path publishes rates every tick. */
static void
simulate(double w0, double w1, int protect, uint64_t served[2])
{
	const uint64_t batch = 4000, tick = 2000;
	struct hg_refill r;
	uint64_t now = T0, next_tick = T0 + tick, rng = 42;
	unsigned rr = 0;

	reg->t[0].cfg.weight = (uint32_t)(w0 * HG_WEIGHT_ONE);
	reg->t[1].cfg.weight = (uint32_t)(w1 * HG_WEIGHT_ONE);
	reg->t[0].cfg.cap = reg->t[1].cfg.cap = 100000;
	hg_refill_init(&r, T0);
	served[0] = served[1] = 0;
	struct hg_tset work = { 0 };

	hg_tset_add(&work, 0);
	hg_tset_add(&work, 1);
	changed();
	while (now < T0 + 200000000) {
		int f[2], t;

		dp->core[0].now = now;
		f[0] = hg_topup_funded(dp, &dp->core[0], 0);
		f[1] = hg_topup_funded(dp, &dp->core[0], 1);

		/* SCHED's choice (sched.c): the next funded tenant round robin;
		 * a weighted draw when none is funded; anyone unprotected */
		if (protect && !f[0] && !f[1]) {
			t = hg_lottery(&work, dp->view, &rng);
		} else {
			t = hg_tset_next(&work, rr);
			if (protect && !f[t])
				t = hg_tset_lap_next(&work, t, rr);
		}
		hg_charge(&dp->core[0].t[t], HG_PT_SCHED, batch, 1,
			  protect && f[t]);
		hg_touch(&dp->core[0], (unsigned)t);
		served[t] += batch;
		rr = (unsigned)t + 1;
		now += batch;
		while (next_tick <= now) {
			hg_refill_tick(reg, &r, next_tick, tick);
			next_tick += tick;
		}
	}
}

Test(tick, saturated_core_is_shared_by_weight)
{
	uint64_t s[2];
	double share;

	simulate(1, 1, 1, s);
	share = (double)s[0] / (double)(s[0] + s[1]);
	cr_assert(share > 0.48 && share < 0.52, "1:1 gave %.3f", share);
	simulate(3, 1, 1, s);
	share = (double)s[0] / (double)(s[0] + s[1]);
	/* B of the core by refill, the slack (1 - B) by weighted draw */
	cr_assert(share > 0.73 && share < 0.77, "3:1 gave %.3f", share);
	cr_assert_geq(left(0, 0, dp->core[0].now), -4000, "debt bounded by one batch");
	cr_assert_geq(left(0, 1, dp->core[0].now), -4000, "debt bounded by one batch");
	simulate(3, 1, 0, s);
	share = (double)s[0] / (double)(s[0] + s[1]);
	cr_assert(share > 0.49 && share < 0.51, "protection off gave %.3f", share);
}

/* The slow path sleeps 1 ms between passes unless the timer has
 * something to watch: it kept a 1 us pace for everybody and took 80% of
 * the apps' CPU (bench/versus-kernel: victim p99 4.8 ms). */
Test(tick, the_timer_asks_for_the_fine_pace_only_while_it_watches)
{
	static struct hg_timer tm;
	struct hg_ctx_shm *cs = calloc(HG_MAX_CTX, sizeof(*cs));
	struct hg_app_shm *as = calloc(HG_MAX_APPS, sizeof(*as));
	const uint64_t ms = 1000000;

	cr_assert(cs != NULL && as != NULL);
	dp->tenant[0].ctx_shm = cs;
	dp->tenant[0].app_shm = as;
	reg->t[0].ctx_used[0] = 1;
	reg->t[0].cfg.steer.preempt = HG_PREEMPT_ALWAYS;	/* no rings to look at */
	cr_assert_eq(hg_timer_tick(reg, &tm, 1000 * ms), 0, "nothing running");
	cs[0].in_long = 1;
	cs[0].long_start_ns = 1000 * ms;
	cs[0].quantum_ns = 5 * ms;
	cr_assert_eq(hg_timer_tick(reg, &tm, 1001 * ms), 1, "a long request");
	cr_assert_eq(cs[0].preempt, 0, "within its quantum");
	cs[0].in_long = 0;
	cr_assert_eq(hg_timer_tick(reg, &tm, 1050 * ms), 1, "held after it");
	cr_assert_eq(hg_timer_tick(reg, &tm, 1102 * ms), 0, "hold over");
	reg->t[1].cfg.steer.thresh_wqd_us = 50;
	cr_assert_eq(hg_timer_tick(reg, &tm, 1103 * ms), 1, "a queue to watch");
	hg_tset_del(&reg->awake, 1);
	cr_assert_eq(hg_timer_tick(reg, &tm, 1104 * ms), 0, "only awake tenants");
	dp->tenant[0].ctx_shm = NULL;
	dp->tenant[0].app_shm = NULL;
	free(cs);
	free(as);
}

Test(budget, a_draw_spread_over_n_stays_below_n_and_reaches_every_value)
{
	static const uint32_t ns[] = { 1, 2, 3, 7, 64 };
	uint64_t rng = 88172645463325252ull;
	unsigned i, k, seen;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		cr_assert_eq(hg_range(0, ns[i]), 0);
		cr_assert_eq(hg_range(UINT32_MAX, ns[i]), ns[i] - 1);
		for (k = 0, seen = 0; k < 10000; k++) {
			uint32_t v = hg_range((uint32_t)hg_rand(&rng), ns[i]);

			cr_assert_lt(v, ns[i]);
			seen |= 1u << (v % 32);
		}
		cr_assert_eq(seen, ns[i] >= 32 ? UINT32_MAX : (1u << ns[i]) - 1,
			     "n %u: every value drawn", ns[i]);
	}
}

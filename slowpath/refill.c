/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "../fastpath/budget.h"
#include "config.h"
#include "credit_pool.h"
#include "publish.h"
#include "refill.h"

/* An effective cap bounds the burst a tenant may bank: ~20 ms of a core
 * at most, whatever its datagrams cost. */
#define HG_CAP_AUTO_MAX 50000000u
#define HG_COST_MIN_PKTS 16u	/* datagrams a cost sample needs */
#define HG_COST_EVERY_MS 10u

void
hg_refill_init(struct hg_refill *r, uint64_t now)
{
	*r = (struct hg_refill){ .last = now, .last_busy = now, .last_cost = now };
}

/* Virtuoso §4 sizes the cap at many tasks' worth (15,000 cycles against
 * tasks of a few hundred). A cap below one batch of the tenant's work
 * leaves it in debt after every datagram: refills that accrue while other
 * tenants run are lost at the cap, and shares drift toward equal (on
 * net_af_packet a datagram costs 10,000-100,000 cycles). So the cap
 * follows the measured cost. */
/* The cap tenant t's measured cost asks for: cap-batches of it. */
static uint64_t
cap_wanted(const struct hg_tenant_sp *t)
{
	uint64_t want = hg_cfg.cap_batches * HG_BATCH * t->cost;

	return want < HG_CAP_AUTO_MAX ? want : HG_CAP_AUTO_MAX;
}

uint64_t
hg_refill_cap(const struct hg_tenant_sp *t)
{
	uint64_t want = cap_wanted(t);

	return want > t->cfg.cap ? want : t->cfg.cap;
}

/* The cores take the larger of the cap and the configured one, which is
 * in the tenant's view: a changed cap setting needs no call here. */
void
hg_refill_publish_cost(struct hg_registry *reg, int slot)
{
	hg_publish_cost(reg, slot, reg->t[slot].cost, cap_wanted(&reg->t[slot]));
}

/* The cycles one datagram of tenant i cost since the last sample: the sum
 * over the points of each point's cycles per packet (a datagram dropped
 * at RX costs only RX, one answered costs all three). Folded into the
 * average with weight 1/4; the cap is republished if that moved it. */
static void
measure_cost(struct hg_registry *reg, unsigned i)
{
	struct hg_tenant_sp *t = &reg->t[i];
	struct hg_dp *dp = reg->dp;
	uint64_t cyc[HG_PT_N] = { 0 }, pkts[HG_PT_N] = { 0 }, per = 0, most = 0;
	unsigned c, p;

	for (c = 0; c < dp->n_cores; c++) {
		const struct hg_fp_tenant *ft = &dp->core[c].t[i];

		for (p = 0; p < HG_PT_N; p++) {
			cyc[p] += __atomic_load_n(&ft->cycles[p], __ATOMIC_RELAXED);
			pkts[p] += __atomic_load_n(&ft->pkts[p], __ATOMIC_RELAXED);
		}
	}
	for (p = 0; p < HG_PT_N; p++) {
		uint64_t dc, dn;

		if (pkts[p] < t->cost_pkts[p] || cyc[p] < t->cost_cycles[p])
			continue;		/* counters reset: slot reused */
		dc = cyc[p] - t->cost_cycles[p];
		dn = pkts[p] - t->cost_pkts[p];
		if (dn > 0)
			per += dc / dn;
		most = dn > most ? dn : most;
	}
	if (most < HG_COST_MIN_PKTS && most > 0)
		return;			/* too few for a sample: keep counting */
	memcpy(t->cost_cycles, cyc, sizeof(cyc));
	memcpy(t->cost_pkts, pkts, sizeof(pkts));
	if (most == 0)
		return;
	t->cost = t->cost ? (3 * t->cost + per) / 4 : per;
	hg_refill_publish_cost(reg, (int)i);
}

/* Publishes tenant i's refill rate; returns 1 if its budget is full on
 * every core at TSC now. The cores top budgets up themselves (budget.h). */
static int
publish_rate(struct hg_registry *reg, unsigned i, uint64_t wsum, uint64_t now)
{
	const struct hg_tenant_sp *t = &reg->t[i];
	struct hg_dp *dp = reg->dp;
	uint64_t rate = hg_budget_rate(hg_cfg.boost, t->cfg.weight, wsum), cap;
	int full = 1;
	unsigned c;

	hg_publish_rate(reg, (int)i, rate);
	cap = hg_refill_cap(t);
	for (c = 0; c < dp->n_cores; c++)
		full &= hg_budget_peek(&dp->core[c].t[i].bud, rate, cap,
					 hg_budget_clock(&dp->core[c], now)) >=
			(int64_t)cap;
	return full;
}

/* The weight sum of the awake tenants. A settled tenant's budget is full:
 * a share of the core handed to it would be cut off by its cap, and with
 * 4,096 mostly idle tenants the few with work would get a 4,096th each of
 * the core and live on slack. So the core is split by weight among the
 * awake tenants; one that wakes up starts from a full budget (its cap). */
static uint64_t
awake_weight(const struct hg_registry *reg)
{
	uint64_t sum = 0;
	int i;

	HG_TSET_FOREACH(i, &reg->awake)
		if (reg->t[i].used && !reg->t[i].releasing)
			sum += reg->t[i].cfg.weight;
	return sum;
}

/* Walks the awake tenants only: those a core worked for since the last
 * tick (its touched marks) and those not yet settled. A tenant settles,
 * and leaves the walk, once its budgets are full on every core and its
 * credits have nothing left to do (hg_credit_quiet): its rate then
 * matters to nobody, and the next datagram it gets marks it again. */
int
hg_refill_tick(struct hg_registry *reg, struct hg_refill *r, uint64_t now,
	       uint64_t period)
{
	const struct hg_dp *dp = reg->dp;
	uint64_t busy = 0;
	uint64_t wsum;
	unsigned c;
	int i;

	if (now - r->last < period)
		return 0;
	for (c = 0; c < dp->n_cores; c++)
		hg_aset_take(&dp->core[c].touched, &reg->awake);
	/* costs move slowly: a sample every HG_COST_EVERY_MS */
	if (now - r->last_cost >= reg->tsc_us * 1000 * HG_COST_EVERY_MS) {
		r->last_cost = now;
		HG_TSET_FOREACH(i, &reg->awake)
			if (reg->t[i].used && !reg->t[i].releasing)
				measure_cost(reg, (unsigned)i);
	}
	wsum = awake_weight(reg);
	HG_TSET_FOREACH(i, &reg->awake) {
		const struct hg_tenant_sp *t = &reg->t[i];

		if (!t->used || t->releasing) {
			hg_tset_del(&reg->awake, (unsigned)i);
		} else if (publish_rate(reg, (unsigned)i, wsum, now) &&
			   hg_credit_quiet(reg, i)) {
			hg_credit_settle(reg, i);
			hg_tset_del(&reg->awake, (unsigned)i);
		}
	}
	/* activity, not billing: with protection off nothing is billed */
	for (c = 0; c < dp->n_cores; c++)
		busy += __atomic_load_n(&dp->core[c].busy_passes, __ATOMIC_RELAXED);
	if (busy != r->busy_passes)
		r->last_busy = now;
	r->busy_passes = busy;
	r->last = now;
	r->refills++;
	return 1;
}

/* A new tenant's budgets are full (never topped up: last is 0); its
 * rate counts it among the awake tenants until the next tick. */
void
hg_refill_start(struct hg_registry *reg, int slot)
{
	const struct hg_tenant_sp *t = &reg->t[slot];

	hg_publish_rate(reg, slot, hg_budget_rate(hg_cfg.boost, t->cfg.weight,
						  awake_weight(reg) + t->cfg.weight));
}

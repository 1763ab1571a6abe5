/* SPDX-License-Identifier: BSD-3-Clause */
#include "../fastpath/budget.h"
#include "config.h"
#include "credit.h"
#include "refill.h"

void
hg_refill_init(struct hg_refill *r, uint64_t now)
{
	*r = (struct hg_refill){ .last = now, .last_busy = now };
}

/* Refills tenant i on every core; returns 1 if every budget is full. */
static int
refill_tenant(struct hg_registry *reg, unsigned i, uint64_t elapsed,
	      double wsum)
{
	const struct hg_tenant_sp *t = &reg->t[i];
	const struct hg_dp *dp = reg->dp;
	int full = 1;
	unsigned c;

	for (c = 0; c < dp->n_cores; c++) {
		struct hg_budget *b = &dp->core[c].t[i].bud;
		uint64_t used = __atomic_load_n(&b->consumed, __ATOMIC_RELAXED);

		__atomic_store_n(&b->granted,
				 hg_budget_refill(b->granted, used, elapsed,
						  hg_cfg.boost, t->weight,
						  wsum, t->cap),
				 __ATOMIC_RELAXED);
		full &= hg_budget_left(b) >= (int64_t)t->cap;
	}
	return full;
}

/* The weight sum of the awake tenants. A settled tenant's budget is full:
 * a share of the core handed to it would be cut off by its cap, and with
 * 4,096 mostly idle tenants the few with work would get a 4,096th each of
 * the core and live on slack. So the core is split by weight among the
 * awake tenants; one that wakes up starts from a full budget (its cap). */
static double
awake_weight(const struct hg_registry *reg)
{
	double sum = 0;
	int i;

	HG_TSET_FOREACH(i, &reg->awake)
		if (reg->t[i].used && !reg->t[i].releasing)
			sum += reg->t[i].weight;
	return sum;
}

/* Walks the awake tenants only: those a core worked for since the last
 * tick (its touched marks) and those not yet settled. A tenant settles,
 * and leaves the walk, once its budgets are full on every core and its
 * credits have nothing left to do (hg_credit_quiet): a refill would then
 * change nothing, and the next datagram it gets marks it again. */
int
hg_refill_tick(struct hg_registry *reg, struct hg_refill *r, uint64_t now,
	       uint64_t period)
{
	const struct hg_dp *dp = reg->dp;
	uint64_t elapsed = now - r->last, busy = 0;
	double wsum;
	unsigned c;
	int i;

	if (elapsed < period)
		return 0;
	for (c = 0; c < dp->n_cores; c++)
		hg_aset_take(&dp->core[c].touched, &reg->awake);
	wsum = awake_weight(reg);
	HG_TSET_FOREACH(i, &reg->awake) {
		const struct hg_tenant_sp *t = &reg->t[i];

		if (!t->used || t->releasing) {
			hg_tset_del(&reg->awake, (unsigned)i);
		} else if (refill_tenant(reg, (unsigned)i, elapsed, wsum) &&
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

void
hg_refill_start(struct hg_registry *reg, int slot)
{
	unsigned c;

	for (c = 0; c < reg->dp->n_cores; c++)
		__atomic_store_n(&reg->dp->core[c].t[slot].bud.granted,
				 reg->t[slot].cap, __ATOMIC_RELAXED);
}

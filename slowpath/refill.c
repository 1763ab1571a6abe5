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

/* Publishes tenant i's refill rate (written only when it changed: every
 * core reads the line); returns 1 if its budget is full on every core at
 * TSC now. The cores top budgets up themselves (budget.h). */
static int
publish_rate(struct hg_registry *reg, unsigned i, double wsum, uint64_t now)
{
	const struct hg_tenant_sp *t = &reg->t[i];
	struct hg_dp *dp = reg->dp;
	uint64_t rate = hg_budget_rate(hg_cfg.boost, t->weight, wsum);
	int full = 1;
	unsigned c;

	if (__atomic_load_n(&dp->rate[i], __ATOMIC_RELAXED) != rate)
		__atomic_store_n(&dp->rate[i], rate, __ATOMIC_RELAXED);
	for (c = 0; c < dp->n_cores; c++)
		full &= hg_budget_peek(&dp->core[c].t[i].bud, rate, t->cap, now) >=
			(int64_t)t->cap;
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
 * credits have nothing left to do (hg_credit_quiet): its rate then
 * matters to nobody, and the next datagram it gets marks it again. */
int
hg_refill_tick(struct hg_registry *reg, struct hg_refill *r, uint64_t now,
	       uint64_t period)
{
	const struct hg_dp *dp = reg->dp;
	uint64_t busy = 0;
	double wsum;
	unsigned c;
	int i;

	if (now - r->last < period)
		return 0;
	for (c = 0; c < dp->n_cores; c++)
		hg_aset_take(&dp->core[c].touched, &reg->awake);
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

	__atomic_store_n(&reg->dp->rate[slot],
			 hg_budget_rate(hg_cfg.boost, t->weight,
					awake_weight(reg) + t->weight),
			 __ATOMIC_RELAXED);
}

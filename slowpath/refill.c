/* SPDX-License-Identifier: BSD-3-Clause */
#include "../fastpath/budget.h"
#include "config.h"
#include "refill.h"

void
hg_refill_init(struct hg_refill *r, uint64_t now)
{
	*r = (struct hg_refill){ .last = now, .last_busy = now };
}

static double
weight_sum(const struct hg_registry *reg)
{
	double sum = 0;
	unsigned i;

	for (i = 0; i < HG_MAX_TENANTS; i++)
		if (reg->t[i].used && !reg->t[i].releasing)
			sum += reg->t[i].weight;
	return sum;
}

int
hg_refill_tick(struct hg_registry *reg, struct hg_refill *r, uint64_t now,
	       uint64_t period)
{
	const struct hg_dp *dp = reg->dp;
	uint64_t elapsed = now - r->last, busy = 0;
	double wsum;
	unsigned i, c;

	if (elapsed < period)
		return 0;
	wsum = weight_sum(reg);
	for (i = 0; i < HG_MAX_TENANTS; i++) {
		const struct hg_tenant_sp *t = &reg->t[i];

		if (!t->used || t->releasing)
			continue;
		for (c = 0; c < dp->n_cores; c++) {
			struct hg_budget *b = &dp->core[c].t[i].bud;
			uint64_t used = __atomic_load_n(&b->consumed, __ATOMIC_RELAXED);

			__atomic_store_n(&b->granted,
					 hg_budget_refill(b->granted, used, elapsed,
							  hg_cfg.boost, t->weight,
							  wsum, t->cap),
					 __ATOMIC_RELAXED);
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

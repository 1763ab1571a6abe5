/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Budget refill (design.md §4): every refill-ns the slow path publishes each
 * awake tenant's rate, its weighted share of a core (boost x w / sum(w)
 * over the awake tenants); each fast-path core tops its budgets up at that
 * rate, up to the cap, whenever it looks at them (budget.h), so a late
 * slow path delays a rate change, never a refill.
 */
#ifndef HG_SLOWPATH_REFILL_H
#define HG_SLOWPATH_REFILL_H

#include <stdint.h>

#include "registry.h"

struct hg_refill {
	uint64_t last;		/* TSC of the previous tick */
	uint64_t last_cost;	/* TSC of the previous cost measurement */
	uint64_t last_busy;	/* TSC when a core last did any work */
	uint64_t busy_passes;	/* sum over cores at the previous refill */
	uint64_t refills;
};

void hg_refill_init(struct hg_refill *r, uint64_t now);
/* Publishes the awake tenants' rates and settles the idle ones if a
 * period has passed since the last tick; returns 1 if it did. now is a
 * TSC reading (injected, for tests). */
int hg_refill_tick(struct hg_registry *reg, struct hg_refill *r, uint64_t now,
		   uint64_t period);
/* The cap the fast path clamps a tenant's budgets to: the configured one,
 * or cap-batches batches of its measured cost per datagram if that is
 * more (at most HG_CAP_AUTO_MAX). */
uint64_t hg_refill_cap(const struct hg_tenant_sp *t);
/* Publishes the measured cost and the part of hg_refill_cap it decides
 * (the cores take the larger of it and the configured cap, from the
 * tenant's view). */
void hg_refill_publish_cost(struct hg_registry *reg, int slot);
/* Publishes a new tenant's rate (its budgets start full). */
void hg_refill_start(struct hg_registry *reg, int slot);

#endif /* HG_SLOWPATH_REFILL_H */

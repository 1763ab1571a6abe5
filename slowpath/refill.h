/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Budget refill (DESIGN §4): every refill-ns the slow path hands each
 * tenant on each fast-path core its weighted share of the elapsed cycles,
 * up to the tenant's cap.
 */
#ifndef HG_SLOWPATH_REFILL_H
#define HG_SLOWPATH_REFILL_H

#include <stdint.h>

#include "tenant.h"

struct hg_refill {
	uint64_t last;		/* TSC of the previous refill */
	uint64_t last_busy;	/* TSC when a core last did any work */
	uint64_t busy_passes;	/* sum over cores at the previous refill */
	uint64_t refills;
};

void hg_refill_init(struct hg_refill *r, uint64_t now);
/* Refills if a period has passed since the last refill; returns 1 if it
 * did. now is a TSC reading (injected, for tests). */
int hg_refill_tick(struct hg_registry *reg, struct hg_refill *r, uint64_t now,
		   uint64_t period);
/* Gives a new tenant slot its cap as a starting budget on every core. */
void hg_refill_start(struct hg_registry *reg, int slot);

#endif /* HG_SLOWPATH_REFILL_H */

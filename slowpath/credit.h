/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_CREDIT_H
#define HG_SLOWPATH_CREDIT_H

#include "tenant.h"

#define HG_CREDIT_PERIOD_US 10	/* about one round trip (DESIGN §9) */

/* One AIMD update of every tenant's credit pool at TSC now. */
void hg_credit_tick(struct hg_registry *reg, uint64_t now);
/* Sessions of a tenant over all cores, with the drained ones and the
 * credits issued. */
uint32_t hg_credit_sessions(const struct hg_registry *reg, int slot,
			    uint32_t *drained, int64_t *issued);

#endif /* HG_SLOWPATH_CREDIT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_CREDIT_POOL_H
#define HG_SLOWPATH_CREDIT_POOL_H

#include "registry.h"

/* Measures and publishes every RPC tenant's D_m at TSC now, and updates
 * the credit pool of each whose update period (update-us) has passed. */
/* Returns the awake tenants with RPC ports: while there are any, D_m and
 * the pool want the slow path's fine pace. */
unsigned hg_credit_tick(struct hg_registry *reg, uint64_t now);
/* Has the credit tick nothing left to do for the tenant? */
int hg_credit_quiet(const struct hg_registry *reg, int slot);
/* Publishes what a quiet tenant's credits look like while it sleeps. */
void hg_credit_settle(struct hg_registry *reg, int slot);
/* Sessions of a tenant over all cores, with the drained ones and the
 * credits issued. */
uint32_t hg_credit_sessions(const struct hg_registry *reg, int slot,
			    uint32_t *drained, int64_t *issued);

/* The age (TSC) of the oldest request waiting in the tenant's receive
 * rings and wait queues at TSC now: its queueing delay. */
uint64_t hg_credit_delay(const struct hg_registry *reg, int slot, uint64_t now);
/* Moves credits out of (delta < 0) or back into the pool between two
 * AIMD updates (CoreSync's revocation when a worker parks, returned when
 * it wakes), within the pool's bounds, and publishes it. */
void hg_credit_adjust(struct hg_registry *reg, int slot, double delta);

#endif /* HG_SLOWPATH_CREDIT_POOL_H */

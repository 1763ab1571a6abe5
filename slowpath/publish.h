/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The one writer of what the fast-path cores and the apps' libraries read
 * of a tenant's settings: its struct hg_tenant_pub (fastpath/tenant_pub.h)
 * and the steering block of its region's header (proto/hg_shm.h). The
 * slow path's parts decide the values (tenant.c the settings, refill.c
 * the rates and caps, credit_pool.c the credit state); only this file
 * stores them, each field only when it changed, so that an unchanged
 * line stays shared in every core's cache.
 */
#ifndef HG_SLOWPATH_PUBLISH_H
#define HG_SLOWPATH_PUBLISH_H

#include <stdint.h>

#include "registry.h"

/* The tenant's state: ACTIVE is stored last (release), after everything
 * else the cores read of it; DYING and FREE as the release proceeds. */
void hg_publish_state(struct hg_registry *reg, int slot, enum hg_tenant_state s);
/* Pushes the settings that changed (enum hg_tcfg_publish bits) from
 * reg->t[slot].cfg. The effective cap is refill.c's to decide: with
 * HG_TCFG_PUB_BUDGET the caller also publishes it (hg_publish_cap). */
void hg_publish_settings(struct hg_registry *reg, int slot, unsigned what);
/* The budget per TSC cycle, HG_RATE_ONE units (refill.c). */
void hg_publish_rate(struct hg_registry *reg, int slot, uint64_t rate);
/* The effective budget cap (refill.c) and the configured one, the most a
 * batch spends. */
void hg_publish_cap(struct hg_registry *reg, int slot, uint64_t cap);
/* The credit state from the slow path's copy: pool, D_m, D_t, D_drop. */
void hg_publish_credit(struct hg_registry *reg, int slot);
/* D_m alone: measured on every tick (credit_pool.c). */
void hg_publish_dm(struct hg_registry *reg, int slot);

#endif /* HG_SLOWPATH_PUBLISH_H */

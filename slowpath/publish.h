/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The one writer of what the fast-path cores and the apps' libraries read
 * of a tenant: its view and live words (fastpath/tenant_view.h), the port
 * map's entries, and the steering block of its region's header
 * (proto/hg_shm.h). The slow path's parts decide the values (tenant.c the
 * settings, ports and contexts, core_alloc.c which contexts steering
 * skips, refill.c the rates and the cap the cost asks for, credit_pool.c
 * the credit state); only this file stores them.
 */
#ifndef HG_SLOWPATH_PUBLISH_H
#define HG_SLOWPATH_PUBLISH_H

#include <stdint.h>

#include "registry.h"

/* A new view of the tenant from reg->t[slot] (state, cfg, map): built,
 * published with one release store, the old one retired until every core
 * has passed a quiescent point. 0, or -ENOMEM (the old view stays). */
int hg_publish_view(struct hg_registry *reg, int slot);
/* The tenant's state, in a new view: ACTIVE once everything else of it
 * is in place, DYING as the release begins, FREE when it is done. */
int hg_publish_state(struct hg_registry *reg, int slot, enum hg_tenant_state s);
/* Pushes the settings that changed (enum hg_tcfg_publish bits) from
 * reg->t[slot].cfg: a new view, the region's steering block, the credit
 * state. */
int hg_publish_settings(struct hg_registry *reg, int slot, unsigned what);
/* Port p's entry (dp.h: HG_PORT_ENTRY, 0 for none), and its copy in an
 * XDP program (xdp_link.h). A tenant's view is published before an entry
 * names it, and its entries cleared before its slot is freed. */
/* How many of the tenant's contexts run (hg_steer_shm.running). */
void hg_publish_running(struct hg_registry *reg, int slot, uint32_t n);
void hg_publish_port(struct hg_registry *reg, uint32_t p, uint32_t entry);
/* The budget per TSC cycle, HG_RATE_ONE units (refill.c). */
void hg_publish_rate(struct hg_registry *reg, int slot, uint64_t rate);
/* The tenant's measured cost per datagram, which bounds its charges
 * (hg_charge_max), and the budget cap it asks for (refill.c); the cores
 * take the larger of that and the configured cap. */
void hg_publish_cost(struct hg_registry *reg, int slot, uint64_t cost, uint64_t cap);
/* The credit state from the slow path's copy: pool and D_m. */
void hg_publish_credit(struct hg_registry *reg, int slot);
/* D_m alone: measured on every tick (credit_pool.c). */
void hg_publish_dm(struct hg_registry *reg, int slot);
/* Frees the retired views no core can still hold; from the slow path's
 * loop (hg_registry_poll). */
void hg_publish_reclaim(struct hg_registry *reg);
/* Every view, once the cores have stopped. */
void hg_publish_fini(struct hg_registry *reg);

#endif /* HG_SLOWPATH_PUBLISH_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * One collector of the fast-path counters, used by `hgctl stats` and by the
 * DPDK telemetry commands alike.
 */
#ifndef HG_SLOWPATH_STATS_H
#define HG_SLOWPATH_STATS_H

#include "arena.h"
#include "hgctl.pb-c.h"
#include "tenant.h"

/* Builds the stats of one tenant (or all when slot < 0) in arena a. */
Hg__Stats *hg_stats_collect(struct hg_registry *reg, int slot, struct hg_arena *a);
Hg__TenantList *hg_tenants_collect(struct hg_registry *reg, struct hg_arena *a);
/* The settings of the tenant in slot (slot < 0: the table's defaults),
 * or only key's, with the table's bounds, defaults and help. NULL: out of
 * memory. */
Hg__TenantSettings *hg_tenant_settings_collect(struct hg_registry *reg, int slot,
					       const char *key,
					       struct hg_arena *a);

/* Registers /hourglass/tenants, /hourglass/stats and /hourglass/config. */
void hg_telemetry_register(struct hg_registry *reg);
/* With --log-level=hourglass:debug, called once a second: the drops since
 * the last call, by reason, of each core and each tenant. */
void hg_stats_log_drops(struct hg_registry *reg);

#endif /* HG_SLOWPATH_STATS_H */

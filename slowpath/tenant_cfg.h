/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Per-tenant settings: one table of the settings engine (settings.h,
 * tenant_cfg.c), a row per setting of struct hg_tenant_cfg. Everything
 * that reads or writes a tenant's settings walks it: `hgctl tenant
 * add|set|get`, the config file's tenant lines, `tenant list`, stats and
 * telemetry. A change is applied to a copy, checked across
 * fields (hg_tenant_cfg_check), then committed.
 */
#ifndef HG_SLOWPATH_TENANT_CFG_H
#define HG_SLOWPATH_TENANT_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "../fastpath/tenant_view.h"	/* HG_WEIGHT_ONE */
#include "settings.h"

/* Preemption of long requests: only when short ones wait (Synergy), or
 * at every quantum expiry even with nothing queued (the ablation). */
enum hg_preempt { HG_PREEMPT_OFF, HG_PREEMPT_ON, HG_PREEMPT_ALWAYS };

/* Synergy settings of a tenant (design.md §5, defaults in §9). */
struct hg_steering {
	int jsq;			/* RX steering: 0 flow hash, 1 JSQ */
	uint32_t quantum_factor;	/* hundredths, as the region carries it */
	uint32_t congested_factor;	/* hundredths */
	uint32_t thresh_wqd_us;		/* 0: no wait-queue monitoring */
	uint32_t steal_threshold;
	int preempt;			/* enum hg_preempt */
	int wait_queue, steal;
	uint32_t quantum_us;		/* 0: adaptive */
	int dispatch;			/* enum hg_dispatch */
};

/* Credit control of a tenant's RPC ports (design.md §6, defaults in §9). */
struct hg_credit_cfg {
	uint32_t rpc_lo, rpc_hi;	/* 0-0: no RPC ports */
	uint32_t dt_us, ddrop_us;
	double alpha;			/* 0: 0.001 x sessions, at least 1 */
	double beta;
	uint32_t update_us;		/* pool update period, about one RTT */
	int budget_feedback;		/* the pool follows the budget (design.md §6) */
	double budget_mark;		/* ... below this fraction of the cap */
};

/* Core allocation of a tenant's workers (CoreSync). */
struct hg_core_cfg {
	int policy;			/* enum hg_core_policy */
	double r;			/* R: credits_prop = R x active workers */
	uint32_t poll_us;		/* idle polling before a worker asks */
	uint32_t delay_us;		/* queueing delay that wakes a worker */
};

/* Every setting of a tenant, defined once. */
struct hg_tenant_cfg {
	uint32_t weight;		/* hundredths (HG_WEIGHT_ONE = 1) */
	uint64_t cap;			/* configured budget cap (cycles) */
	uint32_t port_lo, port_hi;	/* 0-0: none */
	int rx_queue;			/* 0: auto, k + 1: each core's queue k */
	uint64_t extra_cycles;		/* synthetic work per datagram */
	struct hg_steering steer;
	struct hg_credit_cfg credit;
	struct hg_core_cfg core;
	uint32_t max_sessions;		/* RPC sessions per fast-path core */
	uint32_t max_apps;		/* processes attached at once */
	uint32_t uid;			/* owner: may attach (so may root) */
	int64_t gid;			/* ... and this group; -1: none */
};

/* What a changed setting needs pushed to the fast path or the slow path's
 * ticks; hg_tenant_cfg_set ORs these into *changed. */
enum hg_tcfg_publish {
	HG_TCFG_PUB_BUDGET = 1u << 0,	/* weight, cap: rates and caps */
	HG_TCFG_PUB_EXTRA = 1u << 1,
	HG_TCFG_PUB_STEER = 1u << 2,
	HG_TCFG_PUB_CREDIT = 1u << 3,
	HG_TCFG_PUB_SESSIONS = 1u << 4,
	HG_TCFG_PUB_OWNER = 1u << 5,	/* read at attach, nothing to push */
	HG_TCFG_PUB_PORTS = 1u << 6,
	HG_TCFG_PUB_CORE = 1u << 7,	/* read by the core tick, nothing to push */
};

/* One KEY=VALUE of a command or a config-file line. */
struct hg_kv {
	const char *key;
	const char *value;
};

/* The table (tenant_cfg.c) and its rows, for the settings engine. */
const struct hg_settings *hg_tenant_settings(void);
const struct hg_setting *hg_tenant_setting_find(const char *key);

/* Every setting at its default; daemon_cap is what `cap` defaults to. */
void hg_tenant_cfg_defaults(struct hg_tenant_cfg *c, uint64_t daemon_cap);

/* Sets key from text in c. adding: a new tenant (every setting may be
 * given), else only live ones. ORs the setting's publish bits into
 * *changed (if not NULL) when the value differs. Returns 0 or -errno
 * with a one-line reason in err. */
int hg_tenant_cfg_set(struct hg_tenant_cfg *c, const char *key,
		      const char *value, int adding, unsigned *changed,
		      char *err, size_t errlen);

/* Sets every pair in c (as hg_tenant_cfg_set), then checks the rules
 * across settings: on failure c may be half-changed, so callers apply to
 * a copy and commit it only on 0; what changed is the diff between the
 * copy and the running settings (hg_settings_diff). */
int hg_tenant_cfg_apply(struct hg_tenant_cfg *c, const struct hg_kv *kv,
			size_t n, int adding, char *err, size_t errlen);

/* The rules that span settings: D_drop >= D_t, RPC ports within the
 * tenant's ports. Returns 0 or -EINVAL with the reason in err. */
int hg_tenant_cfg_check(const struct hg_tenant_cfg *c, char *err, size_t errlen);

#endif /* HG_SLOWPATH_TENANT_CFG_H */

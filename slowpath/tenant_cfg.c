/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fastpath/dp.h"
#include "../policy/coresync.h"
#include "../policy/dispatch.h"
#include "../proto/hg_shm.h"
#include "settings.h"
#include "tenant_cfg.h"

#define OFF(f) offsetof(struct hg_tenant_cfg, f)

static const char *const steer_modes[] = { "flow", "jsq", NULL };
/* an enum so that "auto" and the numbers share one parser: choice k + 1
 * is queue k (HG_MAX_RXQ of them) */
static const char *const rx_queues[] = { "auto", "0", "1", "2", "3", "4", "5",
					 "6", "7", NULL };
static const char *const preempt_modes[] = { "off", "on", "always", NULL };
/* in enum hg_dispatch's order (policy/dispatch.h) */
static const char *const dispatch_modes[] = { "synergy", "cfcfs", "darc", "fc",
					      NULL };
/* in enum hg_core_policy's order (policy/coresync.h) */
static const char *const core_policies[] = { "coresync", "shenango", "static",
					     NULL };

enum {
	BUDGET = HG_TCFG_PUB_BUDGET, EXTRA = HG_TCFG_PUB_EXTRA,
	STEER = HG_TCFG_PUB_STEER, CREDIT = HG_TCFG_PUB_CREDIT,
	SESS = HG_TCFG_PUB_SESSIONS, OWNER = HG_TCFG_PUB_OWNER,
	PORTS = HG_TCFG_PUB_PORTS, CORE = HG_TCFG_PUB_CORE,
};

#define D HG_SET_DOUBLE
#define H HG_SET_HUNDREDTHS
#define U32 HG_SET_U32
#define U64 HG_SET_U64
#define BOOL HG_SET_BOOL
#define ENUM HG_SET_ENUM
#define RANGE HG_SET_RANGE

/* name, type, offset, size (strings only, else 0), min, max, min open,
 * default, live, publish, choices, help: struct hg_setting's order.
 * Bounds and defaults are design.md §9's. */
static const struct hg_setting table[] = {
	{ "weight", H, OFF(weight), 0, 0.01, 10000, 0, "1", 1, BUDGET, NULL,
	  "share of each fast-path core when it is contended" },
	{ "cap", U64, OFF(cap), 0, 100, 1e9, 0, NULL, 1, BUDGET, NULL,
	  "budget cap per core (cycles); the most one batch spends" },
	{ "ports", RANGE, OFF(port_lo), 0, 1, 65535, 0, "none", 0, PORTS,
	  NULL, "UDP ports the tenant owns: PORT or LO-HI" },
	{ "rx-queue", ENUM, OFF(rx_queue), 0, 0, 0, 0, "auto", 0, PORTS,
	  rx_queues, "each core's RX queue its datagrams arrive on, where the "
	  "link steers (--rx-queues); auto: the queue with fewest tenants" },
	{ "extra-cycles", U64, OFF(extra_cycles), 0, 0, 1e7, 0, "0", 1, EXTRA,
	  NULL, "synthetic fast-path work per datagram (benchmarks)" },
	{ "steer", ENUM, OFF(steer.jsq), 0, 0, 0, 0, "flow", 1, STEER,
	  steer_modes, "RX steering to contexts: flow hash or jsq" },
	{ "quantum-factor", H, OFF(steer.quantum_factor), 0, 0.1, 1000, 0, "2", 1,
	  STEER, NULL, "long-request quantum, x the short service time EMA" },
	{ "congested-factor", H, OFF(steer.congested_factor), 0, 0.1, 1000, 0,
	  "10", 1, STEER, NULL, "the quantum's factor under wait-queue congestion" },
	{ "thresh-wqd-us", U32, OFF(steer.thresh_wqd_us), 0, 0, 1e6, 0, "0", 1,
	  STEER, NULL, "wait-queue delay that means congestion (0: off)" },
	{ "steal-threshold", U32, OFF(steer.steal_threshold), 0, 0, HG_RING_SIZE,
	  0, "1", 1, STEER, NULL, "requests a context holds before others steal" },
	{ "quantum-us", U32, OFF(steer.quantum_us), 0, 0, 1e6, 0, "0", 1, STEER,
	  NULL, "fixed long-request quantum (0: adaptive)" },
	{ "preempt", ENUM, OFF(steer.preempt), 0, 0, 0, 0, "on", 1, STEER,
	  preempt_modes, "preempt long requests when short ones wait (always: "
	  "at every quantum expiry, for ablation)" },
	{ "dispatch", ENUM, OFF(steer.dispatch), 0, 0, 0, 0, "synergy", 1,
	  STEER, dispatch_modes, "how the app's workers take requests: synergy "
	  "(own queues, stealing, preemption), cfcfs (one central queue), darc "
	  "(Perséphone: workers reserved per class), fc (flat combining)" },
	{ "wait-queue", BOOL, OFF(steer.wait_queue), 0, 0, 1, 0, "on", 1, STEER,
	  NULL, "preempted requests go to the app's shared wait queue" },
	{ "steal", BOOL, OFF(steer.steal), 0, 0, 1, 0, "on", 1, STEER, NULL,
	  "idle workers steal from busy contexts" },
	{ "rpc-ports", RANGE, OFF(credit.rpc_lo), 0, 1, 65535, 0, "none",
	  1, CREDIT, NULL, "ports with the RPC header and credits: PORT or LO-HI" },
	{ "dt-us", U32, OFF(credit.dt_us), 0, 1, 1e6, 0, "50", 1, CREDIT, NULL,
	  "D_t: target queueing delay" },
	{ "ddrop-us", U32, OFF(credit.ddrop_us), 0, 1, 1e7, 0, "100", 1, CREDIT,
	  NULL, "D_drop: delay beyond which requests are rejected" },
	{ "alpha", D, OFF(credit.alpha), 0, 0, 1e6, 0, "0", 1, CREDIT, NULL,
	  "additive increase (0: 0.001 x sessions, at least 1)" },
	{ "beta", D, OFF(credit.beta), 0, 0, 1, 1, "0.02", 1, CREDIT, NULL,
	  "multiplicative decrease per unit of excess delay" },
	{ "update-us", U32, OFF(credit.update_us), 0, 1, 1e6, 0, "10", 1, CREDIT,
	  NULL, "credit pool update period, about one round trip" },
	{ "budget-feedback", BOOL, OFF(credit.budget_feedback), 0, 0, 1, 0, "on", 1,
	  CREDIT, NULL, "credits follow the budget: on a saturated core, a tenant "
	  "below budget-mark shrinks its pool as if its delay were above dt-us" },
	{ "budget-mark", D, OFF(credit.budget_mark), 0, 0, 1, 0, "0", 1, CREDIT, NULL,
	  "budget-feedback's threshold, a fraction of the cap (0: in debt; "
	  "higher cuts earlier, Virtuoso's ECN threshold)" },
	{ "policy", ENUM, OFF(core.policy), 0, 0, 0, 0, "coresync", 1,
	  STEER, core_policies, "who decides how many workers run: coresync "
	  "(park when credits are proportional), shenango (park when idle) or "
	  "static (never park)" },
	{ "coresync-r", D, OFF(core.r), 0, 0, 1e6, 0, "50", 1, CORE, NULL,
	  "R: credits beyond one per session, per active worker" },
	{ "poll-us", U32, OFF(core.poll_us), 0, 0, 1e6, 0, "20", 1, STEER, NULL,
	  "an idle worker polls this long before it asks to park" },
	{ "core-delay-us", U32, OFF(core.delay_us), 0, 1, 1e6, 0, "10", 1, CORE, NULL,
	  "queueing delay that wakes a parked worker (well below dt-us)" },
	{ "max-sessions", U32, OFF(max_sessions), 0, 1, HG_SESSIONS_MAX, 0, "2048", 1,
	  SESS, NULL, "RPC sessions per fast-path core: the tenant's share of "
	  "each core's table (--sessions), reserved while it has RPC ports" },
	{ "max-apps", U32, OFF(max_apps), 0, 1, HG_MAX_APPS, 0, "64", 1, OWNER,
	  NULL, "apps attached at once; a lower value refuses new attaches" },
	{ "uid", HG_SET_UID, OFF(uid), 0, 0, 4294967294.0, 0, "0", 1, OWNER, NULL,
	  "owner: this user may attach apps (so may root)" },
	{ "gid", HG_SET_GID, OFF(gid), 0, -1, 4294967294.0, 0, "none", 1, OWNER,
	  NULL, "members of this group may attach apps" },
};

#undef D
#undef H
#undef ENUM
#undef RANGE
#undef U32
#undef U64
#undef BOOL

_Static_assert(HG_SESSIONS / 32 == 2048, "max-sessions' default: 32 RPC tenants fill the default table");
_Static_assert(HG_MAX_APPS == 64, "max-apps' default is HG_MAX_APPS");
_Static_assert(sizeof(rx_queues) / sizeof(rx_queues[0]) == HG_MAX_RXQ + 2, "rx-queue: auto, then every queue");
_Static_assert(HG_DISPATCH_N == 4 && HG_DISPATCH_FC == 3,
	       "dispatch's words follow enum hg_dispatch");
_Static_assert(HG_CORE_N == 3 && HG_CORE_STATIC == 2,
	       "policy's words follow enum hg_core_policy");

static const struct hg_settings tenant_settings = {
	.row = table, .n = sizeof(table) / sizeof(table[0]),
	.unknown = "no tenant setting",
	.unknown_hint = " (hgctl tenant set NAME --help lists them)",
	.fixed = "is set when the tenant is added; delete and add it again",
};

const struct hg_settings *
hg_tenant_settings(void)
{
	return &tenant_settings;
}

const struct hg_setting *
hg_tenant_setting_find(const char *key)
{
	return hg_settings_find(&tenant_settings, key);
}

int
hg_tenant_cfg_set(struct hg_tenant_cfg *c, const char *key, const char *value,
		  int adding, unsigned *changed, char *err, size_t errlen)
{
	return hg_settings_set(&tenant_settings, c, key, value, !adding, changed,
			       err, errlen);
}

int
hg_tenant_cfg_apply(struct hg_tenant_cfg *c, const struct hg_kv *kv, size_t n,
		    int adding, char *err, size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = hg_tenant_cfg_set(c, kv[i].key, kv[i].value, adding,
					    NULL, err, errlen)) < 0)
			return rc;
	return hg_tenant_cfg_check(c, err, errlen);
}

void
hg_tenant_cfg_defaults(struct hg_tenant_cfg *c, uint64_t daemon_cap)
{
	hg_settings_defaults(&tenant_settings, c, sizeof(*c));
	c->cap = daemon_cap;
}

int
hg_tenant_cfg_check(const struct hg_tenant_cfg *c, char *err, size_t errlen)
{
	const struct hg_credit_cfg *k = &c->credit;

	if (k->ddrop_us < k->dt_us) {
		snprintf(err, errlen, "ddrop-us (%u) must be at least dt-us (%u)",
			 k->ddrop_us, k->dt_us);
		return -EINVAL;
	}
	if (k->rpc_hi != 0 && (c->port_hi == 0 || k->rpc_lo < c->port_lo ||
			       k->rpc_hi > c->port_hi)) {
		snprintf(err, errlen, "rpc-ports %u-%u are not within the "
			 "tenant's ports %u-%u", k->rpc_lo, k->rpc_hi, c->port_lo,
			 c->port_hi);
		return -EINVAL;
	}
	return 0;
}

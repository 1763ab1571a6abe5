/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Tenant registry (slow path): tenants, their attached apps, contexts and
 * port bindings, and the hand-off with fast-path cores when an app dies or
 * a tenant is deleted. All functions return 0 or -errno and put a one-line
 * reason into err.
 */
#ifndef HG_SLOWPATH_TENANT_H
#define HG_SLOWPATH_TENANT_H

#include <pthread.h>
#include <sys/types.h>

#include "../fastpath/dp.h"
#include "core_alloc.h"
#include "region.h"
#include "tenant_cfg.h"

#define HG_ERR_LEN 160

struct hg_app_sp {
	int used;		/* slot taken (attached or being reclaimed) */
	int reclaiming;		/* detached, waiting for every core */
	int reclaim_sent;	/* ... which has been asked (target valid) */
	uint64_t target[HG_MAX_FP_CORES];
	pid_t pid;
	uid_t uid;
	uint32_t n_ctx;
};

struct hg_tenant_sp {
	int used;		/* slot taken (active or being released) */
	int releasing;
	uint64_t target[HG_MAX_FP_CORES];
	char name[HG_NAME_MAX];
	struct hg_tenant_cfg cfg;	/* every setting (tenant_cfg.h) */
	uint64_t drops_logged[HG_TDROP_N];	/* stats.c's debug log */
	uint32_t rx_queue;		/* each core's RX queue for its ports */
	struct rte_flow *flow;		/* the NIC's rule for them, or NULL */
	int from_file;			/* declared by the config file */
	uint64_t preemptions;
	uint64_t attach_refused;	/* attaches by someone else */
	uint64_t cost;			/* fast-path cycles per datagram, EWMA */
	uint64_t cost_cycles[HG_PT_N];	/* counters at the last sample */
	uint64_t cost_pkts[HG_PT_N];
	double pool;			/* the credit pool, AIMD state */
	uint64_t dm_tsc;		/* D_m at the last update */
	/* credits the pool's updates took away: for the budget (the cut
	 * beyond what the delay alone made) and for the delay */
	double withheld_budget, withheld_delay;
	uint64_t budget_cuts;		/* updates that found it out of budget */
	uint64_t next_update;		/* TSC of the next pool update */
	struct hg_core_state core;	/* worker allocation (core_alloc.c) */
	int park_bell;			/* eventfd its apps ring to ask, -1 */
	struct hg_region region;
	void *bufmem[HG_MAX_FP_CORES];
	uint8_t ctx_used[HG_MAX_CTX];
	struct hg_app_sp app[HG_MAX_APPS];
};

/* What the control sockets' bounds turned away (DESIGN §11). */
struct hg_ctl_counters {
	uint32_t conns[2];		/* open now: operator, app */
	uint64_t conns_refused;
	uint64_t accept_errors;
	uint64_t commands_refused;
	uint64_t reads_paused;
	uint64_t uid_refused;		/* over max-app-conns-per-uid */
	uint64_t idle_closed;		/* never attached in attach-timeout-ms */
	uint64_t buffered;		/* request and reply bytes held now */
	uint64_t buffered_peak;
};

struct hg_registry {
	struct hg_dp *dp;
	uint64_t tsc_us;		/* TSC cycles per microsecond */
	/* held by the slow path while it changes tenants and by DPDK's
	 * telemetry thread while it reads them; never by a fast-path core */
	pthread_mutex_t lock;
	uint64_t cmd_sent[HG_MAX_FP_CORES];
	uint64_t attach_refused;	/* all tenants, for the control stats */
	struct hg_ctl_counters ctl;
	/* The tenants the slow path's ticks walk (refill, credits, timer):
	 * those a core marked as worked for, or the control path changed,
	 * until they settle (refill.c). Idle tenants cost nothing per tick. */
	struct hg_tset awake;
	/* tenants with a release or an app reclaim waiting for the cores */
	struct hg_tset pending;
	/* tenants whose workers asked to park or are parked (core_alloc.c),
	 * and the epoll set of the park bells */
	struct hg_tset core_watch;
	struct hg_tset core_rang;
	int park_ep;
	struct hg_tenant_sp t[HG_MAX_TENANTS];
};

/* The credentials of an app's control connection (SO_PEERCRED). */
struct hg_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

void hg_registry_init(struct hg_registry *reg, struct hg_dp *dp);
void hg_registry_fini(struct hg_registry *reg);
/* Finishes reclaims and releases every core has acknowledged. */
void hg_registry_poll(struct hg_registry *reg);

int hg_tenant_find(const struct hg_registry *reg, const char *name);
/* 1..HG_NAME_MAX-1 letters, digits, '_', '.', '-'; else -EINVAL. */
int hg_tenant_name_check(const char *name, char *err);
/* Adds a tenant with settings c (checked: hg_tenant_cfg_apply). */
int hg_tenant_add(struct hg_registry *reg, const char *name,
		  const struct hg_tenant_cfg *c, char *err);
/* Makes c (checked) the settings of the tenant in slot: refuses a change
 * of a setting that is not live, then publishes what changed. */
int hg_tenant_update(struct hg_registry *reg, int slot,
		     const struct hg_tenant_cfg *c, char *err);
/* `tenant add NAME KEY=VALUE...`: the defaults, then the pairs. */
int hg_tenant_add_kv(struct hg_registry *reg, const char *name,
		     const struct hg_kv *kv, size_t n, char *err);
/* `tenant set NAME KEY=VALUE...`: the tenant's settings, then the pairs,
 * applied to a copy and committed only if all of them and the rules
 * across them hold. */
int hg_tenant_set_kv(struct hg_registry *reg, const char *name,
		     const struct hg_kv *kv, size_t n, char *err);
int hg_tenant_del(struct hg_registry *reg, const char *name, char *err);

/* App lifecycle: attach returns the tenant slot and app slot. Only root,
 * the tenant's uid or a member of its gid may attach (-EACCES, counted). */
int hg_app_attach(struct hg_registry *reg, const char *tenant,
		  const struct hg_peer *peer, int *slot, int *app, char *err);
/* Opens a context: *ctx its index, *bell its doorbell (an eventfd the
 * daemon keeps; the reply passes the app a copy). */
int hg_app_ctx_open(struct hg_registry *reg, int slot, int app, uint32_t *ctx,
		    int *bell, char *err);
int hg_app_bind(struct hg_registry *reg, int slot, int app, uint32_t port,
		char *err);
void hg_app_detach(struct hg_registry *reg, int slot, int app);

uint32_t hg_tenant_apps(const struct hg_tenant_sp *t);

#endif /* HG_SLOWPATH_TENANT_H */

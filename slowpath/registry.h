/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The slow path's records of tenants and their apps (struct hg_registry),
 * shared by the files that run its parts: tenant.c (add, set, attach,
 * delete), refill.c, credit_pool.c, core_alloc.c, preempt_timer.c,
 * stats.c, and publish.c, the one writer of what the cores read
 * (fastpath/tenant_view.h). Only the records: their functions live in
 * those files' headers, so that none of them needs tenant.h.
 */
#ifndef HG_SLOWPATH_REGISTRY_H
#define HG_SLOWPATH_REGISTRY_H

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
	uint32_t tx_queue;		/* each core's TX group for its frames */
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
	/* what its view shows (publish.c copies them into each new one) */
	enum hg_tenant_state state;
	struct hg_ctx_map map;
};

/* Views replaced but perhaps still read by a core until it passes a
 * quiescent point (publish.c); bounded: a full list waits for the cores. */
#define HG_RETIRED_MAX 256u

struct hg_retired {
	const struct hg_tenant_view *v;
	uint64_t token;			/* rte_rcu_qsbr_start's */
};

/* What the control sockets' bounds turned away (design.md §11). */
struct hg_ctl_counters {
	uint64_t conns[2];		/* open now: operator, app */
	uint64_t conns_refused;
	uint64_t accept_errors;
	uint64_t commands_refused;
	uint64_t attach_refused;	/* all tenants' */
	uint64_t reads_paused;
	uint64_t uid_refused;		/* over max-app-conns-per-uid/-guest */
	uint64_t idle_closed;		/* never attached in attach-timeout-ms */
	uint64_t buffered;		/* request and reply bytes held now */
	uint64_t buffered_peak;
};

struct hg_memif_server;

struct hg_registry {
	struct hg_dp *dp;
	uint64_t tsc_us;		/* TSC cycles per microsecond */
	/* held by the slow path while it changes tenants and by DPDK's
	 * telemetry thread while it reads them; never by a fast-path core */
	pthread_mutex_t lock;
	uint64_t cmd_sent[HG_MAX_FP_CORES];
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
	/* the memif link's server (--memif), NULL: an ethdev port */
	struct hg_memif_server *memif;
	uint32_t txq_tenants[HG_MAX_TXQ];	/* tenants per TX group */
	struct hg_retired retired[HG_RETIRED_MAX];
	uint32_t n_retired;
	/* taken when malloc fails, so that a detach or a release can always
	 * publish the view it needs; refilled by hg_publish_reclaim */
	struct hg_tenant_view *spare;
	struct hg_tenant_sp t[HG_MAX_TENANTS];
};

#endif /* HG_SLOWPATH_REGISTRY_H */

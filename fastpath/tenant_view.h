/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the fast-path cores read of a tenant, in two records, each with
 * one writer in the slow path's slowpath/publish.c and one protocol:
 *
 *  - struct hg_tenant_view: everything the operator or the tenant's apps
 *    decide: its state, settings, ports and contexts (which context an
 *    app's datagrams go to). Immutable once published: publish.c builds
 *    a new one, stores its pointer with one release store (hg_view below
 *    loads it with acquire), and frees the old one once every core has
 *    passed a quiescent point (rte_rcu_qsbr; a core reports one at the
 *    start of each pass and holds no view across it). A core therefore
 *    sees one whole view or another, never a mix: before, the RPC ports
 *    took a three-store sequence so that no core saw a torn range, and a
 *    weight change two publish calls in the right order.
 *  - struct hg_tenant_live: what the slow path's controllers measure and
 *    decide every tick (budget rate, the cap the measured cost asks for,
 *    the credit pool, D_m). Each is one word that means something on
 *    its own, stored relaxed, only when it changed, so an unchanged line
 *    stays shared in every core's cache.
 *
 * A datagram's tenant comes from the port map (dp.h), whose entries name
 * a slot: publish.c, their writer too, publishes a tenant's view before
 * any entry names it and clears the entries before the view goes.
 */
#ifndef HG_FASTPATH_TENANT_VIEW_H
#define HG_FASTPATH_TENANT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#include "../proto/hg_shm.h"

enum hg_tenant_state { HG_TENANT_FREE, HG_TENANT_ACTIVE, HG_TENANT_DYING };

/* A weight as everybody holds it, the setting's value in hundredths: the
 * config parses and prints it so (tenant_cfg.c), the budget rate is
 * computed from it (budget.h), the fast path splits slack by it. */
#define HG_WEIGHT_ONE 100u

/* budget-mark as the cores hold it, a fraction in 1/65536ths */
#define HG_MARK_ONE 65536

/* The contexts an app's bound ports steer to. */
struct hg_app_route {
	uint32_t n_ctx;
	uint8_t ctx[HG_MAX_CTX];
};

/* Which contexts are open and whose they are: TX polls the live ones, RX
 * steers an app's datagrams over its route (workers parked by core
 * allocation are out of it). */
struct hg_ctx_map {
	uint32_t n_live;		/* live_ctx[0..n_live) */
	uint8_t live_ctx[HG_MAX_CTX];
	uint8_t ctx_app[HG_MAX_CTX];	/* app slot of each open context */
	struct hg_app_route route[HG_MAX_APPS];
};

struct hg_tenant_view {
	/* what every datagram reads */
	uint32_t state;		/* enum hg_tenant_state */
	uint32_t weight;	/* hundredths (HG_WEIGHT_ONE = weight 1) */
	uint64_t quantum;	/* configured cap: the most a batch may spend,
				 * and the least the budget cap is */
	uint64_t extra_cycles;	/* synthetic work per datagram */
	uint8_t steer_jsq;	/* RX steering: 0 flow hash, 1 shortest queue */
	uint8_t txq;		/* its TX ring on each core, where the link
				 * has several (--tx-queues, memif: link.h) */
	uint16_t rxq;		/* its RX queue on each core (rx-queue) */
	uint16_t port_lo, port_hi;	/* its ports, host order, 0-0: none */
	/* what an RPC datagram reads besides (credit_sessions.c) */
	uint64_t dt_tsc;	/* D_t */
	uint64_t ddrop_tsc;	/* D_drop */
	uint32_t sess_quota;	/* sessions per core */
	int32_t budget_mark;	/* credits follow the budget on every answer
				 * too: below this part of its cap, in
				 * 1/HG_MARK_ONE (budget-mark); -1: off */
	uint16_t rpc_lo, rpc_hi;	/* RPC ports, host order, 0-0: none */
	struct hg_ctx_map map;
};

_Static_assert(offsetof(struct hg_tenant_view, map) <= RTE_CACHE_LINE_SIZE,
	       "a plain datagram's settings share one cache line");

struct hg_tenant_live {
	uint64_t rate;		/* budget per TSC cycle (HG_RATE_ONE units) */
	uint64_t cap_auto;	/* the cap the measured cost asks for; the cap
				 * is the larger of it and the view's quantum */
	uint64_t cost;		/* cycles a datagram costs, measured; 0: not
				 * yet (bounds a charge, hg_charge_max) */
	uint64_t pool;		/* credits, all sessions, all cores */
	uint64_t dm_tsc;	/* D_m: age of the oldest waiting request */
} __rte_cache_aligned;

_Static_assert(sizeof(struct hg_tenant_live) == RTE_CACHE_LINE_SIZE,
	       "one line per tenant: a store to one tenant's rate leaves its "
	       "neighbours' lines alone");

#endif /* HG_FASTPATH_TENANT_VIEW_H */

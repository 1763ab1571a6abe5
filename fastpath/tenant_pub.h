/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the fast-path cores read of a tenant's settings, one record per
 * tenant (struct hg_dp.pub). The slow path's slowpath/publish.c is its
 * only writer; every core reads it.
 *
 * Two cache lines, each written as a whole when it changes and otherwise
 * left shared in every core's cache: the hot line holds what every
 * datagram of the tenant reads (state, budget rate and cap, batch
 * quantum, weight, RX steering, synthetic work), the credit line what an
 * RPC datagram reads besides. One record per tenant, not one array per
 * field: a datagram touches two lines instead of one line of each of
 * nine arrays, and a store to one tenant's rate no longer invalidates
 * the line seven neighbours' datagrams read.
 */
#ifndef HG_FASTPATH_TENANT_PUB_H
#define HG_FASTPATH_TENANT_PUB_H

#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

enum hg_tenant_state { HG_TENANT_FREE, HG_TENANT_ACTIVE, HG_TENANT_DYING };

/* A weight as everybody holds it, the setting's value in hundredths: the
 * config parses and prints it so (tenant_cfg.c), the budget rate is
 * computed from it (budget.h), the fast path splits slack by it. */
#define HG_WEIGHT_ONE 100u

struct hg_tenant_pub {
	/* the hot line: every datagram */
	uint32_t state;		/* enum hg_tenant_state; release/acquire */
	uint32_t weight;	/* hundredths (HG_WEIGHT_ONE = weight 1) */
	uint64_t rate;		/* budget per TSC cycle (HG_RATE_ONE units) */
	uint64_t cap;		/* budget cap, TSC cycles */
	uint64_t quantum;	/* configured cap: the most a batch may spend */
	uint64_t extra_cycles;	/* synthetic work per datagram */
	uint32_t steer_jsq;	/* RX steering: 0 flow hash, 1 shortest queue */

	/* the credit line: RPC datagrams (credit_sessions.c) */
	uint64_t pool __rte_cache_aligned;	/* credits, all sessions, all cores */
	uint64_t dm_tsc;	/* D_m: age of the oldest waiting request */
	uint64_t dt_tsc;	/* D_t */
	uint64_t ddrop_tsc;	/* D_drop */
	uint32_t sess_quota;	/* sessions per core */
	/* RPC ports, host order, 0-0: none; hi is stored first and last
	 * (publish.c), so a reader sees the old range, none, or the new */
	uint16_t rpc_lo, rpc_hi;
} __rte_cache_aligned;

_Static_assert(offsetof(struct hg_tenant_pub, steer_jsq) < RTE_CACHE_LINE_SIZE,
	       "the hot fields share one cache line");
_Static_assert(offsetof(struct hg_tenant_pub, pool) == RTE_CACHE_LINE_SIZE,
	       "the credit fields start the second line");
_Static_assert(sizeof(struct hg_tenant_pub) == 2 * RTE_CACHE_LINE_SIZE,
	       "two cache lines per tenant, no more");

#endif /* HG_FASTPATH_TENANT_PUB_H */

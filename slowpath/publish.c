/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include <rte_rcu_qsbr.h>

#include "publish.h"
#include "xdp_link.h"

/* Stores v at p only if it differs: every core holds the line shared,
 * and a store of the same value would still take it from all of them. */
#define PUT(p, v)							\
	do {								\
		__typeof__(*(p)) v_ = (v);				\
		HG_ASSERT_SLOW();					\
		if (__atomic_load_n((p), __ATOMIC_RELAXED) != v_)	\
			__atomic_store_n((p), v_, __ATOMIC_RELAXED);	\
	} while (0)

/* ---- views ---- */

static void
free_view(const struct hg_tenant_view *v)
{
	if (v != &hg_view_none)
		free((void *)(uintptr_t)v);
}

void
hg_publish_reclaim(struct hg_registry *reg)
{
	uint32_t i, n = 0;

	if (reg->spare == NULL)
		reg->spare = malloc(sizeof(*reg->spare));
	for (i = 0; i < reg->n_retired; i++) {
		struct hg_retired *r = &reg->retired[i];

		if (reg->dp->qs == NULL ||
		    rte_rcu_qsbr_check(reg->dp->qs, r->token, false) == 1)
			free_view(r->v);
		else
			reg->retired[n++] = *r;
	}
	reg->n_retired = n;
}

/* old stays readable until every core has passed a quiescent point after
 * this call. Without cores (unit tests, no qsbr) it goes at once. */
static void
retire(struct hg_registry *reg, const struct hg_tenant_view *old)
{
	if (old == &hg_view_none)
		return;
	if (reg->dp->qs == NULL) {
		free_view(old);
		return;
	}
	if (reg->n_retired == HG_RETIRED_MAX) {
		/* the list is bounded: wait for the cores (each pass is a
		 * quiescent point; a napping core is offline) */
		rte_rcu_qsbr_synchronize(reg->dp->qs, RTE_QSBR_THRID_INVALID);
		hg_publish_reclaim(reg);
	}
	reg->retired[reg->n_retired++] = (struct hg_retired){
		.v = old, .token = rte_rcu_qsbr_start(reg->dp->qs) };
}

/* The view of an active tenant: its settings, ports and contexts. */
static void
fill_view(const struct hg_registry *reg, const struct hg_tenant_sp *t,
	  struct hg_tenant_view *v)
{
	const struct hg_tenant_cfg *c = &t->cfg;

	*v = (struct hg_tenant_view){
		.state = HG_TENANT_ACTIVE,
		.weight = c->weight,
		.quantum = c->cap,
		.extra_cycles = c->extra_cycles,
		.steer_jsq = (uint8_t)c->steer.jsq,
		.rxq = (uint16_t)t->rx_queue,
		.txq = (uint8_t)t->tx_queue,
		.port_lo = (uint16_t)c->port_lo, .port_hi = (uint16_t)c->port_hi,
		.dt_tsc = (uint64_t)c->credit.dt_us * reg->tsc_us,
		.ddrop_tsc = (uint64_t)c->credit.ddrop_us * reg->tsc_us,
		.sess_quota = c->max_sessions,
		.budget_mark = c->credit.budget_feedback ?
			       (int32_t)(c->credit.budget_mark * HG_MARK_ONE) : -1,
		.rpc_lo = (uint16_t)c->credit.rpc_lo, .rpc_hi = (uint16_t)c->credit.rpc_hi,
		.map = t->map,
	};
}

int
hg_publish_view(struct hg_registry *reg, int slot)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	const struct hg_tenant_view *old;
	struct hg_tenant_view *v = NULL;

	HG_ASSERT_SLOW();
	/* a tenant that is not active is nothing to the cores: every one of
	 * them checks the state first, and the none view costs no memory */
	if (t->state == HG_TENANT_ACTIVE) {
		if ((v = malloc(sizeof(*v))) == NULL) {
			v = reg->spare;
			reg->spare = NULL;
		}
		if (v == NULL)
			return -ENOMEM;
		fill_view(reg, t, v);
	}
	old = reg->dp->view[slot];
	__atomic_store_n(&reg->dp->view[slot], v ? v : &hg_view_none, __ATOMIC_RELEASE);
	retire(reg, old);
	return 0;
}

int
hg_publish_state(struct hg_registry *reg, int slot, enum hg_tenant_state s)
{
	reg->t[slot].state = s;
	return hg_publish_view(reg, slot);
}

void
hg_publish_fini(struct hg_registry *reg)
{
	uint32_t i;

	for (i = 0; i < HG_MAX_TENANTS; i++) {
		free_view(reg->dp->view[i]);
		reg->dp->view[i] = &hg_view_none;
	}
	for (i = 0; i < reg->n_retired; i++)
		free_view(reg->retired[i].v);
	reg->n_retired = 0;
	free(reg->spare);
	reg->spare = NULL;
}

/* ---- the port map ---- */

void
hg_publish_port(struct hg_registry *reg, uint32_t p, uint32_t entry)
{
	HG_ASSERT_SLOW();
	RTE_ASSERT(p < RTE_DIM(reg->dp->port_map));
	__atomic_store_n(&reg->dp->port_map[p], entry, __ATOMIC_RELEASE);
	hg_xdp_port((uint16_t)p, entry);
}

/* ---- settings ---- */

/* What the library reads from the region header: Synergy's settings and
 * how idle workers ask to park. dispatch and core_policy go last
 * (release): a library that sees a new policy sees its settings. */
static void
publish_steering(struct hg_tenant *tn, const struct hg_tenant_cfg *c)
{
	struct hg_steer_shm *sh = &((struct hg_region_hdr *)tn->base)->steer;
	const struct hg_steering *s = &c->steer;

	sh->steal = (uint32_t)s->steal;
	sh->wait_queue = (uint32_t)s->wait_queue;
	sh->steal_threshold = s->steal_threshold;
	sh->quantum_factor = s->quantum_factor;
	sh->quantum_ns = s->quantum_us * 1000u;
	__atomic_store_n(&sh->poll_ns, c->core.poll_us * 1000u, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->dispatch, (uint32_t)s->dispatch, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->core_policy, (uint32_t)c->core.policy, __ATOMIC_RELEASE);
}

void
hg_publish_running(struct hg_registry *reg, int slot, uint32_t n)
{
	struct hg_steer_shm *sh =
		&((struct hg_region_hdr *)reg->dp->tenant[slot].base)->steer;

	HG_ASSERT_SLOW();
	__atomic_store_n(&sh->running, n, __ATOMIC_RELAXED);
}

/* The settings a view holds. */
#define VIEW_BITS (HG_TCFG_PUB_BUDGET | HG_TCFG_PUB_EXTRA | HG_TCFG_PUB_STEER | \
		   HG_TCFG_PUB_CREDIT | HG_TCFG_PUB_SESSIONS | HG_TCFG_PUB_PORTS)

int
hg_publish_settings(struct hg_registry *reg, int slot, unsigned what)
{
	if (what & HG_TCFG_PUB_STEER)
		publish_steering(&reg->dp->tenant[slot], &reg->t[slot].cfg);
	if (what & HG_TCFG_PUB_CREDIT)
		hg_publish_credit(reg, slot);
	return (what & VIEW_BITS) ? hg_publish_view(reg, slot) : 0;
}

/* ---- the live words ---- */

void
hg_publish_rate(struct hg_registry *reg, int slot, uint64_t rate)
{
	PUT(&reg->dp->tenant_live[slot].rate, rate);
}

void
hg_publish_cost(struct hg_registry *reg, int slot, uint64_t cost, uint64_t cap)
{
	PUT(&reg->dp->tenant_live[slot].cost, cost);
	PUT(&reg->dp->tenant_live[slot].cap_auto, cap);
}

void
hg_publish_credit(struct hg_registry *reg, int slot)
{
	const struct hg_tenant_sp *t = &reg->t[slot];

	PUT(&reg->dp->tenant_live[slot].dm_tsc, t->dm_tsc);
	PUT(&reg->dp->tenant_live[slot].pool, (uint64_t)t->pool);
}

void
hg_publish_dm(struct hg_registry *reg, int slot)
{
	PUT(&reg->dp->tenant_live[slot].dm_tsc, reg->t[slot].dm_tsc);
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "publish.h"

/* Stores v at p only if it differs: every core holds the line shared,
 * and a store of the same value would still take it from all of them. */
#define PUT(p, v)							\
	do {								\
		__typeof__(*(p)) v_ = (v);				\
		HG_ASSERT_SLOW();					\
		if (__atomic_load_n((p), __ATOMIC_RELAXED) != v_)	\
			__atomic_store_n((p), v_, __ATOMIC_RELAXED);	\
	} while (0)

void
hg_publish_state(struct hg_registry *reg, int slot, enum hg_tenant_state s)
{
	__atomic_store_n(&reg->dp->pub[slot].state, (uint32_t)s, __ATOMIC_RELEASE);
}

/* The RPC ports; hi goes first and last so that a concurrent reader sees
 * the old range, none, or the new one. */
static void
publish_rpc(struct hg_tenant_pub *pub, const struct hg_credit_cfg *c)
{
	if (pub->rpc_lo == c->rpc_lo && pub->rpc_hi == c->rpc_hi)
		return;
	__atomic_store_n(&pub->rpc_hi, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pub->rpc_lo, (uint16_t)c->rpc_lo, __ATOMIC_RELEASE);
	__atomic_store_n(&pub->rpc_hi, (uint16_t)c->rpc_hi, __ATOMIC_RELEASE);
}

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
hg_publish_settings(struct hg_registry *reg, int slot, unsigned what)
{
	const struct hg_tenant_cfg *c = &reg->t[slot].cfg;
	struct hg_tenant_pub *pub = &reg->dp->pub[slot];

	if (what & HG_TCFG_PUB_STEER) {
		publish_steering(&reg->dp->tenant[slot], c);
		PUT(&pub->steer_jsq, (uint32_t)c->steer.jsq);
	}
	/* the cap and quantum: hg_publish_cap, from refill.c */
	if (what & HG_TCFG_PUB_BUDGET)
		PUT(&pub->weight, c->weight);
	if (what & HG_TCFG_PUB_EXTRA)
		PUT(&pub->extra_cycles, c->extra_cycles);
	if (what & HG_TCFG_PUB_SESSIONS)
		PUT(&pub->sess_quota, c->max_sessions);
	if (what & HG_TCFG_PUB_CREDIT) {
		hg_publish_credit(reg, slot);
		publish_rpc(pub, &c->credit);
	}
}

void
hg_publish_rate(struct hg_registry *reg, int slot, uint64_t rate)
{
	PUT(&reg->dp->pub[slot].rate, rate);
}

void
hg_publish_cap(struct hg_registry *reg, int slot, uint64_t cap)
{
	PUT(&reg->dp->pub[slot].cap, cap);
	PUT(&reg->dp->pub[slot].quantum, reg->t[slot].cfg.cap);
}

void
hg_publish_credit(struct hg_registry *reg, int slot)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_tenant_pub *pub = &reg->dp->pub[slot];
	uint64_t us = reg->tsc_us;

	PUT(&pub->dt_tsc, (uint64_t)t->cfg.credit.dt_us * us);
	PUT(&pub->ddrop_tsc, (uint64_t)t->cfg.credit.ddrop_us * us);
	PUT(&pub->dm_tsc, t->dm_tsc);
	PUT(&pub->pool, (uint64_t)t->pool);
}

void
hg_publish_dm(struct hg_registry *reg, int slot)
{
	PUT(&reg->dp->pub[slot].dm_tsc, reg->t[slot].dm_tsc);
}

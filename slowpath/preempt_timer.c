/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "preempt_timer.h"

int
hg_wq_check(struct hg_wq_watch *w, uint32_t cons, uint32_t count,
	    uint64_t now_ns, uint64_t thresh_ns)
{
	if (thresh_ns == 0) {
		w->congested = 0;
		return 0;
	}
	if (now_ns - w->last_check_ns < thresh_ns)
		return w->congested;
	w->congested = count > 0 && cons == w->last_cons;
	w->last_cons = cons;
	w->last_check_ns = now_ns;
	return w->congested;
}

/* Are requests waiting in the context's receive rings? The rings carry
 * the daemon's private geometry, so the count is bounded. */
static int
queued(const struct hg_tenant *tn, uint32_t ctx, uint32_t n_cores)
{
	uint32_t c;

	for (c = 0; c < n_cores; c++)
		if (!rte_ring_empty(tn->ring[ctx][c][HG_RING_RX]))
			return 1;
	return 0;
}

/* Returns the contexts running a long request. */
static unsigned
preempt_tenant(struct hg_registry *reg, int slot, uint64_t now)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_tenant *tn = &reg->dp->tenant[slot];
	struct hg_ctx_shm *cs = tn->ctx_shm;
	struct hg_app_shm *apps = tn->app_shm;
	unsigned ctx, running = 0;

	for (ctx = 0; ctx < HG_MAX_CTX; ctx++) {
		struct hg_ctx_shm *c = &cs[ctx];
		int in_long;

		if (!t->ctx_used[ctx])
			continue;
		in_long = (int)__atomic_load_n(&c->in_long, __ATOMIC_ACQUIRE);
		running += in_long != 0;
		if (__atomic_load_n(&c->preempt, __ATOMIC_RELAXED) ||
		    !hg_preempt_due(in_long, c->long_start_ns, c->quantum_ns, now,
				    t->cfg.steer.preempt == HG_PREEMPT_ALWAYS ||
				    queued(tn, ctx, reg->dp->n_cores)))
			continue;
		__atomic_store_n(&c->preempt, 1, __ATOMIC_RELEASE);
		t->preemptions++;
		apps[t->map.ctx_app[ctx] % HG_MAX_APPS].preemptions++;
	}
	return running;
}

static void
watch_wait_queues(struct hg_registry *reg, struct hg_timer *tm, int slot,
		  uint64_t now)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_tenant *tn = &reg->dp->tenant[slot];
	struct hg_app_shm *apps = tn->app_shm;
	uint64_t thresh = (uint64_t)t->cfg.steer.thresh_wqd_us * 1000u;
	uint32_t a, normal = t->cfg.steer.quantum_factor,
		 congested = t->cfg.steer.congested_factor;

	for (a = 0; a < HG_MAX_APPS; a++) {
		const struct rte_ring *wq = tn->wq[a];
		int c;

		if (!t->app[a].used)
			continue;
		c = hg_wq_check(&tm->wq[slot][a],
				__atomic_load_n(&wq->cons.tail, __ATOMIC_RELAXED),
				rte_ring_count(wq), now, thresh);
		__atomic_store_n(&apps[a].check_wait_queue, (uint32_t)c,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&apps[a].factor, c ? congested : normal,
				 __ATOMIC_RELAXED);
	}
}

/* Walks the awake tenants (refill.c): a tenant settles only with nothing
 * waiting in its rings or wait queues, so a settled one has nothing to
 * preempt for and no queue to watch. */
int
hg_timer_tick(struct hg_registry *reg, struct hg_timer *tm, uint64_t now_ns)
{
	int i, watching = 0;

	HG_TSET_FOREACH(i, &reg->awake) {
		const struct hg_tenant_sp *t = &reg->t[i];

		if (!t->used || t->releasing)
			continue;
		if (t->cfg.steer.preempt != HG_PREEMPT_OFF &&
		    preempt_tenant(reg, i, now_ns) > 0)
			tm->last_long_ns = now_ns;
		watch_wait_queues(reg, tm, i, now_ns);
		watching |= t->cfg.steer.thresh_wqd_us > 0;
	}
	return watching || now_ns - tm->last_long_ns < HG_TIMER_HOLD_NS;
}

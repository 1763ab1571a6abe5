/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The credit pool of each tenant with RPC ports (design.md §6): on every pass
 * the slow path measures D_m, the age of the oldest request still waiting
 * in the tenant's receive rings and wait queues, and every update-us
 * (about one round trip) it updates the pool by AIMD; the fast path reads
 * the pool and the delays.
 *
 * The period is the controller's clock: α is added and β applied once per
 * update, so a period much shorter than the time a queue takes to drain
 * keeps multiplying the pool down while the delay it measures is still
 * the one it caused a round trip ago (Breakwater updates once per RTT).
 */
#include "../fastpath/budget.h"
#include "../fastpath/credit_rules.h"
#include "credit_pool.h"
#include "publish.h"
#include "refill.h"

/* The oldest RX timestamp at the head of an app's wait queue: preempted
 * requests still wait, and with every request long the RX rings drain
 * into the wait queue. The ring header is tenant memory: the head index
 * is masked with the fixed size, never the header's mask. */
static uint64_t
oldest_parked(const struct hg_tenant *tn, uint64_t oldest)
{
	unsigned a;

	for (a = 0; a < HG_MAX_APPS; a++) {
		const struct rte_ring *r = tn->wq[a];
		const struct hg_wq_entry *e;
		uint32_t head;

		if (r == NULL || rte_ring_empty(r))
			continue;
		e = (const struct hg_wq_entry *)&r[1];
		head = __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED) & (HG_WQ_SIZE - 1);
		if (e[head].rx_tsc < oldest)
			oldest = e[head].rx_tsc;
	}
	return oldest;
}

/* The oldest RX timestamp at the head of any of the tenant's rings or wait
 * queues. The rings carry the daemon's private geometry, so the head index
 * is in bounds; the timestamp itself is tenant memory and only compared (a
 * tenant that lies about it only misleads its own credit pool). */
static uint64_t
oldest_waiting(const struct hg_registry *reg, int slot, uint64_t now)
{
	const struct hg_tenant *tn = &reg->dp->tenant[slot];
	const struct hg_ctx_map *m = &reg->t[slot].map;
	uint32_t k, c, n_cores = reg->dp->n_cores;
	uint64_t oldest = oldest_parked(tn, now);

	for (k = 0; k < m->n_live && k < HG_MAX_CTX; k++) {
		for (c = 0; c < n_cores; c++) {
			const struct rte_ring *r =
				tn->ring[m->live_ctx[k] % HG_MAX_CTX][c][HG_RING_RX];
			const struct hg_desc *e = (const struct hg_desc *)&r[1];
			uint64_t ts;

			if (rte_ring_empty(r))
				continue;
			ts = e[__atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED) & r->mask].tsc;
			if (ts < oldest)
				oldest = ts;
		}
	}
	return now - oldest;
}

uint64_t
hg_credit_delay(const struct hg_registry *reg, int slot, uint64_t now)
{
	return oldest_waiting(reg, slot, now);
}

/* The most the pool may hold: what its sessions could ever take. */
static double
pool_max(uint32_t sessions)
{
	return (double)(sessions > 1 ? sessions : 1) * HG_CREDIT_MAX_SESSION;
}

void
hg_credit_adjust(struct hg_registry *reg, int slot, double delta)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	uint32_t drained;
	int64_t issued;
	double max = pool_max(hg_credit_sessions(reg, slot, &drained, &issued)),
	       was = t->pool;

	t->pool += delta;
	t->pool = t->pool > max ? max : t->pool;
	t->pool = t->pool < 1 ? 1 : t->pool;
	/* not a decrease of the controller's: persistent overload counts
	 * only what the AIMD update did */
	t->core.over.last_pool += t->pool - was;
	hg_publish_credit(reg, slot);
}

uint32_t
hg_credit_sessions(const struct hg_registry *reg, int slot, uint32_t *drained,
		   int64_t *issued)
{
	uint32_t c, n = 0;

	*drained = 0;
	*issued = 0;
	for (c = 0; c < reg->dp->n_cores; c++) {
		const struct hg_sessions *ss = reg->dp->core[c].sess;

		n += __atomic_load_n(&ss->count[slot], __ATOMIC_RELAXED);
		*drained += __atomic_load_n(&ss->drained[slot], __ATOMIC_RELAXED);
		*issued += __atomic_load_n(&ss->issued[slot], __ATOMIC_RELAXED);
	}
	return n;
}

/* Nothing left for the ticks: no request waiting in the tenant's rings or
 * wait queues (nothing to measure, preempt for or watch), and, with RPC
 * ports, no session on any core and the pool back at its ceiling (where
 * idle updates would leave it). A tenant that fakes its timestamps to
 * look quiet only loses its own credit control. */
int
hg_credit_quiet(const struct hg_registry *reg, int slot)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	uint32_t drained;
	int64_t issued;

	if (oldest_waiting(reg, slot, UINT64_MAX) != 0)
		return 0;
	if (t->cfg.credit.rpc_hi == 0)
		return 1;
	return hg_credit_sessions(reg, slot, &drained, &issued) == 0 &&
	       t->pool >= HG_CREDIT_MAX_SESSION;
}

/* A quiet tenant leaves the ticks: the D_m last published may be from a
 * pass when a request still waited, and would stand until the tenant
 * woke up again, turning its next requests away as overload. Nothing
 * waits now (hg_credit_quiet), so D_m is zero. */
void
hg_credit_settle(struct hg_registry *reg, int slot)
{
	reg->t[slot].dm_tsc = 0;
	hg_publish_credit(reg, slot);
}

/* The lowest budget tenant i has left on a saturated core at TSC now;
 * *out: is it below its mark there: budget-mark, or on an RX queue it
 * shares the cover of the credits it holds there (hg_credit_cover), if
 * that is more; *mark: that core's mark, a fraction of the cap. A core
 * with idle passes is ignored: a tenant in debt there runs on time
 * nobody else wants (work conservation), and cutting its credits would
 * only cost it goodput. */
static int64_t
budget_low(const struct hg_registry *reg, int i, uint64_t now, int *out, double *mark)
{
	const struct hg_dp *dp = reg->dp;
	const struct hg_tenant_sp *t = &reg->t[i];
	uint64_t rate = __atomic_load_n(&dp->tenant_live[i].rate, __ATOMIC_RELAXED);
	uint64_t cap = hg_refill_cap(t);
	const double marked = t->cfg.credit.budget_mark * (double)cap;
	int64_t low = INT64_MAX, left;
	double at, cover;
	unsigned c;

	*out = 0;
	*mark = t->cfg.credit.budget_mark;
	for (c = 0; c < dp->n_cores; c++) {
		if (!hg_core_saturated(&dp->core[c], now))
			continue;
		left = hg_budget_peek(&dp->core[c].t[i].bud, rate, cap,
				      hg_budget_clock(&dp->core[c], now));
		at = marked;
		cover = (double)hg_credit_cover(dp, &dp->core[c], (unsigned)i, t->rx_queue);
		at = cover > at ? cover : at;
		if (left < low) {
			low = left;
			*mark = at / (double)(cap ? cap : 1);
		}
		*out |= (double)left < at;
	}
	return low;
}

/* One AIMD update of tenant i's pool: by its delay, and while credits
 * follow the budget and it is out of budget, as if the delay were higher
 * (credit_rules.h). What each cause took from the pool is counted. */
static void
update_pool(struct hg_registry *reg, int i, uint64_t now, double alpha, double max)
{
	struct hg_tenant_sp *t = &reg->t[i];
	uint64_t dt = t->cfg.credit.dt_us * reg->tsc_us, cap, dm;
	double by_delay = hg_credit_aimd(t->pool, t->dm_tsc, dt, alpha, t->cfg.credit.beta, max);
	int out = 0;
	int64_t low = 0;
	double mark = 0;

	/* with protection off nobody is held to a budget */
	if (t->cfg.credit.budget_feedback && hg_protecting(reg->dp))
		low = budget_low(reg, i, now, &out, &mark);
	if (t->pool > by_delay)
		t->withheld_delay += t->pool - by_delay;
	if (!out) {
		t->pool = by_delay;
		return;
	}
	cap = hg_refill_cap(t);
	dm = hg_credit_budget_delay(t->dm_tsc, dt, out, low, cap, mark);
	t->pool = hg_credit_aimd(t->pool, dm, dt, alpha, t->cfg.credit.beta, max);
	t->withheld_budget += by_delay - t->pool;
	t->budget_cuts++;
}

/* Walks the awake tenants (refill.c): an idle one's D_m is zero and its
 * pool at the ceiling, so skipping it changes nothing. */
unsigned
hg_credit_tick(struct hg_registry *reg, uint64_t now)
{
	uint64_t us = reg->tsc_us;
	unsigned n = 0;
	int i;

	HG_TSET_FOREACH(i, &reg->awake) {
		struct hg_tenant_sp *t = &reg->t[i];
		uint32_t sessions, drained;
		int64_t issued;
		double alpha;

		if (!t->used || t->releasing || t->cfg.credit.rpc_hi == 0)
			continue;
		n++;
		/* D_m is measured on every pass, not only per update: the
		 * fast path's AQM acts on it, and a D_m one update-us old
		 * would admit requests into a queue already past D_drop */
		t->dm_tsc = oldest_waiting(reg, i, now);
		if (now < t->next_update) {
			hg_publish_dm(reg, i);
			continue;
		}
		t->next_update = now + t->cfg.credit.update_us * us;
		sessions = hg_credit_sessions(reg, i, &drained, &issued);
		alpha = t->cfg.credit.alpha > 0 ? t->cfg.credit.alpha
					    : (sessions / 1000.0 > 1 ? sessions / 1000.0 : 1);
		update_pool(reg, i, now, alpha, pool_max(sessions));
		/* CoreSync's persistent overload: a drained session, or the
		 * pool cut at HG_CS_DECREASES updates in a row */
		t->core.overloaded = hg_cs_overload(&t->core.over, t->pool,
						    drained, HG_CS_DECREASES);
		hg_publish_credit(reg, i);
	}
	return n;
}

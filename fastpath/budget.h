/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Time protection (DESIGN §4, Virtuoso §4): per-tenant, per-core budgets in
 * TSC cycles, and the deficit-round-robin choice of whom a point serves.
 *
 * A budget is granted - consumed. The slow path is the only writer of
 * granted and the fast path the only writer of consumed, so neither needs
 * an atomic read-modify-write: each reads the other's word, which only
 * grows (granted may also shrink when a cap is lowered).
 */
#ifndef HG_FASTPATH_BUDGET_H
#define HG_FASTPATH_BUDGET_H

#include <stdint.h>

#include "tset.h"

/* One tenant's budget on one core. granted has a cache line of its own:
 * the slow path rewrites it every refill and must not steal the line the
 * core's counters live on. */
struct hg_budget {
	uint64_t granted __attribute__((aligned(64)));	/* slow path only */
	uint64_t consumed __attribute__((aligned(64)));	/* fast path only */
};

static inline int64_t
hg_budget_left(const struct hg_budget *b)
{
	return (int64_t)(__atomic_load_n(&b->granted, __ATOMIC_RELAXED) -
			 __atomic_load_n(&b->consumed, __ATOMIC_RELAXED));
}

static inline void
hg_budget_charge(struct hg_budget *b, uint64_t cycles)
{
	__atomic_store_n(&b->consumed, b->consumed + cycles, __ATOMIC_RELAXED);
}

/* xorshift64*: cheap, per-core state, good enough to split slack. */
static inline uint64_t
hg_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Picks a member of s with probability proportional to its weight
 * (weight_q: weights in hundredths). Used for slack, the time no funded
 * tenant wants: round robin would hand it to whoever comes after the
 * heaviest tenant, i.e. mostly to the light ones; a weighted draw splits
 * it by weight, so a saturated core is shared by weight overall. Two
 * walks over s: O(members). */
static inline int
hg_lottery(const struct hg_tset *s, const uint32_t *weight_q, uint64_t *rng)
{
	uint64_t sum = 0, x;
	int t;

	HG_TSET_FOREACH(t, s)
		sum += weight_q[t] ? weight_q[t] : 1;
	if (sum == 0)
		return -1;
	x = hg_rand(rng) % sum;
	HG_TSET_FOREACH(t, s) {
		uint64_t w = weight_q[t] ? weight_q[t] : 1;

		if (x < w)
			return t;
		x -= w;
	}
	return -1;
}

/* How many datagrams a batch at SCHED may hold: as many as allowance
 * covers at the tenant's average cost, plus the one that may overrun it,
 * within [1, room]. DRR with the deficit bounded by one datagram: a tenant
 * with expensive datagrams gets short batches, so nobody waits behind a
 * long non-preemptive one; cheap tenants keep full bursts. avg 0 means
 * not yet measured. */
static inline unsigned
hg_batch_size(int64_t allowance, uint64_t avg, unsigned room)
{
	uint64_t n;

	if (avg == 0)
		return room;
	if (allowance <= 0)
		return 1;
	n = (uint64_t)allowance / avg + 1;
	return n < room ? (unsigned)n : room;
}

/* Folds one batch into the per-datagram cost average (weight 1/8). */
static inline uint64_t
hg_cost_avg(uint64_t avg, uint64_t cycles, unsigned n)
{
	uint64_t per = cycles / (n ? n : 1);

	return avg == 0 ? per : avg - avg / 8 + per / 8;
}

/* Slow-path refill (Virtuoso eq. 1): e = B (tau' - tau) w / sum(w) and
 * b' = min(C, b + e). Returns the new granted value. */
uint64_t hg_budget_refill(uint64_t granted, uint64_t consumed, uint64_t elapsed,
			  double boost, double weight, double weight_sum,
			  uint64_t cap);

#endif /* HG_FASTPATH_BUDGET_H */

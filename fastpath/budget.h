/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Time protection (design.md §4, Virtuoso §4): per-tenant, per-core budgets in
 * TSC cycles, and the deficit-round-robin choice of whom a point serves.
 *
 * A budget is granted - consumed, topped up lazily: when a point looks at
 * it, the core adds rate x (now - last) and clamps to the cap (Virtuoso
 * eq. 1, evaluated on demand). The core is the only writer of all three
 * words; the slow path writes only each tenant's rate and cap. So a
 * budget never waits for the slow path to run: a busy CPU 0 delays a rate
 * change, never the refill.
 */
#ifndef HG_FASTPATH_BUDGET_H
#define HG_FASTPATH_BUDGET_H

#include <stdint.h>

#include <rte_debug.h>

#include "tenant_view.h"
#include "tset.h"

#define HG_RATE_ONE (1ull << 32)	/* rate fixed point: cycles per cycle */

/* One tenant's budget on one core; written by that core only. */
struct hg_budget {
	uint64_t granted;
	uint64_t consumed;
	uint64_t last;		/* TSC of the last top-up; 0: never (full) */
};

/* The budget per TSC cycle of a tenant (Virtuoso eq. 1: B w / sum(w)),
 * in HG_RATE_ONE units; weights in any one unit (the daemon's: hundredths,
 * tenant_view.h). */
static inline uint64_t
hg_budget_rate(double boost, uint64_t weight, uint64_t weight_sum)
{
	double r = weight_sum > 0 ? boost * (double)weight / (double)weight_sum : 0;

	return r <= 0 ? 0 : r >= 1 ? HG_RATE_ONE : (uint64_t)(r * (double)HG_RATE_ONE);
}

/* b' = min(C, b + rate x elapsed), as a new granted. A cap lowered below
 * what is left cuts it down to the cap. An elapsed of 2^31 cycles or more
 * (about a second) fills any budget, and keeps the product in 64 bits. */
static inline uint64_t
hg_budget_grant(uint64_t granted, uint64_t consumed, uint64_t elapsed,
		uint64_t rate, uint64_t cap)
{
	int64_t room = (int64_t)cap - (int64_t)(granted - consumed);
	int64_t add = room;

	if (elapsed < (1ull << 31) && rate <= HG_RATE_ONE) {
		uint64_t e = (elapsed * rate + HG_RATE_ONE / 2) >> 32;

		if ((int64_t)e < room)
			add = (int64_t)e;
	}
	/* what is left never exceeds the cap (a lowered cap cuts it) */
	RTE_ASSERT((int64_t)(granted + (uint64_t)add - consumed) <= (int64_t)cap);
	return granted + (uint64_t)add;
}

/* What is left at TSC now, without topping up (the slow path's view). */
static inline int64_t
hg_budget_peek(const struct hg_budget *b, uint64_t rate, uint64_t cap,
	       uint64_t now)
{
	uint64_t granted = __atomic_load_n(&b->granted, __ATOMIC_RELAXED);
	uint64_t consumed = __atomic_load_n(&b->consumed, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&b->last, __ATOMIC_RELAXED);
	uint64_t elapsed = last == 0 ? UINT64_MAX : now > last ? now - last : 0;

	return (int64_t)(hg_budget_grant(granted, consumed, elapsed, rate, cap) -
			 consumed);
}

/* Tops the budget up to TSC now and returns what is left. A clock behind
 * the last top-up (hg_budget_clock, after a stall booked later in the
 * same pass) leaves last where it was: moved back, the stall's time would
 * be refilled after all. */
static inline int64_t
hg_budget_left(struct hg_budget *b, uint64_t rate, uint64_t cap, uint64_t now)
{
	int64_t left = hg_budget_peek(b, rate, cap, now);

	__atomic_store_n(&b->granted, b->consumed + (uint64_t)left, __ATOMIC_RELAXED);
	if (now > b->last)
		__atomic_store_n(&b->last, now, __ATOMIC_RELAXED);
	return left;
}

static inline void
hg_budget_charge(struct hg_budget *b, uint64_t cycles)
{
	__atomic_store_n(&b->consumed, b->consumed + cycles, __ATOMIC_RELAXED);
}

/* Bills work done for a tenant out of budget that it must pay for all the
 * same (RX's shedding of its datagrams): the debt grows by it, but never
 * past floor (one quantum), so a tenant whose flood is shed pays for the
 * shedding without being locked out long after the flood stops. The
 * floor is measured against the last top-up, which refill only raises. */
static inline void
hg_budget_charge_debt(struct hg_budget *b, uint64_t cycles, uint64_t floor)
{
	int64_t room = (int64_t)(b->granted - b->consumed) + (int64_t)floor;

	if (room <= 0)
		return;
	hg_budget_charge(b, (int64_t)cycles < room ? cycles : (uint64_t)room);
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

/* x spread over [0, n): the high half of x * n, a multiply instead of a
 * division (one per steered datagram: ~20 cycles saved). */
static inline uint32_t
hg_range(uint32_t x, uint32_t n)
{
	return (uint32_t)(((uint64_t)x * n) >> 32);
}

static inline uint64_t
hg_lottery_weight(const struct hg_tenant_view *const *view, int t)
{
	uint32_t w = __atomic_load_n(&view[t], __ATOMIC_ACQUIRE)->weight;

	return w ? w : 1;
}

/* Picks a member of s with probability proportional to its weight
 * (its view's weight, in hundredths). Used for slack, the time no funded
 * tenant wants: round robin would hand it to whoever comes after the
 * heaviest tenant, i.e. mostly to the light ones; a weighted draw splits
 * it by weight, so a saturated core is shared by weight overall. Two
 * walks over s: O(members). */
static inline int
hg_lottery(const struct hg_tset *s, const struct hg_tenant_view *const *view,
	   uint64_t *rng)
{
	uint64_t sum = 0, x;
	int t;

	HG_TSET_FOREACH(t, s)
		sum += hg_lottery_weight(view, t);
	if (sum == 0)
		return -1;
	x = hg_rand(rng) % sum;
	HG_TSET_FOREACH(t, s) {
		uint64_t w = hg_lottery_weight(view, t);

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

/* How many datagrams of a batch go between two looks at the others'
 * work: as many as span cycles covers at the tenant's average cost avg,
 * within [1, most]; most until the cost is measured (avg 0). */
static inline unsigned
hg_sched_chunk(uint64_t span, uint64_t avg, unsigned most)
{
	uint64_t n = avg > 0 ? span / avg : most;

	return n < 1 ? 1 : n > most ? most : (unsigned)n;
}

/* What one batch at SCHED may spend: the budget left, never more than the
 * quantum (the configured cap), and for slack one quantum. The effective
 * cap lets an expensive tenant bank its share (the weights), not spend it
 * in one batch that others wait behind (32 datagrams of 95,000 cycles put
 * a victim's p50 at 0.9 ms in bench/isolation). */
static inline int64_t
hg_batch_allowance(int64_t left, int64_t quantum, int slack)
{
	return slack || left > quantum ? quantum : left;
}

/* Folds one batch into the per-datagram cost average (weight 1/8). */
static inline uint64_t
hg_cost_avg(uint64_t avg, uint64_t cycles, unsigned n)
{
	uint64_t per = cycles / (n ? n : 1);

	return avg == 0 ? per : avg - avg / 8 + per / 8;
}

#endif /* HG_FASTPATH_BUDGET_H */

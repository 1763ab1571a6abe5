/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Credit-based overload control (design.md §6; Breakwater/CoreSync): the
 * pool's AIMD update and the per-session grant rule, as pure functions.
 */
#ifndef HG_FASTPATH_CREDIT_RULES_H
#define HG_FASTPATH_CREDIT_RULES_H

#include <stdint.h>

#define HG_CREDIT_MAX_SESSION 64u	/* a session's grant never exceeds this */
#define HG_CREDIT_POOL_MAX    (1u << 20)

/* One update of the pool from the measured delay D_m (any time unit, the
 * same for all three delays): additive increase by alpha below the target
 * D_t, else multiplicative decrease pool * max(1 - beta (D_m - D_t) / D_t,
 * 0.5). The pool stays within [1, max]: more than the sessions could ever
 * hold would only be a burst waiting to happen. */
static inline double
hg_credit_aimd(double pool, uint64_t dm, uint64_t dt, double alpha, double beta,
	       double max)
{
	double f;

	if (dm < dt) {
		pool += alpha;
	} else {
		f = 1.0 - beta * (double)(dm - dt) / (double)(dt ? dt : 1);
		pool *= f > 0.5 ? f : 0.5;
	}
	if (max > HG_CREDIT_POOL_MAX)
		max = HG_CREDIT_POOL_MAX;
	if (pool > max)
		pool = max;
	return pool < 1 ? 1 : pool;
}

/* The delay the pool is driven by when credits follow the budget
 * (design.md §6): a tenant whose budget on a saturated core is below mark x cap
 * counts as if its delay were D_t x (1 + shortfall in caps), at most
 * D_t x 10, never less than what was measured: at the mark its pool
 * stops growing, below it the pool is cut in proportion to how far
 * below (a fixed extra D_t, tried first, cut the goodput of a tenant
 * that was barely short to 0.72 of what it had uncoupled). Virtuoso (§5, Fig. 13) marks ECN at a budget threshold;
 * credits are our congestion signal. left: the budget now (negative in
 * debt); out: is the tenant out of budget on some saturated core (else
 * dm is returned as it is). */
#define HG_CREDIT_BUDGET_MAX_X 10.0

static inline uint64_t
hg_credit_budget_delay(uint64_t dm, uint64_t dt, int out, int64_t left, uint64_t cap,
		       double mark)
{
	double short_caps, x;
	uint64_t eff;

	if (!out)
		return dm;
	short_caps = (mark * (double)cap - (double)left) / (double)(cap ? cap : 1);
	x = 1.0 + (short_caps > 0 ? short_caps : 0);
	x = x < HG_CREDIT_BUDGET_MAX_X ? x : HG_CREDIT_BUDGET_MAX_X;
	eff = (uint64_t)((double)dt * x);
	return eff > dm ? eff : dm;
}

/* A session's new window when the daemon answers it: up to its demand plus
 * one while the pool has room (overcommitment keeps the pipe full), but no
 * more than its fair share of the pool among the core's sessions (a client
 * with a deep queue would otherwise take all the room there is whenever it
 * is answered first); one credit less per answer once all the pool is
 * issued. An active session
 * keeps at least one while the tenant is not overloaded: D_m is below D_t,
 * no session is drained, and the pool covers what is issued. With more
 * sessions than the pool holds some must go to zero, or the floor alone
 * would admit a queue of one request per session; those drained sessions
 * are CoreSync's persistent-overload signal. While any is drained the
 * floor is off, so each answer returns a credit and the scan hands it to
 * a drained session: the credits rotate instead of staying with whoever
 * held them first. issued counts every session's window on this core. */
static inline uint32_t
hg_credit_grant(uint32_t window, uint32_t demand, int64_t pool, int64_t issued,
		uint32_t sessions, int overloaded)
{
	int64_t room = pool - issued, want = (int64_t)demand + 1, w = window;
	int64_t floor = overloaded || issued > pool ? 0 : 1;
	int64_t fair = pool / (sessions ? sessions : 1);

	if (want > HG_CREDIT_MAX_SESSION)
		want = HG_CREDIT_MAX_SESSION;
	if (want > fair)
		want = fair > 1 ? fair : 1;
	if (room > 0)
		w = w + room < want ? w + room : want;
	else if (w > 0)
		w--;
	if (w < floor)
		w = floor;
	return (uint32_t)(w > HG_CREDIT_MAX_SESSION ? HG_CREDIT_MAX_SESSION : w);
}

/* The most requests an honest client of a session may have out (admitted,
 * or still on their way) after a message tells it window w and answers
 * `answered` of its requests, from the most before (bound): a request it
 * sent before a smaller window reached it is still on its way, so the
 * bound falls with the answers, not with the window. It is never below
 * w: the client may fill what it was told. A request past the bound is
 * turned away for credits; one within it never is, however far the
 * window fell meanwhile (a queue held in the link for a tenant out of
 * budget kept a session's requests away while scans took its credits
 * back, and each one then arrived past the new window). */
static inline uint32_t
hg_credit_bound(uint32_t bound, uint32_t w, uint32_t answered)
{
	bound = bound > answered ? bound - answered : 0;
	return bound > w ? bound : w;
}

#endif /* HG_FASTPATH_CREDIT_RULES_H */

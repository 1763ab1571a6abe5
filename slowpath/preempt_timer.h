/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The slow path as Synergy's timer core (design.md §5, Synergy Algorithm 3):
 * conditional preemption of long requests and wait-queue congestion.
 * Everything read from the tenant region is untrusted and only compared.
 */
#ifndef HG_SLOWPATH_PREEMPT_TIMER_H
#define HG_SLOWPATH_PREEMPT_TIMER_H

#include <stdint.h>

#include "../policy/preempt.h"
#include "registry.h"

/* Wait-queue congestion (Synergy §II-B1): every thresh_ns, the queue is
 * congested if it holds requests and its consumer index has not moved
 * since the previous check. */
struct hg_wq_watch {
	uint64_t last_check_ns;
	uint32_t last_cons;
	int congested;
};

/* Returns the (possibly updated) congestion state. */
int hg_wq_check(struct hg_wq_watch *w, uint32_t cons, uint32_t count,
		uint64_t now_ns, uint64_t thresh_ns);

/* After the last long request it saw, the timer keeps watching this long:
 * workloads with long requests have them every few ms, and only the first
 * after a quiet spell waits for the slow path's calm tick (1 ms). */
#define HG_TIMER_HOLD_NS (100u * 1000u * 1000u)

struct hg_timer {
	struct hg_wq_watch wq[HG_MAX_TENANTS][HG_MAX_APPS];
	uint64_t last_long_ns;	/* when a long request last ran */
};

/* One pass over every tenant's contexts and wait queues at now_ns
 * (CLOCK_MONOTONIC, the clock the library stamps requests with). Returns
 * 1 if the timer has something to watch (a long request running under
 * preemption, a wait queue under a congestion threshold): the slow path
 * then keeps its fine pace, and for HG_TIMER_HOLD_NS after. */
int hg_timer_tick(struct hg_registry *reg, struct hg_timer *tm, uint64_t now_ns);

#endif /* HG_SLOWPATH_PREEMPT_TIMER_H */

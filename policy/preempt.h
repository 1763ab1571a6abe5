/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Synergy's conditional preemption (Algorithm 3) as a plain function: the
 * daemon's timer (slowpath/preempt_timer.c) and bench/policies'
 * simulator decide with it.
 */
#ifndef HG_POLICY_PREEMPT_H
#define HG_POLICY_PREEMPT_H

#include <stdint.h>

/* Preempt a worker only if its long request has run past its quantum and
 * requests are waiting in its queue: otherwise the switch buys nothing. */
static inline int
hg_preempt_due(int in_long, uint64_t long_start_ns, uint64_t quantum_ns,
	       uint64_t now_ns, int queued)
{
	return in_long && queued && now_ns >= long_start_ns &&
	       now_ns - long_start_ns >= quantum_ns;
}

#endif /* HG_POLICY_PREEMPT_H */

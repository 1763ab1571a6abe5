/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A worker's requests in time (design.md §5, Synergy §II): when each began
 * and ended, the EMA of short service time that sizes the quantum, the
 * long-request timer the daemon reads (a long request that runs past its
 * quantum while short ones wait is preempted), and the feedback API.
 */
#include <rte_cycles.h>

#include "../common/hg_util.h"
#include "client.h"
#include "worker_sched.h"

#define EMA_DEFAULT_NS 5000u	/* until a short request has been seen */

/* CLOCK_MONOTONIC, the daemon's clock too; replaceable by tests. */
uint64_t (*hg_clock_ns)(void) = hg_now_ns;

static uint64_t
now_ns(void)
{
	return hg_clock_ns();
}

struct hg_req *
hg_cur_req(hg_ctx_t *w)
{
	return w->cur != NULL ? &w->cur->req : &w->plain;
}

static uint64_t
quantum(const hg_ctx_t *w)
{
	uint32_t fixed = LOAD(w->app->steer->quantum_ns);
	uint32_t factor = LOAD(w->app->shm->factor);

	if (fixed != 0)
		return fixed;
	if (factor == 0)
		factor = LOAD(w->app->steer->quantum_factor);
	return (w->ema_ns ? w->ema_ns : EMA_DEFAULT_NS) * factor / 100u;
}

void
hg_timer_start(hg_ctx_t *w)
{
	/* a flag set for the previous long request must not cut this one */
	__atomic_store_n(&w->shm->preempt, 0, __ATOMIC_RELAXED);
	w->shm->quantum_ns = quantum(w);
	w->shm->long_start_ns = now_ns();
	__atomic_store_n(&w->shm->in_long, 1, __ATOMIC_RELEASE);
}

void
hg_timer_stop(hg_ctx_t *w)
{
	__atomic_store_n(&w->shm->in_long, 0, __ATOMIC_RELEASE);
}

void
hg_req_begin(hg_ctx_t *w)
{
	struct hg_req *r = hg_cur_req(w);

	r->active = 1;
	r->is_long = 0;
	r->start_ns = now_ns();
	r->start_tsc = rte_rdtsc();
	r->rx_tsc = w->rx_tsc;
	r->cls = w->cls;
}

void
hg_req_end(hg_ctx_t *w)
{
	struct hg_req *r = hg_cur_req(w);
	uint64_t dt;

	if (!r->active)
		return;
	r->active = 0;
	dt = now_ns() - r->start_ns;
	hg_appq_done(w, dt);		/* DARC's profile */
	/* the RX stamp is the daemon's TSC: a later one is not believed */
	hg_class_record(w, r->cls, r->start_tsc > r->rx_tsc ?
			r->start_tsc - r->rx_tsc : 0, rte_rdtsc() - r->start_tsc);
	if (r->is_long) {
		hg_timer_stop(w);
		return;
	}
	/* only short requests feed the EMA (weight 1/2, as Synergy) */
	w->ema_ns = w->ema_ns ? (w->ema_ns + dt) / 2 : dt;
	w->shm->short_ema_ns = w->ema_ns;
}

void
hg_feedback_start(hg_ctx_t *c)
{
	hg_ctx_t *w = hg_self(c);

	hg_cur_req(w)->is_long = 1;
	hg_timer_start(w);
}

void
hg_feedback_finished(hg_ctx_t *c)
{
	hg_timer_stop(hg_self(c));
}

void
hg_ctx_stats(hg_ctx_t *c, struct hg_ctx_stats *s)
{
	s->preempted = c->preempted;
	s->resumed = c->resumed;
	s->stolen = c->stolen;
	s->short_ema_ns = c->ema_ns;
}

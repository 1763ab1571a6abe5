/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Which request a worker takes next (design.md §5): Synergy's Algorithm 2
 * (the wait queue, its own queues, its own preempted requests, stealing
 * from the app's other workers), or a central policy's choice
 * (app_queues.c), as the tenant's dispatch setting says.
 */
#include <rte_ring.h>

#include "../policy/dispatch.h"
#include "client.h"
#include "worker_sched.h"

/* Takes half (at most HG_STEAL_MAX) of the first queue of another context
 * of this process, in order from this one, that holds more than the
 * threshold. */
static int
steal(hg_ctx_t *w, struct hg_msg *m)
{
	hg_app_t *app = w->app;
	uint32_t n = __atomic_load_n(&app->n_ctxs, __ATOMIC_ACQUIRE);
	uint32_t thr = LOAD(app->steer->steal_threshold), i, core, cnt, k;

	for (i = 1; i < n; i++) {
		hg_ctx_t *v = app->ctxs[(w->n + i) % n];

		for (core = 0; v != NULL && core < app->n_cores; core++) {
			cnt = rte_ring_count(v->ring[core][HG_RING_RX]);
			if (cnt <= thr)
				continue;
			k = cnt / 2 ? cnt / 2 : 1;
			k = k < HG_STEAL_MAX ? k : HG_STEAL_MAX;
			w->stash_n = rte_ring_mc_rts_dequeue_burst_elem(
				v->ring[core][HG_RING_RX], w->stash,
				sizeof(w->stash[0]), k, NULL);
			w->stash_i = 0;
			w->stolen += w->stash_n;
			if (hg_poll_local(w, m))
				return 1;
		}
	}
	return 0;
}

/* Synergy's Algorithm 2: the order is the policy's (policy/dispatch.c,
 * which bench/policies simulates), taking from each source is ours. A
 * switch to a resumed request returns here only when this green thread
 * is needed again: the caller then looks afresh. */
static int
pick(hg_ctx_t *w, struct hg_msg *m)
{
	const struct hg_steer_shm *st = w->app->steer;
	enum hg_src src[5];
	unsigned n, i;

	n = hg_synergy_order(LOAD(w->app->shm->check_wait_queue) != 0,
			     LOAD(st->wait_queue) != 0, LOAD(st->steal) != 0,
			     w->cur != NULL, src);
	for (i = 0; i < n; i++) {
		switch (src[i]) {
		case HG_SRC_WAIT_QUEUE:
			if (hg_resume_waiting(w))
				return PICK_SWITCHED;
			break;
		case HG_SRC_LOCAL:
			if (hg_poll_local(w, m))
				return PICK_MSG;
			break;
		case HG_SRC_OWN_PREEMPTED:
			if (hg_resume(w, hg_own_pop(w)))
				return PICK_SWITCHED;
			break;
		case HG_SRC_STEAL:
			if (steal(w, m))
				return PICK_MSG;
			break;
		}
	}
	return PICK_NONE;
}

/* The central policies (cfcfs, darc, fc: app_queues.c). A worker's stash
 * and the wait queue keep what Synergy left there when the policy
 * changed, so that a change under load loses nothing. */
static int
pick_central(hg_ctx_t *w, struct hg_msg *m, enum hg_dispatch p)
{
	int green = w->cur != NULL;

	if (w->stash_i < w->stash_n && hg_poll_local(w, m))
		return PICK_MSG;
	if (hg_appq_take(w, m, p))
		return PICK_MSG;
	if (green && LOAD(w->app->steer->wait_queue) && hg_resume_waiting(w))
		return PICK_SWITCHED;
	if (green && hg_resume(w, hg_own_pop(w)))
		return PICK_SWITCHED;
	return PICK_NONE;
}

int
hg_pick(hg_ctx_t *w, struct hg_msg *m)
{
	uint32_t p = LOAD(w->app->steer->dispatch);

	if (p == HG_DISPATCH_SYNERGY || p >= HG_DISPATCH_N) {
		int r = pick(w, m);

		if (r != PICK_NONE || !hg_appq_pending(w->app))
			return r;
		return pick_central(w, m, HG_DISPATCH_CFCFS);
	}
	return pick_central(w, m, (enum hg_dispatch)p);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Green threads (gt.h) on the app's workers, Synergy's mechanism for
 * preemption: the app's table of them (a preempted request is named in
 * the shared wait queue by a handle any worker of the app can resume),
 * the switch between them on a worker, preemption at hg_yield, and
 * hg_run, which runs a worker's function on the first of them.
 */
#include <errno.h>
#include <pthread.h>

#include "../policy/dispatch.h"
#include "client.h"
#include "worker_sched.h"

/* ---- the app's green-thread table ---- */

static void gt_entry(void *arg);

static struct hg_gt *
gt_create(hg_app_t *app)
{
	struct hg_gt *gt = hg_gt_new(gt_entry, NULL);
	uint32_t i;

	if (gt == NULL)
		return NULL;
	pthread_mutex_lock(&app->gt_lock);
	for (i = 0; i < HG_MAX_GT && app->gt[i] != NULL; i++)
		;
	if (i < HG_MAX_GT) {
		gt->idx = i;
		gt->gen = ++app->gt_gen[i];
		__atomic_store_n(&app->gt[i], gt, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&app->gt_lock);
	if (i == HG_MAX_GT) {
		hg_gt_free(gt);
		return NULL;
	}
	return gt;
}

static void
gt_destroy(hg_app_t *app, struct hg_gt *gt)
{
	pthread_mutex_lock(&app->gt_lock);
	app->gt[gt->idx] = NULL;
	pthread_mutex_unlock(&app->gt_lock);
	hg_gt_free(gt);
}

static uint64_t
gt_handle(const struct hg_gt *gt)
{
	return (uint64_t)gt->gen << 32 | gt->idx;
}

/* A handle read from the shared wait queue: garbage yields NULL. */
static struct hg_gt *
gt_lookup(hg_app_t *app, uint64_t h)
{
	uint32_t idx = (uint32_t)h;
	struct hg_gt *gt;

	if (idx >= HG_MAX_GT)
		return NULL;
	gt = __atomic_load_n(&app->gt[idx], __ATOMIC_ACQUIRE);
	return gt != NULL && gt->gen == (uint32_t)(h >> 32) ? gt : NULL;
}

void
hg_green_free_all(hg_app_t *app)
{
	uint32_t i;

	for (i = 0; i < HG_MAX_GT; i++)
		if (app->gt[i] != NULL)
			gt_destroy(app, app->gt[i]);
}

/* ---- scheduling green threads on a worker ---- */

static void
own_push(hg_ctx_t *w, struct hg_gt *gt)
{
	gt->next = NULL;
	if (w->own_tail)
		w->own_tail->next = gt;
	else
		w->own_head = gt;
	w->own_tail = gt;
}

struct hg_gt *
hg_own_pop(hg_ctx_t *w)
{
	struct hg_gt *gt = w->own_head;

	if (gt != NULL && (w->own_head = gt->next) == NULL)
		w->own_tail = NULL;
	return gt;
}

/* Queues a preempted green thread once its stack pointer is saved, i.e.
 * after the switch away from it: before that, another worker that took it
 * from the wait queue would jump to a stale stack. */
static void
after_switch(hg_ctx_t *w)
{
	struct hg_gt *gt = w->publish;
	struct hg_wq_entry e;

	if (gt == NULL)
		return;
	w->publish = NULL;
	e = (struct hg_wq_entry){ .handle = gt_handle(gt), .rx_tsc = gt->req.rx_tsc };
	if (!LOAD(w->app->steer->wait_queue) ||
	    rte_ring_mp_rts_enqueue_bulk_elem(w->app->wq, &e, sizeof(e), 1, NULL) == 0)
		own_push(w, gt);	/* wait queue off or full: resumed here */
}

/* Runs next on this worker; returns when the caller's green thread runs
 * again, possibly on another worker (re-read hg_worker_now). */
static void
switch_to(hg_ctx_t *w, struct hg_gt *next)
{
	struct hg_gt *me = w->cur;

	w->cur = next;
	hg_gt_switch(&me->sp, next->sp);
	after_switch(hg_worker_now());
}

/* Idle green threads number at most the requests preempted at once plus
 * the workers; they are freed when hg_run returns. */
static void
idle_push(hg_ctx_t *w, struct hg_gt *gt)
{
	gt->next = w->idle;
	w->idle = gt;
}

static struct hg_gt *
take_idle(hg_ctx_t *w)
{
	struct hg_gt *gt = w->idle;

	if (gt != NULL)
		w->idle = gt->next;
	return gt;
}

/* A fresh green thread runs the worker's function from the top. */
static void
gt_entry(void *arg)
{
	hg_ctx_t *w = hg_worker_now();

	(void)arg;
	after_switch(w);
	w->fn(w, w->fn_arg);
	w = hg_worker_now();
	hg_req_end(w);
	hg_gt_switch(&w->cur->sp, w->main_sp);
	__builtin_unreachable();
}

/* Preempts the running long request: it goes to the wait queue (after
 * the switch) and an idle or new green thread takes new work. */
static void
preempt(hg_ctx_t *w)
{
	struct hg_gt *next = take_idle(w);

	if (next == NULL && (next = gt_create(w->app)) == NULL)
		return;		/* out of memory: keep running */
	hg_timer_stop(w);
	w->preempted++;
	w->publish = w->cur;
	switch_to(w, next);
	/* resumed by some worker, whose timer now runs for this request */
	w = hg_worker_now();
	w->resumed++;
	hg_timer_start(w);
}

void
hg_yield(hg_ctx_t *c)
{
	hg_ctx_t *w = hg_self(c);

	if (!__atomic_load_n(&w->shm->preempt, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&w->shm->preempt, 0, __ATOMIC_RELAXED);
	/* the central policies run every request to completion */
	if (LOAD(w->app->steer->dispatch) != HG_DISPATCH_SYNERGY)
		return;
	if (w->cur != NULL && hg_cur_req(w)->is_long &&
	    __atomic_load_n(&w->shm->in_long, __ATOMIC_RELAXED))
		preempt(w);
}

int
hg_resume(hg_ctx_t *w, struct hg_gt *th)
{
	if (th == NULL)
		return 0;
	hg_park_done(w);
	idle_push(w, w->cur);
	switch_to(w, th);
	return 1;
}

int
hg_resume_waiting(hg_ctx_t *w)
{
	struct hg_gt *th = NULL;
	struct hg_wq_entry e;
	unsigned n;

	/* anything that is not one of our green threads is dropped */
	for (n = 0; th == NULL && n < HG_WQ_SIZE; n++) {
		if (rte_ring_mc_rts_dequeue_bulk_elem(w->app->wq, &e, sizeof(e), 1, NULL) == 0)
			return 0;
		th = gt_lookup(w->app, e.handle);
	}
	return hg_resume(w, th);
}

int
hg_run(hg_ctx_t *w, hg_worker_fn fn, void *arg)
{
	struct hg_gt *gt;

	if (hg_worker_now() != NULL)
		return hg_fail(EBUSY, "hg_run is already running on this thread");
	gt = gt_create(w->app);
	if (gt == NULL)
		return hg_fail(ENOMEM, "cannot make a green thread");
	w->fn = fn;
	w->fn_arg = arg;
	w->cur = gt;
	hg_worker_set(w);
	hg_gt_switch(&w->main_sp, gt->sp);
	/* fn returned in w->cur; we are back on the thread's own stack */
	gt_destroy(w->app, w->cur);
	w->cur = NULL;
	while ((gt = take_idle(w)) != NULL)
		gt_destroy(w->app, gt);
	while ((gt = hg_own_pop(w)) != NULL)
		gt_destroy(w->app, gt);
	hg_worker_set(NULL);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The worker scheduler: request steering on the application side (DESIGN
 * §5, Synergy §II):
 * Algorithm 2's choice of the next request, work stealing, the wait queue
 * of preempted long requests, green-thread scheduling, the feedback API
 * and the per-worker EMA of short service time that sizes the quantum.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "../common/hg_util.h"
#include "../policy/coresync.h"
#include "../policy/dispatch.h"
#include "client.h"

#define EMA_DEFAULT_NS 5000u	/* until a short request has been seen */


/* CLOCK_MONOTONIC, the daemon's clock too; replaceable by tests. */
uint64_t (*hg_clock_ns)(void) = hg_now_ns;

static uint64_t
now_ns(void)
{
	return hg_clock_ns();
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* ---- requests, the EMA and the long-request timer ---- */

static struct hg_req *
cur_req(hg_ctx_t *w)
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

/* Tells the daemon (the timer) that this worker runs a long request. */
static void
timer_start(hg_ctx_t *w)
{
	/* a flag set for the previous long request must not cut this one */
	__atomic_store_n(&w->shm->preempt, 0, __ATOMIC_RELAXED);
	w->shm->quantum_ns = quantum(w);
	w->shm->long_start_ns = now_ns();
	__atomic_store_n(&w->shm->in_long, 1, __ATOMIC_RELEASE);
}

static void
timer_stop(hg_ctx_t *w)
{
	__atomic_store_n(&w->shm->in_long, 0, __ATOMIC_RELEASE);
}

static void
req_begin(hg_ctx_t *w)
{
	struct hg_req *r = cur_req(w);

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
	struct hg_req *r = cur_req(w);
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
		timer_stop(w);
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

	cur_req(w)->is_long = 1;
	timer_start(w);
}

void
hg_feedback_finished(hg_ctx_t *c)
{
	timer_stop(hg_self(c));
}

void
hg_ctx_stats(hg_ctx_t *c, struct hg_ctx_stats *s)
{
	s->preempted = c->preempted;
	s->resumed = c->resumed;
	s->stolen = c->stolen;
	s->short_ema_ns = c->ema_ns;
}

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

static struct hg_gt *
own_pop(hg_ctx_t *w)
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
	    rte_ring_mp_enqueue_elem(w->app->wq, &e, sizeof(e)) != 0)
		own_push(w, gt);	/* wait queue off or full: resumed here */
}

/* Runs next on this worker; returns when the caller's green thread runs
 * again, possibly on another worker (re-read hg_tls_worker). */
static void
switch_to(hg_ctx_t *w, struct hg_gt *next)
{
	struct hg_gt *me = w->cur;

	w->cur = next;
	hg_gt_switch(&me->sp, next->sp);
	after_switch(hg_tls_worker);
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
	hg_ctx_t *w = hg_tls_worker;

	(void)arg;
	after_switch(w);
	w->fn(w, w->fn_arg);
	w = hg_tls_worker;
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
	timer_stop(w);
	w->preempted++;
	w->publish = w->cur;
	switch_to(w, next);
	/* resumed by some worker, whose timer now runs for this request */
	w = hg_tls_worker;
	w->resumed++;
	timer_start(w);
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
	if (w->cur != NULL && cur_req(w)->is_long &&
	    __atomic_load_n(&w->shm->in_long, __ATOMIC_RELAXED))
		preempt(w);
}

static void park_done(hg_ctx_t *w);

/* Switches to a preempted request; the current green thread (in hg_recv,
 * between requests) parks as idle until this worker needs it again. The
 * worker has work: a request to park it made while idle is withdrawn. */
static int
resume(hg_ctx_t *w, struct hg_gt *th)
{
	if (th == NULL)
		return 0;
	park_done(w);
	idle_push(w, w->cur);
	switch_to(w, th);
	return 1;
}

/* Resumes a preempted request from the app's wait queue. */
static int
resume_waiting(hg_ctx_t *w)
{
	struct hg_gt *th = NULL;
	struct hg_wq_entry e;
	unsigned n;

	/* anything that is not one of our green threads is dropped */
	for (n = 0; th == NULL && n < HG_WQ_SIZE; n++) {
		if (rte_ring_mc_dequeue_elem(w->app->wq, &e, sizeof(e)) != 0)
			return 0;
		th = gt_lookup(w->app, e.handle);
	}
	return resume(w, th);
}

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
			w->stash_n = rte_ring_mc_dequeue_burst_elem(
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

enum { PICK_NONE, PICK_MSG, PICK_SWITCHED };

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
			if (resume_waiting(w))
				return PICK_SWITCHED;
			break;
		case HG_SRC_LOCAL:
			if (hg_poll_local(w, m))
				return PICK_MSG;
			break;
		case HG_SRC_OWN_PREEMPTED:
			if (resume(w, own_pop(w)))
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
	if (green && LOAD(w->app->steer->wait_queue) && resume_waiting(w))
		return PICK_SWITCHED;
	if (green && resume(w, own_pop(w)))
		return PICK_SWITCHED;
	return PICK_NONE;
}

/* The tenant's dispatch policy now; requests a central policy left in
 * the app's queues are taken by any policy. */
static int
pick_any(hg_ctx_t *w, struct hg_msg *m)
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

/* ---- idle workers: poll, then park as the tenant's policy says ---- */

static uint64_t
poll_ns(const hg_ctx_t *w)
{
	return w->app->spin_ns >= 0 ? (uint64_t)w->app->spin_ns
				    : LOAD(w->app->steer->poll_ns);
}

/* Asks the daemon to let this worker park (core allocation, CoreSync
 * Algorithm 1): a fresh request in its control block, and one ring of
 * the tenant's park bell per idle period, so the slow path looks now
 * rather than at its next housekeeping tick. */
static void
park_ask(hg_ctx_t *w)
{
	uint64_t one = 1;

	if (w->parking)
		return;
	if (++w->park_seq == 0)
		w->park_seq = 1;
	w->parking = 1;
	__atomic_store_n(&w->shm->park, w->park_seq, __ATOMIC_RELEASE);
	if (w->app->park_bell >= 0 &&
	    write(w->app->park_bell, &one, sizeof(one)) < 0 && errno != EAGAIN)
		w->app->park_bell = -1;	/* the daemon will see it at its tick */
}

/* Work came, or the worker is back from its doorbell: nothing stands. */
static void
park_done(hg_ctx_t *w)
{
	if (!w->parking)
		return;
	w->parking = 0;
	__atomic_store_n(&w->shm->park, 0, __ATOMIC_RELEASE);
}

/* A static worker never blocks, so it looks for the daemon going away
 * itself, once a millisecond. */
static int
daemon_gone(hg_ctx_t *w, uint64_t now)
{
	struct pollfd p = { .fd = w->app->sock, .events = POLLRDHUP };

	if (now < w->alive_check_ns)
		return 0;
	w->alive_check_ns = now + 1000000u;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* One step of a worker that found nothing for `idle` ns: poll on (0), or
 * ask to park and block on the doorbell until the daemon delivers, wakes
 * it or the deadline passes (1). Whether it leaves RX steering (parks)
 * or stays allocated is the daemon's (coresync: Algorithm 1; shenango: at
 * once). On CoreSync's dedicated cores a worker the daemon keeps polls;
 * on a CPU shared with the app's other workers its polling would delay
 * the very request it waits for, so it waits on its doorbell instead,
 * still steered to, and the daemon's delay check rings it to steal. */
static int
idle_step(hg_ctx_t *w, uint64_t idle, uint64_t deadline, uint64_t now)
{
	int r;

	if (idle < poll_ns(w)) {
		rte_pause();
		return 0;
	}
	/* static: always running; past poll-us it yields between looks */
	if (LOAD(w->app->steer->core_policy) == HG_CORE_STATIC) {
		park_done(w);
		if (daemon_gone(w, now))
			return hg_fail(ENOTCONN, "hourglassd went away");
		sched_yield();
		return 0;
	}
	park_ask(w);
	hg_appq_sleeping(w);
	r = hg_wait(w, deadline, now);
	park_done(w);
	return r < 0 ? r : 1;
}

/* Polls, then parks (idle_step) until there is work, the deadline or the
 * daemon going away. Waiting is real time: the injectable clock is for
 * stamping requests. */
int
hg_recv(hg_ctx_t *c, struct hg_msg *m, long timeout_us)
{
	hg_ctx_t *w = hg_self(c);
	uint64_t now = hg_now_ns(), idle_since = 0, deadline = 0;
	int r;

	if (timeout_us > 0)
		deadline = now + (uint64_t)timeout_us * 1000u;
	hg_req_end(w);	/* the previous request, if it got no reply */
	for (;;) {
		r = pick_any(w, m);
		w = hg_self(c);
		if (r == PICK_MSG) {
			park_done(w);
			/* a central policy classified it as it queued it */
			if (LOAD(w->app->steer->dispatch) == HG_DISPATCH_SYNERGY)
				w->cls = hg_classify(w->app, m);
			req_begin(w);
			return 1;
		}
		if (r == PICK_SWITCHED) {
			idle_since = 0;
			continue;
		}
		if (timeout_us == 0)
			return 0;
		now = hg_now_ns();
		if (deadline != 0 && now >= deadline) {
			park_done(w);
			return 0;
		}
		if (idle_since == 0)
			idle_since = now;
		r = idle_step(w, now - idle_since, deadline, now);
		if (r < 0)
			return r;
		if (r > 0)
			idle_since = 0;
	}
}

/* The burst path (hourglass.h): the worker's own queues only, in one
 * dequeue per ring; what the scheduler would add (stealing, the wait
 * queue, classes) is the single path's. */
int
hg_recv_burst(hg_ctx_t *c, struct hg_msg *m, unsigned n)
{
	hg_ctx_t *w = hg_self(c);
	const hg_app_t *app = w->app;
	struct hg_desc d[HG_BURST_MAX];
	unsigned got = 0, k, i, core;

	hg_req_end(w);	/* a request taken singly, if it got no reply */
	n = n < HG_BURST_MAX ? n : HG_BURST_MAX;
	while (got < n && w->stash_i < w->stash_n)
		got += hg_desc_to_msg(app, &w->stash[w->stash_i++], &m[got]);
	for (i = 0; i < app->n_cores && got < n; i++) {
		core = (w->rx_next + i) % app->n_cores;
		k = rte_ring_mc_dequeue_burst_elem(w->ring[core][HG_RING_RX], d,
						   sizeof(d[0]), n - got, NULL);
		for (unsigned j = 0; j < k; j++)
			got += hg_desc_to_msg(app, &d[j], &m[got]);
		if (k > 0)
			w->rx_next = core + 1;
	}
	return (int)got;
}

int
hg_run(hg_ctx_t *w, hg_worker_fn fn, void *arg)
{
	struct hg_gt *gt;

	if (hg_tls_worker != NULL)
		return hg_fail(EBUSY, "hg_run is already running on this thread");
	gt = gt_create(w->app);
	if (gt == NULL)
		return hg_fail(ENOMEM, "cannot make a green thread");
	w->fn = fn;
	w->fn_arg = arg;
	w->cur = gt;
	hg_tls_worker = w;
	hg_gt_switch(&w->main_sp, gt->sp);
	/* fn returned in w->cur; we are back on the thread's own stack */
	gt_destroy(w->app, w->cur);
	w->cur = NULL;
	while ((gt = take_idle(w)) != NULL)
		gt_destroy(w->app, gt);
	while ((gt = own_pop(w)) != NULL)
		gt_destroy(w->app, gt);
	hg_tls_worker = NULL;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The mechanism of the central dispatch policies (cfcfs, darc, fc): the
 * app's own queues, in process memory, that its idle workers fill from
 * every context's RX rings and take from, under a spinlock held for a few
 * queue operations. Which queue a request goes to and which a worker
 * takes from are the policy's (policy/dispatch.c); no thread of its own
 * dispatches, so dispatching costs no core.
 *
 *   cfcfs  one central FIFO; an idle worker drains the rings into it and
 *          takes the head, so a request never waits at a busy worker.
 *   darc   one FIFO per class; an idle worker drains and classifies, then
 *          takes what Algorithm 1 lets it (hg_darc_pick); completions
 *          feed the profile (hg_darc_complete).
 *   fc     the idle worker that wins the combiner try-lock drains the
 *          rings outside the queue lock and hands one request to each
 *          other idle worker's own queue, the rest to the central one,
 *          which it and whoever is free next take from.
 *
 * A worker about to block rings another blocked worker's doorbell while
 * requests wait here: the daemon rings only the context it delivered to,
 * and that worker may be busy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_pause.h>
#include <rte_ring.h>

#include "../policy/dispatch.h"
#include "client.h"

#define HG_APPQ_CAP   4096u	/* requests a central or class queue holds */
#define HG_APPQ_OWN   256u	/* ... a worker's own queue (fc) */
#define HG_DRAIN_MAX  64u	/* descriptors one drain takes */

struct hg_appq {
	int lock;
	uint32_t n;			/* requests queued here, all queues */
	uint64_t idle;			/* workers (ctx index) polling for work */
	struct hg_darc darc;
	struct hg_fc fc;
	struct hg_dq_fifo central, typed[HG_CLASSES], own[HG_MAX_CTX];
	struct hg_dq_req central_mem[HG_APPQ_CAP];
	struct hg_dq_req typed_mem[HG_CLASSES][HG_APPQ_CAP];
	struct hg_dq_req own_mem[HG_MAX_CTX][HG_APPQ_OWN];
};

_Static_assert(sizeof(struct hg_desc) - sizeof(uint64_t) ==
	       sizeof(((struct hg_dq_req *)0)->data),
	       "a descriptor but its timestamp fits a policy request's data");

static void
lock(struct hg_appq *q)
{
	while (__atomic_exchange_n(&q->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&q->lock, __ATOMIC_RELAXED))
			rte_pause();
}

static void
unlock(struct hg_appq *q)
{
	__atomic_store_n(&q->lock, 0, __ATOMIC_RELEASE);
}

/* The app's queues, made on first use: an app that never leaves Synergy
 * (hg-idle holds a thousand tenants) pays nothing. */
static struct hg_appq *
appq(hg_app_t *app)
{
	struct hg_appq *q = __atomic_load_n(&app->q, __ATOMIC_ACQUIRE), *none = NULL;
	uint32_t i;

	if (q != NULL)
		return q;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	hg_dq_fifo_init(&q->central, q->central_mem, HG_APPQ_CAP);
	for (i = 0; i < HG_CLASSES; i++)
		hg_dq_fifo_init(&q->typed[i], q->typed_mem[i], HG_APPQ_CAP);
	for (i = 0; i < HG_MAX_CTX; i++)
		hg_dq_fifo_init(&q->own[i], q->own_mem[i], HG_APPQ_OWN);
	hg_darc_init(&q->darc, HG_MAX_CTX);
	hg_fc_init(&q->fc);
	if (!__atomic_compare_exchange_n(&app->q, &none, q, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		free(q);
		q = none;
	}
	return q;
}

struct hg_darc *
hg_appq_darc(hg_app_t *app)
{
	return app->q != NULL ? &app->q->darc : NULL;
}

void
hg_appq_free(hg_app_t *app)
{
	free(app->q);
	app->q = NULL;
}

int
hg_appq_pending(const hg_app_t *app)
{
	const struct hg_appq *q = __atomic_load_n(&app->q, __ATOMIC_ACQUIRE);

	return q != NULL && __atomic_load_n(&q->n, __ATOMIC_RELAXED) != 0;
}

static uint32_t
classify(const hg_app_t *app, const struct hg_desc *d)
{
	struct hg_msg m;

	return hg_desc_to_msg(app, d, &m) ? hg_classify(app, &m) : 0;
}

static struct hg_dq_req
to_req(const hg_app_t *app, const struct hg_desc *d, uint32_t worker)
{
	struct hg_dq_req r = { .arrival_ns = d->tsc, .cls = classify(app, d),
			       .flow = worker };

	memcpy(r.data, d, sizeof(r.data));
	return r;
}

static void
to_desc(const struct hg_dq_req *r, struct hg_desc *d)
{
	memcpy(d, r->data, sizeof(r->data));
	d->tsc = r->arrival_ns;
}

/* Up to max descriptors off every context's RX rings, from w's on. */
static uint32_t
drain(hg_ctx_t *w, struct hg_desc *out, uint32_t max)
{
	hg_app_t *app = w->app;
	uint32_t n = __atomic_load_n(&app->n_ctxs, __ATOMIC_ACQUIRE), got = 0;
	uint32_t i, core;

	for (i = 0; i < n && got < max; i++) {
		hg_ctx_t *v = app->ctxs[(w->n + i) % n];

		for (core = 0; v != NULL && core < app->n_cores && got < max; core++)
			got += rte_ring_mc_rts_dequeue_burst_elem(
				v->ring[core][HG_RING_RX], out + got,
				sizeof(*out), max - got, NULL);
	}
	return got;
}

/* Room left in the queues a drain fills: any class must fit. */
static uint32_t
room(const struct hg_appq *q, enum hg_dispatch p)
{
	uint32_t most = q->central.n, c;

	for (c = 0; p == HG_DISPATCH_DARC && c < HG_CLASSES; c++)
		most = q->typed[c].n > most ? q->typed[c].n : most;
	most = HG_APPQ_CAP - most;
	return most < HG_DRAIN_MAX ? most : HG_DRAIN_MAX;
}

/* cfcfs and darc: the worker drains under the lock. */
static void
fill_locked(hg_ctx_t *w, struct hg_appq *q, enum hg_dispatch p)
{
	struct hg_desc d[HG_DRAIN_MAX];
	struct hg_dq_req r;
	uint32_t n = drain(w, d, room(q, p)), i;

	for (i = 0; i < n; i++) {
		r = to_req(w->app, &d[i], w->n);
		hg_dq_push(p == HG_DISPATCH_DARC ? &q->typed[r.cls] : &q->central, &r);
	}
	q->n += n;
}

/* fc, steps 1-4: the combiner drains outside the lock, then hands out. */
static void
combine(hg_ctx_t *w, struct hg_appq *q)
{
	struct hg_desc d[HG_DRAIN_MAX];
	struct hg_dq_req r;
	uint64_t idle;
	uint32_t n, i;
	int to;

	if (!hg_fc_try_combine(&q->fc, (int)w->n))
		return;
	n = drain(w, d, room(q, HG_DISPATCH_FC));
	lock(q);
	idle = q->idle;
	for (i = 0; i < n; i++) {
		r = to_req(w->app, &d[i], w->n);
		to = hg_fc_target(&q->fc, &idle, (int)w->n);
		if (to < 0 || hg_dq_push(&q->own[to], &r) != 0)
			hg_dq_push(&q->central, &r);
	}
	q->n += n;
	unlock(q);
	hg_fc_release(&q->fc, (int)w->n);
}

/* The request the policy gives worker w, from the queues (locked). */
static int
take_locked(hg_ctx_t *w, struct hg_appq *q, enum hg_dispatch p,
	    struct hg_dq_req *r)
{
	uint64_t head[HG_CLASSES];
	uint32_t c;
	int pick;

	/* requests a policy left here when it changed go first, any kind */
	if (hg_dq_pop(&q->own[w->n], r) == 0)
		return 1;
	if (p != HG_DISPATCH_DARC || q->central.n > 0)
		return hg_dq_pop(&q->central, r) == 0;
	for (c = 0; c < HG_CLASSES; c++)
		head[c] = q->typed[c].n ? q->typed[c].slot[q->typed[c].head].arrival_ns
					: UINT64_MAX;
	pick = hg_darc_pick(&q->darc, w->n, head);
	return pick >= 0 && hg_dq_pop(&q->typed[pick], r) == 0;
}

/* Requests left in class queues after a change away from darc: any
 * worker takes them, oldest class head first. */
static int
take_typed_locked(struct hg_appq *q, struct hg_dq_req *r)
{
	uint64_t oldest = UINT64_MAX;
	uint32_t c, best = HG_CLASSES;

	for (c = 0; c < HG_CLASSES; c++)
		if (q->typed[c].n &&
		    q->typed[c].slot[q->typed[c].head].arrival_ns < oldest) {
			oldest = q->typed[c].slot[q->typed[c].head].arrival_ns;
			best = c;
		}
	return best < HG_CLASSES && hg_dq_pop(&q->typed[best], r) == 0;
}

/* The workers that may take what waits here: DARC's eligible for the
 * classes with requests, else any. Exact under the lock; without it (a
 * blocking worker's re-check) a hint, looked at again anyway. */
static uint64_t
takers(const struct hg_appq *q, enum hg_dispatch p)
{
	uint64_t able = 0;
	uint32_t c;

	if (q->n == 0)
		return 0;
	if (p != HG_DISPATCH_DARC || !q->darc.active || q->central.n > 0)
		return ~0ull;
	for (c = 0; c < HG_CLASSES; c++)
		if (q->typed[c].n > 0)
			able |= q->darc.eligible[c];
	return able;
}

/* Rings blocked workers in mask (all of them, or the first only): the
 * daemon rings only the context it delivered to, and a worker asleep
 * would leave what waits here behind a busy one. The fence pairs with
 * the one between a worker's arming and its re-check (doorbell.c): either
 * it sees the request queued here or this sees it armed. */
static void
wake(hg_ctx_t *w, uint64_t mask, int all)
{
	hg_app_t *app = w->app;
	uint32_t n = __atomic_load_n(&app->n_ctxs, __ATOMIC_ACQUIRE), i, k;
	uint64_t one = 1;
	hg_ctx_t *v;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 1; i < n; i++) {
		k = (w->n + i) % n;
		v = app->ctxs[k];
		if (v == NULL || k >= 64 || !(mask & (1ull << k)) ||
		    !__atomic_load_n(&v->shm->armed, __ATOMIC_RELAXED) ||
		    !__atomic_exchange_n(&v->shm->armed, 0, __ATOMIC_RELAXED))
			continue;
		if (write(v->bell, &one, sizeof(one)) == sizeof(one) && !all)
			return;
	}
}

/* Locked: the workers but w with requests in their own queues (fc). */
static uint64_t
owners_locked(const struct hg_appq *q, const hg_ctx_t *w, uint32_t n)
{
	uint64_t m = 0;
	uint32_t k;

	for (k = 0; k < n && k < HG_MAX_CTX; k++)
		if (k != w->n && q->own[k].n > 0)
			m |= 1ull << k;
	return m;
}

int
hg_appq_ready(const hg_ctx_t *w)
{
	struct hg_appq *q = __atomic_load_n(&w->app->q, __ATOMIC_ACQUIRE);
	uint32_t p;

	if (q == NULL || __atomic_load_n(&q->n, __ATOMIC_RELAXED) == 0)
		return 0;
	p = __atomic_load_n(&w->app->steer->dispatch, __ATOMIC_RELAXED);
	/* a hint, read without the lock: the worker looks again anyway */
	return (takers(q, (enum hg_dispatch)p) >> w->n) & 1;
}

int
hg_appq_take(hg_ctx_t *w, struct hg_msg *m, enum hg_dispatch p)
{
	struct hg_appq *q = appq(w->app);
	struct hg_dq_req r;
	struct hg_desc d;
	uint64_t able, owners;
	int got;

	if (q == NULL)
		return 0;
	if (p == HG_DISPATCH_FC)
		combine(w, q);
	lock(q);
	/* DARC reserves among the workers there are (the next reservation
	 * uses a changed count) */
	q->darc.n_workers = __atomic_load_n(&w->app->n_ctxs, __ATOMIC_ACQUIRE);
	if (q->darc.n_workers == 0 || q->darc.n_workers > HG_DQ_WORKERS)
		q->darc.n_workers = HG_DQ_WORKERS;
	if (p != HG_DISPATCH_FC)
		fill_locked(w, q, p);
	got = take_locked(w, q, p, &r) ||
	      (p != HG_DISPATCH_DARC && take_typed_locked(q, &r));
	q->n -= got;
	if (got)
		q->idle &= ~(1ull << w->n);
	else
		q->idle |= 1ull << w->n;
	able = takers(q, p) & ~(1ull << w->n);
	owners = owners_locked(q, w, q->darc.n_workers);
	unlock(q);
	if (owners != 0)		/* handed to it: it must look */
		wake(w, owners, 1);
	if (able & ~owners)
		wake(w, able & ~owners, 0);
	if (!got)
		return 0;
	to_desc(&r, &d);
	w->rx_tsc = d.tsc;
	w->cls = r.cls;
	return hg_desc_to_msg(w->app, &d, m);
}

void
hg_appq_sleeping(hg_ctx_t *w)
{
	struct hg_appq *q = __atomic_load_n(&w->app->q, __ATOMIC_ACQUIRE);

	if (q == NULL)
		return;
	lock(q);
	q->idle &= ~(1ull << w->n);	/* blocked: fc hands it nothing */
	unlock(q);
}

void
hg_appq_done(hg_ctx_t *w, uint64_t service_ns)
{
	struct hg_appq *q = __atomic_load_n(&w->app->q, __ATOMIC_ACQUIRE);

	if (q == NULL ||
	    __atomic_load_n(&w->app->steer->dispatch, __ATOMIC_RELAXED) !=
	    HG_DISPATCH_DARC)
		return;
	lock(q);
	if (hg_darc_complete(&q->darc, w->cls, service_ns))
		__atomic_store_n(&w->app->shm->darc_updates, q->darc.updates,
				 __ATOMIC_RELAXED);
	unlock(q);
}

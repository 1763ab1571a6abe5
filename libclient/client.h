/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libhgclient internals. Layers, each using only those above it:
 * thread_state.c; rx.c; class_stats.c; app_queues.c, doorbell.c;
 * worker_pick.c, worker_park.c, green_threads.c (the worker scheduler,
 * worker_sched.h); tx.c, attach.c; rpc.c.
 */
#ifndef HG_LIBCLIENT_CLIENT_H
#define HG_LIBCLIENT_CLIENT_H

#include <pthread.h>
#include <stdarg.h>

#include <rte_ring.h>

#include "../proto/hg_shm.h"
#include "../proto/hg_wire.h"
#include "gt.h"
#include "hourglass.h"

_Static_assert(HG_MSG_MAX == HG_MAX_PAYLOAD, "the public payload maximum is the wire's");

#define HG_CACHE     32u	/* free buffers a context keeps per core */
#define HG_STEAL_MAX 32u	/* requests taken in one steal */
#define HG_MAX_GT    4096u	/* green threads per app process */

struct hg_app {
	int sock;
	pthread_mutex_t lock;	/* serialises control calls */
	uint64_t next_id;
	uint8_t *base;
	size_t size;
	const struct hg_region_hdr *hdr;
	uint32_t n_cores;
	uint32_t per_core;	/* buffers per fast-path core */
	uint32_t slot;		/* app slot in the tenant */
	struct hg_app_shm *shm;
	struct rte_ring *wq;	/* this app's wait queue */
	const struct hg_steer_shm *steer;
	int park_bell;		/* the tenant's: rung when a worker asks to park */
	int64_t spin_ns;	/* $HG_SPIN_US: the app's own poll time, or -1
				 * for the tenant's poll-us */
	uint32_t n_ctxs;	/* atomic; ctxs[0..n_ctxs) stay valid */
	hg_ctx_t *ctxs[HG_MAX_CTX];
	/* green threads by handle (index, generation): what goes into the
	 * shared wait queue is checked against this table before use */
	pthread_mutex_t gt_lock;
	struct hg_gt *gt[HG_MAX_GT];
	uint32_t gt_gen[HG_MAX_GT];
	/* the central dispatch policies' queues (app_queues.c), made on
	 * first use; the classifier of raw-port requests */
	struct hg_appq *q;
	int (*classifier)(const void *data, size_t len);
};

struct hg_ctx {
	hg_app_t *app;
	uint32_t id;
	uint32_t rx_next;	/* core whose RX ring is polled first */
	uint64_t rx_tsc;	/* RX timestamp of the request last taken */
	uint32_t tx_next;	/* core hg_sendto tries first */
	struct hg_ctx_shm *shm;
	int bell;		/* the doorbell eventfd, non-blocking */
	int wait_fd;		/* hg_ctx_fd: bell + control socket, or -1 */
	struct rte_ring *ring[HG_MAX_FP_CORES][HG_RING_KINDS];
	uint32_t n_cache[HG_MAX_FP_CORES];
	uint32_t cache[HG_MAX_FP_CORES][HG_CACHE];
	uint32_t n;		/* index in app->ctxs */
	/* requests taken from other contexts (work stealing) */
	uint32_t stash_n, stash_i;
	struct hg_desc stash[HG_STEAL_MAX];
	/* green threads (hg_run) */
	void *main_sp;
	struct hg_gt *cur;		/* running; NULL outside hg_run */
	struct hg_gt *idle;		/* parked in hg_recv, reusable */
	struct hg_gt *own_head, *own_tail;	/* preempted, wait queue off */
	struct hg_gt *publish;		/* preempted, to queue after the switch */
	hg_worker_fn fn;
	void *fn_arg;
	struct hg_req plain;		/* the request outside hg_run */
	uint64_t ema_ns;		/* short service time, weight 1/2 */
	uint32_t cls;			/* the current request's class */
	struct hg_class_block *classes;	/* its counters, in the region */
	uint64_t preempted, resumed, stolen;
	uint32_t park_seq;		/* its last park request */
	uint32_t parking;		/* ... still standing */
	uint64_t alive_check_ns;	/* static: next look for the daemon */
	uint64_t poll_win_ns;	/* how long it polls when idle (poll_window.h);
				   UINT64_MAX at open: all of poll-us */
};

/* struct hg_msg's buf when it names no message (hg_recv found none). */
#define HG_BUF_NONE UINT32_MAX

/* Sets the thread's error text; returns -err for convenience. */
int hg_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a constant message, for the errors an app retries in a
 * loop (a full queue): no formatting on its hot path. */
int hg_fail_fixed(int err, const char *msg);


/* The worker context the calling thread runs hg_run for, NULL outside
 * hg_run (green_threads.c sets it, thread_state.c holds it). Read anew at
 * every call: a green thread may resume on another OS thread (a preempted
 * request, hg_resume), and a compiler keeps a thread-local's address
 * across calls within a function, as if the thread could not change
 * under it. gt_entry read the worker of the thread it had started on
 * after its fn returned on another (NULL once that thread's hg_run had
 * returned: hg-echo crashed at exit after preemptions). Out of line, so
 * that no two reads are merged. */
hg_ctx_t *hg_worker_now(void);
void hg_worker_set(hg_ctx_t *w);

/* The calling thread's worker context when it runs hg_run for the same
 * app (a preempted request may resume on another worker), else ctx. */
static inline hg_ctx_t *
hg_self(hg_ctx_t *ctx)
{
	hg_ctx_t *w = hg_worker_now();

	return w != NULL && w->app == ctx->app ? w : ctx;
}

/* Ends the bookkeeping of the worker's current request. */
void hg_req_end(hg_ctx_t *w);
/* Takes one request from the worker's own queues (stash, then RX rings). */
int hg_poll_local(hg_ctx_t *w, struct hg_msg *m);
/* Is a request waiting for the worker (stash, its RX rings, the app's
 * wait queue)? What a worker re-checks after arming its doorbell. */
int hg_ready(const hg_ctx_t *w);
/* Arms the worker's doorbell and blocks until it rings, the daemon goes
 * (-ENOTCONN) or deadline_ns (CLOCK_MONOTONIC, 0: none) passes (0).
 * Returns 1 when there may be work. */
int hg_wait(hg_ctx_t *w, uint64_t deadline_ns, uint64_t now_ns);
/* m's RPC header, copied out and checked (rx.c); -EPROTO if none. */
struct hg_rpc_hdr;
int hg_rpc_header(const struct hg_msg *m, struct hg_rpc_hdr *h);
/* Fills m from a descriptor the daemon (or a stolen queue) handed over. */
int hg_desc_to_msg(const hg_app_t *app, const struct hg_desc *d, struct hg_msg *m);
void hg_green_free_all(hg_app_t *app);

/* Request classes (class_stats.c): m's class (its RPC type, else the
 * app's classifier's, else 0); one request's numbers into the worker's
 * counters (TSC cycles). */
uint32_t hg_classify(const hg_app_t *app, const struct hg_msg *m);
void hg_class_record(hg_ctx_t *w, uint32_t cls, uint64_t queue_tsc,
		     uint64_t service_tsc);

/* The central dispatch policies (app_queues.c): a request for worker w as
 * policy p gives it (1 with *m filled, 0: none); whether requests wait in
 * the app's queues, and whether any w may take; a worker about to block; a completion (DARC's
 * profile); the queues' memory at detach. */
struct hg_appq;
enum hg_dispatch;
int hg_appq_take(hg_ctx_t *w, struct hg_msg *m, enum hg_dispatch p);
int hg_appq_pending(const hg_app_t *app);
int hg_appq_ready(const hg_ctx_t *w);
void hg_appq_sleeping(hg_ctx_t *w);
void hg_appq_done(hg_ctx_t *w, uint64_t service_ns);
void hg_appq_free(hg_app_t *app);
/* DARC's state, for tests (NULL before the queues are made). */
struct hg_darc *hg_appq_darc(hg_app_t *app);

/* The clock requests are stamped with (tests inject their own). */
extern uint64_t (*hg_clock_ns)(void);

static inline uint8_t *
hg_buf_ptr(const hg_app_t *app, uint32_t buf)
{
	return app->base + app->hdr->buf_off + (uint64_t)buf * HG_BUF_SIZE;
}

#endif /* HG_LIBCLIENT_CLIENT_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libhgclient: the application side of Hourglass.
 *
 * An application attaches to a tenant (one control connection per process),
 * binds ports the tenant owns, and opens one context per worker thread.
 * Each context exchanges datagrams with the daemon through shared-memory
 * rings; no system call is made per message.
 *
 *   hg_app_t *app = hg_attach(NULL, "gold");
 *   hg_bind(app, 7000);
 *   hg_ctx_t *ctx = hg_ctx_open(app);           // per worker thread
 *   struct hg_msg m;
 *   while (hg_recv(ctx, &m, 1000000) == 1)      // wait up to 1 s
 *           hg_send(ctx, &m, m.data, m.len);   // echo back to the sender
 *
 * Errors: functions return a negative errno (or NULL with errno set) and
 * hg_strerror() gives the daemon's one-line reason for the calling thread.
 * This header needs no DPDK headers.
 */
#ifndef HOURGLASS_H
#define HOURGLASS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HG_API __attribute__((visibility("default")))

/* The release this header belongs to; hg_version() is the library's, so an
 * app can tell when it runs against another build than it was compiled
 * with. The soname's number is HG_VERSION_MAJOR. */
#define HG_VERSION_MAJOR 0
#define HG_VERSION_MINOR 26
#define HG_VERSION_PATCH 0
#define HG_VERSION "0.26.0"

#define HG_DEFAULT_CTL "/run/hourglass/app.sock"	/* the app socket */
#define HG_MSG_MAX     1472	/* largest payload (1500-byte MTU) */

typedef struct hg_app hg_app_t;
typedef struct hg_ctx hg_ctx_t;

/* An IPv4 endpoint, both fields in network byte order. */
struct hg_addr {
	uint32_t ip;
	uint16_t port;
};

/* A received datagram. data stays valid until the message is handed back
 * with hg_send() or hg_msg_free(); it may be modified in place. */
struct hg_msg {
	void *data;
	uint32_t len;
	struct hg_addr src;	/* the sender */
	uint16_t local_port;	/* our port it was sent to, network order */
	uint32_t buf;		/* library-private */
};

/* Connects to the daemon (ctl_path NULL = HG_DEFAULT_CTL, or $HG_CTL) and
 * attaches to tenant; maps the tenant's shared region. NULL + errno. */
HG_API hg_app_t *hg_attach(const char *ctl_path, const char *tenant);
/* Steers datagrams for a port of the tenant to this process's contexts. */
HG_API int hg_bind(hg_app_t *app, uint16_t port);
/* Opens a context for the calling worker thread. NULL + errno. */
HG_API hg_ctx_t *hg_ctx_open(hg_app_t *app);
/* Forgets the context locally (the daemon reclaims it when the app goes). */
HG_API void hg_ctx_close(hg_ctx_t *ctx);
/* Closes the control connection and unmaps the region; the daemon then
 * reclaims every context, buffer and port of this app. */
HG_API void hg_detach(hg_app_t *app);

/* Receives one datagram. timeout_us: 0 = don't wait, < 0 = wait forever
 * (until the daemon goes away). An idle worker polls for its window,
 * which it learns within the tenant's poll-us ($HG_SPIN_US, if set,
 * overrides it for the app): none while requests come further apart.
 * Then it parks as the tenant's `policy` says: coresync and shenango ask
 * the daemon and block on the doorbell, static never blocks. A
 * parked worker sleeps on its context's doorbell until the daemon
 * delivers to it or wakes it. Returns 1
 * with *m filled, 0 on timeout, or a negative errno (-ENOTCONN once the
 * daemon is gone); but for 1, *m names no message, and hg_send on it
 * fails with -EINVAL. */
HG_API int hg_recv(hg_ctx_t *ctx, struct hg_msg *m, long timeout_us);

/* ---- bursts ----
 *
 * For a worker that keeps its core and answers at millions of requests a
 * second: up to n datagrams from the context's own queues in
 * one dequeue per ring, without waiting, and replies in one enqueue per
 * ring. Each message received is answered by hg_send_burst, hg_send or
 * hg_msg_free like any other. The burst path has no scheduler: no
 * stealing, no preemption, no per-class measurements; a worker that runs
 * dry waits with hg_recv (which parks it as the tenant's policy says). */
#define HG_BURST_MAX 64
/* Returns how many messages it filled (0..n, at most HG_BURST_MAX). */
HG_API int hg_recv_burst(hg_ctx_t *ctx, struct hg_msg *m, unsigned n);
/* Sends m[0..n) back to their senders, each with its own buffer's first
 * m[i].len bytes (edited in place). Returns how many were queued, in
 * order; the rest are still the caller's (the queue was full: retry or
 * free them), or a negative errno if m[0] is bad. */
HG_API int hg_send_burst(hg_ctx_t *ctx, struct hg_msg *m, unsigned n);

/* ---- event loops ----
 *
 * Each context has a doorbell, an eventfd the daemon writes when it
 * delivers to the context while it is armed. An app with its own event
 * loop (epoll, libevent) waits on it instead of calling a blocking
 * hg_recv:
 *
 *   int fd = hg_ctx_fd(ctx);              // add to epoll for EPOLLIN
 *   for (;;) {
 *           while (hg_recv(ctx, &m, 0) == 1)
 *                   hg_send(ctx, &m, m.data, m.len);
 *           int rc = hg_ctx_arm(ctx);
 *           if (rc < 0)                    // -ENOTCONN: the daemon is gone
 *                   break;
 *           if (rc == 0)                   // armed, nothing came since
 *                   epoll_wait(ep, ev, 8, -1);
 *   }
 *
 * hg_ctx_arm returns 1 (work arrived: don't wait, receive again), 0
 * (armed: the next delivery makes fd readable) or a negative errno:
 * -ENOTCONN once the daemon has gone away, which also makes fd readable
 * (stop waiting on it then). A wake-up is never lost between the last
 * hg_recv and the wait. The fd is owned by the library (closed by
 * hg_detach); hg_ctx_arm drains it. */
HG_API int hg_ctx_fd(hg_ctx_t *ctx);
HG_API int hg_ctx_arm(hg_ctx_t *ctx);

/* Sends len bytes of data back to req's sender, from the port req came to,
 * and hands req back. data may point into req->data. Returns 0, -EMSGSIZE
 * or -EAGAIN (queue full: req is still yours, retry or free it). */
HG_API int hg_send(hg_ctx_t *ctx, struct hg_msg *req, const void *data, size_t len);

/* Sends to an explicit address from local_port (network order). Returns 0,
 * -EMSGSIZE, -ENOBUFS (no free buffer yet) or -EAGAIN (queue full). */
HG_API int hg_sendto(hg_ctx_t *ctx, uint16_t local_port, const struct hg_addr *to,
	      const void *data, size_t len);

/* Hands a received message back without replying. */
HG_API void hg_msg_free(hg_ctx_t *ctx, struct hg_msg *m);

/* ---- RPC ports (README "RPC header") ----
 *
 * On a tenant's RPC ports every request starts with the 32-byte RPC header
 * and every answer must too: the daemon writes the client's new credits
 * into the answer's header, and an answer without one leaves the
 * session's credit in use. hg_rpc_parse reads a request's header;
 * hg_rpc_reply answers with the request's header echoed. */
struct hg_rpc_req {
	uint8_t type;		/* request type (class) */
	uint32_t session;	/* client's session id */
	uint64_t req_id;
	const void *body;	/* the payload after the header */
	size_t body_len;
};

/* Returns 0 with *r filled, or -EPROTO if m carries no RPC request. */
HG_API int hg_rpc_parse(const struct hg_msg *m, struct hg_rpc_req *r);
/* Answers an RPC request with body after the request's header, as
 * hg_send does (body may point into req->data). Returns 0, -EPROTO (not an
 * RPC request), -EMSGSIZE or -EAGAIN (req is still yours). */
HG_API int hg_rpc_reply(hg_ctx_t *ctx, struct hg_msg *req, const void *body, size_t len);

/* ---- request steering (Synergy) ----
 *
 * hg_recv takes requests in this order: if the daemon flagged the app's
 * wait queue as congested, a preempted request from it; else the context's
 * own queue; else the wait queue; else a batch stolen from another context
 * of this process whose queue is longer than the tenant's steal threshold.
 *
 * hg_run runs fn on the calling thread inside reusable green threads. A
 * long request (between hg_feedback_start and hg_feedback_finished) may
 * then be preempted at an hg_yield call when the daemon sees it has run
 * past its quantum while requests wait; it continues later on whichever
 * worker takes it from the wait queue. Short requests always run to
 * completion. Inside hg_run every call uses the calling thread's context
 * whatever ctx it is given, so fn may keep using the ctx it was passed.
 * fn's own thread-local variables are another matter: after an hg_yield
 * it may run on another thread, and a compiler may keep the address of a
 * thread-local it read before the call (the library reads its own anew
 * through a function call at every use). */
typedef void (*hg_worker_fn)(hg_ctx_t *ctx, void *arg);

/* Returns when fn returns (0), or a negative errno. */
HG_API int hg_run(hg_ctx_t *ctx, hg_worker_fn fn, void *arg);
/* Marks the current request as long: its quantum starts now. */
HG_API void hg_feedback_start(hg_ctx_t *ctx);
HG_API void hg_feedback_finished(hg_ctx_t *ctx);
/* A preemption point: one load unless the daemon asked. */
HG_API void hg_yield(hg_ctx_t *ctx);

/* ---- dispatch policies and request classes ----
 *
 * The tenant's `dispatch` setting (hgctl tenant set NAME --dispatch P)
 * chooses how workers take requests, live: synergy (above, the default),
 * cfcfs (one central queue: a worker takes a request only when idle),
 * darc (Perséphone: workers reserved per class, short classes may run on
 * long classes' workers, never the reverse) or fc (flat combining: an
 * idle worker that wins a try-lock hands requests out). None needs a
 * thread of its own. A request's class (0..7) is its RPC header's type;
 * on raw ports, what the classifier returns (-1 or none: class 0). */
HG_API void hg_set_classifier(hg_app_t *app, int (*fn)(const void *data, size_t len));

/* Per-context counters: requests preempted here, resumed here, stolen. */
struct hg_ctx_stats {
	uint64_t preempted, resumed, stolen;
	uint64_t short_ema_ns;
};
HG_API void hg_ctx_stats(hg_ctx_t *ctx, struct hg_ctx_stats *s);

/* The last error's one-line reason for this thread. */
HG_API const char *hg_strerror(void);

/* The library's version, HG_VERSION of the build it came from. */
HG_API const char *hg_version(void);

#ifdef __cplusplus
}
#endif

#endif /* HOURGLASS_H */

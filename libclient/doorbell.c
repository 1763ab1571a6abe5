/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The library's side of the doorbell (proto/hg_shm.h): a worker that
 * found nothing for a short spin arms its context, re-checks, and blocks
 * on the context's eventfd, which the fast path writes when it delivers
 * to an armed context. Event-loop apps wait on the same descriptor
 * (hg_ctx_fd, hg_ctx_arm).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <rte_atomic.h>

#include "../policy/dispatch.h"
#include "client.h"

static int
others_ready(const hg_ctx_t *w)
{
	const hg_app_t *app = w->app;
	uint32_t n = __atomic_load_n(&app->n_ctxs, __ATOMIC_ACQUIRE), i, core;

	for (i = 0; i < n; i++) {
		const hg_ctx_t *v = app->ctxs[i];

		for (core = 0; v != NULL && v != w && core < app->n_cores; core++)
			if (!rte_ring_empty(v->ring[core][HG_RING_RX]))
				return 1;
	}
	return 0;
}

int
hg_ready(const hg_ctx_t *w)
{
	const hg_app_t *app = w->app;
	uint32_t core;

	if (w->stash_i < w->stash_n || hg_appq_ready(w))
		return 1;
	for (core = 0; core < app->n_cores; core++)
		if (!rte_ring_empty(w->ring[core][HG_RING_RX]))
			return 1;
	/* a central policy takes from every context's rings */
	if (__atomic_load_n(&app->steer->dispatch, __ATOMIC_RELAXED) !=
	    HG_DISPATCH_SYNERGY && others_ready(w))
		return 1;
	/* preempted requests wait only for workers inside hg_run, which
	 * take them; a plain hg_recv never looks there */
	if (w->cur == NULL)
		return 0;
	return w->own_head != NULL ||
	       (__atomic_load_n(&app->steer->wait_queue, __ATOMIC_RELAXED) &&
		!rte_ring_empty(app->wq));
}

/* What an event loop waits on: an epoll set of the doorbell and the
 * control socket, made at the first call, so that the loop also wakes when
 * the daemon goes away (the socket hangs up) and hg_ctx_arm says so. */
int
hg_ctx_fd(hg_ctx_t *ctx)
{
	struct epoll_event bell = { .events = EPOLLIN },
			   sock = { .events = EPOLLRDHUP };
	int ep;

	if (ctx->wait_fd >= 0)
		return ctx->wait_fd;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return hg_fail(errno, "epoll: %s", strerror(errno));
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ctx->bell, &bell) < 0 ||
	    (ctx->app->sock >= 0 &&
	     epoll_ctl(ep, EPOLL_CTL_ADD, ctx->app->sock, &sock) < 0)) {
		int rc = hg_fail(errno, "epoll: %s", strerror(errno));

		close(ep);
		return rc;
	}
	ctx->wait_fd = ep;
	return ep;
}

/* An event loop's check that the daemon is still there (hg_wait polls the
 * socket itself while it blocks). */
static int
daemon_hung_up(const hg_ctx_t *w)
{
	struct pollfd p = { .fd = w->app->sock, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Drain first: a ring that raced a disarm (below) left a count that
 * would otherwise end the next wait at once. Then arm, fence, re-check:
 * a request enqueued before the daemon's fence is seen here, one after
 * it finds armed set and rings. */
int
hg_ctx_arm(hg_ctx_t *c)
{
	hg_ctx_t *w = hg_self(c);
	uint64_t v;

	if (w->wait_fd >= 0 && daemon_hung_up(w))
		return hg_fail(ENOTCONN, "hourglassd went away");
	if (read(w->bell, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return hg_fail(errno, "doorbell: %s", strerror(errno));
	__atomic_store_n(&w->shm->armed, 1, __ATOMIC_RELAXED);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!hg_ready(w))
		return 0;
	__atomic_store_n(&w->shm->armed, 0, __ATOMIC_RELAXED);
	return 1;
}

int
hg_wait(hg_ctx_t *w, uint64_t deadline_ns, uint64_t now_ns)
{
	struct pollfd p[2] = {
		{ .fd = w->bell, .events = POLLIN },
		/* the control socket closes when the daemon goes */
		{ .fd = w->app->sock, .events = POLLRDHUP },
	};
	struct timespec ts, *tsp = NULL;
	int rc = hg_ctx_arm(w);

	if (rc != 0)
		return rc < 0 ? rc : 1;
	if (deadline_ns != 0) {
		uint64_t left = deadline_ns > now_ns ? deadline_ns - now_ns : 0;

		ts = (struct timespec){ (time_t)(left / 1000000000u),
					(long)(left % 1000000000u) };
		tsp = &ts;
	}
	rc = ppoll(p, 2, tsp, NULL);
	__atomic_store_n(&w->shm->armed, 0, __ATOMIC_RELAXED);
	if (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))
		return hg_fail(ENOTCONN, "hourglassd went away");
	if (rc < 0 && errno != EINTR)
		return hg_fail(errno, "doorbell: %s", strerror(errno));
	return rc != 0;		/* 0: the deadline passed */
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-echo: a multi-threaded echo server on libhgclient, and the
 * configurable application the benchmarks drive: a payload that starts with
 * the synthetic-work header (proto/hg_wire.h) makes the worker spin for its
 * service time before echoing the payload back unchanged.
 *
 * Workers run under hg_run (green threads). Requests whose service time is
 * at least --long-ns are long: they are bracketed by the feedback API and
 * their spin calls hg_yield() every microsecond of work, so the daemon can
 * preempt them when short requests wait (Synergy, design.md §5).
 *
 * With --event-loop each worker instead waits in its own epoll set on its
 * context's doorbell (hg_ctx_fd, hg_ctx_arm): the shape of an app that has
 * an event loop of its own. No green threads there, so no preemption.
 *
 * With --burst each worker takes up to --burst requests at once
 * (hg_recv_burst), serves them in order and sends the raw echoes back in
 * one hg_send_burst (RPC answers go one by one, through hg_rpc_reply): the
 * shape of an app that keeps up at millions of requests a second. When
 * it runs dry it waits in hg_recv (and parks as the tenant says).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "hg_wire.h"
#include "hourglass.h"
#include "../common/hg_util.h"

#define MAX_THREADS 16
/* A full transmit queue is the daemon holding this tenant back (out of
 * budget) or behind: retry, spinning SEND_SPIN times and then napping
 * ever longer, for at most SEND_WAIT_NS before the answer is dropped.
 * Spinning the whole time would take the apps' CPU from every other
 * tenant's app on it, the victim's among them: the throttled tenant's
 * app would win on the apps' CPU what its budget lost on the fast path. */
#define SEND_SPIN    64
#define SEND_WAIT_NS 100000000ull
#define YIELD_EVERY_NS 1000	/* a yield point per microsecond of work */

/* Counters are shared: a preempted request may finish on another worker. */
static unsigned long served, dropped;
static int failed;
static uint64_t long_ns = 10000;
/* Poll without ever sleeping (the app owns its core). On a VM a sleeping
 * thread can oversleep by milliseconds, which a benchmark would charge to
 * the datapath. */
static int poll_only;
static int event_loop;
static unsigned burst;	/* --burst N: requests taken at once, 0: one */

struct worker {
	pthread_t tid;
	hg_ctx_t *ctx;
};

/* Burns CPU for the requested service time, as a request handler would,
 * with a yield point every YIELD_EVERY_NS of it. Time away (preempted)
 * does not count as work done. */
static void
spin_ns(hg_ctx_t *ctx, uint64_t ns)
{
	while (ns > 0) {
		uint64_t t0 = hg_now_ns(), slice = ns < YIELD_EVERY_NS ? ns : YIELD_EVERY_NS;

		while (hg_now_ns() - t0 < slice)
			;
		ns -= slice;
		hg_yield(ctx);
	}
}

/* The synthetic-work header, at the start of what the client sent after
 * any RPC header. */
static const struct hg_work_hdr *
work_header(const void *body, size_t len)
{
	return len < sizeof(struct hg_work_hdr) ? NULL : body;
}

/* Echoes the request; on an RPC port through hg_rpc_reply, so that the
 * answer carries the header the daemon writes the new credits into. */
static int
answer(hg_ctx_t *ctx, struct hg_msg *m, const struct hg_rpc_req *rq)
{
	return rq != NULL ? hg_rpc_reply(ctx, m, rq->body, rq->body_len)
			  : hg_send(ctx, m, m->data, m->len);
}

/* The request's synthetic work, if it asks for any; returns whether it
 * is an RPC request (*rq then filled). */
static int
work(hg_ctx_t *ctx, struct hg_msg *m, struct hg_rpc_req *rq)
{
	int rpc = hg_rpc_parse(m, rq) == 0;
	const struct hg_work_hdr *h = rpc ? work_header(rq->body, rq->body_len)
					  : work_header(m->data, m->len);

	if (h != NULL && ntohl(h->magic) == HG_WORK_MAGIC &&
	    h->version == HG_WORK_VERSION) {
		uint64_t ns = ntohl(h->service_ns);
		int is_long = ns >= long_ns;

		if (is_long)
			hg_feedback_start(ctx);
		spin_ns(ctx, ns);
		if (is_long)
			hg_feedback_finished(ctx);
	}
	return rpc;
}

/* Waits before retry `tries` of a send the queue refused; 0 while the
 * answer is still worth retrying. */
static int
send_wait(unsigned tries, uint64_t *since)
{
	struct timespec ts = { 0, 0 };

	if (tries < SEND_SPIN)
		return 0;
	if (*since == 0)
		*since = hg_now_ns();
	else if (hg_now_ns() - *since > SEND_WAIT_NS)
		return -1;
	ts.tv_nsec = 1000L << ((tries - SEND_SPIN) / 8 < 8 ? (tries - SEND_SPIN) / 8 : 8); /* 1..256 us */
	nanosleep(&ts, NULL);
	return 0;
}

/* Answers one request, retried while the transmit queue is full. */
static void
reply_one(hg_ctx_t *ctx, struct hg_msg *m, const struct hg_rpc_req *rq)
{
	uint64_t since = 0;
	unsigned tries;
	int rc = 0;

	for (tries = 0;; tries++) {
		rc = answer(ctx, m, rq);
		if (rc != -EAGAIN || send_wait(tries, &since) < 0)
			break;
	}
	if (rc == 0) {
		__atomic_fetch_add(&served, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		hg_msg_free(ctx, m);
	}
}

static void
serve(hg_ctx_t *ctx, struct hg_msg *m)
{
	struct hg_rpc_req rq;

	reply_one(ctx, m, work(ctx, m, &rq) ? &rq : NULL);
}

/* Serves a burst: the raw echoes go back in hg_send_burst's runs, retried
 * while the transmit queue is full; what never fits is freed. */
static void
serve_burst(hg_ctx_t *ctx, struct hg_msg *m, unsigned n)
{
	struct hg_msg raw[HG_BURST_MAX];
	struct hg_rpc_req rq;
	unsigned i, k = 0, sent = 0, tries;
	uint64_t since = 0;
	int rc;

	for (i = 0; i < n; i++) {
		if (work(ctx, &m[i], &rq))
			reply_one(ctx, &m[i], &rq);	/* its own reply header */
		else
			raw[k++] = m[i];
	}
	for (tries = 0; sent < k; tries++) {
		rc = hg_send_burst(ctx, raw + sent, k - sent);
		if (rc < 0)
			break;
		sent += (unsigned)rc;
		if (sent < k && send_wait(tries, &since) < 0)
			break;
	}
	__atomic_fetch_add(&served, sent, __ATOMIC_RELAXED);
	__atomic_fetch_add(&dropped, k - sent, __ATOMIC_RELAXED);
	for (i = sent; i < k; i++)
		hg_msg_free(ctx, &raw[i]);
}

static void
worker_failed(const char *what)
{
	fprintf(stderr, "hg-echo: %s\n", what);
	failed = 1;
	hg_stop = 1;
}

static void
serve_loop(hg_ctx_t *ctx, void *arg)
{
	struct hg_msg m, batch[HG_BURST_MAX];
	int rc;

	(void)arg;
	while (!hg_stop) {
		if (burst > 0 && (rc = hg_recv_burst(ctx, batch, burst)) > 0) {
			serve_burst(ctx, batch, (unsigned)rc);
			continue;
		}
		rc = hg_recv(ctx, &m, poll_only ? 0 : 100000);
		if (rc < 0) {
			worker_failed(hg_strerror());
			break;
		}
		if (rc == 1)
			serve(ctx, &m);
	}
}

static void *
run(void *arg)
{
	struct worker *w = arg;

	if (hg_run(w->ctx, serve_loop, w) < 0)
		worker_failed(hg_strerror());
	return NULL;
}

/* Drain, arm, wait: hg_ctx_arm re-checks after arming, so a request that
 * came after the last hg_recv either makes it return 1 or rings the fd. */
static void *
run_event_loop(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(EPOLL_CLOEXEC), rc = 0;
	struct hg_msg m;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, hg_ctx_fd(w->ctx), &ev) < 0) {
		worker_failed(strerror(errno));
		if (ep >= 0)
			close(ep);
		return NULL;
	}
	while (!hg_stop) {
		while ((rc = hg_recv(w->ctx, &m, 0)) == 1)
			serve(w->ctx, &m);
		if (rc == 0)
			rc = hg_ctx_arm(w->ctx);
		if (rc < 0) {
			worker_failed(hg_strerror());
			break;
		}
		/* a bounded wait, to notice hg_stop */
		if (rc == 0 && epoll_wait(ep, &out, 1, 100) < 0 && errno != EINTR) {
			worker_failed(strerror(errno));
			break;
		}
	}
	close(ep);
	return NULL;
}

static void
usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: hg-echo [--ctl PATH] --tenant NAME --port P [--port P...] [--threads N]\n"
		"               [--long-ns NS]   (requests this long or longer are long;"
		" default 10000)\n"
		"               [--poll]         (busy-poll, never sleep)\n"
		"               [--event-loop]   (wait in epoll on each context's doorbell)\n"
		"               [--burst N]      (take up to N requests at once, 1..%d)\n",
		HG_BURST_MAX);
	exit(code);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ctl", required_argument, NULL, 'c' },
		{ "tenant", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'n' },
		{ "long-ns", required_argument, NULL, 'l' },
		{ "poll", no_argument, NULL, 'P' },
		{ "event-loop", no_argument, NULL, 'E' },
		{ "burst", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct worker w[MAX_THREADS] = { 0 };
	const char *ctl = NULL, *tenant = NULL;
	long port = 0, threads = 1, ports[16];
	int n_ports = 0;
	int c, i;
	char *end;
	hg_app_t *app;

	hg_tool_version(argc, argv, "hg-echo");
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': ctl = optarg; break;
		case 't': tenant = optarg; break;
		case 'p': port = strtol(optarg, &end, 10);
			  if (*end || port < 1 || port > 65535 || n_ports == 16) {
				  fprintf(stderr, "hg-echo: bad --port '%s'\n", optarg);
				  return 2;
			  }
			  ports[n_ports++] = port;
			  break;
		case 'n': threads = strtol(optarg, &end, 10);
			  if (*end || threads < 1 || threads > MAX_THREADS) {
				  fprintf(stderr, "hg-echo: --threads must be 1..%d\n",
					  MAX_THREADS);
				  return 2;
			  }
			  break;
		case 'l': long_ns = strtoull(optarg, &end, 10);
			  if (*end) {
				  fprintf(stderr, "hg-echo: bad --long-ns '%s'\n", optarg);
				  return 2;
			  }
			  break;
		case 'P': poll_only = 1; break;
		case 'E': event_loop = 1; break;
		case 'b': burst = (unsigned)strtoul(optarg, &end, 10);
			  if (*end || burst < 1 || burst > HG_BURST_MAX) {
				  fprintf(stderr, "hg-echo: --burst must be 1..%d\n",
					  HG_BURST_MAX);
				  return 2;
			  }
			  break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (tenant == NULL || port == 0)
		usage(2);
	app = hg_attach(ctl, tenant);
	for (i = 0; app != NULL && i < n_ports; i++)
		if (hg_bind(app, (uint16_t)ports[i]) < 0)
			break;
	if (app == NULL || i < n_ports) {
		fprintf(stderr, "hg-echo: %s\n", hg_strerror());
		return 1;
	}
	hg_stop_on_signals();
	for (i = 0; i < threads; i++) {
		w[i].ctx = hg_ctx_open(app);
		if (w[i].ctx == NULL) {
			fprintf(stderr, "hg-echo: %s\n", hg_strerror());
			return 1;
		}
	}
	for (i = 0; i < threads; i++)
		pthread_create(&w[i].tid, NULL, event_loop ? run_event_loop : run,
			       &w[i]);
	printf("hg-echo: tenant %s port %ld threads %ld ready\n", tenant, port,
	       threads);
	fflush(stdout);
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		hg_ctx_close(w[i].ctx);
	}
	hg_detach(app);
	printf("hg-echo: served %lu, dropped %lu\n", served, dropped);
	return failed ? 1 : 0;
}

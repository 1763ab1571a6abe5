/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A worker waiting for requests (hg_recv): it polls for poll-us, then
 * parks as the tenant's core policy says (CoreSync Algorithm 1, Shenango,
 * or never), blocking on its doorbell until the daemon delivers or wakes
 * it. Also the burst path, which takes from the worker's own queues only.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "../common/hg_util.h"
#include "../policy/coresync.h"
#include "../policy/dispatch.h"
#include "../policy/poll_window.h"
#include "client.h"
#include "worker_sched.h"

static uint64_t
poll_ns(const hg_ctx_t *w)
{
	return w->app->spin_ns >= 0 ? (uint64_t)w->app->spin_ns
				    : LOAD(w->app->steer->poll_ns);
}

/* How long the worker polls now: its learned window within poll-us. */
static uint64_t
poll_window(const hg_ctx_t *w)
{
	uint64_t max = poll_ns(w);

	return w->poll_win_ns < max ? w->poll_win_ns : max;
}

/* Has the daemon said more datagrams come to this worker soon: it cut a
 * burst of the tenant's own queue short and left the rest in the link
 * for its next passes (hg_ctx_shm.more_until, a TSC)? Then the worker
 * polls on, whatever its window, unless the tenant polls never
 * (poll-us 0): parked between two passes, it would be rung awake for
 * the next, at a system call of the daemon's core each time. It yields
 * its CPU between those looks: the CPU is shared with other tenants'
 * apps, and a thread of theirs woken there in the normal class waited
 * out a whole time slice behind a worker that only spun (a victim's p99
 * 1.3-1.4 ms under a flood at own-bytes 11200, 0.4-0.6 ms yielding). */
static int
more_coming(const hg_ctx_t *w)
{
	return rte_rdtsc() < LOAD(w->shm->more_until);
}

/* An idle period that began at `since` ended with a request: the window
 * learns from it. */
static void
poll_learn(hg_ctx_t *w, uint64_t since)
{
	w->poll_win_ns = hg_poll_window_next(w->poll_win_ns, hg_now_ns() - since,
					     poll_ns(w));
}

/* Asks the daemon to let this worker park (core allocation, CoreSync
 * Algorithm 1): a fresh request in its control block, and one ring of
 * the tenant's park bell per idle period, so the slow path looks now
 * rather than at its next housekeeping tick. Not while it is the
 * tenant's only running worker: the daemon keeps the last one (asleep on
 * its doorbell, steered to), so that ask would be a write and a slow-path
 * wake-up on the apps' CPU per idle period, about one per request for an
 * app alone, for a certain no. A count one change old costs one ask in
 * vain, or one idle period allocated. */
static void
park_ask(hg_ctx_t *w)
{
	uint64_t one = 1;

	if (w->parking || LOAD(w->app->steer->running) <= 1)
		return;
	if (++w->park_seq == 0)
		w->park_seq = 1;
	w->parking = 1;
	__atomic_store_n(&w->shm->park, w->park_seq, __ATOMIC_RELEASE);
	if (w->app->park_bell >= 0 &&
	    write(w->app->park_bell, &one, sizeof(one)) < 0 && errno != EAGAIN)
		w->app->park_bell = -1;	/* the daemon will see it at its tick */
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

/* One step of a worker that found nothing for `idle` ns: poll on (0)
 * within its window (poll_window.h) or, yielding, while the daemon says
 * more comes; past that, ask to park and block on the doorbell until the
 * daemon delivers, wakes it or the deadline passes (1). Whether it
 * leaves RX steering (parks) or stays allocated is the daemon's
 * (coresync: Algorithm 1; shenango: at once). On CoreSync's dedicated
 * cores a worker the daemon keeps polls; on a CPU shared with the app's
 * other workers its polling would delay the very request it waits for,
 * so it waits on its doorbell instead, still steered to, and the
 * daemon's delay check rings it to steal. */
static int
idle_step(hg_ctx_t *w, uint64_t idle, uint64_t deadline, uint64_t now)
{
	int r;

	if (idle < poll_window(w)) {
		rte_pause();
		return 0;
	}
	if (poll_ns(w) > 0 && more_coming(w)) {
		sched_yield();
		return 0;
	}
	/* static: always running; past its window it yields between looks */
	if (LOAD(w->app->steer->core_policy) == HG_CORE_STATIC) {
		hg_park_done(w);
		if (daemon_gone(w, now))
			return hg_fail(ENOTCONN, "hourglassd went away");
		sched_yield();
		return 0;
	}
	park_ask(w);
	hg_appq_sleeping(w);
	r = hg_wait(w, deadline, now);
	hg_park_done(w);
	return r < 0 ? r : 1;
}

/* Polls, then parks (idle_step) until there is work, the deadline or the
 * daemon going away. Waiting is real time: the injectable clock is for
 * stamping requests. */
int
hg_recv(hg_ctx_t *c, struct hg_msg *m, long timeout_us)
{
	hg_ctx_t *w = hg_self(c);
	uint64_t now = hg_now_ns(), idle_since = 0, period = 0, deadline = 0;
	int r;

	if (timeout_us > 0)
		deadline = now + (uint64_t)timeout_us * 1000u;
	hg_req_end(w);	/* the previous request, if it got no reply */
	/* until a message fills it, *m names none: hg_send on it fails */
	*m = (struct hg_msg){ .buf = HG_BUF_NONE };
	for (;;) {
		r = hg_pick(w, m);
		w = hg_self(c);
		if (r == PICK_MSG) {
			hg_park_done(w);
			if (period != 0)
				poll_learn(w, period);
			/* a central policy classified it as it queued it */
			if (LOAD(w->app->steer->dispatch) == HG_DISPATCH_SYNERGY)
				w->cls = hg_classify(w->app, m);
			hg_req_begin(w);
			return 1;
		}
		if (r == PICK_SWITCHED) {
			idle_since = period = 0;
			continue;
		}
		if (timeout_us == 0)
			return 0;
		now = hg_now_ns();
		if (deadline != 0 && now >= deadline) {
			hg_park_done(w);
			return 0;
		}
		if (idle_since == 0)
			idle_since = now;
		if (period == 0)	/* not reset by a wake-up without work */
			period = now;
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
		k = rte_ring_mc_rts_dequeue_burst_elem(w->ring[core][HG_RING_RX], d,
						       sizeof(d[0]), n - got, NULL);
		for (unsigned j = 0; j < k; j++)
			got += hg_desc_to_msg(app, &d[j], &m[got]);
		if (k > 0)
			w->rx_next = core + 1;
	}
	return (int)got;
}

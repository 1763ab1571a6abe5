/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Synergy steering in libhgclient against a real region, with this test
 * playing the daemon: stealing, the wait queue, green-thread preemption,
 * the EMA and quantum (injected clock), the timer's decisions, and the
 * doorbell with both sides racing. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../fastpath/doorbell.h"
#include "../../libclient/client.h"
#include "../../policy/coresync.h"
#include "../../policy/dispatch.h"
#include "../../policy/poll_window.h"
#include "../../proto/hg_rpc.h"
#include "../../slowpath/preempt_timer.h"
#include "../../slowpath/region.h"

static struct hg_region reg;
static struct hg_tenant tn;
static hg_app_t *app;
static uint64_t fake_now = 1000000;

static uint64_t
fake_clock(void)
{
	return fake_now;
}

static hg_ctx_t *
open_ctx(uint32_t id)
{
	hg_ctx_t *c = calloc(1, sizeof(*c));

	/* the daemon sets a context's rings up when it is opened */
	cr_assert_eq(hg_region_reset_ctx(&reg, &tn, id, 1), 0);
	c->app = app;
	c->id = id;
	/* the daemon's copy and the app's are one descriptor here */
	c->bell = tn.bell[id] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->wait_fd = -1;
	c->poll_win_ns = UINT64_MAX;
	cr_assert_geq(c->bell, 0);
	c->shm = (struct hg_ctx_shm *)(app->base + app->hdr->ctx_off) + id;
	c->classes = (struct hg_class_block *)(app->base + app->hdr->class_off +
					       (uint64_t)id * app->hdr->class_stride);
	c->ring[0][HG_RING_RX] = (struct rte_ring *)(app->base +
		hg_ring_offset(app->hdr, id, 0, HG_RING_RX));
	c->ring[0][HG_RING_TX] = (struct rte_ring *)(app->base +
		hg_ring_offset(app->hdr, id, 0, HG_RING_TX));
	c->ring[0][HG_RING_FILL] = (struct rte_ring *)(app->base +
		hg_ring_offset(app->hdr, id, 0, HG_RING_FILL));
	c->n = app->n_ctxs;
	app->ctxs[app->n_ctxs++] = c;
	return c;
}

/* What RX does: a payload into buffer buf, a descriptor on ctx's ring. */
static void
deliver(uint32_t ctx, uint32_t buf, const char *payload)
{
	struct hg_desc d = { .buf = buf, .len = (uint16_t)strlen(payload) };

	memcpy(hg_buf_ptr(app, buf), payload, d.len);
	cr_assert_eq(rte_ring_sp_enqueue_elem(tn.ring[ctx][0][HG_RING_RX], &d,
					      sizeof(d)), 0);
}

static void
setup(void)
{
	char err[160];
	struct hg_steer_shm *st;

	cr_assert_eq(hg_region_create(&reg, &tn, "s", 0, 1, err, sizeof(err)), 0);
	cr_assert_eq(hg_region_reset_app(&tn, 0), 0, "app slot 0 attaches");
	app = calloc(1, sizeof(*app));
	app->sock = -1;
	app->park_bell = -1;
	app->spin_ns = -1;
	app->size = reg.size;
	app->base = mmap(NULL, reg.size, PROT_READ | PROT_WRITE, MAP_SHARED, reg.fd, 0);
	app->hdr = (const struct hg_region_hdr *)app->base;
	app->n_cores = 1;
	app->per_core = HG_N_BUFS;
	app->steer = &app->hdr->steer;
	app->shm = (struct hg_app_shm *)(app->base + app->hdr->app_off);
	app->wq = (struct rte_ring *)(app->base + app->shm->wq_off);
	pthread_mutex_init(&app->lock, NULL);
	pthread_mutex_init(&app->gt_lock, NULL);
	/* the tenant's defaults, as the daemon publishes them, but for
	 * parking: no daemon here agrees to it (the park suite plays one) */
	st = &((struct hg_region_hdr *)tn.base)->steer;
	*st = (struct hg_steer_shm){ .steal = 1, .wait_queue = 1,
				     .steal_threshold = 1, .quantum_factor = 200,
				     .core_policy = HG_CORE_SHENANGO,
				     .poll_ns = 20000 };
	hg_clock_ns = fake_clock;
}

static void
teardown(void)
{
	hg_green_free_all(app);
	for (uint32_t i = 0; i < app->n_ctxs; i++) {
		close(app->ctxs[i]->bell);
		free(app->ctxs[i]);
	}
	munmap(app->base, app->size);
	free(app);
	hg_region_destroy(&reg);
	memset(&tn, 0, sizeof(tn));
}

TestSuite(steal, .init = setup, .fini = teardown);

Test(steal, takes_half_of_a_long_queue_after_its_own)
{
	hg_ctx_t *a = open_ctx(0), *b = open_ctx(1);
	struct hg_msg m;
	uint32_t i;

	for (i = 0; i < 10; i++)
		deliver(0, i, "a");
	deliver(1, 50, "own");
	cr_assert_eq(hg_recv(b, &m, 0), 1);
	cr_assert_eq(memcmp(m.data, "own", 3), 0, "own queue first");
	cr_assert_eq(b->stolen, 0);
	cr_assert_eq(hg_recv(b, &m, 0), 1);
	cr_assert_eq(b->stolen, 5, "half of 10");
	cr_assert_eq(rte_ring_count(a->ring[0][HG_RING_RX]), 5);
	for (i = 0; i < 4; i++)
		cr_assert_eq(hg_recv(b, &m, 0), 1, "the rest of the batch");
	cr_assert_eq(b->stolen, 5);
}

Test(steal, only_above_the_threshold_and_only_when_on)
{
	hg_ctx_t *b;
	struct hg_msg m;

	open_ctx(0);
	b = open_ctx(1);
	deliver(0, 1, "x");
	cr_assert_eq(hg_recv(b, &m, 0), 0, "1 is not more than the threshold 1");
	deliver(0, 2, "y");
	((struct hg_region_hdr *)tn.base)->steer.steal = 0;
	cr_assert_eq(hg_recv(b, &m, 0), 0, "stealing off");
	((struct hg_region_hdr *)tn.base)->steer.steal = 1;
	cr_assert_eq(hg_recv(b, &m, 0), 1);
	cr_assert_eq(b->stolen, 1, "half of 2");
	((struct hg_region_hdr *)tn.base)->steer.steal_threshold = 0;
	cr_assert_eq(hg_recv(b, &m, 0), 1, "threshold 0 takes the last one");
}

/* What a worker preempted in the middle of a take leaves on a ring: its
 * slots taken (the consumer head moved past them), the tail not moved. */
static void
stall_mid_take(struct rte_ring *r, unsigned n)
{
	uint32_t head, next, entries;

	if (r->cons.sync_type == RTE_RING_SYNC_MT_RTS)
		cr_assert_eq(__rte_ring_rts_move_cons_head(r, n, RTE_RING_QUEUE_FIXED,
							   &head, &entries), n);
	else
		cr_assert_eq(__rte_ring_move_cons_head(r, 0, n, RTE_RING_QUEUE_FIXED,
						       &head, &next, &entries), n);
}

/* A thief stopped between taking its half and releasing it (the OS took
 * its CPU) must not hold the queue's owner: with rte_ring's plain MC the
 * owner's take spun until the thief ran again, a whole time slice when
 * both share a CPU (here, for ever: the timeout fails it). */
Test(steal, a_thief_stopped_mid_take_does_not_hold_the_owner, .timeout = 10)
{
	hg_ctx_t *a = open_ctx(0);
	struct rte_ring *r = a->ring[0][HG_RING_RX];
	struct hg_msg m[HG_BURST_MAX];
	uint32_t i;

	for (i = 0; i < 10; i++)
		deliver(0, i, "a");
	stall_mid_take(r, 5);
	cr_assert_eq(hg_recv_burst(a, m, HG_BURST_MAX), 5, "the owner takes the rest");
	cr_assert_eq(memcmp(m[0].data, "a", 1), 0);
	cr_assert_eq(rte_ring_free_count(r), rte_ring_get_capacity(r) - 10,
		     "the stopped thief's slots stay taken until it finishes");
	__rte_ring_rts_update_tail(&r->rts_cons);
	cr_assert_eq(rte_ring_free_count(r), rte_ring_get_capacity(r),
		     "the last taker to finish gives every slot back");
}

TestSuite(ema, .init = setup, .fini = teardown);

Test(ema, short_requests_only_and_the_quantum_follows)
{
	hg_ctx_t *c = open_ctx(0);
	struct hg_msg m;

	deliver(0, 1, "s1");
	deliver(0, 2, "s2");
	deliver(0, 3, "long");
	deliver(0, 4, "s3");
	hg_recv(c, &m, 0);
	fake_now += 2000;
	hg_msg_free(c, &m);
	cr_assert_eq(c->ema_ns, 2000, "first sample");
	hg_recv(c, &m, 0);
	fake_now += 4000;
	hg_recv(c, &m, 0);	/* an unanswered request ends at the next recv */
	cr_assert_eq(c->ema_ns, 3000, "(2000 + 4000) / 2");
	c->shm->preempt = 1;	/* left over from an earlier long request */
	hg_feedback_start(c);
	cr_assert_eq(c->shm->preempt, 0, "a new long request starts unflagged");
	cr_assert_eq(c->shm->in_long, 1);
	cr_assert_eq(c->shm->quantum_ns, 6000, "EMA x QUANTUM_FACTOR 2");
	cr_assert_eq(c->shm->long_start_ns, fake_now);
	fake_now += 1000000;
	hg_feedback_finished(c);
	cr_assert_eq(c->shm->in_long, 0);
	hg_recv(c, &m, 0);
	cr_assert_eq(c->ema_ns, 3000, "the long request is not a sample");
	app->shm->factor = 1000;	/* congested: the daemon switched factor */
	hg_feedback_start(c);
	cr_assert_eq(c->shm->quantum_ns, 30000);
	((struct hg_region_hdr *)tn.base)->steer.quantum_ns = 7777;	/* fixed: no adaptation */
	hg_feedback_start(c);
	cr_assert_eq(c->shm->quantum_ns, 7777);
}

/* ---- green threads, preemption and the wait queue ---- */

static char order[16][8];
static int done;

static void
serve_all(hg_ctx_t *ctx, void *arg)
{
	struct hg_msg m;
	int *check_after_first_short = arg;

	while (done < 3) {
		if (hg_recv(ctx, &m, 0) != 1)
			continue;
		if (memcmp(m.data, "long", 4) == 0) {
			hg_feedback_start(ctx);
			/* the daemon's timer: quantum over, requests queued */
			__atomic_store_n(&hg_self(ctx)->shm->preempt, 1, __ATOMIC_RELEASE);
			hg_yield(ctx);
			hg_feedback_finished(ctx);
		} else if (*check_after_first_short && done == 0) {
			app->shm->check_wait_queue = 1;
		}
		memcpy(order[done++], m.data, 4);
		hg_msg_free(ctx, &m);
	}
}

static void
run_three(int wait_queue, int check)
{
	hg_ctx_t *c = open_ctx(0);

	((struct hg_region_hdr *)tn.base)->steer.wait_queue = (uint32_t)wait_queue;
	done = 0;
	deliver(0, 1, "long");
	deliver(0, 2, "sh_1");
	deliver(0, 3, "sh_2");
	cr_assert_eq(hg_run(c, serve_all, &check), 0);
	cr_assert_eq(c->preempted, 1);
	cr_assert_eq(c->resumed, 1);
	cr_assert_eq(rte_ring_count(app->wq), 0);
}

TestSuite(preempt, .init = setup, .fini = teardown);

Test(preempt, shorts_run_while_the_long_one_waits)
{
	run_three(1, 0);
	cr_assert_str_eq(order[0], "sh_1");
	cr_assert_str_eq(order[1], "sh_2");
	cr_assert_str_eq(order[2], "long", "resumed from the wait queue last");
}

Test(preempt, without_the_wait_queue_the_worker_resumes_its_own)
{
	run_three(0, 0);
	cr_assert_str_eq(order[2], "long");
}

Test(preempt, a_congested_wait_queue_goes_first)
{
	run_three(1, 1);
	cr_assert_str_eq(order[0], "sh_1");
	cr_assert_str_eq(order[1], "long", "check_wait_queue set after sh_1");
	cr_assert_str_eq(order[2], "sh_2");
}

static void
one_pass(hg_ctx_t *ctx, void *arg)
{
	struct hg_msg m;

	(void)arg;
	cr_assert_eq(hg_recv(ctx, &m, 0), 0);
}

Test(preempt, garbage_in_the_wait_queue_is_ignored)
{
	hg_ctx_t *c = open_ctx(0);
	uint64_t junk[3] = { 0xdeadbeefcafef00dull, 7, (uint64_t)5 << 32 | 4095 };

	for (int i = 0; i < 3; i++)
		rte_ring_mp_enqueue_elem(app->wq, &junk[i], sizeof(junk[i]));
	cr_assert_eq(hg_run(c, one_pass, NULL), 0);
	cr_assert_eq(rte_ring_count(app->wq), 0);
	cr_assert_eq(c->resumed, 0);
}

/* A long request preempted on worker a's thread resumes on worker b's,
 * and its green thread's function returns there, while a's thread, done
 * with hg_run, waits. Its green thread must then read b, the thread it
 * is on now, as its worker: it read a's (the compiler kept the
 * thread-local's address from before the function's call), NULL by
 * then, and crashed (hg-echo at exit, test_steering's mixed requests). */
static hg_ctx_t *finished_on;
static int fn_calls;

static void
long_then_return(hg_ctx_t *ctx, void *arg)
{
	struct hg_msg m;

	(void)arg;
	if (__atomic_fetch_add(&fn_calls, 1, __ATOMIC_RELAXED) > 0)
		return;		/* the green thread that took over on a */
	cr_assert_eq(hg_recv(ctx, &m, 0), 1);
	hg_feedback_start(ctx);
	__atomic_store_n(&hg_self(ctx)->shm->preempt, 1, __ATOMIC_RELEASE);
	hg_yield(ctx);		/* to the wait queue; resumed by b */
	hg_feedback_finished(ctx);
	finished_on = hg_self(ctx);
	hg_msg_free(ctx, &m);
}

/* Worker b's function: takes work until the long request's green thread,
 * resumed here, returns in its place (which ends b's hg_run). */
static void
take_waiting(hg_ctx_t *ctx, void *arg)
{
	struct hg_msg m;

	(void)arg;
	for (int i = 0; i < 1000 && finished_on == NULL; i++)
		hg_recv(ctx, &m, 0);
}

struct on_thread {
	hg_ctx_t *ctx;
	hg_worker_fn fn;
	int rc, returned;
	pthread_barrier_t *done;	/* a's thread stays until b is done */
};

static void *
run_on_thread(void *arg)
{
	struct on_thread *t = arg;

	t->rc = hg_run(t->ctx, t->fn, NULL);
	__atomic_store_n(&t->returned, 1, __ATOMIC_RELEASE);
	if (t->done != NULL)
		pthread_barrier_wait(t->done);
	return NULL;
}

Test(preempt, a_request_resumed_on_another_thread_ends_there, .timeout = 10)
{
	hg_ctx_t *a = open_ctx(0), *b = open_ctx(1);
	pthread_barrier_t done;
	struct on_thread ta = { .ctx = a, .fn = long_then_return, .done = &done },
			 tb = { .ctx = b, .fn = take_waiting };
	pthread_t th_a, th_b;

	cr_assert_eq(pthread_barrier_init(&done, NULL, 2), 0);
	deliver(0, 1, "long");
	cr_assert_eq(pthread_create(&th_a, NULL, run_on_thread, &ta), 0);
	/* a's hg_run returns once its second green thread's function does */
	while (!__atomic_load_n(&ta.returned, __ATOMIC_ACQUIRE))
		sched_yield();
	cr_assert_eq(rte_ring_count(app->wq), 1, "the long request waits");
	cr_assert_eq(pthread_create(&th_b, NULL, run_on_thread, &tb), 0);
	pthread_join(th_b, NULL);
	pthread_barrier_wait(&done);
	pthread_join(th_a, NULL);
	cr_assert_eq(ta.rc, 0);
	cr_assert_eq(tb.rc, 0);
	cr_assert_eq(a->preempted, 1);
	cr_assert_eq(b->resumed, 1);
	cr_assert_eq(finished_on, b, "the long request ended on b's thread");
	cr_assert_eq(rte_ring_count(app->wq), 0);
	pthread_barrier_destroy(&done);
}

/* ---- the daemon's timer decisions ---- */

Test(timer, preempt_only_past_the_quantum_with_work_waiting)
{
	cr_assert_not(hg_preempt_due(1, 1000, 5000, 5999, 1), "within quantum");
	cr_assert(hg_preempt_due(1, 1000, 5000, 6000, 1));
	cr_assert_not(hg_preempt_due(1, 1000, 5000, 9000000, 0), "queue empty");
	cr_assert_not(hg_preempt_due(0, 1000, 5000, 9000000, 1), "not long");
	cr_assert_not(hg_preempt_due(1, 9000, 5000, 1000, 1), "clock before start");
}

Test(timer, wait_queue_congestion_needs_a_stalled_consumer)
{
	struct hg_wq_watch w = { 0 };
	const uint64_t T = 50000;

	cr_assert_eq(hg_wq_check(&w, 0, 3, 10000, T), 0, "first look");
	cr_assert_eq(hg_wq_check(&w, 0, 3, 40000, T), 0, "not yet THRESH_WQD");
	cr_assert_eq(hg_wq_check(&w, 2, 3, 60000, T), 0, "consumer moved");
	cr_assert_eq(hg_wq_check(&w, 2, 3, 120000, T), 1, "stalled for THRESH_WQD");
	cr_assert_eq(hg_wq_check(&w, 2, 3, 130000, T), 1, "kept until next check");
	cr_assert_eq(hg_wq_check(&w, 2, 0, 180000, T), 0, "empty queue");
	cr_assert_eq(hg_wq_check(&w, 2, 5, 900000, 0), 0, "THRESH_WQD 0: off");
}

/* ---- the doorbell ---- */

TestSuite(doorbell, .init = setup, .fini = teardown);

/* What RX does after a burst that delivered to ctx (rx.c ring_bells). */
static int
daemon_rings(uint32_t ctx)
{
	hg_bell_fence();
	return hg_bell_ring(&tn, ctx);
}

static uint64_t
bell_count(int fd)
{
	uint64_t v = 0;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

Test(doorbell, arm_says_whether_to_wait)
{
	hg_ctx_t *c = open_ctx(0);
	struct pollfd p = { .fd = hg_ctx_fd(c), .events = POLLIN };
	struct hg_msg m;

	cr_assert_eq(hg_ctx_arm(c), 0, "nothing waits: armed");
	cr_assert_eq(c->shm->armed, 1);
	cr_assert_eq(poll(&p, 1, 0), 0, "not rung yet");
	deliver(0, 1, "x");
	cr_assert_eq(daemon_rings(0), 1);
	cr_assert_eq(c->shm->armed, 0, "the daemon disarms as it rings");
	cr_assert_eq(poll(&p, 1, 0), 1, "the descriptor is readable");
	cr_assert_eq(hg_ctx_arm(c), 1, "work came: don't wait");
	cr_assert_eq(c->shm->armed, 0);
	cr_assert_eq(poll(&p, 1, 0), 0, "arm drained the count");
	cr_assert_eq(hg_recv(c, &m, 0), 1);
	cr_assert_eq(daemon_rings(0), 0, "nobody armed: no system call");
}

Test(doorbell, an_app_armed_all_the_time_gets_one_ring_per_burst)
{
	hg_ctx_t *c = open_ctx(0);
	struct hg_fp_core *core = calloc(1, sizeof(*core));
	unsigned burst, k, i, rung;

	cr_assert(core != NULL);
	for (burst = 0; burst < 3; burst++) {
		c->shm->armed = 7;		/* hostile: armed, any value */
		for (k = 0; k < HG_BATCH; k++)
			hg_bell_note(core, 0, 0);
		hg_bell_note(core, 1, 0);
		cr_assert_eq(core->n_bell, 2, "one entry per (tenant, context)");
		for (rung = 0, i = 0; i < core->n_bell; i++)
			if (core->bell[i].tenant == 0)
				rung += (unsigned)daemon_rings(core->bell[i].ctx);
		core->n_bell = 0;
		cr_assert_eq(rung, 1);
	}
	cr_assert_eq(bell_count(c->bell), 3, "three bursts, three writes");
	free(core);
}

/* The fast path delivers one request at a time, at random moments, while
 * the worker blocks in hg_recv with no spin: every delivery races the
 * worker's arm-recheck-block. A lost wake-up leaves the worker asleep
 * until its timeout, and the test fails. */
#define RACE_N 20000u

struct race {
	uint32_t taken;			/* requests the worker got, atomic */
	uint32_t rung, stuck;
	struct timespec t0;
};

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void *
fast_path(void *arg)
{
	struct race *r = arg;
	unsigned seed = 1;
	uint32_t i, k, spin;

	for (i = 0; i < RACE_N; i++) {
		struct hg_desc d = { .buf = i % 64, .len = 1 };

		for (spin = (unsigned)rand_r(&seed) % 256; spin > 0; spin--)
			rte_pause();
		if (rte_ring_sp_enqueue_elem(tn.ring[0][0][HG_RING_RX], &d,
					     sizeof(d)) != 0)
			break;
		r->rung += (uint32_t)daemon_rings(0);
		/* the next one only once this was taken: one in flight */
		for (k = 0; __atomic_load_n(&r->taken, __ATOMIC_ACQUIRE) <= i; k++) {
			if (k % 1024 == 0 && ms_since(&r->t0) > 60000) {
				r->stuck = 1;
				return NULL;
			}
			rte_pause();
		}
	}
	return NULL;
}

Test(doorbell, no_wake_up_is_lost_when_both_sides_race, .timeout = 120)
{
	hg_ctx_t *c = open_ctx(0);
	struct race r = { 0 };
	struct hg_msg m;
	pthread_t th;
	uint32_t i;

	app->spin_ns = 0;		/* block at once: the most races */
	clock_gettime(CLOCK_MONOTONIC, &r.t0);
	cr_assert_eq(pthread_create(&th, NULL, fast_path, &r), 0);
	for (i = 0; i < RACE_N; i++) {
		struct timespec t0;
		int got;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		got = hg_recv(c, &m, 1000000);
		/* a lost wake-up ends only at the timeout, which finds the
		 * request still there: so judge by the time it took */
		if (got != 1 || ms_since(&t0) > 500)
			break;
		__atomic_store_n(&r.taken, i + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&r.taken, UINT32_MAX, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	cr_assert_eq(i, RACE_N, "request %u did not wake the worker", i);
	cr_assert_eq(r.stuck, 0);
	cr_log_info("%u round trips in %.0f ms, %u rings", RACE_N, ms_since(&r.t0), r.rung);
	cr_assert_gt(r.rung, RACE_N / 10, "the worker was asleep for some (%u)",
		     r.rung);
}

Test(doorbell, a_blocked_receive_ends_at_its_timeout)
{
	hg_ctx_t *c = open_ctx(0);
	struct timespec t0;
	struct hg_msg m;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(hg_recv(c, &m, 50000), 0);
	ms = ms_since(&t0);
	cr_assert(ms >= 49 && ms < 5000, "%.1f ms", ms);
	cr_assert_eq(c->shm->armed, 0, "disarmed after the wait");
}

/* ---- the central dispatch policies (app_queues.c) ---- */

static void
set_dispatch(enum hg_dispatch p)
{
	((struct hg_region_hdr *)tn.base)->steer.dispatch = p;
}

TestSuite(central, .init = setup, .fini = teardown);

/* c-FCFS: a request never waits at a busy worker while another is idle,
 * even one below Synergy's steal threshold. */
Test(central, cfcfs_never_queues_at_a_busy_worker)
{
	hg_ctx_t *b;
	struct hg_msg m;

	open_ctx(0);			/* busy: it never calls hg_recv here */
	b = open_ctx(1);
	set_dispatch(HG_DISPATCH_CFCFS);
	deliver(0, 1, "x");
	cr_assert_eq(hg_recv(b, &m, 0), 1, "the idle worker takes it");
	cr_assert_eq(memcmp(m.data, "x", 1), 0);
	hg_msg_free(b, &m);
	cr_assert_not(hg_appq_pending(app));
	hg_appq_free(app);
}

/* An RPC request of class type into buffer buf on ctx's ring. */
static void
deliver_rpc(uint32_t ctx, uint32_t buf, uint8_t type)
{
	struct hg_rpc_hdr h = { .magic = htons(HG_RPC_MAGIC), .version = HG_RPC_VERSION,
				.flags = HG_RPC_REQUEST, .type = type };
	struct hg_desc d = { .buf = buf, .len = sizeof(h) };

	memcpy(hg_buf_ptr(app, buf), &h, sizeof(h));
	cr_assert_eq(rte_ring_sp_enqueue_elem(tn.ring[ctx][0][HG_RING_RX], &d,
					      sizeof(d)), 0);
}

/* DARC: with a reservation, a long class is refused on the short class's
 * worker and waits for its own; a short one may run on the long's. */
Test(central, darc_refuses_long_on_short_workers)
{
	static const double S[HG_CLASSES] = { 1000, 1000000 };
	static const double R[HG_CLASSES] = { 0.9, 0.1 };
	hg_ctx_t *a = open_ctx(0), *b = open_ctx(1);
	struct hg_msg m;

	set_dispatch(HG_DISPATCH_DARC);
	cr_assert_eq(hg_recv(a, &m, 0), 0, "makes the app's queues");
	/* class 0's demand is 0.9 / 100.9 x 2 -> 1 worker (0); class 1 gets
	 * the spillway (1) */
	hg_darc_reserve(hg_appq_darc(app), S, R);
	deliver_rpc(0, 2, 1);
	cr_assert_eq(hg_recv(a, &m, 0), 0, "long refused on the short's worker");
	cr_assert(hg_appq_pending(app), "it waits in its class's queue");
	cr_assert_eq(hg_recv(b, &m, 0), 1, "its own worker takes it");
	cr_assert_eq(b->cls, 1);
	hg_msg_free(b, &m);
	deliver_rpc(0, 3, 0);
	cr_assert_eq(hg_recv(b, &m, 0), 1, "short on the long's worker: allowed");
	cr_assert_eq(b->cls, 0);
	hg_msg_free(b, &m);
	hg_appq_free(app);
}

/* A policy change leaves nothing behind: what a central policy queued,
 * Synergy takes. */
Test(central, a_change_back_to_synergy_takes_what_was_queued)
{
	hg_ctx_t *a = open_ctx(0);
	struct hg_msg m;
	int i;

	set_dispatch(HG_DISPATCH_CFCFS);
	for (i = 0; i < 3; i++)
		deliver(0, (uint32_t)i + 10, "q");
	cr_assert_eq(hg_recv(a, &m, 0), 1, "drains all three, takes one");
	hg_msg_free(a, &m);
	cr_assert(hg_appq_pending(app));
	set_dispatch(HG_DISPATCH_SYNERGY);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(hg_recv(a, &m, 0), 1, "queued %d", i);
		hg_msg_free(a, &m);
	}
	cr_assert_eq(hg_recv(a, &m, 0), 0);
	hg_appq_free(app);
}

/* ---- parking (core allocation): the library's side ---- */

TestSuite(park, .init = setup, .fini = teardown);

struct waiter {
	hg_ctx_t *c;
	int got;
};

static void *
recv_thread(void *arg)
{
	struct waiter *w = arg;
	struct hg_msg m;

	w->got = hg_recv(w->c, &m, 10000000);
	return NULL;
}

/* Bounds of 10 s, not 2: on a 2-CPU box loaded by the integration tests
 * and a build, a thread may wait seconds for a CPU (one failure in a
 * loaded run); each wait ends as soon as its condition holds. */
static int
wait_for(const uint32_t *word, int nonzero, unsigned ms)
{
	struct timespec ts = { 0, 1000000 };
	unsigned i;

	for (i = 0; i < ms; i++) {
		if ((__atomic_load_n(word, __ATOMIC_ACQUIRE) != 0) == nonzero)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Waits until *word reaches n; 0 if ms passed first. */
static int
wait_count(const uint32_t *word, uint32_t n, unsigned ms)
{
	struct timespec ts = { 0, 1000000 };

	for (unsigned i = 0; i < ms; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) >= n)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* A worker of a tenant with `policy` in hg_recv on its own thread, once
 * it sleeps on its doorbell; running: the tenant's running workers, as
 * the daemon says. */
static void
sleeping_worker(uint32_t policy, uint32_t running, struct waiter *w, pthread_t *th)
{
	((struct hg_region_hdr *)tn.base)->steer.core_policy = policy;
	((struct hg_region_hdr *)tn.base)->steer.running = running;
	*w = (struct waiter){ .c = open_ctx(0), .got = -100 };
	cr_assert_eq(pthread_create(th, NULL, recv_thread, w), 0);
	cr_assert(wait_for(&tn.ctx_shm[0].armed, 1, 10000), "asleep on its doorbell");
}

/* Whether it leaves steering is the daemon's: either way it sleeps at
 * once, with no grant to wait for, and a delivery wakes it. */
static void
asks_and_sleeps(uint32_t policy)
{
	struct hg_ctx_shm *cs = &tn.ctx_shm[0];
	struct waiter w;
	pthread_t th;

	sleeping_worker(policy, 2, &w, &th);
	cr_assert_neq(cs->park, 0, "and asked the daemon");
	deliver(0, 1, "hello");
	daemon_rings(0);
	pthread_join(th, NULL);
	cr_assert_eq(w.got, 1, "the delivery woke it");
	cr_assert_eq(cs->park, 0, "back at work: no request stands");
}

Test(park, coresync_asks_and_sleeps_at_once, .timeout = 30)
{
	asks_and_sleeps(HG_CORE_CORESYNC);
}

Test(park, shenango_asks_and_sleeps_at_once, .timeout = 30)
{
	asks_and_sleeps(HG_CORE_SHENANGO);
}

/* The tenant's only running worker is never parked: it sleeps on its
 * doorbell without asking (before, its ask and the park bell's write
 * were a system call and a slow-path wake-up per idle period), and a
 * delivery wakes it all the same. */
Test(park, the_only_running_worker_sleeps_without_asking, .timeout = 30)
{
	struct hg_ctx_shm *cs = &tn.ctx_shm[0];
	struct waiter w;
	pthread_t th;

	sleeping_worker(HG_CORE_CORESYNC, 1, &w, &th);
	cr_assert_eq(__atomic_load_n(&cs->park, __ATOMIC_ACQUIRE), 0, "no ask");
	deliver(0, 1, "hello");
	daemon_rings(0);
	pthread_join(th, NULL);
	cr_assert_eq(w.got, 1, "the delivery woke it");
}

/* The daemon's delay check rings a sleeping worker with nothing for its
 * own queue: it withdraws its request, looks (steals), and asks anew. */
Test(park, a_worker_woken_without_work_asks_anew, .timeout = 30)
{
	struct hg_ctx_shm *cs = &tn.ctx_shm[0];
	struct waiter w;
	uint64_t one = 1;
	uint32_t first, now;
	pthread_t th;
	unsigned i;

	sleeping_worker(HG_CORE_CORESYNC, 2, &w, &th);
	first = __atomic_load_n(&cs->park, __ATOMIC_ACQUIRE);
	cr_assert_eq(write(tn.bell[0], &one, sizeof(one)), sizeof(one));
	for (i = 0; i < 10000; i++) {
		now = __atomic_load_n(&cs->park, __ATOMIC_ACQUIRE);
		if (now != first && now != 0)
			break;
		usleep(1000);
	}
	cr_assert(now != first && now != 0, "a new request after the wake-up");
	deliver(0, 1, "x");
	daemon_rings(0);
	pthread_join(th, NULL);
	cr_assert_eq(w.got, 1);
}

Test(park, static_never_asks_nor_blocks, .timeout = 30)
{
	hg_ctx_t *c = open_ctx(0);
	struct hg_ctx_shm *cs = &tn.ctx_shm[0];
	struct hg_msg m;

	((struct hg_region_hdr *)tn.base)->steer.core_policy = HG_CORE_STATIC;
	cr_assert_eq(hg_recv(c, &m, 30000), 0, "polled to the deadline");
	cr_assert_eq(cs->park, 0);
	cr_assert_eq(cs->armed, 0);
}

/* Requests further apart than poll-us: the worker stops polling after
 * each one (its poll only kept the app's other threads off the CPU) and
 * sleeps on its doorbell at once. Each request here comes 2 ms after the
 * worker went to sleep. */
struct sparse {
	hg_ctx_t *c;
	int n;
	uint32_t got;	/* requests taken so far; the test waits on it */
};

static void *
sparse_thread(void *arg)
{
	struct sparse *s = arg;
	struct hg_msg m;

	for (int i = 0; i < s->n; i++)
		if (hg_recv(s->c, &m, 10000000) == 1)
			__atomic_add_fetch(&s->got, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(park, requests_further_apart_than_poll_us_end_the_polling, .timeout = 30)
{
	struct hg_ctx_shm *cs = &tn.ctx_shm[0];
	struct sparse s = { .n = 3 };
	struct timespec gap = { 0, 2000000 };
	pthread_t th;

	((struct hg_region_hdr *)tn.base)->steer.running = 1;
	s.c = open_ctx(0);
	cr_assert_eq(s.c->poll_win_ns, UINT64_MAX, "a new worker polls all of poll-us");
	cr_assert_eq(pthread_create(&th, NULL, sparse_thread, &s), 0);
	for (int i = 0; i < s.n; i++) {
		cr_assert(wait_for(&cs->armed, 1, 10000), "asleep on its doorbell");
		nanosleep(&gap, NULL);
		deliver(0, (uint32_t)i + 1, "x");
		daemon_rings(0);
		/* not armed == 0: the worker may arm again before a look */
		cr_assert(wait_count(&s.got, (uint32_t)i + 1, 10000), "woken, took it");
	}
	pthread_join(th, NULL);
	cr_assert_eq(s.got, (uint32_t)s.n);
	cr_assert_eq(s.c->poll_win_ns, 0, "20 -> 10 -> 5 -> 0 us");
}

/* The window rule alone (policy/poll_window.h), poll-us 20 us. */
TestSuite(poll_window);

Test(poll_window, a_poll_that_caught_the_request_keeps_its_window)
{
	cr_assert_eq(hg_poll_window_next(10000, 3000, 20000), 10000);
	cr_assert_eq(hg_poll_window_next(0, 0, 20000), 0);
	cr_assert_eq(hg_poll_window_next(UINT64_MAX, 20000, 20000), 20000,
		     "clamped to poll-us");
}

Test(poll_window, a_request_a_longer_poll_would_have_caught_doubles_it)
{
	cr_assert_eq(hg_poll_window_next(0, 7000, 20000), 5000, "from none: a quarter");
	cr_assert_eq(hg_poll_window_next(5000, 7000, 20000), 10000);
	cr_assert_eq(hg_poll_window_next(10000, 20000, 20000), 20000);
	cr_assert_eq(hg_poll_window_next(15000, 16000, 20000), 20000, "never past poll-us");
}

Test(poll_window, a_request_no_poll_would_have_caught_halves_it_to_none)
{
	cr_assert_eq(hg_poll_window_next(20000, 20001, 20000), 10000);
	cr_assert_eq(hg_poll_window_next(10000, 1000000, 20000), 5000);
	cr_assert_eq(hg_poll_window_next(5000, 1000000, 20000), 0, "below a quarter: none");
	cr_assert_eq(hg_poll_window_next(0, 1000000, 20000), 0);
}

Test(poll_window, poll_us_lowered_or_zero_bounds_it)
{
	cr_assert_eq(hg_poll_window_next(20000, 500, 1000), 1000);
	cr_assert_eq(hg_poll_window_next(20000, 5, 0), 0);
	cr_assert_eq(hg_poll_window_next(0, 0, 0), 0);
}

/* ---- bursts: many requests in, many replies out ---- */

TestSuite(burst, .init = setup, .fini = teardown);

Test(burst, takes_what_is_there_and_answers_in_order)
{
	hg_ctx_t *c = open_ctx(0);
	struct hg_msg m[HG_BURST_MAX];
	struct hg_desc d[HG_BURST_MAX];
	char want[16];
	int i, n;

	for (i = 0; i < 40; i++) {
		snprintf(want, sizeof(want), "req%d", i);
		deliver(0, (uint32_t)i + 1, want);
	}
	n = hg_recv_burst(c, m, HG_BURST_MAX);
	cr_assert_eq(n, 40, "everything queued, in one call");
	cr_assert_eq(hg_recv_burst(c, m + n, 8), 0, "and nothing more");
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "req%d", i);
		cr_assert_eq(m[i].len, strlen(want));
		cr_assert_eq(memcmp(m[i].data, want, m[i].len), 0, "in order");
		memcpy(m[i].data, "ok", 2);
		m[i].len = 2;
	}
	cr_assert_eq(hg_send_burst(c, m, (unsigned)n), 40);
	cr_assert_eq(rte_ring_dequeue_burst_elem(tn.ring[0][0][HG_RING_TX], d,
						 sizeof(d[0]), HG_BURST_MAX, NULL), 40);
	for (i = 0; i < 40; i++)
		cr_assert(d[i].op == HG_OP_SEND && d[i].len == 2 &&
			  d[i].buf == (uint32_t)i + 1, "reply %d", i);
}

Test(burst, a_full_transmit_ring_says_how_many_went)
{
	hg_ctx_t *c = open_ctx(0);
	struct hg_msg m[HG_BURST_MAX];
	struct hg_desc fill = { .op = HG_OP_FREE };
	unsigned room = 0;
	int i;

	while (rte_ring_sp_enqueue_elem(tn.ring[0][0][HG_RING_TX], &fill,
					sizeof(fill)) == 0)
		;
	for (i = 0; i < 10; i++, room++)
		cr_assert_eq(rte_ring_sc_dequeue_elem(tn.ring[0][0][HG_RING_TX], &fill,
						      sizeof(fill)), 0);
	for (i = 0; i < 16; i++)
		deliver(0, (uint32_t)i + 1, "x");
	cr_assert_eq(hg_recv_burst(c, m, 16), 16);
	cr_assert_eq(hg_send_burst(c, m, 16), (int)room, "as many as fit, in order");
	m[0].len = HG_MSG_MAX + 1;
	cr_assert_lt(hg_send_burst(c, m, 1), 0, "an oversized reply is refused");
}

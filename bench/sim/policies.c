/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-policy-sim: a discrete-event simulator of request dispatch on N
 * workers. It links the policy functions of policy/: Synergy's
 * Algorithm 2 order (which libhgclient's worker scheduler runs) and its
 * conditional preemption (the daemon's timer's), DARC's Algorithms 1 and
 * 2 with profiling windows, and flat combining's election and hand-out:
 * no second implementation of a policy. d-FCFS, c-FCFS and TS are this
 * file's baselines. Synergy's preemption costs the worker --switch-us
 * (0.1: a cooperative yield to another green thread).
 *
 * TS is Shinjuku as Perséphone simulates it: "a 5us preemption frequency
 * and 1us overhead per preemption" (its section 2) over Shinjuku's
 * multi-queue policy, "a queue per request type and where preempted
 * requests are enqueued at the head of their respective queue", the next
 * queue chosen by "a variant of Borrowed Virtual Time" (its section 5):
 * Shinjuku's dispatcher (smart_tskq_dequeue) takes the queue whose head
 * has waited longest against its type's SLO, the age counted from the
 * request's arrival. A worker is preempted every 5 us of its time, 1 us of
 * which is the preemption: Perséphone's own arithmetic ("preempting as
 * frequently as every 5us introduces a 6x slowdown" for a 1 us request)
 * bounds a short request's wait by the 5 us. Perséphone does not rule the
 * other readings out, and on extreme they move TS by up to 40%, so each is
 * an option (struct ts_spec) and bench/policies prints every reading.
 *
 * Poisson arrivals; each class's service time is fixed (the workloads of
 * Perséphone's Table 3 and Synergy's Table II). For every policy it finds
 * the highest load at which every class's p99.9 slowdown stays <= the SLO
 * (Perséphone's Figure 1 axis) and prints JSON lines: the sweep's points
 * and the result. bench/policies draws the table and the PNG.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../policy/dispatch.h"
#include "../../policy/preempt.h"
#include "../../common/hg_util.h"

#define MAX_W     HG_DQ_WORKERS
#define QCAP      (1u << 16)	/* a queue this long: overloaded */
#define STEAL_MAX 32u		/* Synergy: take half, at most this many */
#define FLOWS     512u		/* Synergy's client flows */

enum pol { P_DFCFS, P_CFCFS, P_TS, P_SYNERGY, P_DARC, P_FC, P_N };
static const char *const pol_name[P_N] = { "d-FCFS", "c-FCFS", "TS",
					   "Synergy", "DARC", "FC" };

struct workload {
	const char *name;
	unsigned n;
	double svc_us[HG_CLASSES];
	double pct[HG_CLASSES];
	const char *cls_name[HG_CLASSES];
};

static struct workload custom = { "custom", 0, { 0 }, { 0 }, { 0 } };
static char custom_names[HG_CLASSES][24];

static const struct workload workloads[] = {
	{ "extreme", 2, { 0.5, 500 }, { 99.5, 0.5 }, { "short", "long" } },
	{ "high", 2, { 1, 100 }, { 50, 50 }, { "short", "long" } },
	{ "zippydb", 3, { 0.5, 2.5, 500 }, { 78, 19, 3 },
	  { "short1", "short2", "long" } },
	{ "getscan", 2, { 0.92, 94 }, { 50, 50 }, { "GET", "SCAN" } },
};

struct req {
	double arrival, service, left;
	uint32_t cls, flow;
};

/* TS's reading of Perséphone's words, defined once (see the top). */
enum ts_cost {
	TS_PERIOD,	/* one preemption per quantum: a slice, then the 1 us */
	TS_WORKER,	/* a whole quantum's slice, then the 1 us on the worker */
	TS_REQUEST,	/* a whole quantum's slice; the request carries the 1 us */
};
struct ts_spec {
	enum ts_cost cost;
	int by_type;	/* shortest type first, not Shinjuku's age/SLO */
	int to_tail;	/* preempted to its queue's tail, not its head */
};

struct worker {
	int busy;		/* running a request (or paying a preemption) */
	int64_t cur;		/* its request, -1: none */
	double end;		/* when its current segment ends */
	double seg;		/* the segment's start */
	double long_start;	/* Synergy: when its long request started */
	double ema;		/* Synergy: short service time EMA (us) */
	struct hg_dq_fifo local;
};

struct sim {
	const struct workload *wl;
	enum pol pol;
	unsigned W;
	double rate;		/* requests per us */
	double preempt_us, quantum_us, dispatch_us, switch_us;
	struct ts_spec ts;
	double slo;
	uint64_t n, made, done;
	int overloaded;
	struct req *rq;
	struct worker w[MAX_W];
	struct hg_dq_fifo central, waitq, input, typed[HG_CLASSES];
	struct hg_darc darc;
	struct hg_fc fc;
	double *slow[HG_CLASSES];
	uint64_t n_slow[HG_CLASSES];
	uint64_t rng;
	int is_long[HG_CLASSES];
};

static struct hg_dq_req qmem[MAX_W + HG_CLASSES + 3][QCAP];

#define MAX_CLASSES 4u		/* the workloads' classes */

static double
uniform(struct sim *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return ((s->rng * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

static uint64_t
idle_set(const struct sim *s)
{
	uint64_t m = 0;
	unsigned i;

	for (i = 0; i < s->W; i++)
		if (!s->w[i].busy)
			m |= 1ull << i;
	return m;
}

static void
push_to(struct sim *s, struct hg_dq_fifo *f, uint64_t id, int head)
{
	struct hg_dq_req q = { .arrival_ns = (uint64_t)(s->rq[id].arrival * 1000),
			       .cookie = id, .cls = s->rq[id].cls,
			       .flow = s->rq[id].flow };

	if ((head ? hg_dq_push_head(f, &q) : hg_dq_push(f, &q)) < 0)
		s->overloaded = 1;
}

static void
push(struct sim *s, struct hg_dq_fifo *f, uint64_t id)
{
	push_to(s, f, id, 0);
}

static int64_t
pop(struct hg_dq_fifo *f)
{
	struct hg_dq_req q;

	return hg_dq_pop(f, &q) < 0 ? -1 : (int64_t)q.cookie;
}

/* Synergy's quantum: 2 x the worker's EMA of short service time (5 us
 * until it has seen one), as the library computes it. */
static double
syn_quantum(const struct worker *k)
{
	return 2 * (k->ema > 0 ? k->ema : 5);
}

/* How long TS runs a request before preempting it. */
static double
ts_slice(const struct sim *s)
{
	return s->quantum_us - (s->ts.cost == TS_PERIOD ? s->preempt_us : 0);
}

/* Runs request id on worker w from now for one segment: to its end, or
 * to the next preemption check (TS's slice; Synergy's timer, for long
 * requests only). fresh: it starts or resumes here (the library's timer
 * starts again), rather than going on after a check. */
static void
run_seg(struct sim *s, unsigned w, int64_t id, double now, int fresh)
{
	struct worker *k = &s->w[w];
	struct req *r = &s->rq[id];
	double seg = r->left;

	if (s->pol == P_TS && seg > ts_slice(s))
		seg = ts_slice(s);
	if (s->pol == P_SYNERGY && s->is_long[r->cls]) {
		if (fresh)
			k->long_start = now;
		if (seg > syn_quantum(k))
			seg = syn_quantum(k);
	}
	k->busy = 1;
	k->cur = id;
	k->seg = now;
	k->end = now + seg;
}

static void
run(struct sim *s, unsigned w, int64_t id, double now)
{
	run_seg(s, w, id, now, 1);
}

/* Synergy's steal: half (at most STEAL_MAX) of the first other queue
 * holding more than the threshold (1), in order from w. */
static int
steal(struct sim *s, unsigned w)
{
	unsigned i, k, take;
	struct hg_dq_fifo *v;
	struct hg_dq_req q;

	for (i = 1; i < s->W; i++) {
		v = &s->w[(w + i) % s->W].local;
		if (v->n <= 1)
			continue;
		take = v->n / 2 < STEAL_MAX ? v->n / 2 : STEAL_MAX;
		for (k = 0; k < take && hg_dq_pop(v, &q) == 0; k++)
			hg_dq_push(&s->w[w].local, &q);
		return 1;
	}
	return 0;
}

static int64_t
next_synergy(struct sim *s, unsigned w)
{
	enum hg_src src[5];
	unsigned n = hg_synergy_order(0, 1, 1, 1, src), i;
	int64_t id;

	for (i = 0; i < n; i++) {
		switch (src[i]) {
		case HG_SRC_LOCAL:
			id = pop(&s->w[w].local);
			break;
		case HG_SRC_WAIT_QUEUE:
			id = pop(&s->waitq);
			break;
		case HG_SRC_STEAL:
			id = steal(s, w) ? pop(&s->w[w].local) : -1;
			break;
		default:	/* the wait queue is on: nothing kept apart */
			id = -1;
		}
		if (id >= 0)
			return id;
	}
	return -1;
}

static int64_t
next_darc(struct sim *s, unsigned w)
{
	uint64_t head[HG_CLASSES];
	unsigned c;
	int pick;

	for (c = 0; c < HG_CLASSES; c++) {
		const struct hg_dq_fifo *f = &s->typed[c];

		head[c] = f->n ? f->slot[f->head].arrival_ns : UINT64_MAX;
	}
	pick = hg_darc_pick(&s->darc, w, head);
	return pick < 0 ? -1 : pop(&s->typed[pick]);
}

/* TS keeps a queue per request type, as Shinjuku does. A worker serves
 * the type whose head is the most late against its SLO (slo x its service
 * time) or, by_type, the shortest type with work. */
static int64_t
next_ts(struct sim *s, double now)
{
	double worst = -1, late;
	int pick = -1;
	unsigned c;

	for (c = 0; c < s->wl->n; c++) {
		const struct hg_dq_fifo *f = &s->typed[c];

		if (f->n == 0)
			continue;
		if (s->ts.by_type)
			return pop(&s->typed[c]);
		late = (now - f->slot[f->head].arrival_ns / 1000.0) /
		       (s->slo * s->wl->svc_us[c]);
		if (late > worst) {
			worst = late;
			pick = (int)c;
		}
	}
	return pick < 0 ? -1 : pop(&s->typed[pick]);
}

static void start_next(struct sim *s, unsigned w, double now);

/* Flat combining, steps 1-4: the idle worker w, if it wins the try-lock,
 * hands one arrival to each other idle worker and the rest to the central
 * queue (where it takes its own), paying dispatch_us for each; the others
 * start when handed. */
static double
combine(struct sim *s, unsigned w, double now)
{
	uint64_t idle = idle_set(s);
	double t = now;
	int64_t id;
	int to;

	if (!hg_fc_try_combine(&s->fc, (int)w))
		return now;
	while ((id = pop(&s->input)) >= 0) {
		t += s->dispatch_us;
		to = hg_fc_target(&s->fc, &idle, (int)w);
		if (to < 0)
			push(s, &s->central, (uint64_t)id);
		else
			run(s, (unsigned)to, id, t);
	}
	hg_fc_release(&s->fc, (int)w);
	return t;
}

static int64_t
next_request(struct sim *s, unsigned w, double *now)
{
	int64_t id;

	switch (s->pol) {
	case P_DFCFS:
		return pop(&s->w[w].local);
	case P_CFCFS:
		return pop(&s->central);
	case P_TS:
		return next_ts(s, *now);
	case P_SYNERGY:
		return next_synergy(s, w);
	case P_DARC:
		return next_darc(s, w);
	default:
		if ((id = pop(&s->w[w].local)) >= 0)
			return id;
		*now = combine(s, w, *now);
		if ((id = pop(&s->w[w].local)) >= 0)
			return id;
		return pop(&s->central);
	}
}

static void
start_next(struct sim *s, unsigned w, double now)
{
	int64_t id;

	s->w[w].busy = 0;
	s->w[w].cur = -1;
	id = next_request(s, w, &now);
	if (id >= 0)
		run(s, w, id, now);
}

/* Requests in the queues every worker may look at (a worker's own queue
 * is its own, and Synergy's stealing is left to the owner's neighbours:
 * any queue longer than one may be stolen from). */
static int
shared_work(const struct sim *s)
{
	uint32_t n = s->central.n + s->waitq.n + s->input.n, c;

	for (c = 0; c < s->wl->n; c++)
		n += s->typed[c].n;
	for (c = 0; s->pol == P_SYNERGY && c < s->W; c++)
		n += s->w[c].local.n > 1;
	return n > 0;
}

/* Idle workers poll: after work was queued where several may take it,
 * each idle one looks once (DARC: its reserved workers first, Algorithm
 * 1), until the work is taken. */
static void
wake(struct sim *s, uint32_t cls, double now)
{
	uint64_t idle = idle_set(s), tried = 0;
	int w;

	while ((idle & ~tried) != 0 && shared_work(s)) {
		if (s->pol == P_DARC)
			w = hg_darc_worker_for(&s->darc, cls, idle & ~tried);
		else
			w = __builtin_ctzll(idle & ~tried);
		if (w < 0)
			return;
		tried |= 1ull << w;
		start_next(s, (unsigned)w, now);
		idle = idle_set(s);
	}
}

/* An arrival goes where the policy queues it; idle workers that may run
 * it look for work. */
static void
arrive(struct sim *s, uint64_t id)
{
	struct req *r = &s->rq[id];
	unsigned own = r->flow % s->W;

	switch (s->pol) {
	case P_DFCFS:
		push(s, &s->w[own].local, id);
		if (!s->w[own].busy)
			start_next(s, own, r->arrival);
		return;
	case P_SYNERGY:			/* steered; the idle may steal */
		push(s, &s->w[own].local, id);
		if (!s->w[own].busy)
			start_next(s, own, r->arrival);
		break;
	case P_CFCFS:
		push(s, &s->central, id);
		break;
	case P_TS:
		push(s, &s->typed[r->cls], id);
		break;
	case P_DARC:
		push(s, &s->typed[r->cls], id);
		break;
	default:
		push(s, &s->input, id);
	}
	wake(s, r->cls, r->arrival);
}

static void
finish(struct sim *s, unsigned w, double now)
{
	struct worker *k = &s->w[w];
	struct req *r = &s->rq[k->cur];
	uint64_t id = (uint64_t)k->cur;

	if (id >= s->n / 10)		/* the first 10% warm up */
		s->slow[r->cls][s->n_slow[r->cls]++] = (now - r->arrival) / r->service;
	if (s->pol == P_SYNERGY && !s->is_long[r->cls])
		k->ema = k->ema > 0 ? (k->ema + r->service) / 2 : r->service;
	if (s->pol == P_DARC)
		hg_darc_complete(&s->darc, r->cls, (uint64_t)(r->service * 1000));
	s->done++;
	start_next(s, w, now);
}

/* TS's preemption: the request goes back to its type's queue (to the
 * head, as Shinjuku's multi-queue policy puts it), and the 1 us is the
 * worker's (its interrupt and context switch) or, read the other way, the
 * preempted request's, the worker free at once. */
static void
ts_preempt(struct sim *s, unsigned w, double now)
{
	struct worker *k = &s->w[w];
	uint64_t id = (uint64_t)k->cur;
	struct req *r = &s->rq[id];

	if (s->ts.cost == TS_REQUEST)
		r->left += s->preempt_us;
	push_to(s, &s->typed[r->cls], id, !s->ts.to_tail);
	if (s->ts.cost == TS_REQUEST) {
		start_next(s, w, now);
	} else {
		k->cur = -1;
		k->seg = now;
		k->end = now + s->preempt_us;
	}
	wake(s, r->cls, now);
}

/* The end of a segment: done, or a preemption check (TS always preempts
 * at its slice's end; Synergy only if requests wait in the worker's queue). */
static void
segment_end(struct sim *s, unsigned w, double now)
{
	struct worker *k = &s->w[w];
	struct req *r;

	if (k->cur < 0) {		/* a preemption's cost paid */
		start_next(s, w, now);
		return;
	}
	r = &s->rq[k->cur];
	r->left -= now - k->seg;
	if (r->left <= 1e-9) {
		finish(s, w, now);
		return;
	}
	if (s->pol == P_SYNERGY &&
	    !hg_preempt_due(1, (uint64_t)(k->long_start * 1000),
			    (uint64_t)(syn_quantum(k) * 1000),
			    (uint64_t)(now * 1000 + 0.5), k->local.n > 0)) {
		run_seg(s, w, k->cur, now, 0);	/* nothing waits: go on */
		return;
	}
	if (s->pol == P_TS) {
		ts_preempt(s, w, now);
		return;
	}
	push(s, &s->waitq, (uint64_t)k->cur);
	k->cur = -1;
	k->seg = now;
	k->end = now + s->switch_us;	/* a yield to another green thread */
	wake(s, r->cls, now);
}

/* The k-th smallest of v[0..n) (v is reordered): Hoare's selection, which
 * the C library lacks; a sort of every point's millions of slowdowns took
 * a third of the simulator's time. Hoare's partition stops on equal keys,
 * so the many slowdowns of exactly 1 still split evenly. */
static double
select_kth(double *v, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1, i, j;
	double pivot, t;

	while (lo < hi) {
		pivot = v[lo + (hi - lo) / 2];
		for (i = lo, j = hi; i <= j;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

static double
p999(double *v, uint64_t n)
{
	return n == 0 ? 0 : select_kth(v, (int64_t)n, (int64_t)((double)(n - 1) * 0.999));
}

static void
sim_init(struct sim *s, const struct workload *wl, enum pol pol, unsigned W,
	 double rate, uint64_t n, uint64_t seed)
{
	unsigned i;

	memset(s->w, 0, sizeof(s->w));
	s->wl = wl;
	s->pol = pol;
	s->W = W;
	s->rate = rate;
	s->n = n;
	s->made = s->done = 0;
	s->overloaded = 0;
	s->rng = seed * 0x9E3779B97F4A7C15ull + 1;
	for (i = 0; i < W; i++) {
		s->w[i].cur = -1;
		hg_dq_fifo_init(&s->w[i].local, qmem[i], QCAP);
	}
	hg_dq_fifo_init(&s->central, qmem[MAX_W], QCAP);
	hg_dq_fifo_init(&s->waitq, qmem[MAX_W + 1], QCAP);
	hg_dq_fifo_init(&s->input, qmem[MAX_W + 2], QCAP);
	for (i = 0; i < HG_CLASSES; i++) {
		hg_dq_fifo_init(&s->typed[i], qmem[MAX_W + 3 + i], QCAP);
		s->n_slow[i] = 0;
		s->is_long[i] = i < wl->n && wl->svc_us[i] >= 10;
	}
	hg_darc_init(&s->darc, W);
	/* Perséphone's 50,000-sample windows, but the first one (c-FCFS
	 * while profiling) must end inside the warm-up (the first 10%) */
	s->darc.min_samples = n / 20 < 50000 ? n / 20 : 50000;
	hg_fc_init(&s->fc);
}

static void
make_request(struct sim *s, uint64_t id, double t)
{
	double u = uniform(s) * 100, acc = 0;
	unsigned c;

	for (c = 0; c + 1 < s->wl->n; c++) {
		acc += s->wl->pct[c];
		if (u < acc)
			break;
	}
	s->rq[id] = (struct req){ .arrival = t, .service = s->wl->svc_us[c],
				  .left = s->wl->svc_us[c], .cls = c,
				  .flow = (uint32_t)(uniform(s) * FLOWS) };
}

/* One run; fills worst[c] with each class's p99.9 slowdown. Returns 0, or
 * -1 if a queue overflowed (the load is beyond what the policy holds). */
static int
sim_run(struct sim *s, double *worst)
{
	double t_arr = 0, t_w;
	unsigned i, wi;

	t_arr = -log(1 - uniform(s)) / s->rate;
	while (s->done < s->n && !s->overloaded) {
		t_w = INFINITY;
		wi = 0;
		for (i = 0; i < s->W; i++)
			if (s->w[i].busy && s->w[i].end < t_w) {
				t_w = s->w[i].end;
				wi = i;
			}
		if (s->made < s->n && t_arr <= t_w) {
			make_request(s, s->made, t_arr);
			arrive(s, s->made++);
			t_arr += -log(1 - uniform(s)) / s->rate;
		} else if (t_w < INFINITY) {
			segment_end(s, wi, t_w);
		} else {
			break;	/* a policy left work it will not run */
		}
	}
	for (i = 0; i < s->wl->n; i++)
		worst[i] = p999(s->slow[i], s->n_slow[i]);
	return s->overloaded || s->done < s->n ? -1 : 0;
}

/* ---- the search and its output ---- */

struct opts {
	unsigned workers, steps;
	uint64_t requests, seed;	/* requests: the most one point runs */
	double seconds;			/* simulated time per point */
	struct ts_spec ts;
	double slo, preempt_us, quantum_us, dispatch_us, switch_us;
	const char *workload, *policies, *mix;
};

static double
mean_service(const struct workload *wl)
{
	double m = 0;
	unsigned c;

	for (c = 0; c < wl->n; c++)
		m += wl->svc_us[c] * wl->pct[c] / 100;
	return m;
}

/* One load point: prints it as a JSON line; returns 1 if every class met
 * the SLO. */
static int
point(struct sim *s, const struct opts *o, const struct workload *wl,
      enum pol p, double mrps, int print)
{
	double worst[HG_CLASSES] = { 0 };
	int ok, rc;
	unsigned c;
	uint64_t n = (uint64_t)(mrps * o->seconds * 1e6);

	sim_init(s, wl, p, o->workers, mrps, n < o->requests ? n : o->requests,
		 o->seed);
	s->preempt_us = o->preempt_us;
	s->quantum_us = o->quantum_us;
	s->dispatch_us = o->dispatch_us;
	s->switch_us = o->switch_us;
	s->ts = o->ts;
	s->slo = o->slo;
	rc = sim_run(s, worst);
	ok = rc == 0;
	for (c = 0; c < wl->n; c++)
		ok &= worst[c] <= o->slo;
	if (!print)
		return ok;
	printf("{\"kind\": \"point\", \"workload\": \"%s\", \"policy\": \"%s\", "
	       "\"mrps\": %.4f, \"overloaded\": %s, \"ok\": %s, \"p999_slowdown\": {",
	       wl->name, pol_name[p], mrps, rc ? "true" : "false",
	       ok ? "true" : "false");
	for (c = 0; c < wl->n; c++)
		printf("%s\"%s\": %.3f", c ? ", " : "", wl->cls_name[c],
		       rc ? INFINITY : worst[c]);
	printf("}, \"darc_updates\": %llu, \"fc_combines\": %llu}\n",
	       (unsigned long long)s->darc.updates,
	       (unsigned long long)s->fc.combines);
	fflush(stdout);
	return ok;
}

/* The sweep (steps points up to the peak, one past the first failure for
 * the plot), then a bisection between the last load that met the SLO and
 * the first that did not. */
static void
search(struct sim *s, const struct opts *o, const struct workload *wl,
       enum pol p)
{
	double peak = o->workers / mean_service(wl), lo = 0, hi = peak, mid;
	unsigned i, fails = 0, k;

	for (i = 1; i <= o->steps && fails < 2; i++) {
		double mrps = peak * i / o->steps;

		if (point(s, o, wl, p, mrps, 1)) {
			if (fails == 0)
				lo = mrps;
		} else if (fails++ == 0) {
			hi = mrps;
		}
	}
	for (k = 0; k < 4 && fails > 0; k++) {
		mid = (lo + hi) / 2;
		if (point(s, o, wl, p, mid, 0))
			lo = mid;
		else
			hi = mid;
	}
	printf("{\"kind\": \"result\", \"workload\": \"%s\", \"policy\": \"%s\", "
	       "\"workers\": %u, \"mrps_at_slo\": %.3f, \"peak_mrps\": %.3f, "
	       "\"slo\": %g}\n", wl->name, pol_name[p], o->workers, lo, peak, o->slo);
	fflush(stdout);
}

static void
usage(void)
{
	fprintf(stderr, "usage: hg-policy-sim [--workload extreme|high|zippydb|"
		"getscan|all] [--policies d-FCFS,c-FCFS,TS,Synergy,DARC,FC]\n"
		"       [--workers 16] [--requests 1000000] [--steps 20] "
		"[--slo 10]\n       [--preempt-us 1] [--quantum-us 5] "
		"[--switch-us 0.1] [--dispatch-us 0.05] [--seed 1]\n"
		"       [--mix NAME:US:PCT,...]   (a workload of your own)\n"
		"       [--ts-cost period|worker|request]  (TS's 1 us: in the "
		"quantum, after it, or on the request)\n"
		"       [--ts-queue slo|type]  (TS's next queue: Shinjuku's "
		"age/SLO, or the shortest type)\n"
		"       [--ts-requeue head|tail]  (where a preempted request "
		"goes back)\n");
	exit(2);
}

static const char *const ts_costs[] = { "period", "worker", "request", NULL };
static const char *const ts_queues[] = { "slo", "type", NULL };
static const char *const ts_requeues[] = { "head", "tail", NULL };

/* The index of arg in words, or usage. */
static int
word(const char *arg, const char *const *words)
{
	int i;

	for (i = 0; words[i] != NULL; i++)
		if (strcmp(arg, words[i]) == 0)
			return i;
	usage();
	return -1;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "workload", 1, NULL, 'w' }, { "policies", 1, NULL, 'p' },
		{ "workers", 1, NULL, 'n' }, { "requests", 1, NULL, 'r' },
		{ "steps", 1, NULL, 's' }, { "slo", 1, NULL, 'l' },
		{ "preempt-us", 1, NULL, 'e' }, { "quantum-us", 1, NULL, 'q' },
		{ "dispatch-us", 1, NULL, 'd' }, { "seed", 1, NULL, 'S' },
		{ "seconds", 1, NULL, 't' }, { "switch-us", 1, NULL, 'x' },
		{ "mix", 1, NULL, 'm' }, { "ts-cost", 1, NULL, 'T' },
		{ "ts-queue", 1, NULL, 'Q' }, { "ts-requeue", 1, NULL, 'R' },
		{ NULL, 0, NULL, 0 } };
	int c;

	*o = (struct opts){ .workers = 16, .steps = 10, .requests = 6000000,
			    .seed = 1, .seconds = 1, .slo = 10, .preempt_us = 1,
			    .quantum_us = 5, .dispatch_us = 0.05, .switch_us = 0.1,
			    .workload = "all",
			    .policies = "d-FCFS,c-FCFS,TS,Synergy,DARC,FC" };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'w': o->workload = optarg; break;
		case 'p': o->policies = optarg; break;
		case 'n': o->workers = (unsigned)atoi(optarg); break;
		case 'r': o->requests = strtoull(optarg, NULL, 10); break;
		case 's': o->steps = (unsigned)atoi(optarg); break;
		case 'l': o->slo = atof(optarg); break;
		case 'e': o->preempt_us = atof(optarg); break;
		case 'q': o->quantum_us = atof(optarg); break;
		case 'd': o->dispatch_us = atof(optarg); break;
		case 'S': o->seed = strtoull(optarg, NULL, 10); break;
		case 't': o->seconds = atof(optarg); break;
		case 'x': o->switch_us = atof(optarg); break;
		case 'm': o->mix = optarg; break;
		case 'T': o->ts.cost = (enum ts_cost)word(optarg, ts_costs); break;
		case 'Q': o->ts.by_type = word(optarg, ts_queues); break;
		case 'R': o->ts.to_tail = word(optarg, ts_requeues); break;
		default: usage();
		}
	}
	if (o->workers < 2 || o->workers > MAX_W || o->requests < 1000 ||
	    o->steps < 2 || !(o->preempt_us >= 0) ||
	    !(o->quantum_us > (o->ts.cost == TS_PERIOD ? o->preempt_us : 0)))
		usage();
}

/* --mix NAME:US:PCT,...: a workload of measured classes (bench/kv). */
static int
parse_mix(const char *spec)
{
	char buf[256], *save = NULL, *item;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (item = strtok_r(buf, ",", &save); item && custom.n < MAX_CLASSES;
	     item = strtok_r(NULL, ",", &save)) {
		double us, pct;

		if (sscanf(item, "%23[^:]:%lf:%lf", custom_names[custom.n], &us,
			   &pct) != 3 || !(us > 0) || !(pct > 0))
			return -1;
		custom.svc_us[custom.n] = us;
		custom.pct[custom.n] = pct;
		custom.cls_name[custom.n] = custom_names[custom.n];
		custom.n++;
	}
	return custom.n > 0 ? 0 : -1;
}

/* Is name in the comma-separated list? */
static int
listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	static struct sim s;
	struct opts o;
	unsigned w, p, c;

	hg_tool_version(argc, argv, "hg-policy-sim");
	parse(argc, argv, &o);
	s.rq = malloc(o.requests * sizeof(*s.rq));
	for (c = 0; c < MAX_CLASSES; c++)
		if ((s.slow[c] = malloc(o.requests * sizeof(double))) == NULL)
			return 1;
	if (s.rq == NULL)
		return 1;
	if (o.mix != NULL) {
		if (parse_mix(o.mix) < 0)
			usage();
		for (p = 0; p < P_N; p++)
			if (listed(o.policies, pol_name[p]))
				search(&s, &o, &custom, (enum pol)p);
		return 0;
	}
	for (w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++) {
		if (strcmp(o.workload, "all") != 0 &&
		    strcmp(o.workload, workloads[w].name) != 0)
			continue;
		for (p = 0; p < P_N; p++)
			if (listed(o.policies, pol_name[p]))
				search(&s, &o, &workloads[w], (enum pol)p);
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Request dispatch policies as plain functions over queue state, with the
 * clock passed in: no rings, threads, green threads or doorbells here.
 * libhgclient runs them over its real queues; bench/policies' simulator
 * runs the same functions over simulated ones.
 *
 *   synergy  requests steered at RX to each worker's own queue; Synergy's
 *            Algorithm 2 orders where an idle worker looks next
 *            (hg_synergy_order); stealing, the wait queue and conditional
 *            preemption (preempt.h) are the mechanism's.
 *   cfcfs    one central FIFO per app: a worker takes a request only when
 *            it is idle.
 *   darc     Perséphone's DARC (§3): typed queues, classes profiled over
 *            windows, workers reserved per group of classes (Algorithm
 *            2), short classes may run on workers reserved for longer ones
 *            and never the reverse (Algorithm 1); not work conserving.
 *   fc       flat combining: no dispatcher of its own; an idle worker that
 *            wins a try-lock drains the arrivals and hands them out.
 *
 * Pure C11 with no dependencies, so that the daemon, the library and the
 * simulator all compile it.
 */
#ifndef HG_POLICY_DISPATCH_H
#define HG_POLICY_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../proto/hg_shm.h"

#define HG_CLASSES      8u	/* request classes: the RPC header's type */
_Static_assert(HG_CLASSES == HG_CLASSES_SHM, "the region's class counters are the policies' classes");
#define HG_DQ_WORKERS   64u	/* workers one policy state can track */

enum hg_dispatch {
	HG_DISPATCH_SYNERGY, HG_DISPATCH_CFCFS, HG_DISPATCH_DARC, HG_DISPATCH_FC,
	HG_DISPATCH_N
};

/* A request as a policy sees it; cookie and data are the mechanism's
 * (the library keeps a receive descriptor there). */
struct hg_dq_req {
	uint64_t arrival_ns;	/* any clock, the same for every request */
	uint64_t cookie;
	uint32_t cls;		/* < HG_CLASSES */
	uint32_t flow;
	uint8_t data[16];
};

/* A bounded FIFO over memory the caller owns (cap a power of two). */
struct hg_dq_fifo {
	struct hg_dq_req *slot;
	uint32_t cap, head, n;
};

static inline void
hg_dq_fifo_init(struct hg_dq_fifo *f, struct hg_dq_req *mem, uint32_t cap)
{
	f->slot = mem;
	f->cap = cap;
	f->head = f->n = 0;
}

static inline int
hg_dq_push(struct hg_dq_fifo *f, const struct hg_dq_req *r)
{
	if (f->n == f->cap)
		return -1;
	f->slot[(f->head + f->n++) & (f->cap - 1)] = *r;
	return 0;
}

/* Ahead of every queued request (a preempted one resuming first). */
static inline int
hg_dq_push_head(struct hg_dq_fifo *f, const struct hg_dq_req *r)
{
	if (f->n == f->cap)
		return -1;
	f->head = (f->head - 1) & (f->cap - 1);
	f->slot[f->head] = *r;
	f->n++;
	return 0;
}

static inline int
hg_dq_pop(struct hg_dq_fifo *f, struct hg_dq_req *r)
{
	if (f->n == 0)
		return -1;
	*r = f->slot[f->head];
	f->head = (f->head + 1) & (f->cap - 1);
	f->n--;
	return 0;
}

/* ---- Synergy's Algorithm 2: where an idle worker looks, in order ---- */

enum hg_src {
	HG_SRC_WAIT_QUEUE,	/* a preempted request from the app's wait queue */
	HG_SRC_LOCAL,		/* the worker's own queue */
	HG_SRC_OWN_PREEMPTED,	/* preempted here while the wait queue is off */
	HG_SRC_STEAL,		/* half of another worker's queue */
};

/* Fills out[] with the sources to try, in order; returns how many.
 * congested: the wait queue is congested (check it first); wait_queue,
 * steal: those mechanisms are on; green: the worker can resume a
 * preempted request (it runs on green threads). */
unsigned hg_synergy_order(int congested, int wait_queue, int steal, int green,
			  enum hg_src out[5]);

/* ---- DARC ---- */

struct hg_darc_class {
	uint64_t win_n, win_ns;	/* completions and service time this window */
	double mean_ns;		/* S: mean service time, moving average */
	double ratio;		/* R: share of completions, moving average */
};

struct hg_darc {
	uint32_t n_workers;
	double delta;		/* classes within delta x of a group's first join it */
	uint64_t min_samples;	/* completions a window needs */
	double threshold;	/* relative move of a group's demand that updates */
	int active;		/* 0: the first window runs as c-FCFS */
	uint64_t updates;	/* reservations made */
	uint64_t windows;	/* profiling windows closed */
	uint32_t n_order;
	uint8_t order[HG_CLASSES];	/* profiled classes, shortest first */
	uint64_t reserved[HG_CLASSES];	/* per class: its group's workers */
	uint64_t eligible[HG_CLASSES];	/* ... those and the stealable ones */
	double demand[HG_CLASSES];	/* workers the reservation gave for */
	struct hg_darc_class cls[HG_CLASSES];
};

/* Defaults: delta 2, min_samples 5,000, threshold 0.1. Perséphone
 * (§4.3.3) uses 50,000 samples and 10% at millions of requests per
 * second; 5,000 is a fraction of a second at the tens of thousands a
 * tenant here serves (bench/policies sets 50,000). */
void hg_darc_init(struct hg_darc *d, uint32_t n_workers);

/* Algorithm 2 from each class's mean service time S and share R (R 0: a
 * class not seen; it runs on the spillway worker). */
void hg_darc_reserve(struct hg_darc *d, const double *S, const double *R);

/* A completion: folds into the window; at the window's end updates the
 * reservation if a group's demand moved by more than the threshold (or
 * none was made yet). Returns 1 when it made a reservation. */
int hg_darc_complete(struct hg_darc *d, uint32_t cls, uint64_t service_ns);

/* Algorithm 1 for an idle worker: the class whose queue it should take
 * from (head_ns[c]: arrival of the request at the head of class c's
 * queue, UINT64_MAX: empty), shortest first among the classes it may
 * run (before the first reservation: the oldest head, c-FCFS); -1: none,
 * it stays idle. */
int hg_darc_pick(const struct hg_darc *d, uint32_t worker,
		 const uint64_t *head_ns);

/* Algorithm 1 for an arrival of class cls: an idle worker (bit set in
 * idle) reserved for its group, else one it may steal, else -1. */
int hg_darc_worker_for(const struct hg_darc *d, uint32_t cls, uint64_t idle);

/* ---- flat combining ---- */

struct hg_fc {
	int owner;		/* the combiner, -1: none (atomic in the library) */
	uint64_t combines;	/* times a worker became the combiner */
	uint64_t handed;	/* requests it handed to another worker */
	uint32_t next;		/* round robin over idle workers */
};

void hg_fc_init(struct hg_fc *f);
/* Step 1-2: an idle worker tries to become the combiner. */
int hg_fc_try_combine(struct hg_fc *f, int worker);
/* Step 4: it hands the role back and works again. */
void hg_fc_release(struct hg_fc *f, int worker);
/* Step 3: the worker a drained request goes to: an idle one other than
 * the combiner (round robin; it leaves *idle: one request each), or -1
 * for the central queue, where whoever is free next, the combiner too,
 * takes it. */
int hg_fc_target(struct hg_fc *f, uint64_t *idle, int combiner);

/* ---- names ---- */

const char *hg_dispatch_name(enum hg_dispatch p);

#endif /* HG_POLICY_DISPATCH_H */

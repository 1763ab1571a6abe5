/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "dispatch.h"

static const char *const names[HG_DISPATCH_N] = {
	[HG_DISPATCH_SYNERGY] = "synergy", [HG_DISPATCH_CFCFS] = "cfcfs",
	[HG_DISPATCH_DARC] = "darc", [HG_DISPATCH_FC] = "fc",
};

const char *
hg_dispatch_name(enum hg_dispatch p)
{
	return (unsigned)p < HG_DISPATCH_N ? names[p] : "?";
}

unsigned
hg_synergy_order(int congested, int wait_queue, int steal, int green,
		 enum hg_src out[5])
{
	int wq = green && wait_queue;
	unsigned n = 0;

	/* a congested wait queue goes first: its requests waited longest */
	if (wq && congested)
		out[n++] = HG_SRC_WAIT_QUEUE;
	out[n++] = HG_SRC_LOCAL;
	if (wq)
		out[n++] = HG_SRC_WAIT_QUEUE;
	if (green)
		out[n++] = HG_SRC_OWN_PREEMPTED;
	if (steal)
		out[n++] = HG_SRC_STEAL;
	return n;
}

/* ---- DARC ---- */

void
hg_darc_init(struct hg_darc *d, uint32_t n_workers)
{
	memset(d, 0, sizeof(*d));
	d->n_workers = n_workers < 1 ? 1 : n_workers > HG_DQ_WORKERS ?
		       HG_DQ_WORKERS : n_workers;
	d->delta = 2.0;
	d->min_samples = 5000;
	d->threshold = 0.1;
}

static uint64_t
bit(uint32_t w)
{
	return 1ull << w;
}

/* Workers from w on: what a group may steal (reserved for longer ones,
 * not reserved yet, the spillway). */
static uint64_t
from(uint32_t w, uint32_t n)
{
	uint64_t all = n >= 64 ? ~0ull : bit(n) - 1;

	return w >= 64 ? 0 : all & ~(bit(w) - 1);
}

/* The profiled classes (R > 0), shortest mean service time first. */
static uint32_t
sort_classes(const double *S, const double *R, uint8_t *order)
{
	uint32_t n = 0, i, j;
	uint8_t t;

	for (i = 0; i < HG_CLASSES; i++)
		if (R[i] > 0)
			order[n++] = (uint8_t)i;
	for (i = 1; i < n; i++)		/* insertion sort of <= 8 */
		for (j = i; j > 0 && S[order[j]] < S[order[j - 1]]; j--) {
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	return n;
}

/* Algorithm 2. Workers 0..n-2 are handed out in order, shortest group
 * first; the last is the spillway: what a group gets when none is left,
 * and where classes not profiled yet run. */
void
hg_darc_reserve(struct hg_darc *d, const double *S, const double *R)
{
	uint32_t n = d->n_workers, spill = n - 1, next = 0, i, j, k, p;
	double total = 0, g, want;
	uint64_t mask;

	for (i = 0; i < HG_CLASSES; i++) {
		total += R[i] > 0 ? S[i] * R[i] : 0;
		d->reserved[i] = d->eligible[i] = bit(spill);
		d->demand[i] = 0;
	}
	d->n_order = sort_classes(S, R, d->order);
	for (i = 0; i < d->n_order; i = j) {
		/* a group: the classes within delta x of its shortest */
		g = 0;
		for (j = i; j < d->n_order &&
		     S[d->order[j]] <= d->delta * S[d->order[i]]; j++)
			g += S[d->order[j]] * R[d->order[j]];
		want = total > 0 ? g / total * n : 1;
		p = (uint32_t)(want + 0.5);	/* round; want >= 0 */
		p = p ? p : 1;
		mask = 0;
		for (k = 0; k < p; k++)
			mask |= bit(next < spill ? next++ : spill);
		for (k = i; k < j; k++) {
			d->reserved[d->order[k]] = mask;
			d->eligible[d->order[k]] = mask | from(next, n);
			d->demand[d->order[k]] = want;
		}
	}
	d->active = 1;
	d->updates++;
}

/* Has any class's share of the workers moved by more than the threshold
 * since the reservation was made? */
static int
moved(const struct hg_darc *d, const double *S, const double *R)
{
	double total = 0, want;
	uint32_t i;

	for (i = 0; i < HG_CLASSES; i++)
		total += S[i] * R[i];
	for (i = 0; i < HG_CLASSES; i++) {
		want = total > 0 ? S[i] * R[i] / total * d->n_workers : 0;
		if ((want > 0) != (d->demand[i] > 0))
			return 1;	/* a class appeared or went */
	}
	/* groups: compare each group's demand as the reservation made it */
	for (i = 0; i < d->n_order; i++) {
		uint32_t c = d->order[i], k;
		double g = 0;

		for (k = 0; k < d->n_order; k++)
			if (d->reserved[d->order[k]] == d->reserved[c])
				g += S[d->order[k]] * R[d->order[k]];
		want = total > 0 ? g / total * d->n_workers : 0;
		if (want - d->demand[c] > d->threshold * d->demand[c] ||
		    d->demand[c] - want > d->threshold * d->demand[c])
			return 1;
	}
	return 0;
}

int
hg_darc_complete(struct hg_darc *d, uint32_t cls, uint64_t service_ns)
{
	double S[HG_CLASSES] = { 0 }, R[HG_CLASSES] = { 0 };
	uint64_t total = 0;
	uint32_t i;
	int update;

	if (cls >= HG_CLASSES)
		return 0;
	d->cls[cls].win_n++;
	d->cls[cls].win_ns += service_ns;
	for (i = 0; i < HG_CLASSES; i++)
		total += d->cls[i].win_n;
	if (total < d->min_samples)
		return 0;
	/* moving averages over windows (weight 1/4 for the new one): one
	 * window's count of a rare class is noisy (250 +- 16 long requests in
	 * 50,000 of Extreme), and a reservation that follows the noise flaps
	 * between rounding a short class's demand up and down */
	for (i = 0; i < HG_CLASSES; i++) {
		struct hg_darc_class *c = &d->cls[i];
		double s = c->win_n ? (double)c->win_ns / (double)c->win_n : 0;
		double r = (double)c->win_n / (double)total;

		if (d->windows == 0 || c->mean_ns == 0) {
			c->mean_ns = s;
			c->ratio = r;
		} else {
			c->mean_ns = s > 0 ? c->mean_ns + (s - c->mean_ns) / 4 : c->mean_ns;
			c->ratio += (r - c->ratio) / 4;
		}
		S[i] = c->mean_ns;
		R[i] = c->ratio;
		c->win_n = c->win_ns = 0;
	}
	d->windows++;
	update = !d->active || moved(d, S, R);
	if (update)
		hg_darc_reserve(d, S, R);
	return update;
}

static int
may_run(const struct hg_darc *d, uint32_t cls, uint32_t worker)
{
	return (d->eligible[cls] & bit(worker)) != 0;
}

int
hg_darc_pick(const struct hg_darc *d, uint32_t worker, const uint64_t *head_ns)
{
	uint64_t oldest = UINT64_MAX;
	int best = -1;
	uint32_t i;

	if (!d->active) {		/* profiling: c-FCFS over the queues */
		for (i = 0; i < HG_CLASSES; i++)
			if (head_ns[i] < oldest) {
				oldest = head_ns[i];
				best = (int)i;
			}
		return best;
	}
	for (i = 0; i < d->n_order; i++)
		if (head_ns[d->order[i]] != UINT64_MAX &&
		    may_run(d, d->order[i], worker))
			return d->order[i];
	/* classes not profiled yet: the spillway's, oldest first */
	for (i = 0; i < HG_CLASSES; i++)
		if (head_ns[i] < oldest && d->demand[i] == 0 &&
		    may_run(d, i, worker)) {
			oldest = head_ns[i];
			best = (int)i;
		}
	return best;
}

static int
lowest(uint64_t set)
{
	return set ? __builtin_ctzll(set) : -1;
}

int
hg_darc_worker_for(const struct hg_darc *d, uint32_t cls, uint64_t idle)
{
	if (!d->active || cls >= HG_CLASSES)
		return lowest(idle & from(0, d->n_workers));
	if (lowest(idle & d->reserved[cls]) >= 0)
		return lowest(idle & d->reserved[cls]);
	return lowest(idle & d->eligible[cls]);
}

/* ---- flat combining ---- */

void
hg_fc_init(struct hg_fc *f)
{
	memset(f, 0, sizeof(*f));
	f->owner = -1;
}

int
hg_fc_try_combine(struct hg_fc *f, int worker)
{
	int none = -1;

	if (!__atomic_compare_exchange_n(&f->owner, &none, worker, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	f->combines++;
	return 1;
}

void
hg_fc_release(struct hg_fc *f, int worker)
{
	if (__atomic_load_n(&f->owner, __ATOMIC_RELAXED) == worker)
		__atomic_store_n(&f->owner, -1, __ATOMIC_RELEASE);
}

int
hg_fc_target(struct hg_fc *f, uint64_t *idle, int combiner)
{
	uint64_t others = *idle & ~bit((uint32_t)combiner), after;
	int w;

	if (others == 0)
		return -1;
	/* round robin: the first idle worker at or after next */
	after = f->next < 64 ? others & ~(bit(f->next) - 1) : 0;
	w = lowest(after ? after : others);
	f->next = (uint32_t)w + 1;
	f->handed++;
	*idle &= ~bit((uint32_t)w);	/* one request each: it is busy now */
	return w;
}

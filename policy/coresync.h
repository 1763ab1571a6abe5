/* SPDX-License-Identifier: BSD-3-Clause
 *
 * CoreSync's joint core allocation and overload control (design.md §6;
 * CoreSync §III, Algorithm 1) as plain functions over the state they
 * read, with the clock passed in: which idle worker may park and when,
 * when a parked one is woken, and when the tenant is persistently
 * overloaded. The mechanism (who asks, the doorbell that wakes, the
 * credit pool these adjust) is not here.
 *
 * Credits: issued = credits handed to clients and not in use at the
 * server; of them, one per session is overcommitted (Credits_OC) and the
 * rest is proportional to the active workers (Credits_prop = R x
 * workers). A worker found nothing for poll_ns: it may park only while no
 * session is drained (zero credits: persistent overload), no other
 * worker of the tenant is parking, and issued - sessions <= R x workers;
 * otherwise it takes (issued - sessions) / workers out of the pool once
 * and keeps polling until the revocation shows in issued. A parked
 * worker gives those credits back when it wakes. ("Polling" is the
 * paper's, on a core of its own: the daemon keeps such a worker
 * allocated, in RX steering, and on a shared CPU it sleeps on its
 * doorbell meanwhile; core_alloc.c.)
 */
#ifndef HG_POLICY_CORESYNC_H
#define HG_POLICY_CORESYNC_H

#include <stdint.h>

/* Who decides how many of a tenant's workers run (the `policy` setting):
 * coresync (Algorithm 1 below: park only when credits are proportional),
 * shenango (an idle worker parks at once, credits play no part) or
 * static (every worker always runs: it polls and never parks). */
enum hg_core_policy { HG_CORE_CORESYNC, HG_CORE_SHENANGO, HG_CORE_STATIC,
		      HG_CORE_N };

enum hg_cs_step {
	HG_CS_POLL,		/* stay allocated (the paper: keep polling) */
	HG_CS_REVOKE,		/* take *revoke out of the pool, stay allocated */
	HG_CS_PARK,		/* park now */
};

/* What the tenant looks like to an idle worker, at now_ns. */
struct hg_cs_view {
	uint64_t now_ns;
	int64_t issued;		/* credits issued, not in use at the server */
	uint32_t sessions;
	uint32_t drained;	/* sessions with zero credits */
	uint32_t workers;	/* active (not parked) workers */
	int other_parking;	/* another worker is between revoke and park */
	int overloaded;		/* hg_cs_overload says so */
};

struct hg_cs_params {
	double r;		/* the proportionality parameter R (50) */
	uint64_t poll_ns;	/* polling before a worker may park */
};

/* One idle worker's progress towards parking. */
struct hg_cs_worker {
	uint64_t idle_since;	/* 0: busy */
	double revoked;		/* credits it took out of the pool */
	int parking;		/* revoked, waiting for issued to follow */
};

/* The worker found no work at v->now_ns: what it does next. */
enum hg_cs_step hg_cs_idle(struct hg_cs_worker *w, const struct hg_cs_params *p,
			   const struct hg_cs_view *v, double *revoke);

/* The worker found work (or parking was called off): the credits it
 * took, to give back to the pool, and its state reset. */
double hg_cs_busy(struct hg_cs_worker *w);

/* Wake one parked worker? Yes when the tenant's queueing delay is above
 * the threshold (much smaller than D_t) and one is parked. */
int hg_cs_wake(uint64_t delay_ns, uint64_t threshold_ns, uint32_t parked);

/* Persistent overload (CoreSync §III-B): a drained session, or the pool
 * decreased at `decreases` successive updates. */
struct hg_cs_overload {
	double last_pool;
	uint32_t decreases;	/* successive decreases so far */
};

int hg_cs_overload(struct hg_cs_overload *o, double pool, uint32_t drained,
		   uint32_t decreases);

#endif /* HG_POLICY_CORESYNC_H */

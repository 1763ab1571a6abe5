/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "coresync.h"

enum hg_cs_step
hg_cs_idle(struct hg_cs_worker *w, const struct hg_cs_params *p,
	   const struct hg_cs_view *v, double *revoke)
{
	double excess = (double)v->issued - (double)v->sessions;
	uint32_t workers = v->workers ? v->workers : 1;

	*revoke = 0;
	if (w->idle_since == 0)
		w->idle_since = v->now_ns ? v->now_ns : 1;
	/* steps 13-21: poll first; never park under persistent overload;
	 * one worker parks at a time */
	if (v->now_ns - w->idle_since < p->poll_ns || v->drained > 0 ||
	    v->overloaded || (v->other_parking && !w->parking))
		return HG_CS_POLL;
	/* steps 23-30: too many credits out for one worker fewer: revoke
	 * this worker's share once, then wait until issued comes down */
	if (excess > p->r * workers) {
		if (w->parking)
			return HG_CS_POLL;
		w->parking = 1;
		w->revoked = excess / workers;
		*revoke = w->revoked;
		return HG_CS_REVOKE;
	}
	return HG_CS_PARK;
}

double
hg_cs_busy(struct hg_cs_worker *w)
{
	double back = w->revoked;

	memset(w, 0, sizeof(*w));
	return back;
}

int
hg_cs_wake(uint64_t delay_ns, uint64_t threshold_ns, uint32_t parked)
{
	return parked > 0 && delay_ns > threshold_ns;
}

int
hg_cs_overload(struct hg_cs_overload *o, double pool, uint32_t drained,
	       uint32_t decreases)
{
	if (pool < o->last_pool)
		o->decreases++;
	else if (pool > o->last_pool)
		o->decreases = 0;
	o->last_pool = pool;
	return drained > 0 || (decreases > 0 && o->decreases >= decreases);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared rings' layout against DPDK's struct rte_ring: the region
 * (hg_shm.h) keeps a ring's geometry out of the shared pages and relies on
 * where rte_ring's producer head starts. The daemon (region.c) and the
 * library (attach.c) both include this, so both builds check it.
 */
#ifndef HG_PROTO_SHM_RING_H
#define HG_PROTO_SHM_RING_H

#include <stddef.h>

#include <rte_ring.h>

#include "hg_shm.h"

_Static_assert(offsetof(struct rte_ring, prod) == HG_RING_GEOM_BYTES,
	       "struct rte_ring layout changed: update HG_RING_GEOM_BYTES");

/* The rings an app's threads take from together (a context's RX ring:
 * its own worker, thieves, a central policy; the wait queue) are
 * relaxed-tail-sync (RTS) on the app's side. With rte_ring's plain MC
 * (or MP) a thread that has taken its slots waits, spinning, until every
 * thread that started before it has moved the tail; a worker preempted
 * between the two steps leaves the app's other workers on that CPU
 * spinning for their whole time slice. Apps share CPUs with each other
 * by design (a two-worker echo on one CPU spent 78% of its time in that
 * wait, and answered 0.2-0.8 M/s for the same CPU time). Under RTS the
 * last thread to finish moves the tail and nobody waits for another;
 * the head may run the whole ring ahead of a stalled tail (htd_max).
 * The daemon's side of these rings is single (RX: it alone produces) or
 * reads only the tails, whose positions RTS keeps where plain rings
 * have them. The FILL and TX rings have one thread on each side. */
#define HG_RING_RX_FLAGS (RING_F_SP_ENQ | RING_F_MC_RTS_DEQ)
#define HG_WQ_FLAGS	 (RING_F_MP_RTS_ENQ | RING_F_MC_RTS_DEQ)

_Static_assert(offsetof(struct rte_ring_rts_headtail, tail.val.pos) ==
		       offsetof(struct rte_ring_headtail, tail),
	       "the daemon reads an RTS side's tail where a plain ring keeps it");
_Static_assert(offsetof(struct rte_ring, rts_cons) == offsetof(struct rte_ring, cons) &&
		       offsetof(struct rte_ring, rts_prod) == offsetof(struct rte_ring, prod),
	       "an RTS side overlays the plain one");

/* Sets up a shared ring of `size` slots with `flags`; an RTS side may run
 * its head a whole ring ahead of its tail: a thread stalled mid-take then
 * holds back only the slots it took, never the other takers. */
static inline int
hg_shm_ring_init(struct rte_ring *r, const char *name, unsigned size, unsigned flags)
{
	int rc = rte_ring_init(r, name, size, flags);

	if (rc == 0 && (flags & RING_F_MC_RTS_DEQ))
		rc = rte_ring_set_cons_htd_max(r, rte_ring_get_capacity(r));
	if (rc == 0 && (flags & RING_F_MP_RTS_ENQ))
		rc = rte_ring_set_prod_htd_max(r, rte_ring_get_capacity(r));
	return rc;
}

#endif /* HG_PROTO_SHM_RING_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Shedding in the driver on a net_af_xdp link: when RX sheds a tenant's
 * datagram (rx_gate.h), or drops one at its app's full ring, its core
 * also marks the tenant in the XDP
 * program's hg_shed map (proto/hg_xdp.h) for the queue it polls, and the
 * program drops the tenant's next datagrams before the kernel copies
 * them into the socket. The map is mmap-ed, so a mark is a plain store:
 * no system call. Each pass the core looks at the tenants it marked and
 * lifts a mark as soon as RX would no longer shed the tenant, since it
 * sees none of their datagrams to decide on while they are marked.
 *
 * One writer per entry: the core that polls the queue.
 */
#ifndef HG_FASTPATH_XDP_SHED_H
#define HG_FASTPATH_XDP_SHED_H

#include "../proto/hg_xdp.h"
#include "rx_gate.h"

_Static_assert(HG_XDP_TENANTS == HG_MAX_TENANTS, "the program's tenants are ours");

/* The mark's word for tenant t on core c's RX queue q. */
static inline uint64_t *
hg_xdp_word(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned q,
	    unsigned t)
{
	HG_ASSERT_CORE(c);	/* the entry's one writer */
	RTE_ASSERT(q < c->n_rxq && t < HG_XDP_TENANTS);
	return &__atomic_load_n(&dp->xdp.shed, __ATOMIC_RELAXED)
		[HG_XDP_SHED_KEY(c->rxq[q].dev_queue, t)];
}

static inline void
hg_xdp_mark(const struct hg_dp *dp, struct hg_fp_core *c, unsigned q, unsigned t)
{
	uint64_t *w;

	if (__atomic_load_n(&dp->xdp.shed, __ATOMIC_RELAXED) == NULL)
		return;
	w = hg_xdp_word(dp, c, q, t);
	if (__atomic_load_n(w, __ATOMIC_RELAXED) != 0)
		return;
	__atomic_store_n(w, 1, __ATOMIC_RELAXED);
	hg_tset_add(&c->xdp_marked, t);
	c->xdp_marks++;
}

/* An app's ring is full: its next datagrams would be dropped as well,
 * after a copy into the socket and a look by RX; for HG_XDP_FULL_US they
 * are dropped in the driver instead (a full socket buffer's drop, in the
 * kernel's stack). Then RX looks again. Not for a tenant with RPC ports,
 * whose clients are owed a reject. */
#define HG_XDP_FULL_US 20u

static inline void
hg_xdp_mark_full(const struct hg_dp *dp, struct hg_fp_core *c, unsigned q,
		 unsigned t)
{
	if (__atomic_load_n(&dp->xdp.shed, __ATOMIC_RELAXED) == NULL ||
	    hg_view(dp, t)->rpc_hi != 0)
		return;
	c->t[t].xdp_until = c->now + c->tsc_us * HG_XDP_FULL_US;
	hg_xdp_mark(dp, c, q, t);
}

static inline void
hg_xdp_unmark(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	unsigned q;

	for (q = 0; q < c->n_rxq; q++)
		__atomic_store_n(hg_xdp_word(dp, c, q, t), 0, __ATOMIC_RELAXED);
	hg_tset_del(&c->xdp_marked, t);
}

/* Would RX still shed tenant t (rx_gate.h's rule, without a datagram in
 * hand)? Its app's ring was full less than HG_XDP_FULL_US ago; or it is
 * out of budget, on a saturated core, while another tenant's datagrams
 * arrive (HG_RX_MIXED_US) or a funded tenant's TX waits. */
static inline int
hg_xdp_keep(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	if (hg_view(dp, t)->state != HG_TENANT_ACTIVE)
		return 0;
	if (c->now < c->t[t].xdp_until)
		return 1;
	if (!hg_protecting(dp) || !hg_rx_drop_on(dp) || hg_topup_funded(dp, c, t) ||
	    !core_saturated(c))
		return 0;
	/* t is unfunded: a funded tenant with TX waiting is another one */
	return hg_rx_mixing(c, c->now) || hg_funded_pending(dp, c);
}

/* Once a pass: lifts the marks RX would no longer stand by; returns how
 * many it lifted. O(marked tenants). */
static inline unsigned
hg_xdp_review(const struct hg_dp *dp, struct hg_fp_core *c)
{
	unsigned n = 0;
	int t;

	if (__atomic_load_n(&dp->xdp.shed, __ATOMIC_RELAXED) == NULL ||
	    hg_tset_empty(&c->xdp_marked))
		return 0;
	HG_TSET_FOREACH(t, &c->xdp_marked)
		if (!hg_xdp_keep(dp, c, (unsigned)t)) {
			hg_xdp_unmark(dp, c, (unsigned)t);
			n++;
		}
	return n;
}

#endif /* HG_FASTPATH_XDP_SHED_H */

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
 *
 * Ring shares (proto/hg_xdp.h): the core counts every frame it takes off
 * an XDP socket's ring against the slot the program counted it against
 * (the same look, bpf/xdp_parse.h, and the program's own port map), so
 * that the program knows what each tenant holds of a ring that backs up.
 * Counts drift only by frames the kernel dropped after the program
 * counted them (a full ring); a burst that finds the ring empty sets them
 * even again.
 */
#ifndef HG_FASTPATH_XDP_SHED_H
#define HG_FASTPATH_XDP_SHED_H

#include <rte_mbuf.h>

#include "../proto/hg_xdp.h"
#include "rx_gate.h"
#include "xdp_slots.h"

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

/* The ring's count of slot s on queue q: n more frames taken. */
static inline void
xdp_take(const struct hg_dp *dp, struct hg_rxq *q, uint32_t s, uint64_t n)
{
	uint64_t *w = &dp->xdp.taken[HG_XDP_RING_KEY(q->dev_queue, s)];

	RTE_ASSERT(q->dev_queue < HG_XDP_QUEUES && s < HG_XDP_SLOTS);
	__atomic_store_n(w, __atomic_load_n(w, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
	if (s == HG_XDP_OTHER)
		q->xdp_other_held = 1;
	else if (s < HG_XDP_TENANTS)
		hg_tset_add(&q->xdp_held, s);
}

/* Slot s's count on queue dq set even: it holds nothing of an empty ring. */
static inline void
xdp_even_slot(const struct hg_dp *dp, unsigned dq, uint32_t s)
{
	uint32_t k = HG_XDP_RING_KEY(dq, s);

	__atomic_store_n(&dp->xdp.taken[k], __atomic_load_n(&dp->xdp.passed[k], __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
}

/* Queue q's ring is empty: every slot the core took frames of since the
 * last time holds none, whatever the counts say (a frame the kernel
 * dropped after the program counted it is never taken). O(those slots).
 * A slot nobody took a frame of since holds what it held then: nothing. */
static inline void
xdp_even(const struct hg_dp *dp, struct hg_rxq *q)
{
	int t;

	HG_TSET_FOREACH(t, &q->xdp_held) {
		xdp_even_slot(dp, q->dev_queue, (unsigned)t);
		hg_tset_del(&q->xdp_held, (unsigned)t);
	}
	if (q->xdp_other_held)
		xdp_even_slot(dp, q->dev_queue, HG_XDP_OTHER);
	xdp_even_slot(dp, q->dev_queue, HG_XDP_TOTAL);
	q->xdp_other_held = 0;
}

/* After a burst of n frames from RX queue q of an XDP link: counts them
 * taken, slot by slot (a burst is mostly runs of one slot), and, if it
 * left the ring empty (drained), sets the counts even. A burst net_af_xdp
 * cut short for want of mbufs looks drained too: the counts then err low
 * until the next, and a tenant is held to its share a little later. */
static inline void
hg_xdp_took(const struct hg_dp *dp, struct hg_rxq *q, struct rte_mbuf *const *pkts,
	    unsigned n, int drained)
{
	const uint8_t *f[HG_BATCH];
	uint16_t len[HG_BATCH];
	uint32_t s, slot[HG_BATCH], last = HG_XDP_SLOTS;
	uint64_t run = 0;
	unsigned i;

	RTE_ASSERT(n <= HG_BATCH);
	if (n == 0)
		goto even;
	for (i = 0; i < n; i++) {
		f[i] = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		len[i] = rte_pktmbuf_data_len(pkts[i]);
	}
	hg_xdp_slots(f, len, n, dp->ip, dp->xdp.ports, slot);
	for (i = 0; i < n; i++) {
		s = slot[i];
		if (s != last && run > 0)
			xdp_take(dp, q, last, run);
		run = s == last ? run + 1 : 1;
		last = s;
	}
	xdp_take(dp, q, last, run);
	xdp_take(dp, q, HG_XDP_TOTAL, n);
even:
	if (drained && (q->xdp_other_held || !hg_tset_empty(&q->xdp_held)))
		xdp_even(dp, q);
}

/* Once a pass: lifts the marks RX would no longer stand by; returns how
 * many it lifted. O(marked tenants). */
static inline unsigned
hg_xdp_review(const struct hg_dp *dp, struct hg_fp_core *c)
{
	unsigned n = 0;
	int t;

	if (__atomic_load_n(&dp->xdp.shed, __ATOMIC_RELAXED) == NULL)
		return 0;
	HG_TSET_FOREACH(t, &c->xdp_marked)
		if (!hg_xdp_keep(dp, c, (unsigned)t)) {
			hg_xdp_unmark(dp, c, (unsigned)t);
			n++;
		}
	return n;
}

#endif /* HG_FASTPATH_XDP_SHED_H */

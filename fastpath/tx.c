/* SPDX-License-Identifier: BSD-3-Clause
 *
 * TX intervention point: poll the transmit rings of the hot tenants on
 * this core (those with recent work), validate every descriptor, admit
 * SENDs to the tenant's pending queue and take FREEd buffers back; keep
 * each context's fill ring stocked. A bounded sweep over the cold tenants
 * finds the ones that start sending, so a pass costs O(tenants with work)
 * however many tenants sit idle.
 */
#include <rte_ring_elem.h>

#include "desc.h"
#include "dp.h"
#include "link.h"

#define HG_TX_COLD_AFTER 64u	/* empty polls before a hot tenant goes cold */
/* The sweep under load: one cold tenant every HG_SWEEP_EVERY passes. A
 * cold tenant costs a handful of cache misses (its state, its rings'
 * index words), which per pass would be a tenth of a request's cost
 * (bench/scale); passes that find nothing else sweep HG_SWEEP_IDLE. */
#define HG_SWEEP_EVERY   8u

/* Admits one descriptor; a bad one is counted and, if the buffer is the
 * app's, the buffer is taken back so a buggy app cannot leak the pool. */
static void
admit(struct hg_fp_tenant *ft, const struct hg_desc *d,
      const struct hg_desc_rules *r)
{
	enum hg_desc_err err = hg_desc_check(d, &ft->bufs, r);

	if (err != HG_DESC_OK) {
		ft->drops[HG_TDROP_BAD_DESC]++;
		if (hg_bufpart_held_by(&ft->bufs, d->buf, r->owner))
			hg_bufpart_put(&ft->bufs, d->buf);
		return;
	}
	if (d->op == HG_OP_FREE) {
		hg_bufpart_put(&ft->bufs, d->buf);
		return;
	}
	hg_bufpart_set_owner(&ft->bufs, d->buf, HG_OWNER_TXQ);
	ft->pend[ft->pend_tail++ % HG_PEND_SIZE] = *d;
}

/* Tops the context's fill ring up to HG_FILL_TARGET free buffers when it has
 * fallen below half. Returns the number of buffers handed out. */
static unsigned
refill(struct hg_fp_tenant *ft, struct rte_ring *fill, uint8_t owner)
{
	uint32_t bufs[HG_FILL_TARGET];
	unsigned have = rte_ring_count(fill), n = 0, done;

	if (have >= HG_FILL_TARGET / 2)
		return 0;
	while (n < HG_FILL_TARGET - have &&
	       hg_bufpart_alloc(&ft->bufs, owner, &bufs[n]) == 0)
		n++;
	done = rte_ring_sp_enqueue_burst_elem(fill, bufs, sizeof(bufs[0]), n,
					      NULL);
	while (n > done)
		hg_bufpart_put(&ft->bufs, bufs[--n]);
	return done;
}

static unsigned
tx_tenant(struct hg_dp *dp, struct hg_fp_core *c, struct hg_tenant *tn,
	  const struct hg_tenant_view *v, struct hg_fp_tenant *ft)
{
	const struct hg_ctx_map *m = &v->map;
	struct hg_desc_rules r = {
		.port_lo = v->port_lo, .port_hi = v->port_hi,
		.our_ip = dp->ip, .netmask = dp->netmask,
		.net = rte_be_to_cpu_32(dp->ip) & dp->netmask,
	};
	struct hg_desc d[HG_BATCH];
	unsigned k, i, n, work = 0;

	for (k = 0; k < m->n_live && k < HG_MAX_CTX; k++) {
		uint8_t ctx = m->live_ctx[k] % HG_MAX_CTX;
		unsigned space = HG_PEND_SIZE - (ft->pend_tail - ft->pend_head);

		r.owner = m->ctx_app[ctx] + 1;
		work += refill(ft, tn->ring[ctx][c->idx][HG_RING_FILL], r.owner);
		n = rte_ring_sc_dequeue_burst_elem(
			tn->ring[ctx][c->idx][HG_RING_TX], d, sizeof(d[0]),
			RTE_MIN(space, HG_BATCH), NULL);
		for (i = 0; i < n; i++)
			admit(ft, &d[i], &r);
		ft->pkts[HG_PT_TX] += n;
		work += n;
	}
	return work;
}

/* Does the tenant have TX work on this core: a descriptor on a transmit
 * ring, or (fill) a fill ring to stock? An app that sends first waits for
 * buffers, so for a cold tenant a low fill ring is work even while its
 * transmit rings are empty. */
static int
tx_pending(const struct hg_tenant *tn, const struct hg_ctx_map *m, unsigned core,
	   int fill)
{
	uint32_t k;

	for (k = 0; k < m->n_live && k < HG_MAX_CTX; k++) {
		struct rte_ring *const *r = tn->ring[m->live_ctx[k] % HG_MAX_CTX][core];

		if (!rte_ring_empty(r[HG_RING_TX]) ||
		    (fill && rte_ring_count(r[HG_RING_FILL]) < HG_FILL_TARGET / 2))
			return 1;
	}
	return 0;
}

/* Polls one hot tenant; billed: it is funded and protection is on. A
 * tenant whose rings stayed empty for HG_TX_COLD_AFTER polls goes cold:
 * only the sweep looks at it then. */
static unsigned
tx_poll(struct hg_dp *dp, struct hg_fp_core *c, int t, int billed, int slack)
{
	struct hg_fp_tenant *ft = &c->t[t];
	const struct hg_tenant_view *v = hg_view(dp, (unsigned)t);
	uint64_t t0 = rte_rdtsc(), t1;
	unsigned n;

	if (v->state != HG_TENANT_ACTIVE) {
		hg_tset_del(&c->hot, (unsigned)t);
		return 0;
	}
	n = tx_tenant(dp, c, &dp->tenant[t], v, ft);
	if (ft->pend_tail != ft->pend_head) {
		hg_tset_add(&c->pend, (unsigned)t);
		if (n > 0)
			hg_link_kick_ahead(dp, c, (unsigned)t, t0);
	}
	t1 = rte_rdtsc();
	/* an empty poll is nobody's work */
	if (n > 0) {
		ft->tx_idle = 0;
		hg_charge(ft, HG_PT_TX, hg_bounded_n(dp, c, (unsigned)t, t1 - t0, t1, n, 0), 0, billed);
		ft->unfunded[HG_PT_TX] += (uint64_t)slack;
		hg_touch(c, (unsigned)t);
	} else {
		c->unattributed += t1 - t0;
		if (++ft->tx_idle >= HG_TX_COLD_AFTER)
			hg_tset_del(&c->hot, (unsigned)t);
	}
	return n;
}

int
hg_tx_waiting(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned t)
{
	return tx_pending(&dp->tenant[t], &hg_view(dp, t)->map, c->idx, 0);
}

/* One lap over the hot tenants from tx_rr: the funded ones (funded = 1),
 * or the unfunded ones (funded = 0), or all (protection off, -1). */
static unsigned
tx_lap(struct hg_dp *dp, struct hg_fp_core *c, int protect, int funded)
{
	unsigned start = c->tx_rr % HG_MAX_TENANTS, work = 0;
	int t;

	for (t = hg_tset_next(&c->hot, start); t >= 0;
	     t = hg_tset_lap_next(&c->hot, t, start)) {
		if (funded >= 0 && hg_topup_funded(dp, c, (unsigned)t) != funded)
			continue;
		work += tx_poll(dp, c, t, protect && funded == 1,
				protect && funded == 0);
	}
	return work;
}

/* Counts a pass over the unfunded hot tenants that had work. */
static void
tx_throttle(struct hg_dp *dp, struct hg_fp_core *c)
{
	int t;

	HG_TSET_FOREACH(t, &c->hot)
		if (!hg_topup_funded(dp, c, (unsigned)t))
			c->t[t].throttles[HG_PT_TX] +=
				(uint64_t)tx_pending(&dp->tenant[t], &hg_view(dp, (unsigned)t)->map,
						     c->idx, 0);
}

/* The cold sweep: looks at up to max active tenants that are not hot,
 * from where the last sweep stopped, and makes those with something on a
 * transmit ring (or too little on a fill ring) hot. A tenant also turns
 * hot when RX delivers to it (its answer follows), so the sweep only
 * finds apps that send first. Returns the tenants it made hot: that is
 * work, the loop must not nap on it. */
unsigned
hg_fp_sweep(struct hg_dp *dp, struct hg_fp_core *c, unsigned max)
{
	unsigned start = c->sweep % HG_MAX_TENANTS, i = 0, found = 0;
	int t, last = -1;

	for (t = hg_aset_next(&dp->active, start); t >= 0 && i < max;
	     last = t, t = hg_aset_lap_next(&dp->active, t, start), i++) {
		const struct hg_tenant_view *v = hg_view(dp, (unsigned)t);

		if (hg_tset_has(&c->hot, (unsigned)t) || v->state != HG_TENANT_ACTIVE ||
		    !tx_pending(&dp->tenant[t], &v->map, c->idx, 1))
			continue;
		c->t[t].tx_idle = 0;
		hg_tset_add(&c->hot, (unsigned)t);
		found++;
	}
	/* the next sweep goes on where this one stopped, or after the lap */
	c->sweep = t >= 0 ? (unsigned)t : (unsigned)(last + 1);
	c->unswept = c->unswept > i ? c->unswept - i : 0;
	return found;
}

/* Funded tenants first; the others only when no funded tenant had work.
 * Walks the hot tenants and a bounded slice of the cold ones. */
unsigned
hg_fp_tx(struct hg_dp *dp, struct hg_fp_core *c)
{
	unsigned work;

	if (!hg_protecting(dp)) {
		work = tx_lap(dp, c, 0, -1);
	} else {
		work = tx_lap(dp, c, 1, 1);
		if (work == 0)
			work = tx_lap(dp, c, 1, 0);
		else
			tx_throttle(dp, c);
	}
	if (++c->tx_rr % HG_SWEEP_EVERY == 0)
		work += hg_fp_sweep(dp, c, 1);
	return work;
}

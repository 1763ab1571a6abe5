/* SPDX-License-Identifier: BSD-3-Clause
 *
 * TX intervention point: poll each tenant's transmit rings on this core,
 * validate every descriptor, admit SENDs to the tenant's pending queue and
 * take FREEd buffers back; keep each context's fill ring stocked.
 */
#include <rte_ring_elem.h>

#include "desc.h"
#include "dp.h"

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
	  struct hg_fp_tenant *ft)
{
	uint32_t n_live = __atomic_load_n(&tn->n_live, __ATOMIC_ACQUIRE);
	struct hg_desc_rules r = {
		.port_lo = tn->port_lo, .port_hi = tn->port_hi,
		.our_ip = dp->ip, .netmask = dp->netmask,
		.net = rte_be_to_cpu_32(dp->ip) & dp->netmask,
	};
	struct hg_desc d[HG_BATCH];
	unsigned k, i, n, work = 0;

	for (k = 0; k < n_live && k < HG_MAX_CTX; k++) {
		uint8_t ctx = tn->live_ctx[k] % HG_MAX_CTX;
		unsigned space = HG_PEND_SIZE - (ft->pend_tail - ft->pend_head);

		r.owner = tn->ctx_app[ctx] + 1;
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

unsigned
hg_fp_tx(struct hg_dp *dp, struct hg_fp_core *c)
{
	uint32_t mask = __atomic_load_n(&dp->active_mask, __ATOMIC_ACQUIRE);
	unsigned t, n, work = 0;
	uint64_t t0 = rte_rdtsc(), t1;

	for (; mask != 0; mask &= mask - 1) {
		t = (unsigned)__builtin_ctz(mask);
		if (__atomic_load_n(&dp->tstate[t], __ATOMIC_ACQUIRE) !=
		    HG_TENANT_ACTIVE)
			continue;
		n = tx_tenant(dp, c, &dp->tenant[t], &c->t[t]);
		if (c->t[t].pend_tail != c->t[t].pend_head)
			c->pend_mask |= 1u << t;
		t1 = rte_rdtsc();
		/* an empty poll is nobody's work */
		if (n > 0)
			c->t[t].cycles[HG_PT_TX] += t1 - t0;
		else
			c->unattributed += t1 - t0;
		t0 = t1;
		work += n;
	}
	return work;
}

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

/* Does any of the tenant's transmit rings on this core hold work? */
static int
tx_pending(const struct hg_tenant *tn, unsigned core)
{
	uint32_t k, n = __atomic_load_n(&tn->n_live, __ATOMIC_ACQUIRE);

	for (k = 0; k < n && k < HG_MAX_CTX; k++)
		if (!rte_ring_empty(tn->ring[tn->live_ctx[k] % HG_MAX_CTX][core][HG_RING_TX]))
			return 1;
	return 0;
}

/* Polls the tenants of mask in round-robin order from c->tx_rr; billed:
 * they are funded and protection is on. */
static unsigned
tx_pass(struct hg_dp *dp, struct hg_fp_core *c, uint32_t mask, int billed,
	int slack)
{
	unsigned rr = c->tx_rr, n, work = 0;
	uint64_t t0 = rte_rdtsc(), t1;
	int t;

	while ((t = hg_drr_next(mask, rr)) >= 0) {
		struct hg_fp_tenant *ft = &c->t[t];

		mask &= ~(1u << t);
		rr = (unsigned)t + 1;
		if (__atomic_load_n(&dp->tstate[t], __ATOMIC_ACQUIRE) !=
		    HG_TENANT_ACTIVE)
			continue;
		n = tx_tenant(dp, c, &dp->tenant[t], ft);
		if (ft->pend_tail != ft->pend_head)
			c->pend_mask |= 1u << t;
		t1 = rte_rdtsc();
		/* an empty poll is nobody's work */
		if (n > 0) {
			hg_charge(ft, HG_PT_TX, t1 - t0, 0, billed);
			ft->unfunded[HG_PT_TX] += (uint64_t)slack;
		} else {
			c->unattributed += t1 - t0;
		}
		t0 = t1;
		work += n;
	}
	return work;
}

/* Funded tenants first; the others only when no funded tenant had work. */
unsigned
hg_fp_tx(struct hg_dp *dp, struct hg_fp_core *c)
{
	uint32_t active = __atomic_load_n(&dp->active_mask, __ATOMIC_ACQUIRE);
	uint32_t funded, m;
	unsigned work;

	if (!hg_protecting(dp)) {
		work = tx_pass(dp, c, active, 0, 0);
	} else {
		funded = hg_funded(c, active);
		work = tx_pass(dp, c, active & funded, 1, 0);
		if (work == 0) {
			work = tx_pass(dp, c, active & ~funded, 0, 1);
		} else {
			for (m = active & ~funded; m != 0; m &= m - 1) {
				unsigned t = (unsigned)__builtin_ctz(m);

				c->t[t].throttles[HG_PT_TX] +=
					(uint64_t)tx_pending(&dp->tenant[t], c->idx);
			}
		}
	}
	c->tx_rr++;
	return work;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The NIC send: every datagram the fast path puts on the wire (SCHED's
 * batches, RX's ARP/ICMP replies and RPC rejects, credit updates) is
 * staged here and leaves in the pass's one flush (xmit.h).
 */
#include <rte_mbuf.h>

#include "dp.h"
#include "link.h"
#include "xmit.h"

void
hg_fp_xmit(struct hg_dp *dp, struct hg_fp_core *c, struct rte_mbuf **m,
	   unsigned n, unsigned t, enum hg_point pt, int billed)
{
	struct hg_tx_stage *s = &c->stage;
	unsigned i;

	if (s->n + n > HG_STAGE_SIZE)
		hg_fp_flush(dp, c);
	for (i = 0; i < n && s->n < HG_STAGE_SIZE; i++) {
		s->m[s->n] = m[i];
		s->who[s->n++] = (struct hg_stage_who){
			.tenant = (uint16_t)t, .pt = (uint8_t)pt,
			.billed = (uint8_t)(billed != 0) };
	}
	/* more than a stage at once: no caller does that, but never leak */
	if (i < n)
		rte_pktmbuf_free_bulk(m + i, n - i);
}

/* The PMD's cost of the flush, split evenly over its frames: a tenant
 * pays for its own mbufs, never for a neighbour's, and the system call
 * under the burst is paid once per pass, not once per tenant. */
static void
bill(struct hg_fp_core *c, uint64_t cycles, unsigned n, unsigned sent)
{
	const struct hg_tx_stage *s = &c->stage;
	uint64_t share = cycles / n;
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct hg_stage_who *w = &s->who[i];
		struct hg_fp_tenant *ft;

		if (w->tenant == HG_STAGE_CORE) {
			c->unattributed += share;
			if (i >= sent)
				c->drops[HG_DROP_NIC_FULL]++;
			continue;
		}
		ft = &c->t[w->tenant % HG_MAX_TENANTS];
		hg_charge(ft, (enum hg_point)w->pt, share, 0, w->billed);
		ft->nic_cycles[w->pt] += share;
		if (i >= sent)
			ft->drops[HG_TDROP_NIC_FULL]++;
	}
}

unsigned
hg_fp_flush(struct hg_dp *dp, struct hg_fp_core *c)
{
	struct hg_tx_stage *s = &c->stage;
	unsigned n = s->n, sent;
	uint64_t t0, t1;

	if (n == 0)
		return 0;
	t0 = rte_rdtsc();
	sent = hg_link_tx(dp, c, s->m, (uint16_t)n);
	/* a ring that took part of it may have room again after the PMD
	 * reclaimed what it sent: one more try, never a spin */
	if (sent > 0 && sent < n)
		sent += hg_link_tx(dp, c, s->m + sent, (uint16_t)(n - sent));
	t1 = rte_rdtsc();
	if (sent < n)
		rte_pktmbuf_free_bulk(s->m + sent, n - sent);
	c->tx_pkts += sent;
	c->pmd_cycles += t1 - t0;
	c->flushes++;
	bill(c, t1 - t0, n, sent);
	s->n = 0;
	return sent;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The NIC send: every datagram the fast path puts on the wire (SCHED's
 * batches, RX's ARP/ICMP replies and RPC rejects, credit updates) is
 * staged here and leaves in the pass's one flush (xmit.h).
 */
#include <string.h>

#include <rte_mbuf.h>

#include "dp.h"
#include "link.h"
#include "xmit.h"

/* A staged frame leaves the stage (sent, or dropped): its tenant's
 * counts go down. */
static void
unstage(struct hg_tx_stage *s, unsigned i)
{
	if (s->who[i].tenant != HG_STAGE_CORE) {
		s->of[s->who[i].tenant % HG_MAX_TENANTS]--;
		s->bytes[s->who[i].tenant % HG_MAX_TENANTS] -= s->who[i].len;
	}
}

unsigned
hg_stage_loser(struct hg_fp_core *c)
{
	struct hg_tx_stage *s = &c->stage;
	unsigned i;

	/* heavy is kept up to date as frames come in; frames that left
	 * since may have made another tenant the heaviest: look (O(stage),
	 * only while the link refuses frames) */
	for (i = 0; i < s->n; i++)
		if (s->who[i].tenant != HG_STAGE_CORE &&
		    s->bytes[s->who[i].tenant % HG_MAX_TENANTS] >
		    s->bytes[s->heavy % HG_MAX_TENANTS])
			s->heavy = s->who[i].tenant;
	return s->heavy;
}

/* Drops the newest frame of hg_stage_loser's tenant. Returns 0 if no
 * tenant's frame was staged. */
static int
evict_heaviest(struct hg_fp_core *c)
{
	struct hg_tx_stage *s = &c->stage;
	unsigned i;

	hg_stage_loser(c);
	if (s->of[s->heavy % HG_MAX_TENANTS] == 0)
		return 0;
	i = s->n;
	while (i-- > 0)
		if (s->who[i].tenant == s->heavy)
			break;
	RTE_ASSERT(i < s->n);
	rte_pktmbuf_free(s->m[i]);
	c->t[s->heavy % HG_MAX_TENANTS].drops[HG_TDROP_NIC_FULL]++;
	unstage(s, i);
	memmove(&s->m[i], &s->m[i + 1], (s->n - i - 1) * sizeof(s->m[0]));
	memmove(&s->who[i], &s->who[i + 1], (s->n - i - 1) * sizeof(s->who[0]));
	s->n--;
	return 1;
}

void
hg_fp_xmit(struct hg_dp *dp, struct hg_fp_core *c, struct rte_mbuf **m,
	   unsigned n, unsigned t, enum hg_point pt, int billed)
{
	struct hg_tx_stage *s = &c->stage;
	unsigned i;

	if (s->n + n > HG_STAGE_SIZE)
		hg_fp_flush(dp, c);
	for (i = 0; i < n; i++) {
		/* the link still refuses what is kept: room is made by
		 * the heaviest tenant, possibly t itself */
		if (s->n == HG_STAGE_SIZE && !evict_heaviest(c))
			break;
		s->m[s->n] = m[i];
		s->who[s->n++] = (struct hg_stage_who){
			.tenant = (uint16_t)t, .pt = (uint8_t)pt,
			.billed = (uint8_t)(billed != 0), .len = m[i]->data_len };
		if (t == HG_STAGE_CORE)
			continue;
		s->of[t % HG_MAX_TENANTS]++;
		s->bytes[t % HG_MAX_TENANTS] += m[i]->data_len;
		if (s->bytes[t % HG_MAX_TENANTS] > s->bytes[s->heavy % HG_MAX_TENANTS])
			s->heavy = t;
	}
	/* only the core's own frames staged, and a link that refuses them */
	if (i < n) {
		rte_pktmbuf_free_bulk(m + i, n - i);
		if (t == HG_STAGE_CORE)
			c->drops[HG_DROP_NIC_FULL] += n - i;
		else
			c->t[t % HG_MAX_TENANTS].drops[HG_TDROP_NIC_FULL] += n - i;
	}
}

/* The PMD's cost of one send, split evenly over the frames that left
 * (stage indexes idx, or the first k where idx is NULL; none: the
 * core's): a tenant pays for its own mbufs, never for a neighbour's, and
 * the system call under the burst is paid once per ring and pass, not
 * once per tenant. A frame the link refused cost the call nothing and is
 * not billed: billed at every flush it waited through, a victim's answer
 * behind a neighbour's full ring ran its tenant into debt, and the
 * victim's next datagrams were shed (bench/isolation, shared queue:
 * nic_tx_full and rx_over_budget drops of a victim in the same step). */
static void
bill(const struct hg_dp *dp, struct hg_fp_core *c, uint64_t cycles, uint64_t end,
     const uint16_t *idx, unsigned k)
{
	const struct hg_tx_stage *s = &c->stage;
	uint64_t share = cycles / k, cost;
	unsigned i;

	for (i = 0; i < k; i++) {
		const struct hg_stage_who *w = &s->who[idx != NULL ? idx[i] : i];
		struct hg_fp_tenant *ft;

		if (w->tenant == HG_STAGE_CORE) {
			c->unattributed += share;
			continue;
		}
		ft = &c->t[w->tenant % HG_MAX_TENANTS];
		/* a stalled call is the OS's */
		cost = hg_bounded(dp, c, w->tenant % HG_MAX_TENANTS, share, end);
		hg_charge(ft, (enum hg_point)w->pt, cost, 0, w->billed);
		ft->nic_cycles[w->pt] += cost;
	}
}

/* Hands k frames m (stage indexes idx, NULL: the first k) to TX ring q
 * in one call, two if the ring wrapped (a ring that took part of it may
 * have room again after the PMD reclaimed what it sent: one more try,
 * never a spin); bills each frame that left its share (bill). Returns
 * how many of them left, a prefix. */
static unsigned
send_ring(struct hg_dp *dp, struct hg_fp_core *c, uint16_t q, struct rte_mbuf **m,
	  const uint16_t *idx, unsigned k)
{
	uint64_t t0 = rte_rdtsc(), t1;
	unsigned sent = hg_link_tx(dp, c, q, m, (uint16_t)k);

	if (sent > 0 && sent < k)
		sent += hg_link_tx(dp, c, q, m + sent, (uint16_t)(k - sent));
	t1 = rte_rdtsc();
	c->pmd_cycles += t1 - t0;
	if (sent > 0)
		bill(dp, c, t1 - t0, t1, idx, sent);
	else
		c->unattributed += t1 - t0;
	return sent;
}

/* Each tenants' group's frames on its own ring (hg_link_tx_per_tenant),
 * in the order they were staged, the ring with the fewest first
 * (hg_flush_order); marks in left the frames that left. The core's own
 * frames (ARP, ICMP) go with group 0's. */
static unsigned
send_per_tenant(struct hg_dp *dp, struct hg_fp_core *c, uint8_t *left)
{
	struct hg_tx_stage *s = &c->stage;
	struct rte_mbuf *m[HG_STAGE_SIZE];
	uint16_t idx[HG_STAGE_SIZE], frames[HG_MAX_TXQ] = { 0 };
	uint8_t grp[HG_STAGE_SIZE], order[HG_MAX_TXQ];
	unsigned g, i, k, x, sent, total = 0, n_grp = dp->txq_per_core;

	RTE_BUILD_BUG_ON(HG_MAX_TXQ > UINT8_MAX);
	RTE_BUILD_BUG_ON(HG_STAGE_SIZE > UINT16_MAX);
	RTE_ASSERT(n_grp <= HG_MAX_TXQ);
	for (i = 0; i < s->n; i++) {
		grp[i] = (uint8_t)hg_link_txq(dp, s->who[i].tenant == HG_STAGE_CORE ? -1 :
					      (int)s->who[i].tenant);
		frames[grp[i]]++;
	}
	hg_flush_order(frames, n_grp, order);
	for (x = 0; x < n_grp; x++) {
		g = order[x];
		for (i = 0, k = 0; i < s->n; i++)
			if (grp[i] == g) {
				idx[k] = (uint16_t)i;
				m[k++] = s->m[i];
			}
		if (k == 0)
			continue;
		sent = send_ring(dp, c, hg_link_tx_ring(dp, c, g), m, idx, k);
		for (i = 0; i < sent; i++)
			left[idx[i]] = 1;
		c->txq_pkts[g] += sent;
		total += sent;
	}
	return total;
}

unsigned
hg_fp_flush(struct hg_dp *dp, struct hg_fp_core *c)
{
	struct hg_tx_stage *s = &c->stage;
	uint8_t left[HG_STAGE_SIZE];
	unsigned n = s->n, sent, i, w;

	if (n == 0)
		return 0;
	if (hg_link_tx_per_tenant(dp)) {
		memset(left, 0, n);
		sent = send_per_tenant(dp, c, left);
	} else {
		sent = send_ring(dp, c, (uint16_t)c->idx, s->m, NULL, n);
		memset(left, 1, sent);
		memset(left + sent, 0, n - sent);
	}
	c->tx_pkts += sent;
	c->flushes++;
	/* what the link refused is kept, in order, for the next pass:
	 * dropped only to make room (hg_fp_xmit) */
	for (i = 0, w = 0; i < n; i++) {
		if (left[i]) {
			unstage(s, i);
			continue;
		}
		s->m[w] = s->m[i];
		s->who[w++] = s->who[i];
	}
	s->n = w;
	return sent;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * SCHED intervention point: choose whose pending transmit work goes on the
 * wire, build headers, copy payloads into mbufs, transmit, and recycle the
 * tenant's buffers, in deficit-round-robin order over tenant budgets.
 */
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "dp.h"
#include "neigh.h"
#include "parse.h"
#include "sched_pick.h"
#include "waiting.h"
#include "xmit.h"

/* Builds one datagram from a validated descriptor into m. Returns 0; or,
 * when the peer's MAC is unknown, -1 with an ARP request for it in m, or
 * -2 if we asked about it a moment ago (m is unused). */
static int
build(struct hg_dp *dp, struct hg_fp_core *c, const struct hg_tenant *tn,
      const struct hg_tenant_view *v, const struct hg_desc *d, struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct hg_udp_flow fl = {
		.src_ip = dp->ip, .dst_ip = d->peer_ip,
		.src_port = d->local_port, .dst_port = d->peer_port,
		.ip_id = c->ip_id++,
	};
	uint32_t len;

	if (hg_neigh_lookup(dp, d->peer_ip, &fl.dst_mac) < 0) {
		if (!hg_neigh_may_ask(dp, d->peer_ip, rte_rdtsc()))
			return -2;
		len = hg_build_arp_request(f, &dp->mac, dp->ip, d->peer_ip);
		m->data_len = m->pkt_len = len;
		return -1;
	}
	rte_ether_addr_copy(&dp->mac, &fl.src_mac);
	rte_memcpy(f + HG_UDP_HDRS_LEN, hg_tenant_buf(tn, d->buf), d->len);
	/* the grant goes into the copy: tenant memory is never written */
	if (hg_rpc_is_port(v, d->local_port))
		hg_rpc_response(dp, c, (int)tn->slot, f + HG_UDP_HDRS_LEN, d->len,
				d->peer_ip, d->peer_port);
	len = hg_build_udp(f, &fl, d->len);
	m->data_len = m->pkt_len = len;
	return 0;
}

/* Synthetic per-datagram work (tenant setting extra-cycles): a tenant
 * whose packets are expensive, for benchmarks and tests. Bounded by the
 * setting's maximum. */
static void
extra_work(uint64_t cycles)
{
	uint64_t end = rte_rdtsc() + cycles;

	while (rte_rdtsc() < end)
		rte_pause();
}

#define HG_SCHED_PREFETCH 4u	/* datagrams ahead */

/* A batch nobody else waits behind looks again (hg_others_waiting,
 * waiting.h) every HG_SCHED_LOOK_US of its tenant's datagrams at their
 * average cost, every HG_SCHED_CHUNK at most: often enough that a
 * victim's datagram waits about as long for it as for RX's burst
 * (HG_RX_LOOK_US), seldom enough that the look costs ~1% of the batch.
 * Every 8 datagrams of 1400 B was ~6 us, and bench/isolation's victim
 * p50 at 1400 B 95 us against 85 us so (four runs each). A batch of 64 B
 * datagrams (~100 cycles each) looks once at most: 32 of them are ~1.2
 * us, and a look every 8 (a third of a microsecond) cost protection 5-10%
 * of the pair's throughput there (with the peek's clock, below). */
#define HG_SCHED_CHUNK HG_BATCH
#define HG_SCHED_LOOK_US 2u
/* ... and spends up to this many quanta (batch_room) */
#define HG_SCHED_SOLO 4

static inline void
prefetch_payload(const struct hg_tenant *tn, const struct hg_fp_tenant *ft, uint32_t k)
{
	const struct hg_desc *d = &ft->pend[k % HG_PEND_SIZE];
	const uint8_t *b = hg_tenant_buf(tn, d->buf);

	rte_prefetch0(b);
	if (d->len > RTE_CACHE_LINE_SIZE)
		rte_prefetch0(b + RTE_CACHE_LINE_SIZE);
}

/* Stages up to max pending datagrams of one tenant for the pass's send
 * (xmit.h: its share of the PMD's call is billed there, billed saying
 * whether to its budget); returns how many. yield: stop early, at a
 * chunk's end, once another tenant has work (hg_others_waiting). */
static unsigned
sched_tenant(struct hg_dp *dp, struct hg_fp_core *c, const struct hg_tenant *tn,
	     const struct hg_tenant_view *v, struct hg_fp_tenant *ft, unsigned max,
	     int billed, int yield)
{
	uint64_t extra = v->extra_cycles;
	struct rte_mbuf *m[HG_BATCH], *arp[HG_BATCH], *unused[HG_BATCH];
	unsigned n = RTE_MIN(max, ft->pend_tail - ft->pend_head), i, ok = 0,
		 n_arp = 0, n_unused = 0;
	unsigned chunk = hg_sched_chunk(c->tsc_us * HG_SCHED_LOOK_US, ft->sched_avg,
					HG_SCHED_CHUNK);
	int rc;

	if (rte_pktmbuf_alloc_bulk(c->pool, m, n) != 0) {
		ft->drops[HG_TDROP_NO_MBUF]++;
		return 0;
	}
	/* the payloads were last written by the app on another CPU: each
	 * copy would stall on a cross-core miss, so ask for the lines a few
	 * datagrams ahead (the descriptors are the daemon's validated copies) */
	for (i = 0; i < RTE_MIN(n, HG_SCHED_PREFETCH); i++)
		prefetch_payload(tn, ft, ft->pend_head + i);
	for (i = 0; i < n; i++) {
		const struct hg_desc *d;

		if (yield && i > 0 && i % chunk == 0 &&
		    hg_others_waiting(dp, c, tn->slot)) {
			c->sched_yields++;
			c->sched_cut = (int32_t)tn->slot;
			rte_pktmbuf_free_bulk(m + i, n - i);
			n = i;
			break;
		}
		d = &ft->pend[ft->pend_head++ % HG_PEND_SIZE];

		if (i + HG_SCHED_PREFETCH < n)
			prefetch_payload(tn, ft, ft->pend_head - 1 + HG_SCHED_PREFETCH);
		if (extra)
			extra_work(extra);
		rc = build(dp, c, tn, v, d, m[i]);
		if (rc == 0) {
			m[ok++] = m[i];
		} else {
			ft->drops[HG_TDROP_NO_NEIGH]++;
			if (rc == -1)
				arp[n_arp++] = m[i];
			else
				unused[n_unused++] = m[i];
		}
		hg_bufpart_put(&ft->bufs, d->buf);
	}
	if (ok > 0)
		hg_fp_xmit(dp, c, m, ok, tn->slot, HG_PT_SCHED, billed);
	if (n_arp > 0)
		hg_fp_xmit(dp, c, arp, n_arp, HG_STAGE_CORE, HG_PT_SCHED, 0);
	if (n_unused > 0)
		rte_pktmbuf_free_bulk(unused, n_unused);
	return n;
}

/* How many datagrams tenant t may send now: batches are sized to the
 * allowance (hg_batch_allowance) while another tenant has work here; a
 * lone tenant delays nobody and keeps full bursts. One whose neighbours
 * are active but have nothing waiting gets HG_SCHED_SOLO quanta, and
 * yields at a chunk's end once one has (*yield): a batch cut to one
 * quantum while nobody waited behind it only made passes short, and each
 * pass's fixed cost took the core from the tenant's own work
 * (bench/isolation: combined throughput 0.67-0.72 of unprotected). The
 * bound in cycles stays: a link whose RX queue cannot be looked at
 * cheaply (an ethdev) hides a victim's datagram from the look, and a
 * tenant of expensive datagrams (100,000 cycles each in test_xdp) took
 * milliseconds in 32 of them. */
static unsigned
batch_room(const struct hg_dp *dp, struct hg_fp_core *c, int t,
	   const struct hg_tenant_view *v, int protect, int slack, unsigned room,
	   int *yield)
{
	const struct hg_fp_tenant *ft = &c->t[t];
	int64_t q = (int64_t)v->quantum;
	int64_t left;

	*yield = 0;
	if (!protect || __atomic_load_n(&dp->n_active, __ATOMIC_RELAXED) < 2)
		return room;
	if (!hg_others_waiting(dp, c, (unsigned)t)) {
		*yield = 1;
		return hg_batch_size(q * HG_SCHED_SOLO, ft->sched_avg, room);
	}
	left = slack ? 0 : hg_topup_left(dp, c, (unsigned)t);
	return hg_batch_size(hg_batch_allowance(left, q, slack), ft->sched_avg, room);
}

/* Serves one batch of tenant t and bills it; returns datagrams sent. */
static unsigned
serve(struct hg_dp *dp, struct hg_fp_core *c, int t, int protect, int funded,
      int slack, unsigned room)
{
	struct hg_fp_tenant *ft = &c->t[t];
	const struct hg_tenant_view *v = hg_view(dp, (unsigned)t);
	uint64_t t0 = rte_rdtsc(), t1, cost;
	unsigned n, max;
	int yield;

	if (v->state != HG_TENANT_ACTIVE) {
		/* dying: the RELEASE command drops its queue */
		hg_tset_del(&c->pend, (unsigned)t);
		return 0;
	}
	max = batch_room(dp, c, t, v, protect, slack, room, &yield);
	n = sched_tenant(dp, c, &dp->tenant[t], v, ft, max, protect && funded, yield);
	if (ft->pend_head == ft->pend_tail)
		hg_tset_del(&c->pend, (unsigned)t);
	t1 = rte_rdtsc();
	cost = hg_bounded_n(dp, c, (unsigned)t, t1 - t0, t1, n, v->extra_cycles);
	/* the tenant's own cost per datagram: the PMD's call is billed at
	 * the flush (xmit.c), and its per-call cost would make small batches
	 * look dear and keep them small */
	if (n > 0)
		ft->sched_avg = hg_cost_avg(ft->sched_avg, cost, n);
	hg_charge(ft, HG_PT_SCHED, cost, n, protect && funded);
	ft->unfunded[HG_PT_SCHED] += protect && !funded;
	hg_touch(c, (unsigned)t);
	return n;
}

/* Deficit round robin over the tenants with pending work, one lap from
 * sched_rr: funded ones (every one with protection off), each for one
 * batch sized to its budget (hg_batch_size), whose overrun becomes debt;
 * the unfunded ones are passed over (throttled). If no funded tenant has
 * work here, one weighted-lottery winner takes the pass: serving every
 * unfunded tenant's queue at once would hand an overloaded core out in
 * arrival order, whatever the weights. Walks only the tenants with
 * pending work. */
unsigned
hg_fp_sched(struct hg_dp *dp, struct hg_fp_core *c)
{
	int protect = hg_protecting(dp), t, next;
	unsigned sent = 0, n, start;

	if (hg_tset_empty(&c->pend))
		return 0;
	if (protect && !hg_sched_any_funded(dp, c)) {
		t = hg_sched_slack(dp, c);
		return t < 0 ? 0 : serve(dp, c, t, 1, 0, 1, HG_BATCH);
	}
	start = c->sched_rr % HG_MAX_TENANTS;
	t = hg_sched_next(dp, c, hg_tset_next(&c->pend, start), start, protect);
	while (t >= 0 && sent < HG_BATCH) {
		c->sched_rr = (unsigned)t + 1;
		n = serve(dp, c, t, protect, 1, 0, HG_BATCH - sent);
		sent += n;
		/* nothing sent and still pending: out of mbufs (counted,
		 * retried next pass) */
		if (n == 0 && hg_tset_has(&c->pend, (unsigned)t))
			break;
		next = hg_sched_next(dp, c, hg_tset_lap_next(&c->pend, t, start), start, protect);
		if (sent < HG_BATCH && hg_sched_flush_between(dp, c, protect, t, next))
			hg_fp_flush(dp, c);
		t = next;
	}
	return sent;
}

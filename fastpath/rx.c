/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RX intervention point: receive a burst, parse, answer ARP and ICMP, and
 * deliver UDP payloads into the owning tenant's region. The owner is known
 * only after parsing, so each packet's cycles are measured as it completes
 * and charged to its tenant afterwards (delayed attribution, Virtuoso P3).
 */
#include <rte_jhash.h>
#include <rte_mbuf.h>

#include "doorbell.h"
#include "dp.h"
#include "link.h"
#include "neigh.h"
#include "parse.h"
#include "rx_gate.h"
#include "waiting.h"
#include "xdp_shed.h"
#include "xmit.h"

/* Picks the context of the app that bound the port. flow: a hash of the
 * 5-tuple, like RSS, so one flow keeps its order; jsq: the shorter RX ring
 * on this core of two sampled contexts (power of two choices). Ring counts
 * come from the daemon's private geometry, so a tenant that lies in its
 * ring words only skews its own steering. */
static int
steer(struct hg_fp_core *c, const struct hg_tenant *tn, const struct hg_app_route *r,
      const struct hg_parsed *p, int jsq)
{
	uint32_t n = r->n_ctx, a, b;
	uint64_t x;

	if (n == 0 || n > HG_MAX_CTX)
		return -1;
	if (!jsq || n == 1)
		return r->ctx[rte_jhash_3words(p->src_ip, p->dst_ip,
					       (uint32_t)p->src_port << 16 | p->dst_port,
					       0) % n];
	x = hg_rand(&c->rng);
	a = r->ctx[hg_range((uint32_t)x, n)];
	b = r->ctx[hg_range((uint32_t)(x >> 32), n)];
	return rte_ring_count(tn->ring[a % HG_MAX_CTX][c->idx][HG_RING_RX]) <=
	       rte_ring_count(tn->ring[b % HG_MAX_CTX][c->idx][HG_RING_RX]) ? (int)a : (int)b;
}

/* Drops a datagram of tenant t after its RPC request was admitted: the
 * credit it used goes back to its session, or a client that obeys credits
 * would wait forever for an answer that never comes. */
static void
rx_drop(struct hg_fp_tenant *ft, struct hg_session *s,
	enum hg_tenant_drop why)
{
	ft->drops[why]++;
	if (s != NULL)
		hg_rpc_cancel(s);
}

/* Copies the payload into a buffer of the tenant and enqueues it on the
 * chosen context's RX ring. On an RPC port a request without credit is
 * instead rewritten into a reject (*reply_len set) before any copy; a
 * datagram to a bound port may also teach us its sender's MAC (*learn).
 * Returns the tenant slot, or -1 if unowned. */
static int
deliver(struct hg_dp *dp, struct hg_fp_core *c, uint8_t *frame,
	struct hg_parsed *p, uint64_t now, struct rx_gate *g, uint32_t *reply_len,
	int *learn, enum hg_rx_fate *fate)
{
	uint32_t e = __atomic_load_n(&dp->port_map[rte_be_to_cpu_16(p->dst_port)],
				     __ATOMIC_ACQUIRE);
	int t = HG_PORT_TENANT(e), app = HG_PORT_APP(e), ctx;
	struct hg_session *s = NULL;
	const struct hg_tenant_view *v;
	struct hg_fp_tenant *ft;
	struct hg_tenant *tn;
	struct hg_desc d;
	uint32_t buf;

	if (t < 0 || (v = hg_view(dp, (unsigned)t))->state != HG_TENANT_ACTIVE) {
		c->drops[HG_DROP_NO_TENANT]++;
		return -1;
	}
	tn = &dp->tenant[t];
	ft = &c->t[t];
	*learn = app >= 0;
	if (hg_rx_over_budget(dp, c, g, t)) {
		ft->drops[HG_TDROP_OVER_BUDGET]++;
		*fate = HG_FATE_SHED;
		/* on an XDP link, its next ones are dropped in the driver */
		hg_xdp_mark(dp, c, g->rxq, (unsigned)t);
		return t;
	}
	/* a jumbo frame's payload would run past the buffer */
	if (p->payload_len > HG_BUF_SIZE) {
		ft->drops[HG_TDROP_TOO_BIG]++;
		return t;
	}
	if (hg_rpc_is_port(v, p->dst_port) &&
	    hg_rpc_admit(dp, c, t, frame, p, reply_len, &s) != HG_RPC_ADMIT)
		return t;
	ctx = app < 0 ? -1 : steer(c, tn, &v->map.route[app % HG_MAX_APPS], p,
				   (int)v->steer_jsq);
	if (ctx < 0) {
		rx_drop(ft, s, HG_TDROP_UNBOUND);
		return t;
	}
	/* a full ring refuses before the copy, not after it: the app is
	 * behind, and the work would be thrown away */
	if (rte_ring_full(tn->ring[ctx][c->idx][HG_RING_RX])) {
		rx_drop(ft, s, HG_TDROP_RING_FULL);
		*fate = HG_FATE_FULL;
		hg_xdp_mark_full(dp, c, g->rxq, (unsigned)t);
		return t;
	}
	if (hg_bufpart_alloc(&ft->bufs, (uint8_t)(app + 1), &buf) < 0) {
		rx_drop(ft, s, HG_TDROP_NO_BUF);
		return t;
	}
	rte_memcpy(hg_tenant_buf(tn, buf), frame + p->payload_off, p->payload_len);
	d = (struct hg_desc){ .buf = buf, .len = p->payload_len,
			      .op = HG_OP_DATA, .core = (uint8_t)c->idx,
			      .peer_ip = p->src_ip, .peer_port = p->src_port,
			      .local_port = p->dst_port, .tsc = now };
	if (rte_ring_sp_enqueue_elem(tn->ring[ctx][c->idx][HG_RING_RX], &d,
				     sizeof(d)) != 0) {
		hg_bufpart_put(&ft->bufs, buf);
		rx_drop(ft, s, HG_TDROP_RING_FULL);
		return t;
	}
	hg_bell_note(c, (unsigned)t, (unsigned)ctx);
	/* its answer follows: poll its transmit rings from now on */
	ft->tx_idle = 0;
	hg_tset_add(&c->hot, (unsigned)t);
	return t;
}

/* A datagram to a bound port came from a MAC other than the one we know
 * for its sender: we ask who has the address (a broadcast ARP request)
 * instead of believing the frame; the answer, not the frame, updates the
 * entry. Rate-limited per host by hg_neigh_learn. */
static void
neigh_check(struct hg_dp *dp, struct hg_fp_core *c, uint32_t ip,
	    struct rte_mbuf **out, unsigned *n_out)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(c->pool);

	if (m == NULL) {
		c->drops[HG_DROP_NO_MBUF]++;
		return;
	}
	m->data_len = m->pkt_len = hg_build_arp_request(
		rte_pktmbuf_mtod(m, uint8_t *), &dp->mac, dp->ip, ip);
	out[(*n_out)++] = m;
}

/* Handles one frame. Returns the tenant it worked for or -1 (*fate: what
 * became of its datagram); frames to be answered (ARP, ICMP, RPC rejects,
 * a neighbour check) are rewritten in place or built and added to out, at
 * most two per frame. Neighbours are
 * learned as dp.h's rule says: from ARP replies we asked for,
 * and from datagrams to a bound port only where we know no MAC yet. */
static int
rx_one(struct hg_dp *dp, struct hg_fp_core *c, struct rte_mbuf *m,
       struct rte_mbuf **out, unsigned *n_out, uint64_t now, struct rx_gate *g,
       enum hg_rx_fate *fate)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct hg_parsed p;
	uint32_t len, reply = 0;
	int t = -1, learn = 0;

	if (!rte_pktmbuf_is_contiguous(m)) {
		c->drops[HG_DROP_MULTISEG]++;
		rte_pktmbuf_free(m);
		return -1;
	}
	switch (hg_parse(f, m->data_len, dp->ip, &p)) {
	case HG_PKT_DROP:
		c->drops[p.drop]++;
		break;
	case HG_PKT_ARP_REPLY:
		if (!hg_neigh_arp_reply(dp, &p, now))
			c->drops[HG_DROP_ARP_UNASKED]++;
		break;
	case HG_PKT_ARP_OTHER:
		break;
	case HG_PKT_ARP_REQUEST:
		len = hg_build_arp_reply(f, &p, &dp->mac);
		m->data_len = m->pkt_len = len;
		out[(*n_out)++] = m;
		return -1;
	case HG_PKT_ICMP_ECHO:
		len = hg_build_icmp_reply(f, &p);
		m->data_len = m->pkt_len = len;
		out[(*n_out)++] = m;
		return -1;
	case HG_PKT_UDP:
		t = deliver(dp, c, f, &p, now, g, &reply, &learn, fate);
		if (learn && hg_neigh_learn(dp, p.src_ip, &p.src_mac, now) ==
				     HG_NEIGH_CHECK)
			neigh_check(dp, c, p.src_ip, out, n_out);
		if (reply != 0) {
			m->data_len = m->pkt_len = reply;
			out[(*n_out)++] = m;
			return t;
		}
		break;
	}
	rte_pktmbuf_free(m);
	return t;
}

/* Wakes the armed workers the pass delivered to, once each, after the
 * pass's frames went out: a wake-up of a thread on another CPU costs a
 * system call and an interrupt (thousands of cycles), and rung per burst
 * it delayed every datagram behind it. Each write is billed to its
 * tenant; the fence and the looks at unarmed contexts belong to no one. */
unsigned
hg_fp_bells(struct hg_dp *dp, struct hg_fp_core *c)
{
	int protect = hg_protecting(dp);
	unsigned i, rung = 0;
	uint64_t t0, t1;

	if (c->n_bell == 0)
		return 0;
	t0 = rte_rdtsc();
	hg_bell_fence();
	for (i = 0; i < c->n_bell; i++) {
		unsigned t = c->bell[i].tenant;
		struct hg_fp_tenant *ft = &c->t[t];
		uint64_t cost;
		int rang;

		if (ft->cut_at == c->now)
			hg_bell_more(&dp->tenant[t], c->bell[i].ctx,
				     c->now + c->tsc_us * HG_MORE_US);
		rang = hg_bell_ring(&dp->tenant[t], c->bell[i].ctx);

		t1 = rte_rdtsc();
		if (rang) {
			cost = hg_bounded(dp, c, t, t1 - t0, t1);
			rung++;
			ft->doorbells++;
			ft->doorbell_cycles += cost;
			hg_charge(ft, HG_PT_RX, cost, 0, protect && hg_topup_funded(dp, c, t));
		} else {
			c->unattributed += t1 - t0;
		}
		t0 = t1;
	}
	c->n_bell = 0;
	return rung;
}

/* What a peek at a frame in place needs (rx_peek). */
struct rx_peek {
	struct hg_dp *dp;
	struct hg_fp_core *c;
	struct rx_gate *g;
	uint64_t cycles;	/* spent on the frames it dropped */
	int own;		/* the tenant whose own queue this is, or -1 */
	uint64_t look;		/* TSC of the next look at the others' work */
	uint32_t unclocked;	/* bytes looked at on a tenant's own queue
				 * since the clock was last read */
	struct hg_burst_room room;	/* peek_full's count */
	struct hg_burst_drop dropping;	/* the drop held for the burst */
	/* the run of drops being timed: run_n of tenant run_t's frames,
	 * each met fate run_f, since TSC run_t0 */
	uint32_t run_n;
	int run_t;
	enum hg_rx_fate run_f;
	uint64_t run_t0;
};

/* Bills the run of drops, ended at TSC now, to its tenant. A run is
 * timed once, not frame by frame: two TSC reads a frame (~24 cycles each
 * here) were half of what a drop cost on a shared queue drained under a
 * flood (perf, 64 B), and a flood's drops come in runs. */
static void
peek_bill(struct rx_peek *pk, uint64_t now)
{
	unsigned t = (unsigned)pk->run_t;
	uint64_t cycles = now - pk->run_t0;

	if (pk->run_n == 0)
		return;
	hg_rx_bill_n(pk->dp, pk->c, pk->g, t,
		     hg_bounded_n(pk->dp, pk->c, t, cycles, now, pk->run_n, 0), 0,
		     pk->run_f, pk->run_n);
	pk->cycles += cycles;
	pk->run_n = 0;
}

/* Ends the run of drops, if any, before a frame that is not one. */
static inline enum hg_mif_look
peek_end(struct rx_peek *pk, enum hg_mif_look look)
{
	if (pk->run_n > 0)
		peek_bill(pk, rte_rdtsc());
	return look;
}

/* Adds a drop of tenant t's frame, fate f, to the run, or bills the run
 * and begins another. */
static inline void
peek_drop(struct rx_peek *pk, int t, enum hg_rx_fate f)
{
	uint64_t now;

	if (pk->run_n > 0 && pk->run_t == t && pk->run_f == f) {
		pk->run_n++;
		return;
	}
	now = rte_rdtsc();
	peek_bill(pk, now);
	pk->run_n = 1;
	pk->run_t = t;
	pk->run_f = f;
	pk->run_t0 = now;
}

/* How long a burst of one tenant's own queue goes on before it looks
 * whether another tenant has work (hg_others_waiting), and stops there if
 * so: a burst of 32 frames of 1400 B is ~12 us, and a victim's datagram
 * or answer that came meanwhile waited it out (bench/isolation: p50 at
 * 1024-1400 B 1.6-2.3x alone). Every 2 us the look costs ~1% of a burst's
 * time; a burst of 64 B frames looks once at most. Only a link that can
 * leave a frame where it is (memif, rx_peek) is cut; an ethdev's burst
 * has taken its frames before RX sees them. */
#define HG_RX_LOOK_US 2u

/* ... the clock read once per HG_RX_CLOCK_BYTES of frames, the first
 * frame's included: a frame's time is mostly its copy, and a TSC read a
 * frame (~24 cycles here) was a fifth of what a 64 B frame of a flood
 * cost RX on its own queue. Frames of 1 KB or more read it each. */
#define HG_RX_CLOCK_BYTES 1024u

/* The time for a frame of len bytes on a tenant's own queue, where the
 * burst's looks want it (hg_rx_clock_due), else 0. */
static inline uint64_t
peek_clock(struct rx_peek *pk, uint32_t len)
{
	if (pk->own < 0 || !hg_rx_clock_due(&pk->unclocked, len, HG_RX_CLOCK_BYTES))
		return 0;
	return rte_rdtsc();
}

/* Does the burst stop before this frame, leaving it and those behind it
 * in the link for the next pass? Only on a tenant's own queue with
 * protection on, and only once another tenant's work is there. now: the
 * frame's peek_clock; 0: no look this frame. */
static inline int
rx_cut(struct rx_peek *pk, uint64_t now)
{
	if (pk->own < 0 || now == 0 || now < pk->look)
		return 0;
	pk->look = now + pk->c->tsc_us * HG_RX_LOOK_US;
	if (!hg_others_waiting(pk->dp, pk->c, (unsigned)pk->own))
		return 0;
	pk->c->rx_cuts++;
	return 1;
}

/* A frame at the head of its tenant's own queue, with the tenant out of
 * budget while a funded tenant has work: the burst stops and the queue
 * keeps it and those behind it (the link drops what does not fit, for
 * nothing), and from the next pass on the queue is read behind the funded
 * ones (rxq_mark, hg_rx_order). A queue is put behind only once it is
 * seen unfunded, so its burst could begin after the budget ran out;
 * dropped then, the frames were lost to a client that honours credits
 * (bench/feedback: every one of its 75-130 rx_over_budget drops in a 3 s
 * run), where a NIC's queue would have held them. The look is the
 * tenant's, billed as a drop's. */
static enum hg_mif_look
rx_hold(struct rx_peek *pk, unsigned t, uint64_t t0)
{
	uint64_t t1 = rte_rdtsc();

	peek_bill(pk, t0);
	hg_rx_bill(pk->dp, pk->c, pk->g, t, hg_bounded(pk->dp, pk->c, t, t1 - t0, t1), 0,
		   HG_FATE_HELD);
	pk->cycles += t1 - t0;
	pk->c->rx_holds++;
	return HG_MIF_STOP;
}

/* Is the ring of the worker a peeked frame steers to full? */
static inline int
peek_ring_full(const struct hg_dp *dp, struct hg_fp_core *c, int t, int app,
	       const struct hg_tenant_view *v, const struct hg_parsed *p)
{
	const struct hg_tenant *tn = &dp->tenant[t];
	int ctx = steer(c, tn, &v->map.route[app % HG_MAX_APPS], p, (int)v->steer_jsq);

	return ctx >= 0 && rte_ring_full(tn->ring[ctx][c->idx][HG_RING_RX]);
}

/* Is there no room for a peeked frame in its worker's ring? Where the
 * app's datagrams go to the shorter ring (jsq), the burst counts its
 * rings' room once, at its first frame for the port, and takes that many
 * (hg_burst_room): looked at per frame, the sampled rings' counts (their
 * consumer's cache lines) and steer's two divisions were ~13% of the
 * core on a shared queue under a 64 B flood (perf), and each frame after
 * a slot freed saw room the frames taken before it had not filled yet,
 * so was copied to be dropped at delivery. By flow hash the frame's own
 * ring answers. Not asked on RPC ports, where admission answers first. */
static inline int
peek_full(struct rx_peek *pk, int t, int app, const struct hg_tenant_view *v,
	  const struct hg_parsed *p)
{
	const struct hg_app_route *r;

	if (app < 0 || hg_rpc_is_port(v, p->dst_port))
		return 0;
	r = &v->map.route[app % HG_MAX_APPS];
	if (!v->steer_jsq || r->n_ctx <= 1)
		return peek_ring_full(pk->dp, pk->c, t, app, v, p);
	if (!hg_burst_room_for(&pk->room, t, p->dst_port))
		hg_burst_room_set(&pk->room, t, p->dst_port,
				  hg_rings_room(&pk->dp->tenant[t], pk->c->idx, r->ctx,
						r->n_ctx, UINT32_MAX));
	return !hg_burst_room_take(&pk->room);
}

/* Drops a peeked frame of tenant t where the link left it, for why. */
static inline enum hg_mif_look
peek_shed(struct rx_peek *pk, int t, enum hg_tenant_drop why)
{
	pk->c->t[t].drops[why]++;
	peek_drop(pk, t, why == HG_TDROP_OVER_BUDGET ? HG_FATE_SHED : HG_FATE_FULL);
	return HG_MIF_DROP;
}

/* A frame still in the memif peer's buffer, dropped there when RX would
 * drop it anyway: a datagram of a tenant RX sheds, or one whose app's
 * ring is full (but on RPC ports, where admission answers first). That
 * spares the copy into an mbuf, the parse and the checksums, so that a
 * shared queue drains at the cost of a look at the headers per frame of
 * a flood. Whatever else it is goes on to rx_one (copied: the peer may
 * change it). A frame is dropped, not left in the link, when only its
 * own worker's ring is full: left there (tried), it held up the frames
 * behind it for the tenant's other workers, and bench/isolation's echo
 * served half as much for more of the apps' CPU (its idle workers spin
 * before they sleep). The whole queue waits in the link only while every
 * ring of its tenant is full (hg_rx_room). */
static enum hg_mif_look
rx_peek(void *arg, const uint8_t *f, uint32_t len)
{
	struct rx_peek *pk = arg;
	struct hg_dp *dp = pk->dp;
	struct hg_fp_core *c = pk->c;
	/* the time, on a tenant's own queue only: its cuts and holds */
	uint64_t t0 = peek_clock(pk, len);
	struct hg_parsed p;
	enum hg_tenant_drop why;
	const struct hg_tenant_view *v;
	int t, app;
	uint32_t e;

	if (rx_cut(pk, t0))
		return peek_end(pk, HG_MIF_STOP);
	if (hg_peek_udp(f, len, dp->ip, &p) < 0)
		return peek_end(pk, HG_MIF_TAKE);
	if (hg_burst_drop_hit(&pk->dropping, p.dst_port))
		return peek_shed(pk, pk->dropping.t, pk->dropping.why);
	e = __atomic_load_n(&dp->port_map[rte_be_to_cpu_16(p.dst_port)], __ATOMIC_ACQUIRE);
	t = HG_PORT_TENANT(e);
	app = HG_PORT_APP(e);
	if (t < 0 || (v = hg_view(dp, (unsigned)t))->state != HG_TENANT_ACTIVE)
		return peek_end(pk, HG_MIF_TAKE);
	switch (hg_rx_shed(dp, c, pk->g, t, pk->own)) {
	case HG_RX_HOLD:
		return rx_hold(pk, (unsigned)t, t0 != 0 ? t0 : rte_rdtsc());
	case HG_RX_SHED:
		why = HG_TDROP_OVER_BUDGET;
		break;
	default:
		if (!peek_full(pk, t, app, v, &p))
			return peek_end(pk, HG_MIF_TAKE);
		why = HG_TDROP_RING_FULL;
		/* by flow hash, a slot may free in the burst: looked at again */
		if (!hg_burst_room_for(&pk->room, t, p.dst_port))
			return peek_shed(pk, t, why);
	}
	hg_burst_drop_hold(&pk->dropping, p.dst_port, t, why);
	return peek_shed(pk, t, why);
}

/* The burst's gate (rx_gate.h), set before the link is read: a memif
 * burst is judged frame by frame as it is taken (rx_peek). full is the
 * last burst's, and this one's once its size is known. */
static void
gate_open(struct hg_dp *dp, struct hg_fp_core *c, const struct hg_rxq *q,
	  struct rx_gate *g, uint64_t now)
{
	*g = (struct rx_gate){ .unfunded = -1, .last = -1, .rxq = (unsigned)(q - c->rxq) };
	c->burst++;
	if (!hg_protecting(dp))
		return;
	g->protect = 1;
	g->drop = hg_rx_drop_on(dp);
	g->full = hg_rxq_backs_up(dp, c, q, now);
}

/* The queue's place in the next passes (hg_fp_rx), from every datagram
 * the burst judged: those peek dropped where the link left them count
 * too. A burst of only those (an unfunded sink's, its ring full) used to
 * leave the mark as it was, so a flood's queue stayed read on every pass
 * or stayed deferred, as it happened to be when its ring filled
 * (test_rx_queues: 0-84 or 550-2.5 M deferred passes in a 2 s flood). */
static inline void
rxq_mark(struct hg_rxq *q, const struct rx_gate *g)
{
	if (g->funded_seen)
		q->unfunded = -1;
	else if (g->unfunded >= 0)
		q->unfunded = g->unfunded;
	if (g->last >= 0)
		q->tenant = g->last;
}

static unsigned
rx_burst(struct hg_dp *dp, struct hg_fp_core *c, struct hg_rxq *q, unsigned max)
{
	struct rte_mbuf *pkts[HG_BATCH], *replies[2 * HG_BATCH];
	uint64_t t0 = rte_rdtsc(), t, now, share;
	unsigned i, n, n_rep = 0, rep0;
	uint32_t bytes = 0;
	struct rx_gate g;
	struct rx_peek pk = { .dp = dp, .c = c, .g = &g, .own = -1,
			      .unclocked = HG_RX_CLOCK_BYTES, .room.t = -1,
			      .dropping.port = HG_BURST_NO_PORT };
	enum hg_rx_fate fate;
	int tenant;
	uint16_t seen;

	gate_open(dp, c, q, &g, t0);
	if (g.protect && __atomic_load_n(&dp->n_active, __ATOMIC_RELAXED) >= 2) {
		pk.own = hg_rxq_own(dp, c, q);
		pk.look = t0 + c->tsc_us * HG_RX_LOOK_US;
	}
	n = hg_link_rx(dp, c, q, pkts, (uint16_t)max, rx_peek, &pk, &seen);
	t = rte_rdtsc();
	peek_bill(&pk, t);
	c->pmd_cycles += t - t0 - pk.cycles;
	c->rx_pkts += seen;
	q->pkts += seen;
	if (seen > 0)	/* relaxed store: the slow path reads it too */
		__atomic_store_n(&q->bursts, q->bursts + 1, __ATOMIC_RELAXED);
	q->was_full = seen == max;
	g.full &= seen == max;
	/* acquire: the other maps were published before it */
	if (__atomic_load_n(&dp->xdp.shed, __ATOMIC_ACQUIRE) != NULL)
		hg_xdp_took(dp, q, pkts, n, seen < max);
	hg_rx_note_backlog(dp, c, q, t);
	if (n == 0) {
		c->unattributed += t - t0 - pk.cycles;
		rxq_mark(q, &g);
		return seen;
	}
	/* the burst's NIC cost belongs to its packets: split it evenly */
	share = (t - t0 - pk.cycles) / n;
	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		fate = HG_FATE_KEPT;
		rep0 = n_rep;
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
		tenant = rx_one(dp, c, pkts[i], replies, &n_rep, t, &g, &fate);
		now = rte_rdtsc();
		if (tenant >= 0)
			hg_rx_bill(dp, c, &g, (unsigned)tenant,
				   hg_bounded(dp, c, (unsigned)tenant, now - t + share, now),
				   share, fate);
		else
			c->unattributed += now - t + share;
		/* a reply to a tenant's datagram (an RPC reject) is its own */
		if (n_rep > rep0)
			hg_fp_xmit(dp, c, replies + rep0, n_rep - rep0,
				   tenant >= 0 ? (unsigned)tenant : HG_STAGE_CORE,
				   HG_PT_RX, tenant >= 0 && g.protect &&
				   hg_burst_funded(dp, c, (unsigned)tenant));
		t = now;
	}
	q->frame_len = bytes / n;
	rxq_mark(q, &g);
	return seen;
}

/* Bursts from one queue while they come back full, out of the pass's
 * *left; returns the datagrams. A look at an empty queue costs a load or
 * two and takes nothing from *left: counted, a pass whose first queues
 * were empty never read the ones after them (hg_rx_order put a funded
 * victim's after three unused queues, and the pass's two bursts went to
 * those). A queue of one tenant's own gets a second burst only while
 * nobody else has work (hg_others_waiting): when a flood's queue came
 * first, its two bursts of 1400 B frames (~20 us) left a victim's queue
 * unread until the next pass. */
static unsigned
rx_drain(struct hg_dp *dp, struct hg_fp_core *c, struct hg_rxq *q,
	 unsigned *left)
{
	unsigned n, max, bound, total = 0;

	while (*left > 0) {
		bound = hg_rx_own_bound(dp, q);
		max = hg_rx_room_in(dp, c, q, bound);
		q->blocked = max == 0;
		if (max == 0) {
			__atomic_store_n(&q->held, q->held + 1, __ATOMIC_RELAXED);
			break;
		}
		n = rx_burst(dp, c, q, max);
		total += n;
		if (n > 0)
			--*left;
		/* cut short by the bound: more of it waits in the link */
		if (n >= max && max == bound && bound < HG_BATCH && q->tenant >= 0)
			c->t[q->tenant].cut_at = c->now;
		if (n < HG_BATCH)	/* short, or cut to the room */
			break;
		if (hg_rxq_own(dp, c, q) >= 0 &&
		    hg_others_waiting(dp, c, (unsigned)q->tenant))
			break;
	}
	return total;
}

/* Before a queue of one tenant's own is read, the wake-ups of the other
 * tenants' workers that the pass's earlier queues delivered to: rung at
 * the pass's end (hg_fp_bells), a victim's waited for a flood's burst,
 * its SCHED batch and the flush (~18 us at 1400 B, bench/isolation).
 * The flood's frames wait for the system calls instead; the victim pays
 * for them as before. */
static void
bells_before(struct hg_dp *dp, struct hg_fp_core *c, const struct hg_rxq *q)
{
	unsigned i;

	if (hg_rxq_shared(dp, c, q))
		return;
	for (i = 0; i < c->n_bell; i++)
		if ((int32_t)c->bell[i].tenant != q->tenant) {
			hg_fp_bells(dp, c);
			return;
		}
}

/* The funded queues in budget order (hg_rx_order), out of *left; the
 * unfunded ones go into *later. skip >= 0: only the queues other
 * tenants than skip have of their own (hg_fp_rx_others). */
static unsigned
rx_funded(struct hg_dp *dp, struct hg_fp_core *c, int skip, unsigned *left,
	  unsigned *later)
{
	uint8_t idx[HG_MAX_RXQ];
	unsigned k, n = hg_rx_order(dp, c, idx, later), total = 0;

	for (k = 0; k < n && *left > 0; k++) {
		struct hg_rxq *q = &c->rxq[idx[k]];

		if (skip >= 0) {
			int own = hg_rxq_own(dp, c, q);

			if (own < 0 || own == skip)
				continue;
		}
		bells_before(dp, c, q);
		total += rx_drain(dp, c, q, left);
	}
	return total;
}

/* Up to HG_RX_BURSTS bursts per pass while they come back full: the NIC
 * queue must drain faster than SCHED serves, so that under overload the
 * backlog forms after attribution, where drops follow the tenants' budgets
 * (over budget, ring full) instead of the NIC dropping blindly.
 *
 * Where tenants have queues of their own (design.md §3), RX polls them in
 * budget order: queues of funded tenants first, most budget left first
 * (hg_rx_order), and a queue whose tenant is out of budget only when none of
 * them had a datagram and no funded tenant's TX waits
 * (hg_rxq_unfunded_read), so a flood waits in its own queue, not in front
 * of a victim's. */
unsigned
hg_fp_rx(struct hg_dp *dp, struct hg_fp_core *c)
{
	unsigned k, i, left = HG_RX_BURSTS, total = 0, later = 0;

	_Static_assert(HG_MAX_RXQ <= 32, "later is a 32-bit mask");
	hg_xdp_review(dp, c);
	if (c->n_rxq > 1 && hg_protecting(dp)) {
		total = rx_funded(dp, c, -1, &left, &later);
	} else {
		for (k = 0; k < c->n_rxq && left > 0; k++)
			total += rx_drain(dp, c, &c->rxq[(c->rxq_rr + k) % c->n_rxq], &left);
	}
	for (k = 0; later != 0 && k < c->n_rxq; k++) {
		i = (c->rxq_rr + k) % c->n_rxq;
		if (!(later & (1u << i)))
			continue;
		if (left > 0 && hg_rxq_unfunded_read(dp, c, total))
			total += rx_drain(dp, c, &c->rxq[i], &left);
		else
			c->rxq[i].deferred++;
	}
	c->rxq_rr++;
	return total;
}

/* RX in the round a pass adds after SCHED cut tenant t's batch short
 * (loop.c serve_cut): the funded queues other tenants have of their own,
 * in budget order. t's own queues, shared ones and unfunded ones wait
 * for the next pass, as in any other. */
unsigned
hg_fp_rx_others(struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	unsigned left = HG_RX_BURSTS, later = 0;

	if (c->n_rxq < 2 || !hg_protecting(dp))
		return 0;
	return rx_funded(dp, c, (int)t, &left, &later);
}

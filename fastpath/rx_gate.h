/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RX's decision to shed a datagram for its tenant's budget (rx.c), whose
 * budget its cost goes to, when its shared queue backs up, the order it
 * reads queues in and how much it takes from one, apart so that a unit
 * test can drive them against a daemon state of its own
 * (tests/unit/test_rx_gate.c).
 */
#ifndef HG_FASTPATH_RX_GATE_H
#define HG_FASTPATH_RX_GATE_H

#include "dp.h"

/* Open-loop receive protection (design.md §4, Virtuoso §4.4), decided right
 * after parsing, before any copy, ring slot or doorbell: on a saturated
 * core, a datagram of a tenant out of budget is dropped when a funded
 * tenant has work, or when the burst came back full (the shared queue is
 * backing up, and every datagram still served out of turn makes the ones
 * behind it, a funded tenant's among them, wait longer). Never while the tenant is
 * the only one: a lone tenant delays nobody. The drop costs parsing and a
 * lookup; serving costs a copy, a ring slot and maybe a system call, so
 * shedding is what lets the queue drain faster than it fills. */
struct rx_gate {
	int protect;		/* protection on: bill funded tenants */
	int drop;		/* ... and rx-overbudget drop, with neighbours */
	int full;		/* the burst came back full after a full one,
				 * from a queue that more than one tenant is
				 * receiving on */
	int funded_busy;	/* a funded tenant has work: pending TX at the
				 * burst's start (known once it matters) or a
				 * datagram in this burst */
	int pend_checked;	/* funded_busy looked at the pending ones */
	int funded_seen;	/* a funded tenant's datagram was billed */
	int unfunded;		/* the last unfunded tenant billed, or -1 */
	int last;		/* the last tenant billed, or -1 */
	unsigned rxq;		/* the burst's queue, an index in c->rxq */
};

/* Did RX go from one tenant's datagrams to another's on core c in the
 * last us microseconds before TSC now? */
static inline int
hg_rx_mixed_within(const struct hg_fp_core *c, uint64_t now, uint64_t us)
{
	return now - c->rx_mixed < c->tsc_us * us;
}

/* Are several tenants' datagrams arriving on core c at TSC now: RX went
 * from one tenant's to another's in the last HG_RX_MIXED_US? (What lifts
 * a net_af_xdp link's shed marks, xdp_shed.h.) */
#define HG_RX_MIXED_US 1000u

static inline int
hg_rx_mixing(const struct hg_fp_core *c, uint64_t now)
{
	return hg_rx_mixed_within(c, now, HG_RX_MIXED_US);
}

/* A full burst is a backlog in front of someone else only while another
 * tenant's datagrams come through the core too: RX went from one
 * tenant to another in the last HG_RXQ_MIXED_US. A lone tenant's own
 * burst, larger than its budget, is not shed for being full (the queue
 * delays nobody else). And only the second full burst in a row counts:
 * one full burst is as likely a client's batch of 32, or what arrived
 * during a nap.
 * A second, not a millisecond: the other tenant's next datagram is
 * somewhere in the backlog, and RX learns of it only when it gets there.
 * At 1 ms, a victim quiet for longer (at 10,000 requests a second, at a
 * flood's start; below ~1,000, at every request) waited the whole
 * unprotected drain (test_rx_gate's quiet victim). A lone tenant left
 * on the queue is shed for at most a second after the others went quiet,
 * and only on a saturated core. */
#define HG_RXQ_MIXED_US 1000000u

/* Does queue q back up: its last burst came back full, and several
 * tenants' datagrams come through it, mixed? */
static inline int
hg_rxq_backs_up(const struct hg_dp *dp, const struct hg_fp_core *c,
		const struct hg_rxq *q, uint64_t now)
{
	return q->was_full && hg_rxq_shared(dp, c, q) &&
	       hg_rx_mixed_within(c, now, HG_RXQ_MIXED_US);
}

/* After a burst from q: if q backs up, whatever else the core does now,
 * a funded tenant's datagram somewhere in it waits for (SCHED's slack,
 * sched_pick.h). */
static inline void
hg_rx_note_backlog(const struct hg_dp *dp, struct hg_fp_core *c, const struct hg_rxq *q,
		   uint64_t now)
{
	if (hg_rxq_backs_up(dp, c, q, now))
		c->rx_backlog = now;
}

/* Is shedding for budget on: rx-overbudget drop, and more than one tenant
 * (a lone tenant delays nobody)? */
static inline int
hg_rx_drop_on(const struct hg_dp *dp)
{
	return __atomic_load_n(&dp->live.rx_drop, __ATOMIC_RELAXED) != 0 &&
	       __atomic_load_n(&dp->n_active, __ATOMIC_RELAXED) >= 2;
}

/* Does a funded tenant have TX waiting on this core? Budgets as they are
 * now (hg_topup_funded), for decisions taken outside a burst. */
static inline int
hg_funded_pending(const struct hg_dp *dp, struct hg_fp_core *c)
{
	int t;

	HG_TSET_FOREACH(t, &c->pend)
		if (hg_topup_funded(dp, c, (unsigned)t))
			return 1;
	return 0;
}

/* Was tenant t funded when the burst first met it? Budgets are read once
 * per tenant and burst (ft->burst), so a burst costs O(its tenants), and
 * a tenant's debt from one burst is bounded by that burst. */
static inline int
hg_burst_funded(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	struct hg_fp_tenant *ft = &c->t[t];

	if (ft->burst != c->burst) {
		ft->burst = c->burst;
		ft->burst_funded = (uint32_t)hg_topup_funded(dp, c, t);
	}
	return (int)ft->burst_funded;
}

/* Does a tenant with pending TX work here have budget left? Walks the
 * pending set once per burst, only when an unfunded tenant's drop hangs
 * on it. */
static inline int
pend_funded(const struct hg_dp *dp, struct hg_fp_core *c, struct rx_gate *g)
{
	int t;

	if (g->pend_checked)
		return g->funded_busy;
	g->pend_checked = 1;
	HG_TSET_FOREACH(t, &c->pend)
		if (hg_burst_funded(dp, c, (unsigned)t)) {
			g->funded_busy = 1;
			break;
		}
	return g->funded_busy;
}

/* A funded tenant's pending work waits for this core only while the core
 * is saturated (hg_core_saturated): a core with idle passes serves
 * everyone's work anyway, and shedding there would only throw away
 * datagrams it had time for (work conservation). */
static inline int
core_saturated(const struct hg_fp_core *c)
{
	return hg_core_saturated(c, c->now);
}

/* Inlined at both of its calls: asked for every frame RX takes, it was
 * an out-of-line call twice a frame, 2% of a core a flood kept busy on
 * its own queue (perf, 64 B). */
static __rte_always_inline int
hg_rx_over_budget(const struct hg_dp *dp, struct hg_fp_core *c, struct rx_gate *g,
	    int t)
{
	if (!g->drop)
		return 0;
	if (hg_burst_funded(dp, c, (unsigned)t)) {
		g->funded_busy = 1;
		return 0;
	}
	/* t is unfunded, so any funded tenant with work is another one;
	 * and only on a saturated core: one with time to spare drains a
	 * backlog anyway (work conservation), a shed datagram would be one
	 * it had time for (test_an_unsaturated_core_sheds_nothing shed a
	 * light tenant's on two full bursts in a row at 40% busy) */
	return core_saturated(c) && (g->full || pend_funded(dp, c, g));
}

/* What became of a datagram, where its bill depends on it (hg_rx_bill):
 * taken on, shed for its tenant's budget, dropped at its app's full ring,
 * or left in its tenant's own queue. */
enum hg_rx_fate { HG_FATE_KEPT, HG_FATE_SHED, HG_FATE_FULL, HG_FATE_HELD };

/* Is a datagram's RX cost the drain's, billed to no budget? A drop (shed,
 * or at its app's full ring) on a shared queue that backs up (g->full)
 * is the drain every tenant on that queue waits for, and the core carries
 * it as it carries the link's own cost per frame. Billed to the flood,
 * it took all of the flood's budget (30 M drops a second at ~30 cycles),
 * and the flood's tenant, held to its budget while the queue backs up
 * (hg_slack_held), answered 5% of what it answered unprotected
 * (bench/isolation, shared queue, 1400 B). */
static inline int
hg_rx_drain(const struct rx_gate *g, enum hg_rx_fate f)
{
	return g->full && (f == HG_FATE_SHED || f == HG_FATE_FULL);
}

/* The RX cost of n datagrams of tenant t that met one fate, known once
 * they are done: billed to a funded tenant's budget, unless it is the
 * drain's (hg_rx_drain); a shed or held datagram's to its tenant's debt,
 * within one quantum (budget.h), so that a flood shed anywhere else pays
 * for its shedding. */
static inline void
hg_rx_bill_n(const struct hg_dp *dp, struct hg_fp_core *c, struct rx_gate *g,
	     unsigned t, uint64_t cycles, uint64_t nic, enum hg_rx_fate f, uint32_t n)
{
	struct hg_fp_tenant *ft = &c->t[t];
	int funded = g->protect && hg_burst_funded(dp, c, t);
	int drain = hg_rx_drain(g, f), shed = f == HG_FATE_SHED || f == HG_FATE_HELD;

	hg_charge(ft, HG_PT_RX, cycles, n, funded && !drain);
	ft->unfunded[HG_PT_RX] += g->protect && !funded ? n : 0;
	g->funded_seen |= funded;
	if ((int32_t)t != c->rx_last_t) {
		c->rx_last_t = (int32_t)t;
		c->rx_mixed = c->now;
	}
	if (g->protect && !funded)
		g->unfunded = (int)t;
	g->last = (int)t;
	ft->nic_cycles[HG_PT_RX] += nic;
	if (shed)
		ft->drop_cycles += cycles;
	if (drain)
		ft->drain_cycles += cycles;
	else if (shed)
		hg_budget_charge_debt(&ft->bud, cycles, hg_view(dp, t)->quantum);
	hg_touch(c, t);
}

/* One datagram's (hg_rx_bill_n). */
static inline void
hg_rx_bill(const struct hg_dp *dp, struct hg_fp_core *c, struct rx_gate *g,
	   unsigned t, uint64_t cycles, uint64_t nic, enum hg_rx_fate f)
{
	hg_rx_bill_n(dp, c, g, t, cycles, nic, f, 1);
}

/* The tenant whose own queue q is, while protection is on; -1 for a
 * shared queue, one nobody used yet, or protection off: what RX's looks
 * at the others' work (rx.c's cuts and drains) and its holds are about. */
static inline int
hg_rxq_own(const struct hg_dp *dp, const struct hg_fp_core *c, const struct hg_rxq *q)
{
	return q->tenant >= 0 && hg_protecting(dp) && !hg_rxq_shared(dp, c, q) ?
	       q->tenant : -1;
}

/* What RX does with tenant t's datagram still in the link, on a queue
 * that is the own queue of tenant `own` (hg_rxq_own; -1: nobody's):
 * passes it, or, when the gate sheds it (hg_rx_over_budget), drops it
 * there, or on t's own queue stops the burst and leaves it in the queue.
 * A frame already taken from the link can only be dropped. */
enum hg_rx_shed { HG_RX_PASS, HG_RX_SHED, HG_RX_HOLD };

static inline enum hg_rx_shed
hg_rx_shed(const struct hg_dp *dp, struct hg_fp_core *c, struct rx_gate *g, int t, int own)
{
	if (!hg_rx_over_budget(dp, c, g, t))
		return HG_RX_PASS;
	return t == own ? HG_RX_HOLD : HG_RX_SHED;
}

/* Is a queue whose tenant is out of budget (hg_fp_rx) read on this pass,
 * after the funded tenants' queues gave `got` datagrams? Only when they
 * gave none and, on a saturated core, no funded tenant has TX waiting:
 * reading it would spend that tenant's time on a flood, while a flood left
 * in its own queue costs the core nothing (the link drops what does not
 * fit). An unsaturated core reads it (work conservation). */
static inline int
hg_rxq_unfunded_read(const struct hg_dp *dp, struct hg_fp_core *c,
		     unsigned got)
{
	if (got > 0)
		return 0;
	return !core_saturated(c) || !hg_funded_pending(dp, c);
}

/* Is q's last out-of-budget tenant still out of budget? Looked at on
 * every pass, so a queue waits behind the others only while it does. */
static inline int
hg_rxq_unfunded(const struct hg_dp *dp, struct hg_fp_core *c,
		const struct hg_rxq *q)
{
	return q->unfunded >= 0 && !hg_topup_funded(dp, c, (unsigned)q->unfunded);
}

/* What tenant t has left of its bank, in 1/65536ths of its cap (topped
 * up): budgets compared as shares, so that a heavy tenant's larger cap
 * does not rank it ahead of a light one for good (hg_rx_order). */
static inline int64_t
bank_share(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	uint64_t cap = hg_tenant_cap(dp, t, hg_view(dp, t));
	int64_t left = hg_topup_left(dp, c, t);

	return cap > 0 ? left * 65536 / (int64_t)cap : left;
}

/* The funded queues in the order RX reads them: most of its bank left
 * first (a queue's last tenant's; one nobody used yet first of all), from
 * the round robin's start among equals. The pass reads HG_RX_BURSTS bursts
 * in all, and a flood's full queue read first took both: a victim's
 * datagram behind it waited a whole pass more (bench/isolation, p50
 * 1.8-2.0x alone from 512 B). Insertion sort: HG_MAX_RXQ at most.
 * Returns how many; the unfunded ones go into *later. */
static inline unsigned
hg_rx_order(const struct hg_dp *dp, struct hg_fp_core *c, uint8_t *idx,
	    unsigned *later)
{
	int64_t key[HG_MAX_RXQ];
	unsigned k, i, j, n = 0;

	for (k = 0; k < c->n_rxq; k++) {
		const struct hg_rxq *q;
		int64_t left;

		i = (c->rxq_rr + k) % c->n_rxq;
		q = &c->rxq[i];
		if (hg_rxq_unfunded(dp, c, q)) {
			*later |= 1u << i;
			continue;
		}
		left = q->tenant < 0 ? INT64_MAX : bank_share(dp, c, (unsigned)q->tenant);
		for (j = n; j > 0 && key[j - 1] < left; j--) {
			key[j] = key[j - 1];
			idx[j] = idx[j - 1];
		}
		key[j] = left;
		idx[j] = (uint8_t)i;
		n++;
	}
	return n;
}

/* Free slots in the RX rings on core `core` of contexts ctx[0..n), summed
 * until there are `enough`. */
static inline uint32_t
hg_rings_room(const struct hg_tenant *tn, unsigned core, const uint8_t *ctx, uint32_t n,
	      uint32_t enough)
{
	uint32_t i, room = 0;

	for (i = 0; i < n && i < HG_MAX_CTX && room < enough; i++)
		room += rte_ring_free_count(tn->ring[ctx[i] % HG_MAX_CTX][core][HG_RING_RX]);
	return room;
}

/* The frames own-bytes (bytes, 0: off) lets a burst take from a queue
 * whose last burst's frames averaged len bytes: at least one, at most
 * HG_BATCH; no bound before a burst has shown their length (frames, as
 * the link gives them: 1442 B for a 1400 B datagram). A flood's
 * frames are mostly of one size, so the last burst's mean is the next
 * one's; an ethdev's burst takes its frames before RX sees them, so the
 * bound is set in frames for every link alike. */
static inline uint32_t
hg_own_bytes_frames(uint32_t bytes, uint32_t len)
{
	if (bytes == 0 || len == 0)
		return HG_BATCH;
	return RTE_MAX(1u, RTE_MIN(bytes / len, (uint32_t)HG_BATCH));
}

/* The most frames a burst of q may take: with protection on and another
 * tenant active, no more than the operator's own-burst. The pass that
 * serves a flood's burst (its RX, its app's answers, SCHED and the
 * flush) is as long as the burst, and a neighbour's datagram or answer
 * that comes meanwhile waits out what RX's and SCHED's looks cannot cut.
 * Bursts of 8 frames took a victim's p50 under a 16 x 1400 B flood from
 * 54-73 to 40-53 us, and the flood's answers from 0.94-1.07 to 0.86-0.98
 * of unprotected (0.73 at 64 B: each pass costs ~1.5 us whatever it
 * carries), so it is the operator's trade, off by default. A capped
 * burst comes back short, so the queue gets one a pass (rx.c's
 * rx_drain).
 *
 * own-bytes bounds the burst by its bytes instead: a pass's length is
 * mostly its frames' copies, so a bound in bytes shortens the passes of
 * large frames only. At 11,200 bytes (7 frames of 1400 B) the same
 * victim's p50 was 31-42 us against 51-64 without a bound, for 0.88-0.91
 * of the flood's unprotected answers against 0.97-0.99, and a 64 B
 * flood's bursts stayed full, where own-burst 8 cost it a quarter of its
 * answers. A burst cut short at the bound tells the workers it delivered
 * to that more comes (doorbell.h's hg_bell_more), so that they do not
 * park between passes. */
static inline uint32_t
hg_rx_own_bound(const struct hg_dp *dp, const struct hg_rxq *q)
{
	uint32_t most = HG_BATCH,
		 burst = __atomic_load_n(&dp->live.own_burst, __ATOMIC_RELAXED),
		 bytes = __atomic_load_n(&dp->live.own_bytes, __ATOMIC_RELAXED);

	if ((burst == 0 && bytes == 0) || !hg_protecting(dp) ||
	    __atomic_load_n(&dp->n_active, __ATOMIC_RELAXED) < 2)
		return HG_BATCH;
	if (burst != 0)
		most = RTE_MIN(burst, HG_BATCH);
	return RTE_MIN(most, hg_own_bytes_frames(bytes, q->frame_len));
}

/* How many frames RX may take from q now (up to HG_BATCH). A queue of one
 * tenant's own is read no further than its apps' receive rings on this
 * core have room, nor than bound (hg_rx_own_bound, which RX reads once
 * for the burst and compares with what it took): a frame taken beyond the
 * room would only be dropped at the full ring, after a look (rx_peek) or
 * a copy, while left in the link it costs the core nothing (the link
 * drops what does not fit, as a NIC's ring does). bench/isolation's
 * echoed flood had 65% of its frames taken only to be dropped so, and
 * that time was its own answers'. A shared queue is read in full:
 * another tenant's frames wait behind these. The free counts come from
 * the rings the app consumes; a tenant that lies in them holds back or
 * floods only its own queue. */
static inline unsigned
hg_rx_room_in(const struct hg_dp *dp, const struct hg_fp_core *c, const struct hg_rxq *q,
	      uint32_t bound)
{
	const struct hg_tenant_view *v;
	const struct hg_tenant *tn;

	if (q->tenant < 0 || hg_rxq_shared(dp, c, q))
		return HG_BATCH;
	v = hg_view(dp, (unsigned)q->tenant);
	if (v->state != HG_TENANT_ACTIVE || v->map.n_live == 0)
		return HG_BATCH;	/* its frames are dropped as unowned */
	tn = &dp->tenant[q->tenant];
	return RTE_MIN(hg_rings_room(tn, c->idx, v->map.live_ctx, v->map.n_live, bound),
		       bound);
}

/* hg_rx_room_in with q's bound read now, for a caller that does not
 * compare it with what it took (RX's burst does: rx_drain). */
static inline unsigned
hg_rx_room(const struct hg_dp *dp, const struct hg_fp_core *c, const struct hg_rxq *q)
{
	return hg_rx_room_in(dp, c, q, hg_rx_own_bound(dp, q));
}

/* The room a burst has left for the frames of one port, counted once at
 * its first frame for the port (rx.c's peek_full) and used up a slot a
 * frame taken: frames taken earlier in the burst are not in the rings
 * yet, so a count read per frame would take them all once one slot was
 * free, to be dropped after their copy. t -1: nothing counted. */
struct hg_burst_room {
	int t;
	uint16_t port;
	uint32_t left;
};

/* Is the count held the one for tenant t's port? */
static inline int
hg_burst_room_for(const struct hg_burst_room *r, int t, uint16_t port)
{
	return r->t == t && r->port == port;
}

static inline void
hg_burst_room_set(struct hg_burst_room *r, int t, uint16_t port, uint32_t room)
{
	*r = (struct hg_burst_room){ .t = t, .port = port, .left = room };
}

/* A slot for one more frame: 1, or 0 once the count is used up (the
 * frame is dropped as its app's ring full). */
static inline int
hg_burst_room_take(struct hg_burst_room *r)
{
	if (r->left == 0)
		return 0;
	r->left--;
	return 1;
}

/* A drop that holds for the rest of a burst, kept for the last port that
 * met one: a tenant shed (hg_rx_over_budget: its budget is read once per
 * burst, the core's saturation and the burst's fullness do not change
 * within it, and a funded tenant's pending work once seen stays seen),
 * or an app whose counted room is used up (hg_burst_room_take). A flood's
 * frames after its first are then dropped on a compare of their port:
 * the port map's entry, the tenant's view and the gate's tests, read per
 * frame, were a quarter of what a shared queue's drain cost (perf, 16 x
 * 64 B: those loads miss behind the ring's descriptors and the frames
 * streaming through the cache). */
#define HG_BURST_NO_PORT 0x10000u

struct hg_burst_drop {
	uint32_t port;			/* network order, or HG_BURST_NO_PORT */
	int t;
	enum hg_tenant_drop why;
};

/* Does a frame to port (network order) meet the drop held? */
static inline int
hg_burst_drop_hit(const struct hg_burst_drop *d, uint16_t port)
{
	return d->port == port;
}

static inline void
hg_burst_drop_hold(struct hg_burst_drop *d, uint16_t port, int t, enum hg_tenant_drop why)
{
	*d = (struct hg_burst_drop){ .port = port, .t = t, .why = why };
}

/* Is the clock due for a frame of len bytes, once per `every` bytes of
 * frames (*unclocked: those since the last read; start it at `every` for
 * the first frame to read it)? RX's looks in a burst of a tenant's own
 * queue (rx.c) want the time about as often as a frame's copy takes it. */
static inline int
hg_rx_clock_due(uint32_t *unclocked, uint32_t len, uint32_t every)
{
	if (*unclocked < every) {
		*unclocked += len;
		return 0;
	}
	*unclocked = len;
	return 1;
}

#endif /* HG_FASTPATH_RX_GATE_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The memif link's burst functions (memif.h): written by hand because
 * DPDK's server trusts its peer, and this is the fast path. Each
 * descriptor is read once, as two 64-bit loads, into daemon memory and
 * checked against the regions the daemon mapped; nothing read from a
 * region is used as an address without that check.
 */
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_memcpy.h>

#include "dp.h"
#include "memif.h"

_Static_assert(HG_MIF_RX_RINGS == HG_MAX_FP_CORES * HG_MAX_RXQ, "a ring per RX queue");
_Static_assert(HG_MIF_TX_RINGS == HG_MAX_FP_CORES * HG_MAX_TXQ,
	       "a ring per TX group, to send each tenant's on its own");

/* A descriptor as the peer left it, read once. */
struct mif_desc {
	uint16_t flags, region;
	uint32_t length, offset;
};

static inline struct mif_desc
desc_read(const struct hg_memif_ring *r, uint16_t slot)
{
	const uint64_t *w = (const uint64_t *)&r->desc[slot];
	uint64_t w0 = __atomic_load_n(&w[0], __ATOMIC_RELAXED);
	uint64_t w1 = __atomic_load_n(&w[1], __ATOMIC_RELAXED);

	return (struct mif_desc){ .flags = (uint16_t)w0, .region = (uint16_t)(w0 >> 16),
				  .length = (uint32_t)(w0 >> 32), .offset = (uint32_t)w1 };
}

/* Our answer in a posted buffer's descriptor: its length, no chain.
 * Relaxed: the release store of tail publishes it. */
static inline void
desc_fill(struct hg_memif_ring *r, uint16_t slot, uint32_t length)
{
	uint32_t *w = (uint32_t *)&r->desc[slot];

	__atomic_store_n((uint16_t *)w, (uint16_t)0, __ATOMIC_RELAXED);	/* flags */
	__atomic_store_n(&w[1], length, __ATOMIC_RELAXED);
}

/* The buffer a descriptor names, or NULL if any byte of it lies outside
 * the peer's regions. */
static inline uint8_t *
desc_buf(const struct hg_mif_conn *cn, const struct mif_desc *d)
{
	const struct hg_mif_region *g;

	if (unlikely(d->region >= cn->n_regions))
		return NULL;
	g = &cn->region[d->region];
	if (unlikely((uint64_t)d->offset + d->length > g->size))
		return NULL;
	return g->base + d->offset;
}

/* Slots the other side published beyond ours: never more than a ring,
 * whatever a hostile peer wrote. */
static inline uint16_t
published(const struct hg_mif_ring *r, uint16_t theirs)
{
	uint16_t n = (uint16_t)(theirs - r->next);

	return n > r->mask ? (uint16_t)(r->mask + 1u) : n;
}

/* Tops stash s up to want mbufs from pool; returns how many it holds
 * (fewer only while the pool is short). */
static inline uint16_t
stash_fill(struct hg_mif_stash *s, struct rte_mempool *pool, uint16_t want)
{
	if (s->n < want && rte_pktmbuf_alloc_bulk(pool, s->m + s->n, want - s->n) == 0)
		s->n = want;
	return s->n;
}

void
hg_mif_stash_free(struct hg_mif *m)
{
	unsigned q;

	for (q = 0; q < HG_MIF_RX_RINGS; q++) {
		rte_pktmbuf_free_bulk(m->stash[q].m, m->stash[q].n);
		m->stash[q].n = 0;
	}
}

uint16_t
hg_mif_rx(struct hg_mif *m, uint16_t q, struct rte_mempool *pool,
	  struct rte_mbuf **pkts, uint16_t n, uint64_t *bad, hg_mif_peek peek,
	  void *arg, uint16_t *seen)
{
	struct hg_mif_conn *cn = __atomic_load_n(&m->conn, __ATOMIC_ACQUIRE);
	struct hg_mif_ring *r;
	uint16_t avail, got = 0, want, start;
	struct hg_mif_stash *st;
	enum hg_mif_look look;
	struct rte_mbuf *b;
	struct mif_desc d;
	uint8_t *src;

	*seen = 0;
	if (cn == NULL || q >= cn->n_rx)
		return 0;
	r = &cn->rx[q];
	avail = published(r, __atomic_load_n(&r->ring->head, __ATOMIC_ACQUIRE));
	if (avail == 0)
		return 0;
	/* n slots at most, whatever the peek drops: a burst is bounded */
	avail = want = RTE_MIN(RTE_MIN(n, HG_MIF_BURST), avail);
	st = &m->stash[q];
	if (unlikely(stash_fill(st, pool, want) < want))
		return 0;
	start = r->next;
	while (got < want && avail > 0) {
		d = desc_read(r->ring, r->next & r->mask);
		r->next++;
		avail--;
		if (unlikely(d.flags & HG_MEMIF_DESC_FLAG_NEXT)) {
			/* a chained frame is larger than any datagram we
			 * serve: skip the chain */
			while (avail > 0 && (d.flags & HG_MEMIF_DESC_FLAG_NEXT)) {
				d = desc_read(r->ring, r->next & r->mask);
				r->next++;
				avail--;
			}
			(*bad)++;
			continue;
		}
		src = desc_buf(cn, &d);
		if (unlikely(src == NULL || d.length == 0 || d.length > m->room)) {
			(*bad)++;
			continue;
		}
		look = peek != NULL ? peek(arg, src, d.length) : HG_MIF_TAKE;
		if (look == HG_MIF_DROP)
			continue;
		if (look == HG_MIF_STOP) {
			r->next--;	/* untaken: its slot stays the peer's */
			break;
		}
		b = pkts[got++] = st->m[--st->n];
		rte_memcpy(rte_pktmbuf_mtod(b, void *), src, d.length);
		b->data_len = (uint16_t)d.length;
		b->pkt_len = d.length;
	}
	__atomic_store_n(&r->ring->tail, r->next, __ATOMIC_RELEASE);
	*seen = (uint16_t)(r->next - start);
	return got;
}

/* Copies mbuf chain b into dst (len bytes fit: checked by the caller). */
static inline void
copy_out(uint8_t *dst, const struct rte_mbuf *b)
{
	for (; b != NULL; b = b->next) {
		rte_memcpy(dst, rte_pktmbuf_mtod(b, const void *), b->data_len);
		dst += b->data_len;
	}
}

/* Writes the eventfd of a peer that sleeps on ring r: one that did not
 * mask it (a poller masks it; hgload unmasks it only while it waits). */
static inline void
kick_asleep(struct hg_mif_ring *r)
{
	uint64_t one = 1;

	if ((__atomic_load_n(&r->ring->flags, __ATOMIC_RELAXED) &
	     HG_MEMIF_RING_FLAG_MASK_INT) == 0 && r->efd >= 0 &&
	    write(r->efd, &one, sizeof(one)) == sizeof(one))
		r->kicks++;
}

/* After a burst: one write per burst, and only while the peer sleeps.
 * Its cost is in the flush's PMD cycles, billed to the frames it carried.
 * The fence orders the tail's store before the flag's load, as the peer
 * orders its flag's store before its load of the tail: one of the two
 * sees the other. */
static inline void
kick(struct hg_mif_ring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	kick_asleep(r);
}

uint16_t
hg_mif_tx(struct hg_mif *m, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
	  uint64_t *bad)
{
	struct hg_mif_conn *cn = __atomic_load_n(&m->conn, __ATOMIC_ACQUIRE);
	struct hg_mif_ring *r;
	uint16_t room, sent = 0;
	struct mif_desc d;
	uint8_t *dst;

	if (cn == NULL || q >= cn->n_tx)
		return 0;
	r = &cn->tx[q];
	room = published(r, __atomic_load_n(&r->ring->head, __ATOMIC_ACQUIRE));
	while (sent < n && room > 0) {
		d = desc_read(r->ring, r->next & r->mask);
		r->next++;
		room--;
		dst = desc_buf(cn, &d);
		if (unlikely(dst == NULL || d.length < pkts[sent]->pkt_len)) {
			/* a buffer we cannot fill goes back empty */
			desc_fill(r->ring, (uint16_t)(r->next - 1) & r->mask, 0);
			(*bad)++;
			continue;
		}
		copy_out(dst, pkts[sent]);
		desc_fill(r->ring, (uint16_t)(r->next - 1) & r->mask, pkts[sent]->pkt_len);
		sent++;
	}
	__atomic_store_n(&r->ring->tail, r->next, __ATOMIC_RELEASE);
	if (sent > 0) {
		rte_pktmbuf_free_bulk(pkts, sent);
		kick(r);
		r->ahead = 0;
		r->sent_tsc = rte_rdtsc();
	}
	return sent;
}

void
hg_mif_kick_ahead(struct hg_mif *m, uint16_t q, uint64_t now, uint64_t quiet)
{
	struct hg_mif_conn *cn = __atomic_load_n(&m->conn, __ATOMIC_ACQUIRE);
	struct hg_mif_ring *r;

	if (cn == NULL || q >= cn->n_tx || (r = &cn->tx[q])->ahead ||
	    now - r->sent_tsc < quiet)
		return;
	r->ahead = 1;
	/* no fence: a peer that masks as we look is woken by the send */
	kick_asleep(r);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's own memif link (proto/memif.h): the fast path's side.
 *
 * Why not DPDK's net_memif server: it reads every descriptor's region,
 * offset and length from the peer's memory and copies with them
 * unchecked (a peer overflows the daemon's mbufs or reads any address),
 * and its control thread unmaps a departing peer's rings while the cores
 * still poll them (a reconnect crashed the daemon). Here the slow path
 * (slowpath/memif_server.c) builds a connection in daemon memory, every
 * ring's place and size and every region's bounds fixed when the peer
 * connected, and publishes it with one release store; it unmaps a
 * departed peer's memory only after every core has passed a quiescent
 * point (rte_rcu_qsbr) since it unpublished it.
 *
 * A core polls RX queue q only if the peer gave ring q. It sends a
 * tenant's frames on the S2C ring of the tenant's TX group where the peer
 * gave one per group (--tx-queues; as a NIC's TX queue per tenant: an
 * answer waits behind its own group's only), else on the core's own
 * ring: any ring count is served.
 */
#ifndef HG_FASTPATH_MEMIF_H
#define HG_FASTPATH_MEMIF_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "../proto/memif.h"

#define HG_MIF_REGIONS 16u		/* regions a peer may add */
#define HG_MIF_RX_RINGS 64u		/* HG_MAX_FP_CORES x HG_MAX_RXQ */
#define HG_MIF_TX_RINGS 64u		/* HG_MAX_FP_CORES x HG_MAX_TXQ */
#define HG_MIF_BURST 64u		/* the most frames one RX burst takes */

struct hg_mif_region {
	uint8_t *base;			/* daemon's mapping */
	uint64_t size;			/* as mapped: checked against the file */
};

/* One ring as a core sees it. Only the core that owns the queue writes
 * next; ring points into the peer's region, at a place checked once. */
struct hg_mif_ring {
	struct hg_memif_ring *ring;
	uint16_t mask;			/* slots - 1 */
	uint16_t next;			/* RX: next slot to read; TX: to fill */
	int efd;			/* the peer's eventfd, -1 */
	uint8_t ahead;			/* TX: kicked ahead of its next send */
	uint64_t sent_tsc;		/* TX: when frames last went on it */
	uint64_t kicks;			/* TX: eventfd writes the peer asked for */
};

/* A connected peer: immutable once published, but for each ring's next,
 * ahead, sent_tsc and kicks, written by the ring's one core. */
struct hg_mif_conn {
	uint32_t n_rx, n_tx;		/* rings the peer gave, each way */
	uint32_t n_regions;
	struct hg_mif_region region[HG_MIF_REGIONS];
	struct hg_mif_ring rx[HG_MIF_RX_RINGS];	/* C2S, by RX queue id */
	/* S2C, by TX group (link.h's hg_link_tx_per_tenant), or by core */
	struct hg_mif_ring tx[HG_MIF_TX_RINGS];
};

/* The mbufs an RX queue's bursts took from the pool and did not fill,
 * kept for its next burst. A burst of a flood that peek drops where it
 * lies fills none, and allocating and freeing a burst's worth each time
 * was ~12% of a core draining a shared queue (perf, 64 B). Written only
 * by the core that reads the queue, as its ring's next; every mbuf in it
 * is as the pool's alloc left it. */
struct hg_mif_stash {
	uint16_t n;
	struct rte_mbuf *m[HG_MIF_BURST];
} __rte_cache_aligned;

/* The link: the peer of the moment. conn is written by the slow path
 * only, read by the cores with acquire. The stashes outlive peers: they
 * hold daemon mbufs, nothing of the peer's. */
struct hg_mif {
	struct hg_mif_conn *conn;	/* atomic; NULL: no peer */
	uint16_t room;			/* mbuf data room: the largest frame */
	struct hg_mif_stash stash[HG_MIF_RX_RINGS];	/* by RX queue id */
};

/* What a look at a frame where the peer left it, before any copy, says
 * to do with it. */
enum hg_mif_look {
	HG_MIF_TAKE,	/* copy it into an mbuf */
	HG_MIF_DROP,	/* drop it there (the caller counts it) */
	HG_MIF_STOP,	/* end the burst before it: it stays in the ring,
			 * the next burst's first */
};
typedef enum hg_mif_look (*hg_mif_peek)(void *arg, const uint8_t *frame, uint32_t len);

/* Takes up to n (at most HG_MIF_BURST) slots off RX ring q: frames peek
 * drops stay where they are, the others are copied into mbufs of q's
 * stash, topped up from pool (returned, in pkts), up to one peek stops
 * at; *seen: the slots taken. bad counts the peer's descriptors refused
 * (out of its regions, too long, chained). */
uint16_t hg_mif_rx(struct hg_mif *m, uint16_t q, struct rte_mempool *pool,
		   struct rte_mbuf **pkts, uint16_t n, uint64_t *bad,
		   hg_mif_peek peek, void *arg, uint16_t *seen);

/* Returns every stash's mbufs to their pools; once no core polls. */
void hg_mif_stash_free(struct hg_mif *m);

/* The S2C rings the peer gave, 0 without a peer. */
static inline uint32_t
hg_mif_tx_rings(const struct hg_mif *m)
{
	const struct hg_mif_conn *cn = __atomic_load_n(&m->conn, __ATOMIC_ACQUIRE);

	return cn != NULL ? cn->n_tx : 0;
}

/* Has RX ring q frames the core has not taken? One load of the peer's
 * head; a lie only makes a batch at SCHED shorter (sched.c). */
static inline int
hg_mif_rx_waiting(const struct hg_mif *m, uint16_t q)
{
	const struct hg_mif_conn *cn = __atomic_load_n(&m->conn, __ATOMIC_ACQUIRE);

	return cn != NULL && q < cn->n_rx &&
	       __atomic_load_n(&cn->rx[q].ring->head, __ATOMIC_ACQUIRE) != cn->rx[q].next;
}

/* Copies up to n frames into the peer's posted buffers on S2C ring q and
 * frees them; the rest stay the caller's. bad as above. */
uint16_t hg_mif_tx(struct hg_mif *m, uint16_t q, struct rte_mbuf **pkts,
		   uint16_t n, uint64_t *bad);

/* Wakes a peer that sleeps on S2C ring q now (TSC), when frames for it
 * are on their way (hg_link_kick_ahead), once until the ring's next send:
 * a wake-up takes the peer's CPU 11-21 us here (bench/wake_cost), which
 * then overlaps the frames' SCHED and flush instead of following them.
 * Not if the ring had frames within quiet cycles: a peer that gets them
 * that often is awake, or kicked by each send already, and one that
 * never masks its ring would be written to twice a send. A hint: the
 * send still kicks a peer that is asleep by then. */
void hg_mif_kick_ahead(struct hg_mif *m, uint16_t q, uint64_t now, uint64_t quiet);

#endif /* HG_FASTPATH_MEMIF_H */

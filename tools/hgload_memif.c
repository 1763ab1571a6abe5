/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload over net_memif (hgload_memif.h). EAL is started with arguments
 * of our own (no hugepages, a file prefix per process, the memif vdev as
 * the client of the daemon's socket), so that hgload keeps hgload's
 * command line. Every sender thread and the receiver thread transmit
 * (credit drains happen on the receiver), each from a batch of its own;
 * a ring towards the daemon takes a batch at a time under its lock (one
 * ring without --rx-map; with it, one per RX queue of the daemon, each
 * datagram on its tenant's: rx_map.h). The lock is a
 * priority-inheriting mutex, not a spinlock: with a SCHED_FIFO sender
 * (--rt) on the CPU of a normal one holding it, a spinlock spins until
 * the kernel throttles real-time tasks (0.95 s). Uncontended, it is one
 * atomic, as a spinlock is.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_udp.h>

#include "hgload_memif.h"
#include "rx_map.h"
#include "tool_eal.h"
#include "../common/hg_util.h"

#define RING      1024u
#define MBUFS     8191u	/* the receiver's: the RX ring and what it holds */
#define TX_MBUFS  2047u	/* a sender's: its batch, the rest is freed as sent */
#define RX_BURST  32u
#define TX_BATCH  32u
#define WAIT_LINK_S 5
#define WAIT_ARP_S  3
/* A full ring is the daemon behind on RX: retry this long, then drop. */
#define TX_RETRY_NS 1000000u
/* Every wait here naps rather than spins: hgload shares CPU 0 with the
 * apps it measures, and a poller that never sleeps takes that CPU from
 * them (a SCHED_FIFO one, all of it, down to the app of its own victim).
 * The receiver naps when the ring is empty, and after RX_BUSY_NS of
 * frames without a pause all the same. */
#define RX_NAP_NS  10000u
#define TX_NAP_NS  2000u
#define RX_BUSY_NS 200000u

static struct {
	uint16_t port;
	struct rte_mempool *pool;
	struct rte_ether_addr mac, peer;
	int have_peer;
	struct hgl_memif_cfg c;
	struct hg_rx_map map;		/* the daemon's rings (rx_map.h) */
	/* one lock per ring: a load whose tenant has a queue of its own
	 * never waits for another's sender */
	pthread_mutex_t tx_lock[HG_RX_MAP_RINGS];
	double ns_per_tsc;
} mf;

/* The calling thread's pool (hgl_memif_thread; the receiver's pool
 * before that: the opening thread is the receiver) and frames not yet
 * handed to the port. */
static __thread struct rte_mempool *txpool;
static __thread struct {
	struct rte_mbuf *m[TX_BATCH];
	unsigned n;
	unsigned ring;			/* where the batch goes */
} txb;

/* The mbufs a thread sends (the PMD frees them in the same call) or the
 * receiver takes, in a pool of that thread's own with single-producer,
 * single-consumer ops. A shared multi-thread pool would livelock: its
 * ring makes a thread wait, spinning, for another that stopped halfway
 * through an update, and on one CPU a SCHED_FIFO sender (--rt) spins
 * while the normal thread it waits for never runs, until the kernel
 * throttles real-time tasks (~1 s). */
static struct rte_mempool *
pool_of(const char *name, unsigned n)
{
	return rte_pktmbuf_pool_create_by_ops(name, n, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					      (int)rte_socket_id(), "ring_sp_sc");
}

static int
start_eal(const char *socket)
{
	char vdev[200];
	const char *vdevs[] = { vdev };

	hg_tool_memif_vdev(vdev, sizeof(vdev), socket);
	return hg_tool_eal("hgload", vdevs, 1);
}

static int
start_port(void)
{
	if (rte_eth_dev_count_avail() == 0)
		return -1;
	mf.port = (uint16_t)rte_eth_find_next(0);
	mf.pool = pool_of("hgl_rx", MBUFS);
	if (mf.pool == NULL ||
	    hg_tool_port(mf.port, mf.pool, RING, (uint16_t)mf.map.cores,
			 (uint16_t)hg_rx_map_rings(&mf.map)) < 0)
		return -1;
	return rte_eth_macaddr_get(mf.port, &mf.mac);
}

static void
nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

uint64_t
hgl_memif_now_ns(void)
{
	return (uint64_t)((double)rte_rdtsc() * mf.ns_per_tsc);
}

/* Hands frames to ring `ring`, retrying a full ring for TX_RETRY_NS;
 * returns how many were dropped. */
static unsigned
tx_frames(unsigned ring, struct rte_mbuf **m, unsigned n)
{
	uint64_t give_up = 0;
	unsigned sent = 0;

	while (sent < n) {
		pthread_mutex_lock(&mf.tx_lock[ring]);
		sent += rte_eth_tx_burst(mf.port, (uint16_t)ring, m + sent,
					 (uint16_t)(n - sent));
		pthread_mutex_unlock(&mf.tx_lock[ring]);
		if (sent == n)
			break;
		if (give_up == 0)
			give_up = hgl_memif_now_ns() + TX_RETRY_NS;
		else if (hgl_memif_now_ns() >= give_up)
			break;
		nap(TX_NAP_NS);
	}
	rte_pktmbuf_free_bulk(m + sent, n - sent);
	return n - sent;
}

static int
tx_one(struct rte_mbuf *m)
{
	return tx_frames(0, &m, 1) ? -1 : 0;
}

unsigned
hgl_memif_flush(void)
{
	unsigned dropped = txb.n ? tx_frames(txb.ring, txb.m, txb.n) : 0;

	txb.n = 0;
	return dropped;
}

int
hgl_memif_thread(void)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	static unsigned n;

	if (txpool != NULL)
		return 0;
	snprintf(name, sizeof(name), "hgl_tx%u", __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED));
	txpool = pool_of(name, TX_MBUFS);
	return txpool ? 0 : -1;
}

/* An ARP request (who has tip) or a reply to one (we are sip). */
static void
send_arp(uint16_t op, const struct rte_ether_addr *to, uint32_t tip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(txpool ? txpool : mf.pool);
	struct rte_ether_hdr *e;
	struct rte_arp_hdr *a;

	if (m == NULL)
		return;
	e = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(e + 1);
	if (to != NULL)
		e->dst_addr = *to;
	else
		memset(&e->dst_addr, 0xff, sizeof(e->dst_addr));
	e->src_addr = mf.mac;
	e->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	*a = (struct rte_arp_hdr){
		.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER),
		.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4),
		.arp_hlen = RTE_ETHER_ADDR_LEN, .arp_plen = 4,
		.arp_opcode = rte_cpu_to_be_16(op),
	};
	a->arp_data.arp_sha = mf.mac;
	a->arp_data.arp_sip = mf.c.src_ip;
	if (to != NULL)
		a->arp_data.arp_tha = *to;
	a->arp_data.arp_tip = tip;
	m->data_len = m->pkt_len = sizeof(*e) + sizeof(*a);
	tx_one(m);
}

static void
on_arp(const struct rte_arp_hdr *a)
{
	uint16_t op = rte_be_to_cpu_16(a->arp_opcode);

	if (a->arp_data.arp_tip != mf.c.src_ip)
		return;
	if (op == RTE_ARP_OP_REQUEST)
		send_arp(RTE_ARP_OP_REPLY, &a->arp_data.arp_sha, a->arp_data.arp_sip);
	if (a->arp_data.arp_sip == mf.c.dst_ip) {
		mf.peer = a->arp_data.arp_sha;
		__atomic_store_n(&mf.have_peer, 1, __ATOMIC_RELEASE);
	}
}

/* A frame from the port: ARP is answered or learned; a UDP datagram
 * from the target to one of our flows' ports is handed on. */
static unsigned
on_frame(struct rte_mbuf *m,
	 void (*took)(void *, unsigned, uint16_t, const uint8_t *, size_t), void *arg)
{
	const struct rte_ether_hdr *e = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const void *)(e + 1);
	const struct rte_udp_hdr *u;
	uint32_t len = rte_pktmbuf_data_len(m), ihl, f, ulen;

	if (len < sizeof(*e))
		return 0;
	if (e->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		if (len >= sizeof(*e) + sizeof(struct rte_arp_hdr))
			on_arp((const void *)(e + 1));
		return 0;
	}
	if (e->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    len < sizeof(*e) + sizeof(*ip) || ip->next_proto_id != IPPROTO_UDP ||
	    ip->src_addr != mf.c.dst_ip)
		return 0;
	ihl = (ip->version_ihl & 0xf) * 4u;
	if (ihl < sizeof(*ip) || len < sizeof(*e) + ihl + sizeof(*u))
		return 0;
	u = (const void *)((const uint8_t *)ip + ihl);
	f = rte_be_to_cpu_16(u->dst_port) - HGL_MEMIF_PORT0;
	ulen = rte_be_to_cpu_16(u->dgram_len);
	if (f >= mf.c.flows || ulen < sizeof(*u) || sizeof(*e) + ihl + ulen > len)
		return 0;
	took(arg, f, u->src_port, (const uint8_t *)(u + 1), ulen - sizeof(*u));
	return 1;
}

/* A burst from the daemon's TX queues (our RX rings), the next ring
 * first each time. */
static unsigned
rx_any(struct rte_mbuf **m)
{
	static __thread unsigned next;
	unsigned i, q, k = 0;

	for (i = 0; i < mf.map.cores && k == 0; i++) {
		q = next++ % mf.map.cores;
		k = rte_eth_rx_burst(mf.port, (uint16_t)q, m, RX_BURST);
	}
	return k;
}

unsigned
hgl_memif_poll(uint64_t max_ns,
	       void (*took)(void *arg, unsigned f, uint16_t sport,
			    const uint8_t *p, size_t n),
	       void *arg)
{
	static __thread uint64_t napped;	/* when this thread last did */
	static __thread unsigned quiet;		/* naps since the last frame */
	struct rte_mbuf *m[RX_BURST];
	uint64_t now = hgl_memif_now_ns(), end = now + max_ns, last = now;
	unsigned got = 0, k, i;

	do {
		k = rx_any(m);
		for (i = 0; i < k; i++)
			got += on_frame(m[i], took, arg);
		rte_pktmbuf_free_bulk(m, k);
		now = hgl_memif_now_ns();
		if (k) {
			/* what the frames let out (credit drains, ARP) */
			hgl_memif_flush();
			last = now;
			quiet = 0;
		}
		if (now - napped > RX_BUSY_NS) {
			nap(RX_NAP_NS);
			napped = now;
		}
		if (k == RX_BURST)
			continue;	/* more are waiting */
		if (got)
			break;
		if (now - last >= mf.c.rx_spin_ns) {
			/* the longer the quiet, the longer the nap: a poller
			 * that woke every 10 us would preempt the apps on its
			 * CPU at each wake-up, whatever its small share */
			hg_tool_backoff(quiet, mf.c.rx_nap_max_ns);
			quiet++;
			napped = now;
		} else {
			rte_pause();
		}
	} while (now < end);
	return got;
}

static void
ignore(void *arg, unsigned f, uint16_t sport, const uint8_t *p, size_t n)
{
	(void)arg, (void)f, (void)sport, (void)p, (void)n;
}

static int
wait_link(void)
{
	struct rte_eth_link link;
	int i;

	for (i = 0; i < WAIT_LINK_S * 100; i++) {
		if (rte_eth_link_get_nowait(mf.port, &link) == 0 && link.link_status)
			return 0;
		usleep(10000);
	}
	return -1;
}

static int
resolve_peer(void)
{
	int i;

	for (i = 0; i < WAIT_ARP_S * 10 && !mf.have_peer; i++) {
		send_arp(RTE_ARP_OP_REQUEST, NULL, mf.c.dst_ip);
		hgl_memif_poll(100000000u, ignore, NULL);
	}
	return mf.have_peer ? 0 : -1;
}

int
hgl_memif_open(const struct hgl_memif_cfg *c, char *err, size_t n)
{
	pthread_mutexattr_t a;

	unsigned r;

	mf.c = *c;
	if (c->map != NULL)
		mf.map = *c->map;
	else
		hg_rx_map_single(&mf.map);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	for (r = 0; r < HG_RX_MAP_RINGS; r++)
		pthread_mutex_init(&mf.tx_lock[r], &a);
	pthread_mutexattr_destroy(&a);
	if (start_eal(c->socket) < 0) {
		snprintf(err, n, "cannot start DPDK for memif %s", c->socket);
		return -1;
	}
	mf.ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	if (start_port() < 0) {
		snprintf(err, n, "cannot start the memif port");
		return -1;
	}
	if (wait_link() < 0) {
		snprintf(err, n, "no daemon connected to memif %s within %d s",
			 c->socket, WAIT_LINK_S);
		return -1;
	}
	if (c->peer_mac != NULL) {
		if (rte_ether_unformat_addr(c->peer_mac, &mf.peer) < 0) {
			snprintf(err, n, "--peer-mac %s is not a MAC address", c->peer_mac);
			return -1;
		}
		mf.have_peer = 1;
	} else if (resolve_peer() < 0) {
		struct in_addr a = { c->dst_ip };

		snprintf(err, n, "%s does not answer ARP on memif %s", inet_ntoa(a),
			 c->socket);
		return -1;
	}
	return 0;
}

/* Writes flow f's Ethernet/IPv4/UDP frame to dport (network order) with
 * payload into m. */
static void
build_frame(struct rte_mbuf *m, unsigned f, uint16_t dport, const void *payload,
	    size_t len)
{
	struct rte_ether_hdr *e = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(e + 1);
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)(ip + 1);

	e->dst_addr = mf.peer;
	e->src_addr = mf.mac;
	e->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	*ip = (struct rte_ipv4_hdr){
		.version_ihl = RTE_IPV4_VHL_DEF, .time_to_live = 64,
		.next_proto_id = IPPROTO_UDP,
		.total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*u) + len)),
		.src_addr = mf.c.src_ip, .dst_addr = mf.c.dst_ip,
	};
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	/* checksum 0: none computed (RFC 768), as the daemon accepts */
	*u = (struct rte_udp_hdr){
		.src_port = rte_cpu_to_be_16((uint16_t)(HGL_MEMIF_PORT0 + f)),
		.dst_port = dport,
		.dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*u) + len)),
	};
	memcpy(u + 1, payload, len);
	m->data_len = m->pkt_len = (uint32_t)(sizeof(*e) + sizeof(*ip) + sizeof(*u) + len);
}

/* The daemon's ring for flow f's datagrams to dport (network order). */
static unsigned
ring_of(unsigned f, uint16_t dport)
{
	return hg_rx_map_ring(&mf.map, HGL_MEMIF_PORT0 + f, rte_be_to_cpu_16(dport));
}

int
hgl_memif_send(unsigned f, uint16_t dport, const void *payload, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(txpool ? txpool : mf.pool);
	unsigned ring = ring_of(f, dport), dropped = 0;

	if (m == NULL)
		return -1;
	if (txb.n > 0 && txb.ring != ring)
		dropped = hgl_memif_flush();
	build_frame(m, f, dport, payload, len);
	txb.ring = ring;
	txb.m[txb.n++] = m;
	return (int)(dropped + (txb.n == TX_BATCH ? hgl_memif_flush() : 0));
}

/* One burst of the blast: the frames' references are raised first, as
 * the PMD drops one for each frame it copies into the ring; the ones it
 * refused are dropped here. Returns the frames sent. */
static unsigned
blast_burst(unsigned ring, struct rte_mbuf **burst)
{
	unsigned i, sent;

	for (i = 0; i < TX_BATCH; i++)
		rte_mbuf_refcnt_update(burst[i], 1);
	pthread_mutex_lock(&mf.tx_lock[ring]);
	sent = rte_eth_tx_burst(mf.port, (uint16_t)ring, burst, TX_BATCH);
	pthread_mutex_unlock(&mf.tx_lock[ring]);
	for (i = sent; i < TX_BATCH; i++)
		rte_mbuf_refcnt_update(burst[i], -1);
	return sent;
}

uint64_t
hgl_memif_blast(const struct hgl_blast *b, uint64_t *refused)
{
	struct rte_mbuf *frame[HGL_BLAST_FLOWS], *burst[TX_BATCH];
	unsigned nf = RTE_MIN(b->flows, HGL_BLAST_FLOWS), i, k, off = 0;
	/* one ring for the blast: its first flow's (a daemon of several
	 * cores gets the whole flood on one of them) */
	unsigned ring = ring_of(b->flow0, b->dport);
	uint64_t sent = 0, polls = 0;

	*refused = 0;
	if (nf == 0 || rte_pktmbuf_alloc_bulk(txpool ? txpool : mf.pool, frame, nf) != 0)
		return 0;
	for (i = 0; i < nf; i++)
		build_frame(frame[i], b->flow0 + i, b->dport, b->payload, b->len);
	/* the clock every 64 bursts: a few ns per burst, not per frame */
	while (polls++ % 64 != 0 || hgl_memif_now_ns() < b->end_ns) {
		/* the flows in turn, a burst's worth each time */
		for (i = 0; i < TX_BATCH; i++)
			burst[i] = frame[(off + i) % nf];
		off = (off + TX_BATCH) % nf;
		k = blast_burst(ring, burst);
		sent += k;
		if (k < TX_BATCH)
			(*refused)++;
	}
	rte_pktmbuf_free_bulk(frame, nf);
	return sent;
}

void
hgl_memif_close(void)
{
	rte_eth_dev_stop(mf.port);
	rte_eth_dev_close(mf.port);
	rte_eal_cleanup();
}

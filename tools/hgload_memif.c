/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload over memif (hgload_memif.h), through the project's own memif
 * client (memif_client.h): no DPDK, no EAL. Every sender thread and the
 * receiver thread transmit (credit drains happen on the receiver), each
 * from a batch of its own built in its own memory; a ring towards the
 * daemon takes a batch at a time under its lock (one ring without
 * --rx-map; with it, one per RX queue of the daemon, each datagram on its
 * tenant's: rx_map.h). The lock is a priority-inheriting mutex, not a
 * spinlock: with a SCHED_FIFO sender (--rt) on the CPU of a normal one
 * holding it, a spinlock spins until the kernel throttles real-time tasks
 * (0.95 s). Uncontended, it is one atomic, as a spinlock is.
 *
 * A blast is a replay: its frames are built once in the region and its
 * ring's descriptors point at them; the sender then only moves the head
 * to the tail the daemon reached, and naps while the daemon copies and
 * parses them, as a NIC's ring fills by DMA at no cost to its host.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_pause.h>
#include <rte_udp.h>

#include "../common/hg_util.h"
#include "hgload_memif.h"
#include "udp_frame.h"
#include "memif_client.h"
#include "rx_map.h"
#include "tool_eal.h"

#define LOG2_RING  10u		/* 1,024 slots, DPDK's memif default */
#define BSIZE      2048u
#define FRAME_MAX  1536u
#define RX_BURST   32u
#define MAX_REPLAYS 4u	/* blasts of one hgload: its loads */
#define TX_BATCH   32u
#define WAIT_ARP_S 3
/* A full ring is the daemon behind on RX: retry this long, then drop. */
#define TX_RETRY_NS 1000000u
/* Every wait here naps rather than spins: hgload shares CPU 0 with the
 * apps it measures, and a poller that never sleeps takes that CPU from
 * them (a SCHED_FIFO one, all of it, down to the app of its own victim).
 * The receiver naps when the rings are empty, and after RX_BUSY_NS of
 * frames without a pause all the same. */
#define RX_NAP_NS  10000u
#define TX_NAP_NS  2000u
#define RX_BUSY_NS 200000u
/* ... and, when it runs SCHED_FIFO (--rt), yields every RX_YIELD_NS of
 * frames: busy with a flood's answers, it held CPU 0 from the app it
 * measures, at the same priority, for up to RX_BUSY_NS at a time; a yield
 * lets that app run at once, and costs one system call per 20 us of
 * frames. A normal receiver does not yield: CFS hands the rest of its
 * slice to whoever else is runnable, and make demo's victim waited behind
 * the flood's two echo threads for a slice each (p99 ~40 ms instead of
 * ~4 ms with protection). */
#define RX_YIELD_NS 20000u
/* The replay's nap: a quarter of the time the daemon takes to drain the
 * ring at the fastest pace it went lately, so that it never runs dry and
 * the sender wakes as seldom as that allows (a wake-up costs ~13 us of
 * CPU here). Half the time at the last pace was too long: once the core
 * drained a shed flood in ~400 us, a late wake-up or a pace measured
 * while it served left the ring dry, the core unsaturated for a moment
 * and serving everything, and the queue deep again (bench/isolation,
 * shared queue, 64 B: victim p99 1.6-1.9 ms in such rounds, 0.4-0.6 in
 * the others). */
#define REPLAY_NAP_MIN_NS 20000u
#define REPLAY_NAP_MAX_NS 2000000u

/* Who put what on a replayed ring, so that each replay learns how many
 * of its frames the daemon took: the daemon takes a ring's slots in
 * order, so runs of slots leave the ring in the order they were
 * published. Positions count from the connection's start; the tail (16
 * bits) is sampled at every publication, more often than it can wrap (a
 * ring is at most 2^14 slots). Under the ring's lock. */
#define OWNER_RUNS 4096u	/* more than a ring's slots' worth of runs */

struct owners {
	uint64_t published, taken;
	uint16_t tail;			/* at the last sample */
	uint32_t head, n;		/* runs, a circular queue */
	struct { uint64_t start, end; unsigned who; } run[OWNER_RUNS];
	uint64_t took[1 + MAX_REPLAYS];	/* by replay id; 0: other senders */
	unsigned replays;		/* blasts that share the ring */
};

static struct {
	struct hg_mc mc;
	struct rte_ether_addr mac, peer;
	int have_peer;
	struct hgl_memif_cfg c;
	struct hg_rx_map map;		/* the daemon's rings (rx_map.h) */
	/* one lock per ring: a load whose tenant has a queue of its own
	 * never waits for another's sender */
	pthread_mutex_t tx_lock[HG_RX_MAP_RINGS];
	/* a sender other than the replay published on the ring since the
	 * replay last refilled it: its slots point at that sender's buffers */
	int borrowed[HG_RX_MAP_RINGS];
	int ever_borrowed[HG_RX_MAP_RINGS];
	/* the replay that refilled each ring last (two may share one: a
	 * refill after another's rewrites its slots' descriptors), 0: none */
	unsigned last_replay[HG_RX_MAP_RINGS];
	unsigned replays;
	struct owners *own[HG_RX_MAP_RINGS];	/* a replayed ring's runs */
	uint32_t replay_used;		/* bytes of the region's extra area */
} mf;

static void
owners_sample(struct owners *o, uint16_t tail)
{
	o->taken += (uint16_t)(tail - o->tail);
	o->tail = tail;
	while (o->n > 0 && o->run[o->head].end <= o->taken) {
		o->took[o->run[o->head].who] += o->run[o->head].end - o->run[o->head].start;
		o->head = (o->head + 1) % OWNER_RUNS;
		o->n--;
	}
}

/* n slots published by who; the ring's lock is held. */
static void
owners_add(unsigned ring, unsigned n, unsigned who)
{
	struct owners *o = mf.own[ring];
	uint32_t at;

	if (o == NULL || n == 0)
		return;
	owners_sample(o, __atomic_load_n(&mf.mc.c2s[ring].r->tail, __ATOMIC_ACQUIRE));
	if (o->n == OWNER_RUNS)	/* cannot be: the oldest run is surely taken */
		owners_sample(o, o->tail);
	at = (o->head + o->n++) % OWNER_RUNS;
	o->run[at].start = o->published;
	o->run[at].end = o->published += n;
	o->run[at].who = who;
}

/* What the daemon took of who's frames so far. */
static uint64_t
owners_took(unsigned ring, unsigned who)
{
	struct owners *o = mf.own[ring];
	uint64_t took;

	pthread_mutex_lock(&mf.tx_lock[ring]);
	owners_sample(o, __atomic_load_n(&mf.mc.c2s[ring].r->tail, __ATOMIC_ACQUIRE));
	took = o->took[who];
	if (o->n > 0 && o->run[o->head].who == who && o->taken > o->run[o->head].start)
		took += o->taken - o->run[o->head].start;
	pthread_mutex_unlock(&mf.tx_lock[ring]);
	return took;
}


/* The calling thread's frames not yet on a ring. */
static __thread struct {
	uint8_t f[TX_BATCH][FRAME_MAX];
	uint16_t len[TX_BATCH];
	unsigned n;
	unsigned ring;			/* where the batch goes */
} txb;

static void
nap(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&ts, NULL);
}

uint64_t
hgl_memif_now_ns(void)
{
	return hg_now_ns();
}

/* Copies frames onto ring `ring`, retrying a full ring for TX_RETRY_NS;
 * returns how many were dropped. */
static unsigned
tx_frames(unsigned ring, uint8_t (*f)[FRAME_MAX], const uint16_t *len, unsigned n)
{
	uint64_t give_up = 0;
	unsigned sent = 0, k, i;

	while (sent < n) {
		pthread_mutex_lock(&mf.tx_lock[ring]);
		k = hg_mc_room(&mf.mc, ring);
		k = k < n - sent ? k : n - sent;
		for (i = 0; i < k; i++)
			memcpy(hg_mc_slot(&mf.mc, ring, i), f[sent + i], len[sent + i]);
		hg_mc_publish(&mf.mc, ring, len + sent, k);
		owners_add(ring, k, 0);
		if (k > 0)
			__atomic_store_n(&mf.borrowed[ring], 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&mf.tx_lock[ring]);
		sent += k;
		if (sent == n)
			break;
		if (give_up == 0)
			give_up = hgl_memif_now_ns() + TX_RETRY_NS;
		else if (hgl_memif_now_ns() >= give_up)
			break;
		nap(TX_NAP_NS);
	}
	return n - sent;
}

unsigned
hgl_memif_flush(void)
{
	unsigned dropped = txb.n ? tx_frames(txb.ring, txb.f, txb.len, txb.n) : 0;

	txb.n = 0;
	return dropped;
}

int
hgl_memif_thread(void)
{
	return 0;	/* a thread's batch is thread-local: nothing to make */
}

/* An ARP request (who has tip) or a reply to one (we are sip). */
static void
send_arp(uint16_t op, const struct rte_ether_addr *to, uint32_t tip)
{
	uint8_t f[1][FRAME_MAX];
	struct rte_ether_hdr *e = (struct rte_ether_hdr *)f[0];
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(e + 1);
	uint16_t len = sizeof(*e) + sizeof(*a);

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
	tx_frames(0, f, &len, 1);
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

struct took {
	void (*fn)(void *, unsigned, uint16_t, const uint8_t *, size_t);
	void *arg;
	unsigned got;
	unsigned ring;		/* the S2C ring being read */
};

/* Is flow f a timed load's (hgl_memif_cfg.timed)? */
static int
timed_flow(unsigned f)
{
	unsigned k;

	for (k = 0; k < mf.c.n_timed && k < RTE_DIM(mf.c.timed); k++)
		if (f - mf.c.timed[k].flow0 < mf.c.timed[k].flows)
			return 1;
	return 0;
}

/* A frame from the daemon: ARP is answered or learned; a UDP datagram
 * from the target to one of our flows' ports is handed on. */
static void
on_frame(void *arg, const uint8_t *frame, uint32_t len)
{
	const struct rte_ether_hdr *e = (const void *)frame;
	const struct rte_ipv4_hdr *ip = (const void *)(e + 1);
	const struct rte_udp_hdr *u;
	struct took *tk = arg;
	uint32_t ihl, f, ulen;

	if (len < sizeof(*e))
		return;
	if (e->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		if (len >= sizeof(*e) + sizeof(struct rte_arp_hdr))
			on_arp((const void *)(e + 1));
		return;
	}
	if (e->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    len < sizeof(*e) + sizeof(*ip) || ip->next_proto_id != IPPROTO_UDP ||
	    ip->src_addr != mf.c.dst_ip)
		return;
	ihl = (ip->version_ihl & 0xf) * 4u;
	if (ihl < sizeof(*ip) || len < sizeof(*e) + ihl + sizeof(*u))
		return;
	u = (const void *)((const uint8_t *)ip + ihl);
	f = rte_be_to_cpu_16(u->dst_port) - HGL_MEMIF_PORT0;
	ulen = rte_be_to_cpu_16(u->dgram_len);
	if (f >= mf.c.flows || ulen < sizeof(*u) || sizeof(*e) + ihl + ulen > len)
		return;
	/* a timed answer on a ring thought quiet: the map and the daemon's
	 * steering disagree, and the ring wakes us from now on */
	if (unlikely(mf.mc.quiet >> tk->ring & 1) && timed_flow(f))
		mf.mc.quiet &= ~(1ull << tk->ring);
	tk->fn(tk->arg, f, u->src_port, (const uint8_t *)(u + 1), ulen - sizeof(*u));
	tk->got++;
}

/* A burst from the daemon's TX queues (our S2C rings): a ring a timed
 * load's answers come on first (not quiet), then the next ring each time.
 * Round robin alone, a victim's answer waited behind a burst of a flood's
 * answers on another ring, read and counted first, and its latency was
 * partly the receiver's (bench/isolation: the flood's 1400 B answers at
 * ~0.8 M/s on the same thread); an independent client's receiver would
 * not see the flood's at all. */
static unsigned
rx_any(struct took *tk)
{
	static __thread unsigned next;
	unsigned i, k = 0;

	for (i = 0; i < mf.mc.n_s2c && mf.mc.quiet != 0; i++)
		if (!(mf.mc.quiet >> i & 1) &&
		    (k = hg_mc_rx(&mf.mc, tk->ring = i, RX_BURST, on_frame, tk)) > 0)
			return k;
	for (i = 0; i < mf.mc.n_s2c && k == 0; i++) {
		tk->ring = next++ % mf.mc.n_s2c;
		if (!(mf.mc.sunk >> tk->ring & 1))
			k = hg_mc_rx(&mf.mc, tk->ring, RX_BURST, on_frame, tk);
	}
	return k;
}

unsigned
hgl_memif_poll(uint64_t max_ns,
	       void (*took)(void *arg, unsigned f, uint16_t sport,
			    const uint8_t *p, size_t n),
	       void *arg)
{
	static __thread uint64_t napped, yielded;	/* when this thread last did */
	struct took tk = { took, arg, 0, 0 };
	uint64_t now = hgl_memif_now_ns(), end = now + max_ns, last = now;
	unsigned k;

	do {
		k = rx_any(&tk);
		now = hgl_memif_now_ns();
		if (k) {
			/* what the frames let out (credit drains, ARP) */
			hgl_memif_flush();
			last = now;
		}
		if (now - napped > RX_BUSY_NS) {
			nap(RX_NAP_NS);
			napped = yielded = now;
		} else if (mf.c.rx_yield && k && now - yielded > RX_YIELD_NS) {
			sched_yield();
			yielded = now;
		}
		if (k == RX_BURST)
			continue;	/* more are waiting */
		if (tk.got)
			break;
		if (now - last >= mf.c.rx_spin_ns) {
			/* asleep until the daemon writes a frame (it rings
			 * the ring's eventfd while we wait): a poller that
			 * woke every 10 us would preempt the apps on its CPU
			 * at each wake-up, whatever its small share */
			hg_mc_rx_wait(&mf.mc, end - now < 100000000u ? end - now : 100000000u);
			napped = hgl_memif_now_ns();
		} else {
			rte_pause();
		}
	} while (now < end);
	return tk.got;
}

static unsigned ring_of(unsigned f, uint16_t dport);
static unsigned back_of(unsigned f, uint16_t dport);
static uint64_t timed_rings(const struct hgl_memif_cfg *c);
static uint64_t sunk_rings(const struct hgl_memif_cfg *c);
static uint64_t timed_ring_bits(const struct hgl_memif_cfg *c);

static void
ignore(void *arg, unsigned f, uint16_t sport, const uint8_t *p, size_t n)
{
	(void)arg, (void)f, (void)sport, (void)p, (void)n;
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
	uint32_t pid = (uint32_t)getpid();
	uint64_t deep = 0, sunk;

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
	/* a locally administered address of our own */
	mf.mac = (struct rte_ether_addr){ { 0x02, 0x68, 0x6c, (uint8_t)(pid >> 16),
					    (uint8_t)(pid >> 8), (uint8_t)pid } };
	for (r = 0; r < c->n_blast && r < MAX_REPLAYS; r++) {
		unsigned q = ring_of(c->blast[r].flow0, c->blast[r].dport);

		deep |= 1ull << q;
		if (mf.own[q] == NULL && (mf.own[q] = calloc(1, sizeof(*mf.own[q]))) == NULL) {
			snprintf(err, n, "no memory");
			return -1;
		}
		mf.own[q]->replays++;
	}
	sunk = sunk_rings(c);
	/* a ring back per TX group too: the daemon sends each group's
	 * answers on its own, so the victim's wait behind its own only; a
	 * sunk one as deep as its replay's, released as seldom */
	if (hg_mc_connect(&mf.mc, c->socket, hg_rx_map_rings(&mf.map),
			  hg_rx_map_back_rings(&mf.map),
			  c->ring_log2 ? c->ring_log2 : LOG2_RING, deep, sunk, BSIZE,
			  (size_t)HGL_BLAST_FLOWS * FRAME_MAX * 2, err, n) < 0)
		return -1;
	if (c->peer_mac != NULL) {
		if (rte_ether_unformat_addr(c->peer_mac, &mf.peer) < 0) {
			snprintf(err, n, "--peer-mac %s is not a MAC address", c->peer_mac);
			return -1;
		}
		mf.have_peer = 1;
	} else if (resolve_peer() < 0) {
		struct in_addr ia = { c->dst_ip };

		snprintf(err, n, "%s does not answer ARP on memif %s", inet_ntoa(ia),
			 c->socket);
		return -1;
	}
	/* after ARP, whose answer comes on the daemon's first ring */
	hg_mc_set_quiet(&mf.mc, c->n_timed > 0 ? ~timed_rings(c) : 0);
	if (mf.mc.n_s2c >= hg_rx_map_back_rings(&mf.map))
		hg_mc_set_sunk(&mf.mc, sunk);
	return 0;
}

/* The S2C rings a replay gives back unread (hg_mc_set_sunk): where the
 * daemon has a TX group per tenant group, those that carry exactly one
 * replay's answers and no timed load's. A flood's answers go to the
 * flood's host, not the prober's: parsed by the prober (SCHED_FIFO, on
 * CPU 0 with the apps), 1.8 M answers a second of 1024 B took 15% of
 * that CPU, and the victim's answer waited behind them (bench/isolation:
 * 16 us of its 48 us p50 after the daemon had sent it, 4 us alone). */
static uint64_t
sunk_rings(const struct hgl_memif_cfg *c)
{
	uint64_t timed = timed_ring_bits(c), once = 0, more = 0, b;
	unsigned r;

	if (c->n_timed == 0 || hg_rx_map_back_rings(&mf.map) < 2)
		return 0;
	for (r = 0; r < c->n_blast && r < MAX_REPLAYS; r++) {
		b = 1ull << (back_of(c->blast[r].flow0, c->blast[r].dport) % 64u);
		more |= once & b;
		once |= b;
	}
	return once & ~more & ~timed;
}

/* The S2C rings the timed loads' answers come back on: the daemon sends
 * a TX group's answers on the ring of that group's number when the peer
 * gave one per group (fastpath/link.h), else on its core's: then any. */
static uint64_t
timed_rings(const struct hgl_memif_cfg *c)
{
	if (mf.mc.n_s2c < hg_rx_map_back_rings(&mf.map))
		return UINT64_MAX;
	return timed_ring_bits(c);
}

/* The rings back the timed loads' answers come on, by the map. */
static uint64_t
timed_ring_bits(const struct hgl_memif_cfg *c)
{
	uint64_t rings = 0;
	unsigned k, f;

	for (k = 0; k < c->n_timed && k < RTE_DIM(c->timed); k++)
		for (f = 0; f < c->timed[k].flows && f < 64u * HG_RX_MAP_RINGS; f++)
			rings |= 1ull << (back_of(c->timed[k].flow0 + f, c->timed[k].dport) % 64u);
	return rings;
}

/* Writes flow f's Ethernet/IPv4/UDP frame to dport (network order) with
 * payload into out; its length. */
static uint16_t
build_frame(uint8_t *out, unsigned f, uint16_t dport, const void *payload, size_t len)
{
	return (uint16_t)hgl_udp_frame(out, &mf.peer, &mf.mac, mf.c.src_ip, mf.c.dst_ip,
				       rte_cpu_to_be_16((uint16_t)(HGL_MEMIF_PORT0 + f)),
				       dport, 0, payload, len);
}

/* The daemon's ring for flow f's datagrams to dport (network order). */
static unsigned
ring_of(unsigned f, uint16_t dport)
{
	return hg_rx_map_ring(&mf.map, HGL_MEMIF_PORT0 + f, rte_be_to_cpu_16(dport));
}

/* The ring back their answers come on, where the daemon has a ring per
 * TX group (timed_rings). */
static unsigned
back_of(unsigned f, uint16_t dport)
{
	return hg_rx_map_back(&mf.map, HGL_MEMIF_PORT0 + f, rte_be_to_cpu_16(dport));
}

int
hgl_memif_send(unsigned f, uint16_t dport, const void *payload, size_t len)
{
	unsigned ring = ring_of(f, dport), dropped = 0;
	size_t hdr = HGL_UDP_HDRS;

	if (len + hdr > FRAME_MAX)
		return -1;
	if (txb.n > 0 && txb.ring != ring)
		dropped = hgl_memif_flush();
	txb.len[txb.n] = build_frame(txb.f[txb.n], f, dport, payload, len);
	txb.ring = ring;
	txb.n++;
	return (int)(dropped + (txb.n == TX_BATCH ? hgl_memif_flush() : 0));
}

/* The replay's frames, built once in the region's extra area. */
struct replay {
	unsigned id, ring, nf;
	unsigned back;		/* the S2C ring of its answers (back_of) */
	uint32_t off[HGL_BLAST_FLOWS];
	uint16_t len[HGL_BLAST_FLOWS];
};

static int
replay_build(const struct hgl_blast *b, struct replay *rp)
{
	size_t hdr = HGL_UDP_HDRS;
	uint32_t at;
	unsigned i;

	rp->nf = b->flows < HGL_BLAST_FLOWS ? b->flows : HGL_BLAST_FLOWS;
	if (rp->nf == 0 || b->len + hdr > FRAME_MAX)
		return -1;
	at = __atomic_fetch_add(&mf.replay_used, rp->nf * FRAME_MAX, __ATOMIC_RELAXED);
	if (at + rp->nf * FRAME_MAX > HGL_BLAST_FLOWS * FRAME_MAX * 2)
		return -1;	/* two blasts at most share the area */
	for (i = 0; i < rp->nf; i++) {
		rp->off[i] = at + i * FRAME_MAX;
		rp->len[i] = build_frame(hg_mc_extra(&mf.mc) + rp->off[i], b->flow0 + i,
					 b->dport, b->payload, b->len);
	}
	/* one ring for the blast: its first flow's (a daemon of several
	 * cores gets the whole flood on one of them) */
	rp->ring = ring_of(b->flow0, b->dport);
	rp->back = back_of(b->flow0, b->dport);
	rp->id = __atomic_add_fetch(&mf.replays, 1, __ATOMIC_RELAXED);
	if (rp->id > MAX_REPLAYS || mf.own[rp->ring] == NULL)
		return -1;	/* a ring made for it at open (hgl_memif_cfg.blast) */
	return 0;
}

/* Refills the ring; a quarter of it is left to the other senders once
 * one has used it, as a NIC's ring takes what arrives in order. */
static unsigned
replay_push(struct replay *rp)
{
	unsigned r = rp->ring, slots = mf.mc.c2s[r].mask + 1u, n, keep, room;
	int shared;

	pthread_mutex_lock(&mf.tx_lock[r]);
	/* a slot another sender's frame borrowed is pointed back by the
	 * push itself (hg_mc_replay_push); only another replay's frames in
	 * the ring make it rewrite every slot of its room: rewritten on
	 * every borrow, a ring shared with a timed load took the replay's
	 * thread 57% of its CPU, and the daemon ran dry (bench/isolation,
	 * shared queue) */
	mf.ever_borrowed[r] |= __atomic_exchange_n(&mf.borrowed[r], 0, __ATOMIC_RELAXED);
	shared = mf.last_replay[r] != rp->id;
	/* floods that share a ring arrive interleaved, as on a link: each
	 * refills its part of the room */
	keep = mf.ever_borrowed[r] ? slots / 4 : 0;
	room = hg_mc_room(&mf.mc, r);
	if (mf.own[r]->replays > 1 && room > keep)
		keep += (room - keep) - (room - keep) / mf.own[r]->replays;
	n = hg_mc_replay_push(&mf.mc, r, rp->off, rp->len, rp->nf, keep, shared);
	owners_add(r, n, rp->id);
	if (n > 0)
		mf.last_replay[r] = rp->id;
	pthread_mutex_unlock(&mf.tx_lock[r]);
	return n;
}

/* A replay's answers on its sunk ring (hg_mc_set_sunk), given back unread and
 * counted. */
static void
replay_sink(const struct replay *rp, const struct hgl_blast *b)
{
	if (rp->back < 64 && mf.mc.sunk >> rp->back & 1)
		atomic_fetch_add_explicit(b->answers, hg_mc_rx_release(&mf.mc, rp->back),
					  memory_order_relaxed);
}

uint64_t
hgl_memif_blast(const struct hgl_blast *b, uint64_t *refused)
{
	struct replay rp;
	uint64_t nap_ns = 50000, t0, t1, rate, fast = 0;
	unsigned slots, room;

	*refused = 0;
	if (replay_build(b, &rp) < 0)
		return 0;
	slots = mf.mc.c2s[rp.ring].mask + 1u;
	t0 = hgl_memif_now_ns();
	while (t0 < b->end_ns) {
		replay_push(&rp);
		nap((long)nap_ns);
		replay_sink(&rp, b);
		t1 = hgl_memif_now_ns();
		room = hg_mc_room(&mf.mc, rp.ring);
		if (room < slots / 4)
			(*refused)++;	/* the daemon is behind: the link drops */
		/* the next nap (REPLAY_NAP_MIN_NS): the pace it just went
		 * (room: what it took since the refill), or the fastest of
		 * late, which fades by an eighth a refill */
		rate = room > 0 ? (uint64_t)room * 1000000000u / (t1 - t0 + 1) : 0;
		fast = rate > fast - fast / 8 ? rate : fast - fast / 8;
		nap_ns = fast > 0 ? (uint64_t)slots / 4 * 1000000000u / fast : nap_ns * 2;
		nap_ns = nap_ns < REPLAY_NAP_MIN_NS ? REPLAY_NAP_MIN_NS :
			 nap_ns > REPLAY_NAP_MAX_NS ? REPLAY_NAP_MAX_NS : nap_ns;
		t0 = t1;
	}
	/* the answers still on their way */
	nap(REPLAY_NAP_MIN_NS);
	replay_sink(&rp, b);
	return owners_took(rp.ring, rp.id);
}

void
hgl_memif_close(void)
{
	unsigned r;

	for (r = 0; r < HG_RX_MAP_RINGS; r++)
		free(mf.own[r]);
	hg_mc_close(&mf.mc);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's memif transport: the same workloads, sessions, credits and
 * report as over kernel sockets (hgload.c), but the datagrams go to the
 * daemon as Ethernet/IPv4/UDP frames over a memif connection of hgload's
 * own (memif_client.h), with no kernel in the path. One connection per
 * process; the loads of one hgload (--and) share it, as tenants share a
 * NIC.
 */
#ifndef HG_TOOLS_HGLOAD_MEMIF_H
#define HG_TOOLS_HGLOAD_MEMIF_H

#include <stddef.h>
#include <stdint.h>

struct hg_rx_map;

/* Where the frames go: addresses in network order. */
struct hgl_memif_cfg {
	const char *socket;	/* the daemon's memif socket (@NAME: abstract) */
	unsigned ring_log2;	/* slots per ring, as log2; 0: 1,024 */
	uint32_t src_ip, dst_ip;
	unsigned flows;		/* flow f sends from port HGL_MEMIF_PORT0 + f */
	uint64_t rx_spin_ns;	/* the receiver polls this long after the
				 * last frame before it naps, */
	uint64_t rx_nap_max_ns;	/* ... 10 us, then twice as long each
				 * time up to this while nothing comes */
	int rx_yield;		/* the receiver runs SCHED_FIFO (--rt):
				 * it yields every RX_YIELD_NS of frames */
	const struct hg_rx_map *map;	/* the daemon's rings, NULL: one */
	const char *peer_mac;	/* the peer's MAC, for a peer that does not
				 * answer ARP (testpmd as the echo); NULL: ask */
	/* the blasts to come: their rings get the most slots a ring may
	 * have (a replay refills it once a millisecond, not every 70 us) */
	struct { unsigned flow0; uint16_t dport; } blast[4];	/* dport: network order */
	unsigned n_blast;
	/* the loads whose answers are timed: the receiver sleeps on their
	 * rings only, and a ring that carries only a blast's answers never
	 * asks the daemon for a wake-up (hg_mc_set_quiet); none: every ring */
	struct { unsigned flow0, flows; uint16_t dport; } timed[4];
	unsigned n_timed;
};

#define HGL_MEMIF_PORT0 20000u

/* Connects to the daemon's memif socket and learns its MAC (ARP).
 * Returns 0, or -1 with the reason in err. */
int hgl_memif_open(const struct hgl_memif_cfg *c, char *err, size_t n);
/* Readies the calling thread to send (each thread that sends calls it
 * before it does). 0, or -1. */
int hgl_memif_thread(void);
/* Queues one datagram of flow f to UDP port dport (network order) in the
 * calling thread's TX batch, which goes out when full or at
 * hgl_memif_flush. Returns the datagrams a full batch could not send
 * (the ring stayed full), or -1 if there was no buffer for this one. */
int hgl_memif_send(unsigned f, uint16_t dport, const void *payload, size_t len);
/* A blast (hgload --blast): the same datagram from each of flows flows,
 * replayed: built once, pointed at by every descriptor of its ring, the
 * ring refilled by moving its head, until end_ns (hgl_memif_now_ns). */
#define HGL_BLAST_FLOWS 64u	/* prebuilt frames at most: one per flow */
struct hgl_blast {
	unsigned flow0, flows;
	uint16_t dport;		/* network order */
	const void *payload;
	size_t len;
	uint64_t end_ns;
	/* its answers, where its ring back is its own (counted there
	 * without being read; else the receiver counts them) */
	_Atomic uint64_t *answers;
};
/* Replays from the calling thread (after hgl_memif_thread): nothing is
 * built, copied or allocated per datagram. Returns the frames the daemon
 * took off the ring; *refused: the refills that found the daemon behind
 * (more than 3/4 of the ring still unread). */
uint64_t hgl_memif_blast(const struct hgl_blast *b, uint64_t *refused);
/* Sends the calling thread's batch; returns the datagrams dropped. */
unsigned hgl_memif_flush(void);
/* Takes what arrived (answering ARP) for at most max_ns, calling
 * took(arg, f, sport, payload, len) for each datagram from the daemon to
 * flow f's port (sport: its source port, network order); returns how
 * many. Spins while datagrams come, naps when none have for rx_spin_ns. */
unsigned hgl_memif_poll(uint64_t max_ns,
			void (*took)(void *arg, unsigned f, uint16_t sport,
				     const uint8_t *p, size_t n),
			void *arg);
/* CLOCK_MONOTONIC in ns: what timestamps requests over memif. */
uint64_t hgl_memif_now_ns(void);
void hgl_memif_close(void);

#endif /* HG_TOOLS_HGLOAD_MEMIF_H */

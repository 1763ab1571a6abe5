/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A memif client of the project's own (proto/memif.h), for hgload: DPDK's
 * PMD copies every frame through an mbuf and rewrites every descriptor,
 * so it cannot leave a ring's descriptors pointing at frames built once
 * and only move the head, which is what a flood from another host costs
 * its receiver (nothing): the replay (hg_mc_replay_push). No DPDK, no EAL.
 *
 * One region (a sealed memfd) holds the rings, then bsize-byte buffers,
 * one per slot, then `extra` bytes for the caller (prebuilt frames).
 * The client writes the C2S rings' descriptors and heads and the S2C
 * rings' heads (posting buffers); the daemon the rest. One thread per ring
 * at a time (the caller's locks); any thread may poll an S2C ring that is
 * its own.
 */
#ifndef HG_TOOLS_MEMIF_CLIENT_H
#define HG_TOOLS_MEMIF_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "../proto/memif.h"

#define HG_MC_RINGS 64u

struct hg_mc_ring {
	struct hg_memif_ring *r;
	uint16_t mask;
	uint16_t head;			/* ours: C2S published, S2C posted */
	uint16_t next;			/* S2C: next slot to read */
	uint32_t buf0;			/* offset of the ring's first buffer */
	int efd;			/* its eventfd */
	/* C2S: slots whose descriptor points at their own buffer (every
	 * slot at first, then a frame hg_mc_publish copied there), not at a
	 * replay's frame: the replay points them at its frames before it
	 * publishes them */
	uint64_t own[(1u << HG_MEMIF_LOG2_RING_MAX) / 64];
	unsigned n_own;
};

struct hg_mc {
	int sock;
	uint8_t *base;
	uint64_t size;
	unsigned log2, bsize, n_c2s, n_s2c;
	uint64_t deep;			/* C2S rings of the largest size */
	uint64_t deep_s2c;		/* ... and S2C rings */
	uint64_t quiet;			/* S2C rings hg_mc_rx_wait leaves
					 * masked (hg_mc_set_quiet) */
	uint64_t sunk;			/* ... and does not look at
					 * (hg_mc_set_sunk) */
	struct hg_mc_ring c2s[HG_MC_RINGS], s2c[HG_MC_RINGS];
	uint32_t extra;			/* offset of the caller's bytes */
	int fds[1 + 2 * HG_MC_RINGS];	/* the memfd, the eventfds */
	unsigned n_fds;
	char server[HG_MEMIF_NAME_SZ + 1];	/* the name its HELLO gave */
};

/* Connects to the memif socket at path (@NAME: abstract) as interface 0
 * with n_c2s rings towards the server and n_s2c back (fewer if the server
 * sends on fewer: mc->n_s2c), of 2^log2 slots but
 * for the C2S rings in the bit mask deep and the S2C rings in deep_s2c:
 * 2^HG_MEMIF_LOG2_RING_MAX (a replay refills such a ring every
 * millisecond, not every 70 us, and releases its answers as seldom:
 * hg_mc_rx_release). 0, or -1 with the reason in err (the server's own
 * words where it gave some). */
int hg_mc_connect(struct hg_mc *mc, const char *path, unsigned n_c2s,
		  unsigned n_s2c, unsigned log2, uint64_t deep, uint64_t deep_s2c,
		  unsigned bsize,
		  size_t extra, char *err, size_t n);
void hg_mc_close(struct hg_mc *mc);

/* Free slots on C2S ring i: what the server has consumed. */
static inline unsigned
hg_mc_room(const struct hg_mc *mc, unsigned i)
{
	const struct hg_mc_ring *q = &mc->c2s[i];
	uint16_t tail = __atomic_load_n(&q->r->tail, __ATOMIC_ACQUIRE);

	return (unsigned)q->mask + 1u - (uint16_t)(q->head - tail);
}

/* The buffer of the k-th free slot of C2S ring i (k < hg_mc_room). */
static inline uint8_t *
hg_mc_slot(struct hg_mc *mc, unsigned i, unsigned k)
{
	const struct hg_mc_ring *q = &mc->c2s[i];
	uint16_t s = (uint16_t)(q->head + k) & q->mask;

	return mc->base + q->buf0 + (uint64_t)s * mc->bsize;
}

/* Publishes the next n slots of C2S ring i, their frames in their own
 * buffers with lengths len[]. */
void hg_mc_publish(struct hg_mc *mc, unsigned i, const uint16_t *len, unsigned n);

/* The replay: publishes every slot the server consumed on C2S ring i
 * (but `keep`, left free for other senders), pointed at the caller's
 * prebuilt frames (offsets off[] in the caller's area, lengths len[],
 * frame k % nf for slot k). With `rewrite` 0 the descriptors are left as
 * the last refill wrote them but for those hg_mc_publish pointed at their
 * own buffers: the frames stay in the ring without a copy or a store,
 * and the refill only moves the head. Returns the slots
 * published. */
unsigned hg_mc_replay_push(struct hg_mc *mc, unsigned i, const uint32_t *off,
			   const uint16_t *len, unsigned nf, unsigned keep, int rewrite);
/* The caller's area. */
static inline uint8_t *
hg_mc_extra(struct hg_mc *mc)
{
	return mc->base + mc->extra;
}

/* Up to max frames the server put on S2C ring i since the last call:
 * fn(arg, frame, len) for each, then the buffers go back to the server.
 * Returns how many. */
unsigned hg_mc_rx(struct hg_mc *mc, unsigned i, unsigned max,
		  void (*fn)(void *arg, const uint8_t *f, uint32_t len), void *arg);

/* Gives every frame the server put on S2C ring i back to it unread, as
 * a link's far end takes a flood's answers at no cost to the host that
 * measures (a store per slot: the frames are never touched). Returns how
 * many. */
unsigned hg_mc_rx_release(struct hg_mc *mc, unsigned i);

/* Waits at most ns for a frame on any S2C ring, asleep: the rings ask
 * the server for an eventfd write (MASK_INT cleared) only for the time of
 * the wait, so a server under load is never asked (the way NAPI and
 * virtio mitigate interrupts), and the quiet ones never. Returns 1 if a
 * frame is there, on any ring. */
int hg_mc_rx_wait(struct hg_mc *mc, uint64_t ns);

/* S2C rings (a bit mask) whose frames nobody waits for: a flood's
 * answers, counted when the receiver wakes for another ring's. Each
 * eventfd write costs the server a system call and a wake-up (~6,000
 * cycles on this VM), which a NIC's far end never makes a host pay: a
 * receiver that woke for every burst of a flood's answers took 13% of
 * the daemon's fast-path core (bench/isolation, 1400 B). Ignored if it
 * covers every ring: the waits would be blind. */
void hg_mc_set_quiet(struct hg_mc *mc, uint64_t rings);

/* S2C rings that another thread gives back unread (hg_mc_rx_release):
 * quiet, and their frames never end a wait (hg_mc_rx_wait), or a
 * receiver would spin on what is not its to take. Before the threads
 * that poll start. */
void hg_mc_set_sunk(struct hg_mc *mc, uint64_t rings);

#endif /* HG_TOOLS_MEMIF_CLIENT_H */

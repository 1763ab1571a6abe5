/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's memif server (--memif PATH): the control socket, the
 * handshake with one peer at a time, and the connection the fast path
 * reads (fastpath/memif.h). A peer that leaves, or breaks the protocol,
 * is unpublished at once and its memory unmapped once every core has
 * passed a quiescent point; the port then waits for the next peer.
 */
#ifndef HG_SLOWPATH_MEMIF_SERVER_H
#define HG_SLOWPATH_MEMIF_SERVER_H

#include <stdint.h>

struct event_base;
struct hg_dp;
struct hg_memif_server;

/* What `hgctl stats` shows of the link. */
struct hg_memif_status {
	int connected;
	uint32_t rx_rings, tx_rings;	/* the peer's, each way */
	uint32_t ring_slots;		/* of its first ring */
	uint64_t connects, refused;	/* peers served, handshakes refused */
	uint64_t kicks;			/* eventfd writes to the peer */
	char peer[33];			/* the name it gave */
	char refusal[97];		/* why the last one was refused */
};

/* Listens on path (a leading '@': an abstract socket, anyone on the host
 * may connect; else a file of mode `mode`) for peers of the link dp->mif,
 * whose RX and TX queues are the ring counts it offers. */
struct hg_memif_server *hg_memif_open(struct event_base *base, struct hg_dp *dp,
				      const char *path, unsigned mode);
/* After the cores stopped: drops the peer, removes the socket file. */
void hg_memif_close(struct hg_memif_server *s);
void hg_memif_get_status(const struct hg_memif_server *s, struct hg_memif_status *st);

/* The octal mode text of --memif-mode, or -1. */
int hg_memif_parse_mode(const char *text);

#endif /* HG_SLOWPATH_MEMIF_SERVER_H */

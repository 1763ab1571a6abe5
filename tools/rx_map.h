/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's RX map as a memif peer uses it (design.md §3): the rings to
 * open and the ring each datagram goes to, read from the JSON of
 * `hgctl tenant list --json`. A datagram for a tenant's port goes to ring
 * core x rx_queues_per_core + the tenant's rx_queue, the core chosen by a
 * hash of its flow; anything else (ARP, ports of no tenant) to ring 0.
 * Its answers come back on ring core x tx_queues_per_core + the tenant's
 * tx_queue, if the peer gave that many back (hg_rx_map_back_rings). A map
 * of a daemon older than TX groups has them as its RX queues. Without a
 * map a peer opens one ring each way, as for a daemon started with
 * --rx-queues 1.
 */
#ifndef HG_TOOLS_RX_MAP_H
#define HG_TOOLS_RX_MAP_H

#include <stddef.h>
#include <stdint.h>

#define HG_RX_MAP_RINGS 64u	/* HG_MAX_FP_CORES x HG_MAX_RXQ */

struct hg_rx_map {
	unsigned cores;		/* the daemon's TX queues: our RX rings */
	unsigned per_core;	/* its RX queues per core */
	unsigned tx_per_core;	/* its TX groups per core */
	uint8_t group[65536];	/* rx_queue of each UDP port (host order) */
	uint8_t tx_group[65536];	/* tx_queue of each UDP port */
};

/* One ring each way, every port on it. */
void hg_rx_map_single(struct hg_rx_map *m);
/* Reads `hgctl tenant list --json` output from path. 0, or -1 with the
 * reason in err. */
int hg_rx_map_load(struct hg_rx_map *m, const char *path, char *err, size_t n);

/* Rings towards the daemon. */
static inline unsigned
hg_rx_map_rings(const struct hg_rx_map *m)
{
	return m->cores * m->per_core;
}

/* Rings back from the daemon that carry each TX group's frames apart. */
static inline unsigned
hg_rx_map_back_rings(const struct hg_rx_map *m)
{
	return m->cores * m->tx_per_core;
}

/* The ring back the answer to a datagram to dport (host order) of a flow
 * with hash h comes on, where the peer gave hg_rx_map_back_rings. */
static inline unsigned
hg_rx_map_back(const struct hg_rx_map *m, uint32_t h, uint16_t dport)
{
	return (h % m->cores) * m->tx_per_core + m->tx_group[dport];
}

/* The ring for a datagram to dport (host order) of a flow with hash h. */
static inline unsigned
hg_rx_map_ring(const struct hg_rx_map *m, uint32_t h, uint16_t dport)
{
	return (h % m->cores) * m->per_core + m->group[dport];
}

/* The ring for an Ethernet frame: parsed as far as its IPv4/UDP ports. */
unsigned hg_rx_map_frame(const struct hg_rx_map *m, const uint8_t *f, size_t len);

#endif /* HG_TOOLS_RX_MAP_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A net_af_xdp link with the daemon's own XDP program (bpf/xdp_shed.c):
 * the program is built into the daemon, handed to the PMD (xdp_prog=) in
 * place of its default one, and its maps (proto/hg_xdp.h) are found on
 * the interface once the PMD has attached it. The fast path marks shed
 * tenants in one of them (fastpath/xdp_shed.h); the slow path keeps the
 * port map and the address there, and reads the program's counters.
 */
#ifndef HG_SLOWPATH_XDP_LINK_H
#define HG_SLOWPATH_XDP_LINK_H

#include <stdint.h>

#include "../proto/hg_xdp.h"

struct hg_dp;

/* Before rte_eal_init: every --vdev net_af_xdp... of argv[0..argc) without
 * an xdp_prog= gets the daemon's program. Takes the interface for this
 * daemon (another daemon serving it is refused) and detaches a program of
 * ours that a daemon which died left attached. 0, or -1 with the reason
 * printed. */
int hg_xdp_prepare(int argc, char **argv);

/* Is the port a net_af_xdp link we prepared? */
int hg_xdp_link(void);

/* The mbufs the prepared vdevs' queues will keep in their fill rings (the
 * PMD fills each with libxdp's default ring size); 0 without a link. */
uint32_t hg_xdp_link_bufs(void);

/* After the port is up: finds the program and its maps on the interface,
 * writes the daemon's address (network order) and the port map, and
 * publishes the shed map to the cores. The device queue of each core's RX
 * queues is start_queue + its id. */
int hg_xdp_open(struct hg_dp *dp, uint32_t ip);

/* Slot slot's hg_share entry for a ring that holds depth frames before
 * the kernel drops: a tenant's (active or not, its weight, the active
 * tenants' weights together), no tenant's (HG_XDP_OTHER), or where the
 * ring backs up (HG_XDP_TOTAL). */
uint64_t hg_xdp_share(uint32_t depth, unsigned slot, int active, uint32_t weight,
		      uint64_t weights);

/* The rings' shares (proto/hg_xdp.h's hg_share) from the tenants' weights
 * and states as published; hg_xdp_tick does it every few ticks. */
void hg_xdp_shares(const struct hg_dp *dp);
void hg_xdp_tick(const struct hg_dp *dp);

/* The port map entry for UDP port p changed (HG_PORT_ENTRY): the
 * program's copy follows. */
void hg_xdp_port(uint16_t p, uint32_t entry);

/* What the program passed and dropped of tenant t (HG_XDP_OTHER: of frames
 * of no tenant), over every CPU; 0, or -1 when there is no program. */
int hg_xdp_count(unsigned t, struct hg_xdp_count *out);

/* Unpublishes and unmaps (the cores have stopped); the PMD detaches the
 * program when it closes the port. */
void hg_xdp_close(struct hg_dp *dp);

#endif /* HG_SLOWPATH_XDP_LINK_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The ring slot (proto/hg_xdp.h) of each frame of a burst from an XDP
 * socket, by the XDP program's own look at a frame (bpf/xdp_parse.h) and
 * its port map: the cores count what they take off a ring against the
 * slots the program counted it against. Apart from xdp_shed.h because the
 * look is written against the kernel's headers, which DPDK's cannot sit
 * beside in one file.
 */
#ifndef HG_FASTPATH_XDP_SLOTS_H
#define HG_FASTPATH_XDP_SLOTS_H

#include <stdint.h>

/* slot[i] for frame[i] of len[i] bytes, i < n; ip: the daemon's address
 * (network order); ports: hg_ports, mmap-ed. */
void hg_xdp_slots(const uint8_t *const *frame, const uint16_t *len, unsigned n,
		  uint32_t ip, const uint64_t *ports, uint32_t *slot);

#endif /* HG_FASTPATH_XDP_SLOTS_H */

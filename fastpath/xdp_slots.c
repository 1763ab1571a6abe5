/* SPDX-License-Identifier: BSD-3-Clause
 *
 * xdp_slots.h: the XDP program's look at a frame, run by a core.
 */
#include <string.h>

#include "../bpf/xdp_parse.h"
#include "../proto/hg_xdp.h"
#include "xdp_slots.h"

/* The most the look reads: Ethernet, IPv4 with the longest options, UDP */
#define HDR_MAX (sizeof(struct ethhdr) + 60u + sizeof(struct udphdr))

void
hg_xdp_slots(const uint8_t *const *frame, const uint16_t *len, unsigned n,
	     uint32_t ip, const uint64_t *ports, uint32_t *slot)
{
	/* The look reads the IP header as a struct, 4-byte aligned where a
	 * driver puts a frame (NET_IP_ALIGN: 2 bytes in); an mbuf's frame
	 * starts 128 bytes in, so its headers are copied to such a place
	 * first. Cut at HDR_MAX, the look sees what it would in the whole. */
	uint8_t hdr[2 + HDR_MAX] __attribute__((aligned(8)));
	unsigned i;
	size_t k;
	int p;

	for (i = 0; i < n; i++) {
		k = len[i] < HDR_MAX ? len[i] : HDR_MAX;
		memcpy(hdr + 2, frame[i], k);
		p = hg_xdp_udp_port(hdr + 2, hdr + 2 + k, ip);
		slot[i] = hg_xdp_slot(p, p >= 0 ? __atomic_load_n(&ports[p], __ATOMIC_RELAXED) : 0);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * xdp_slots.h: the XDP program's look at a frame, run by a core.
 */
#include "../bpf/xdp_parse.h"
#include "../proto/hg_xdp.h"
#include "xdp_slots.h"

void
hg_xdp_slots(const uint8_t *const *frame, const uint16_t *len, unsigned n,
	     uint32_t ip, const uint64_t *ports, uint32_t *slot)
{
	unsigned i;
	int p;

	for (i = 0; i < n; i++) {
		p = hg_xdp_udp_port(frame[i], frame[i] + len[i], ip);
		slot[i] = hg_xdp_slot(p, p >= 0 ? __atomic_load_n(&ports[p], __ATOMIC_RELAXED) : 0);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: the packet parser and the replies built in place from
 * what it accepted (RX's whole view of a frame); and the checksum the
 * parser uses (cksum.h) against DPDK's, over every input at two
 * alignments. */
#include <stdint.h>
#include <string.h>

#include "../../fastpath/cksum.h"
#include "../../fastpath/dp.h"
#include "../../fastpath/parse.h"

#define OUR_IP RTE_BE32(0xC6120001)	/* 198.18.0.1 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rte_ether_addr us = { { 2, 0, 0, 0, 0, 1 } };
	uint8_t f[2048];
	struct hg_parsed p, pk;
	int peek;

	if (size > sizeof(f) - 1)
		return -1;
	if (hg_cksum(data, size) != rte_raw_cksum(data, size))
		__builtin_trap();
	memcpy(f + 1, data, size);
	if (hg_cksum(f + 1, size) != rte_raw_cksum(f + 1, size))
		__builtin_trap();
	memcpy(f, data, size);
	peek = hg_peek_udp(f, (uint32_t)size, OUR_IP, &pk) == 0 ? pk.dst_port : -1;
	switch (hg_parse(f, (uint32_t)size, OUR_IP, &p)) {
	case HG_PKT_DROP:
		if (p.drop >= HG_DROP_N)
			__builtin_trap();
		break;
	case HG_PKT_ARP_REQUEST:
		if (hg_build_arp_reply(f, &p, &us) > size)
			__builtin_trap();
		break;
	case HG_PKT_ICMP_ECHO:
		if (hg_build_icmp_reply(f, &p) > size)
			__builtin_trap();
		break;
	case HG_PKT_UDP:
		/* the payload lies within the frame; the peek at it in place
		 * names the same port */
		if ((uint32_t)p.payload_off + p.payload_len > size || peek != p.dst_port)
			__builtin_trap();
		break;
	default:
		break;
	}
	return 0;
}

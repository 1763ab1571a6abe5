/* SPDX-License-Identifier: BSD-3-Clause
 * Frame construction helpers for the parser tests. */
#ifndef HG_TEST_FRAMES_H
#define HG_TEST_FRAMES_H

#include <arpa/inet.h>
#include <string.h>

#include "../../fastpath/parse.h"

#define OUR_IP  0x010012c6u	/* 198.18.0.1 in network order */
#define PEER_IP 0x020012c6u	/* 198.18.0.2 */

static inline uint32_t
make_udp(uint8_t *f, const char *payload, uint16_t len)
{
	struct hg_udp_flow fl = {
		.src_mac = { { 2, 0, 0, 0, 0, 2 } },
		.dst_mac = { { 2, 0, 0, 0, 0, 1 } },
		.src_ip = PEER_IP, .dst_ip = OUR_IP,
		.src_port = htons(40000), .dst_port = htons(7000), .ip_id = 1,
	};

	memcpy(f + HG_UDP_HDRS_LEN, payload, len);
	return hg_build_udp(f, &fl, len);
}

#endif

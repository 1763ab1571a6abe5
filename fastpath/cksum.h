/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The Internet checksum (RFC 1071) of the UDP datagrams the fast path
 * verifies at RX and fills in at SCHED. Written by hand because it is the
 * hottest loop of a pass at 1400 B: DPDK 22.11's rte_raw_cksum adds one
 * 16-bit word at a time, and perf on the fast path's CPU
 * (bench/isolation --perf, 16 x 1400 B) had the answer's checksum at 23%
 * of the core's cycles, one add per two bytes. Here four accumulators
 * take two 32-bit halves of a 64-bit word each, 16 bytes an iteration:
 * a ones'-complement sum of 32-bit words folds to the same 16-bit sum as
 * one of 16-bit words (2^16 = 1 modulo 2^16 - 1), so every result equals
 * DPDK's (tests/unit/test_cksum.c compares them).
 */
#ifndef HG_FASTPATH_CKSUM_H
#define HG_FASTPATH_CKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_ip.h>

/* Folds a 64-bit sum of 16-bit-aligned words to 16 bits, end-around. */
static inline uint16_t
hg_cksum_fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);	/* < 2^33 */
	s = (s & 0xffffffffu) + (s >> 32);	/* < 2^32 */
	s = (s & 0xffffu) + (s >> 16);		/* < 2^17 */
	s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)s;
}

/* The running sum of len bytes at buf, which starts at an even offset of
 * what is summed (an odd last byte counts as followed by a zero byte),
 * not yet folded. Each accumulator takes a 32-bit word per 16 bytes: it
 * would take 2^36 bytes to carry out of one. */
static inline uint64_t
hg_cksum_add(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0, c = 0, d = 0, w0, w1;

	for (; len >= 16; len -= 16, p += 16) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		a += (uint32_t)w0;
		b += w0 >> 32;
		c += (uint32_t)w1;
		d += w1 >> 32;
	}
	if (len >= 8) {
		memcpy(&w0, p, 8);
		a += (uint32_t)w0;
		b += w0 >> 32;
		len -= 8;
		p += 8;
	}
	if (len > 0) {
		w1 = 0;
		memcpy(&w1, p, len);
		c += (uint32_t)w1;
		d += w1 >> 32;
	}
	return a + b + c + d;
}

/* rte_raw_cksum(buf, len): the folded, uncomplemented sum. */
static inline uint16_t
hg_cksum(const void *buf, size_t len)
{
	return hg_cksum_fold(hg_cksum_add(buf, len));
}

/* The folded sum of an IPv4 datagram's pseudo-header and its transport
 * header and payload (l4, as long as the IP header's total length says),
 * as DPDK's __rte_ipv4_udptcp_cksum: 0 if that length is shorter than the
 * IP header. */
static inline uint16_t
hg_ipv4_l4_sum(const struct rte_ipv4_hdr *ip, const void *l4)
{
	uint32_t ihl = rte_ipv4_hdr_len(ip), l3 = rte_be_to_cpu_16(ip->total_length);
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} ph;

	_Static_assert(sizeof(ph) == 12, "the pseudo-header, unpadded");
	if (l3 < ihl)
		return 0;
	ph.src = ip->src_addr;
	ph.dst = ip->dst_addr;
	ph.zero = 0;
	ph.proto = ip->next_proto_id;
	ph.len = rte_cpu_to_be_16((uint16_t)(l3 - ihl));
	return hg_cksum_fold(hg_cksum_add(&ph, sizeof(ph)) + hg_cksum_add(l4, l3 - ihl));
}

/* rte_ipv4_udptcp_cksum: the checksum to write, a computed 0 sent as
 * 0xffff for UDP (RFC 768: 0 means none). */
static inline uint16_t
hg_ipv4_udp_cksum(const struct rte_ipv4_hdr *ip, const void *l4)
{
	uint16_t x = (uint16_t)~hg_ipv4_l4_sum(ip, l4);

	return x == 0 && ip->next_proto_id == IPPROTO_UDP ? 0xffff : x;
}

/* rte_ipv4_udptcp_cksum_verify: 0 if the datagram's checksum holds. */
static inline int
hg_ipv4_udp_cksum_verify(const struct rte_ipv4_hdr *ip, const void *l4)
{
	return hg_ipv4_l4_sum(ip, l4) == 0xffff ? 0 : -1;
}

#endif

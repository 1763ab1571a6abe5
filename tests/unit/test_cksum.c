/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fast path's Internet checksum (cksum.h) against DPDK's, which it
 * replaces: the same sum for every length and alignment, carries at their
 * most, the same UDP checksum to write and the same verdict on a datagram
 * with a byte changed anywhere. */
#include <stdlib.h>

#include <criterion/criterion.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "../../fastpath/cksum.h"

static uint8_t buf[65536 + 16];

static void
fill_random(uint8_t *p, size_t n, unsigned seed)
{
	srandom(seed);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)random();
}

Test(cksum, every_length_and_alignment_sums_as_dpdk)
{
	fill_random(buf, 4096, 1);
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= 2100; len++)
			cr_assert_eq(hg_cksum(buf + off, len), rte_raw_cksum(buf + off, len),
				     "offset %zu, length %zu", off, len);
}

Test(cksum, carries_at_their_most_fold_as_dpdk)
{
	static const size_t lens[] = { 1, 2, 3, 15, 16, 17, 1400, 1401, 9000, 65535 };

	memset(buf, 0xff, sizeof(buf));
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		cr_assert_eq(hg_cksum(buf, lens[i]), rte_raw_cksum(buf, lens[i]),
			     "all ones, length %zu", lens[i]);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(hg_cksum(buf, 1400), 0);
	cr_assert_eq(hg_cksum(buf, 1400), rte_raw_cksum(buf, 1400));
}

/* An IPv4 header and a UDP datagram of payload n at p, total length set,
 * the UDP checksum field zero. */
static struct rte_ipv4_hdr *
datagram(uint8_t *p, uint16_t n, unsigned seed)
{
	struct rte_ipv4_hdr *ip = (void *)p;
	struct rte_udp_hdr *u = (void *)(ip + 1);

	fill_random(p, sizeof(*ip) + sizeof(*u) + n, seed);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->next_proto_id = IPPROTO_UDP;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*u) + n));
	u->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*u) + n));
	u->dgram_cksum = 0;
	return ip;
}

Test(cksum, a_udp_checksum_is_dpdks_and_verifies)
{
	for (unsigned n = 0; n <= 1472; n += (n < 64 ? 1 : 37)) {
		struct rte_ipv4_hdr *ip = datagram(buf, (uint16_t)n, n + 7);
		struct rte_udp_hdr *u = (void *)(ip + 1);
		uint16_t ours = hg_ipv4_udp_cksum(ip, u), theirs = rte_ipv4_udptcp_cksum(ip, u);

		cr_assert_eq(ours, theirs, "payload %u", n);
		cr_assert_neq(ours, 0, "payload %u: 0 means none", n);
		u->dgram_cksum = ours;
		cr_assert_eq(hg_ipv4_udp_cksum_verify(ip, u), 0, "payload %u", n);
		cr_assert_eq(rte_ipv4_udptcp_cksum_verify(ip, u), 0, "payload %u", n);
	}
}

Test(cksum, a_changed_byte_fails_as_with_dpdk)
{
	struct rte_ipv4_hdr *ip = datagram(buf, 1400, 3);
	struct rte_udp_hdr *u = (void *)(ip + 1);
	uint8_t *l4 = (uint8_t *)u;

	u->dgram_cksum = rte_ipv4_udptcp_cksum(ip, u);
	for (size_t i = 0; i < sizeof(*u) + 1400; i += 13) {
		l4[i] ^= 0x5a;
		cr_assert_eq(hg_ipv4_udp_cksum_verify(ip, u), rte_ipv4_udptcp_cksum_verify(ip, u),
			     "byte %zu", i);
		cr_assert_neq(hg_ipv4_udp_cksum_verify(ip, u), 0, "byte %zu", i);
		l4[i] ^= 0x5a;
	}
	/* a total length shorter than the IP header: DPDK's sum is 0 */
	ip->total_length = rte_cpu_to_be_16(10);
	cr_assert_eq(hg_ipv4_l4_sum(ip, u), 0);
	cr_assert_eq(hg_ipv4_udp_cksum_verify(ip, u), rte_ipv4_udptcp_cksum_verify(ip, u));
}

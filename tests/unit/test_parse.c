/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "../../fastpath/dp.h"
#include "frames.h"

static uint8_t f[2048];
static struct hg_parsed p;

#define IP(f) ((struct rte_ipv4_hdr *)((f) + RTE_ETHER_HDR_LEN))
#define UDP(f) ((struct rte_udp_hdr *)((f) + RTE_ETHER_HDR_LEN + 20))

static void
refresh_ip_csum(uint8_t *fr)
{
	IP(fr)->hdr_checksum = 0;
	IP(fr)->hdr_checksum = rte_ipv4_cksum(IP(fr));
}

Test(parse, valid_udp_roundtrip)
{
	uint32_t n = make_udp(f, "hello", 5);

	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_UDP);
	cr_assert_eq(p.payload_len, 5);
	cr_assert_eq(memcmp(f + p.payload_off, "hello", 5), 0);
	cr_assert_eq(p.src_ip, PEER_IP);
	cr_assert_eq(ntohs(p.dst_port), 7000);
	cr_assert_eq(ntohs(p.src_port), 40000);
}

Test(parse, ethernet_padding_is_ignored)
{
	uint32_t n = make_udp(f, "x", 1);

	cr_assert_eq(hg_parse(f, n + 17, OUR_IP, &p), HG_PKT_UDP);
	cr_assert_eq(p.payload_len, 1);
}

Test(parse, every_truncation_is_a_counted_drop)
{
	uint32_t n = make_udp(f, "0123456789", 10), len;

	for (len = 0; len < n; len++) {
		cr_assert_eq(hg_parse(f, len, OUR_IP, &p), HG_PKT_DROP,
			     "length %u", len);
		cr_assert_lt(p.drop, HG_DROP_N);
	}
	hg_parse(f, 10, OUR_IP, &p);
	cr_assert_eq(p.drop, HG_DROP_RUNT);
	hg_parse(f, RTE_ETHER_HDR_LEN + 10, OUR_IP, &p);
	cr_assert_eq(p.drop, HG_DROP_IP_HDR);
}

Test(parse, bad_ip_header_length)
{
	uint32_t n = make_udp(f, "abc", 3);

	IP(f)->version_ihl = 0x44;
	refresh_ip_csum(f);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_HDR);
	IP(f)->version_ihl = 0x4f;	/* 60 bytes: more than the frame */
	cr_assert_eq(hg_parse(f, 40, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_HDR);
}

Test(parse, bad_total_length)
{
	uint32_t n = make_udp(f, "abc", 3);

	IP(f)->total_length = htons(1400);
	refresh_ip_csum(f);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_LEN);
	IP(f)->total_length = htons(10);
	refresh_ip_csum(f);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_LEN);
}

Test(parse, bad_checksums)
{
	uint32_t n = make_udp(f, "abc", 3);

	IP(f)->hdr_checksum ^= 0x1;
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_CSUM);
	n = make_udp(f, "abc", 3);
	f[n - 1] ^= 0xff;
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_UDP_CSUM);
	UDP(f)->dgram_cksum = 0;	/* "no checksum" is legal */
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_UDP);
}

Test(parse, fragments_are_dropped)
{
	uint32_t n = make_udp(f, "abc", 3);

	IP(f)->fragment_offset = htons(0x2000);	/* MF */
	refresh_ip_csum(f);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_FRAG);
	IP(f)->fragment_offset = htons(0x0010);	/* later fragment */
	refresh_ip_csum(f);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_IP_FRAG);
}

Test(parse, udp_length_must_match)
{
	uint32_t n = make_udp(f, "abcd", 4);

	UDP(f)->dgram_len = htons(100);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_UDP_HDR);
}

Test(parse, other_ethertypes_and_addresses)
{
	uint32_t n = make_udp(f, "abc", 3);

	cr_assert_eq(hg_parse(f, n, PEER_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_NOT_US);
	((struct rte_ether_hdr *)f)->ether_type = htons(0x86dd);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_ETHERTYPE);
	n = make_udp(f, "abc", 3);
	IP(f)->next_proto_id = IPPROTO_TCP;
	refresh_ip_csum(f);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_PROTO);
}

Test(parse, arp_request_gets_a_reply)
{
	struct rte_ether_addr peer = { { 2, 0, 0, 0, 0, 2 } };
	struct rte_ether_addr us = { { 2, 0, 0, 0, 0, 1 } };
	struct rte_arp_hdr *a = (void *)(f + RTE_ETHER_HDR_LEN);
	uint32_t n = hg_build_arp_request(f, &peer, PEER_IP, OUR_IP);

	cr_assert_eq(n, 42);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_ARP_REQUEST);
	cr_assert(rte_is_same_ether_addr(&p.src_mac, &peer));
	hg_build_arp_reply(f, &p, &us);
	cr_assert_eq(a->arp_opcode, htons(RTE_ARP_OP_REPLY));
	cr_assert_eq(a->arp_data.arp_sip, OUR_IP);
	cr_assert_eq(a->arp_data.arp_tip, PEER_IP);
	cr_assert(rte_is_same_ether_addr(&a->arp_data.arp_sha, &us));
	cr_assert(rte_is_same_ether_addr(&((struct rte_ether_hdr *)f)->dst_addr, &peer));
	/* our reply, seen by us, is a reply to our address */
	cr_assert_eq(hg_parse(f, n, PEER_IP, &p), HG_PKT_ARP_REPLY);
	cr_assert_eq(p.src_ip, OUR_IP);
	/* a request for someone else is not ours to learn from */
	hg_build_arp_request(f, &peer, PEER_IP, PEER_IP + 0x01000000);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_ARP_OTHER);
	a->arp_hlen = 8;
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_ARP);
}

Test(parse, icmp_echo_reply_has_valid_checksums)
{
	uint32_t n = make_udp(f, "pingdata", 8);
	struct rte_icmp_hdr *ic = (void *)UDP(f);

	/* reuse the UDP frame as an ICMP echo request of 16 bytes */
	IP(f)->next_proto_id = IPPROTO_ICMP;
	refresh_ip_csum(f);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_code = 0;
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, 16);
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_ICMP_ECHO);
	hg_build_icmp_reply(f, &p);
	cr_assert_eq(ic->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	cr_assert_eq(rte_raw_cksum(ic, 16), 0xffff);
	cr_assert_eq(rte_raw_cksum(IP(f), 20), 0xffff);
	cr_assert_eq(IP(f)->dst_addr, PEER_IP);
	ic->icmp_cksum ^= 1;
	IP(f)->dst_addr = OUR_IP;
	refresh_ip_csum(f);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	cr_assert_eq(hg_parse(f, n, OUR_IP, &p), HG_PKT_DROP);
	cr_assert_eq(p.drop, HG_DROP_ICMP);
}

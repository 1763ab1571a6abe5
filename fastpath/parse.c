/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "../proto/hg_rpc.h"
#include "cksum.h"
#include "drops.h"
#include "parse.h"

#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff

static enum hg_pkt_kind
drop(struct hg_parsed *p, uint32_t reason)
{
	p->drop = reason;
	return HG_PKT_DROP;
}

static enum hg_pkt_kind
parse_arp(const uint8_t *f, uint32_t len, uint32_t our_ip, struct hg_parsed *p)
{
	const struct rte_arp_hdr *a;

	if (len < RTE_ETHER_HDR_LEN + sizeof(*a))
		return drop(p, HG_DROP_ARP);
	a = (const struct rte_arp_hdr *)(f + RTE_ETHER_HDR_LEN);
	if (a->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != 4)
		return drop(p, HG_DROP_ARP);
	p->l3_off = RTE_ETHER_HDR_LEN;
	p->src_ip = a->arp_data.arp_sip;
	p->dst_ip = a->arp_data.arp_tip;
	rte_ether_addr_copy(&a->arp_data.arp_sha, &p->src_mac);
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) &&
	    a->arp_data.arp_tip == our_ip)
		return HG_PKT_ARP_REQUEST;
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY) &&
	    a->arp_data.arp_tip == our_ip)
		return HG_PKT_ARP_REPLY;
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) ||
	    a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY))
		return HG_PKT_ARP_OTHER;
	return drop(p, HG_DROP_ARP);
}

static enum hg_pkt_kind
parse_icmp(const uint8_t *f, struct hg_parsed *p)
{
	const struct rte_icmp_hdr *ic = (const void *)(f + p->l4_off);
	uint32_t n = p->ip_len - (p->l4_off - p->l3_off);

	if (n < sizeof(*ic) || hg_cksum(ic, n) != 0xffff)
		return drop(p, HG_DROP_ICMP);
	if (ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || ic->icmp_code != 0)
		return drop(p, HG_DROP_ICMP);
	return HG_PKT_ICMP_ECHO;
}

static enum hg_pkt_kind
parse_udp(const uint8_t *f, struct hg_parsed *p)
{
	const struct rte_ipv4_hdr *ip = (const void *)(f + p->l3_off);
	const struct rte_udp_hdr *u = (const void *)(f + p->l4_off);
	uint32_t n = p->ip_len - (p->l4_off - p->l3_off);
	uint16_t ulen;

	if (n < sizeof(*u))
		return drop(p, HG_DROP_UDP_HDR);
	ulen = rte_be_to_cpu_16(u->dgram_len);
	if (ulen < sizeof(*u) || ulen != n)
		return drop(p, HG_DROP_UDP_HDR);
	/* 0 means the sender computed no checksum (RFC 768) */
	if (u->dgram_cksum != 0 && hg_ipv4_udp_cksum_verify(ip, u) != 0)
		return drop(p, HG_DROP_UDP_CSUM);
	p->src_port = u->src_port;
	p->dst_port = u->dst_port;
	p->payload_off = p->l4_off + sizeof(*u);
	p->payload_len = ulen - sizeof(*u);
	return HG_PKT_UDP;
}

static enum hg_pkt_kind
parse_ipv4(const uint8_t *f, uint32_t len, uint32_t our_ip, struct hg_parsed *p)
{
	const struct rte_ipv4_hdr *ip;
	uint32_t ihl;

	p->l3_off = RTE_ETHER_HDR_LEN;
	if (len < RTE_ETHER_HDR_LEN + sizeof(*ip))
		return drop(p, HG_DROP_IP_HDR);
	ip = (const void *)(f + p->l3_off);
	ihl = (ip->version_ihl & 0x0f) * 4u;
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    RTE_ETHER_HDR_LEN + ihl > len)
		return drop(p, HG_DROP_IP_HDR);
	p->ip_len = rte_be_to_cpu_16(ip->total_length);
	/* the frame may carry Ethernet padding after the datagram, not less */
	if (p->ip_len < ihl || RTE_ETHER_HDR_LEN + (uint32_t)p->ip_len > len)
		return drop(p, HG_DROP_IP_LEN);
	if (hg_cksum(ip, ihl) != 0xffff)
		return drop(p, HG_DROP_IP_CSUM);
	if (ip->fragment_offset & RTE_BE16(IP_MF | IP_OFFMASK))
		return drop(p, HG_DROP_IP_FRAG);
	p->src_ip = ip->src_addr;
	p->dst_ip = ip->dst_addr;
	if (ip->dst_addr != our_ip)
		return drop(p, HG_DROP_NOT_US);
	memcpy(&p->src_mac, f + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
	p->l4_off = p->l3_off + ihl;
	if (ip->next_proto_id == IPPROTO_UDP)
		return parse_udp(f, p);
	if (ip->next_proto_id == IPPROTO_ICMP)
		return parse_icmp(f, p);
	return drop(p, HG_DROP_PROTO);
}

enum hg_pkt_kind
hg_parse(const uint8_t *f, uint32_t len, uint32_t our_ip, struct hg_parsed *p)
{
	uint16_t type;

	if (len < RTE_ETHER_HDR_LEN)
		return drop(p, HG_DROP_RUNT);
	type = ((const struct rte_ether_hdr *)f)->ether_type;
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return parse_ipv4(f, len, our_ip, p);
	if (type == RTE_BE16(RTE_ETHER_TYPE_ARP))
		return parse_arp(f, len, our_ip, p);
	return drop(p, HG_DROP_ETHERTYPE);
}

int
hg_peek_udp(const uint8_t *f, uint32_t len, uint32_t our_ip, struct hg_parsed *p)
{
	struct rte_ether_hdr eh;
	struct rte_ipv4_hdr ip;
	struct rte_udp_hdr u;
	uint32_t ihl;

	/* copies: the peer may write the frame while we look, so each field
	 * is read once */
	if (len < RTE_ETHER_HDR_LEN + sizeof(ip))
		return -1;
	memcpy(&eh, f, sizeof(eh));
	memcpy(&ip, f + RTE_ETHER_HDR_LEN, sizeof(ip));
	ihl = (ip.version_ihl & 0x0f) * 4u;
	if (eh.ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    (ip.version_ihl >> 4) != 4 || ihl < sizeof(ip) ||
	    ip.next_proto_id != IPPROTO_UDP || ip.dst_addr != our_ip ||
	    (ip.fragment_offset & RTE_BE16(IP_MF | IP_OFFMASK)) ||
	    RTE_ETHER_HDR_LEN + ihl + sizeof(struct rte_udp_hdr) > len)
		return -1;
	memcpy(&u, f + RTE_ETHER_HDR_LEN + ihl, sizeof(u));
	p->src_ip = ip.src_addr;
	p->dst_ip = ip.dst_addr;
	p->src_port = u.src_port;
	p->dst_port = u.dst_port;
	return 0;
}

uint32_t
hg_build_arp_reply(uint8_t *f, const struct hg_parsed *p,
		   const struct rte_ether_addr *our_mac)
{
	struct rte_ether_hdr *eh = (void *)f;
	struct rte_arp_hdr *a = (void *)(f + RTE_ETHER_HDR_LEN);

	rte_ether_addr_copy(&p->src_mac, &eh->dst_addr);
	rte_ether_addr_copy(our_mac, &eh->src_addr);
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&p->src_mac, &a->arp_data.arp_tha);
	a->arp_data.arp_tip = p->src_ip;
	rte_ether_addr_copy(our_mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = p->dst_ip;
	return RTE_ETHER_HDR_LEN + sizeof(*a);
}

uint32_t
hg_build_arp_request(uint8_t *f, const struct rte_ether_addr *our_mac,
		     uint32_t our_ip, uint32_t target_ip)
{
	struct rte_ether_hdr *eh = (void *)f;
	struct rte_arp_hdr *a = (void *)(f + RTE_ETHER_HDR_LEN);

	memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(our_mac, &eh->src_addr);
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(our_mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = our_ip;
	memset(&a->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	a->arp_data.arp_tip = target_ip;
	return RTE_ETHER_HDR_LEN + sizeof(*a);
}

uint32_t
hg_build_icmp_reply(uint8_t *f, const struct hg_parsed *p)
{
	struct rte_ether_hdr *eh = (void *)f;
	struct rte_ipv4_hdr *ip = (void *)(f + p->l3_off);
	struct rte_icmp_hdr *ic = (void *)(f + p->l4_off);
	struct rte_ether_addr tmp;
	uint32_t n = p->ip_len - (p->l4_off - p->l3_off);

	rte_ether_addr_copy(&eh->src_addr, &tmp);
	rte_ether_addr_copy(&eh->dst_addr, &eh->src_addr);
	rte_ether_addr_copy(&tmp, &eh->dst_addr);
	ip->dst_addr = p->src_ip;
	ip->src_addr = p->dst_ip;
	ip->time_to_live = 64;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ic->icmp_cksum = 0;
	ic->icmp_cksum = (uint16_t)~hg_cksum(ic, n);
	return RTE_ETHER_HDR_LEN + p->ip_len;
}

uint32_t
hg_build_udp(uint8_t *f, const struct hg_udp_flow *fl, uint16_t payload_len)
{
	struct rte_ether_hdr *eh = (void *)f;
	struct rte_ipv4_hdr *ip = (void *)(eh + 1);
	struct rte_udp_hdr *u = (void *)(ip + 1);
	uint16_t ulen = sizeof(*u) + payload_len;

	rte_ether_addr_copy(&fl->dst_mac, &eh->dst_addr);
	rte_ether_addr_copy(&fl->src_mac, &eh->src_addr);
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + ulen);
	ip->packet_id = rte_cpu_to_be_16(fl->ip_id);
	ip->fragment_offset = RTE_BE16(IP_DF);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = fl->src_ip;
	ip->dst_addr = fl->dst_ip;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	u->src_port = fl->src_port;
	u->dst_port = fl->dst_port;
	u->dgram_len = rte_cpu_to_be_16(ulen);
	u->dgram_cksum = 0;
	u->dgram_cksum = hg_ipv4_udp_cksum(ip, u);
	return HG_UDP_HDRS_LEN + payload_len;
}

uint32_t
hg_build_rpc_reject(uint8_t *f, const struct hg_parsed *p,
		    const struct rte_ether_addr *our_mac, uint32_t our_ip,
		    uint16_t ip_id)
{
	struct hg_rpc_hdr h;
	struct hg_udp_flow fl = {
		.src_ip = our_ip, .dst_ip = p->src_ip,
		.src_port = p->dst_port, .dst_port = p->src_port,
		.ip_id = ip_id,
	};

	memcpy(&h, f + p->payload_off, sizeof(h));
	h.flags = HG_RPC_REJECT;
	h.credits = 0;
	rte_ether_addr_copy(&p->src_mac, &fl.dst_mac);
	rte_ether_addr_copy(our_mac, &fl.src_mac);
	memcpy(f + HG_UDP_HDRS_LEN, &h, sizeof(h));
	return hg_build_udp(f, &fl, sizeof(h));
}

uint32_t
hg_build_rpc_credit(uint8_t *f, const struct hg_udp_flow *fl, uint32_t session,
		    uint16_t credits)
{
	struct hg_rpc_hdr h = { .magic = RTE_BE16(HG_RPC_MAGIC),
				.version = HG_RPC_VERSION, .flags = HG_RPC_CREDIT,
				.credits = rte_cpu_to_be_16(credits),
				.session = rte_cpu_to_be_32(session) };

	memcpy(f + HG_UDP_HDRS_LEN, &h, sizeof(h));
	return hg_build_udp(f, fl, sizeof(h));
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Frame parsing and header building for the RX and SCHED points. Pure
 * functions over bytes so they can be unit-tested without EAL.
 */
#ifndef HG_FASTPATH_PARSE_H
#define HG_FASTPATH_PARSE_H

#include <stdint.h>

#include <rte_ether.h>

enum hg_pkt_kind {
	HG_PKT_DROP,
	HG_PKT_ARP_REQUEST,	/* ARP request for our address */
	HG_PKT_ARP_REPLY,	/* ARP reply to our address */
	HG_PKT_ARP_OTHER,	/* valid ARP, not for us: ignored */
	HG_PKT_ICMP_ECHO,	/* echo request to us */
	HG_PKT_UDP,		/* UDP datagram to us */
};

struct hg_parsed {
	uint32_t drop;		/* enum hg_core_drop when kind == DROP */
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t payload_off;
	uint16_t payload_len;
	uint16_t ip_len;	/* IPv4 total length */
	uint32_t src_ip, dst_ip;	/* network order */
	uint16_t src_port, dst_port;	/* network order */
	struct rte_ether_addr src_mac;
};

/* Classifies a frame addressed to our_ip (network order). */
enum hg_pkt_kind hg_parse(const uint8_t *frame, uint32_t len, uint32_t our_ip,
			  struct hg_parsed *p);

/* The addresses of a UDP datagram to our_ip, read in place from a frame
 * that may still change under us (the memif peer's buffer): a look at
 * the headers only, every read within len, no checksum, for deciding to
 * drop without a copy. Returns 0 and fills p's src_ip, dst_ip, src_port
 * and dst_port, or -1 for anything else. A datagram it accepts is one
 * hg_parse classifies as UDP to the same port, but for checksums. */
int hg_peek_udp(const uint8_t *frame, uint32_t len, uint32_t our_ip,
		struct hg_parsed *p);

/* Turns a parsed ARP request or ICMP echo request into its reply in place.
 * Returns the new frame length. */
uint32_t hg_build_arp_reply(uint8_t *frame, const struct hg_parsed *p,
			    const struct rte_ether_addr *our_mac);
uint32_t hg_build_icmp_reply(uint8_t *frame, const struct hg_parsed *p);

/* Writes an ARP request for target_ip; returns the frame length (42). */
uint32_t hg_build_arp_request(uint8_t *frame, const struct rte_ether_addr *our_mac,
			      uint32_t our_ip, uint32_t target_ip);

/* Writes Ethernet, IPv4 and UDP headers in front of a payload already at
 * frame + HG_UDP_HDRS_LEN and fills in both checksums. Returns frame length. */
#define HG_UDP_HDRS_LEN (RTE_ETHER_HDR_LEN + 20 + 8)
struct hg_udp_flow {
	struct rte_ether_addr src_mac, dst_mac;
	uint32_t src_ip, dst_ip;	/* network order */
	uint16_t src_port, dst_port;	/* network order */
	uint16_t ip_id;
};
uint32_t hg_build_udp(uint8_t *frame, const struct hg_udp_flow *f,
		      uint16_t payload_len);

/* Rewrites a parsed RPC request (its header checked by the caller) in
 * place into its reject: the same session and ids, flags REJECT, credits
 * 0, nothing after the header, back to its sender. Returns the length. */
uint32_t hg_build_rpc_reject(uint8_t *frame, const struct hg_parsed *p,
			     const struct rte_ether_addr *our_mac, uint32_t our_ip,
			     uint16_t ip_id);
/* Writes an explicit credit update on flow f: the RPC header alone,
 * flags CREDIT, the session's window now credits. Returns the length. */
uint32_t hg_build_rpc_credit(uint8_t *frame, const struct hg_udp_flow *f,
			     uint32_t session, uint16_t credits);

#endif /* HG_FASTPATH_PARSE_H */

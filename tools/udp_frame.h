/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's frames, over memif and in the link replay: one Ethernet/IPv4/
 * UDP datagram built in place. DPDK's headers are packed, so the IP
 * header need not be 4-byte aligned in out.
 */
#ifndef HG_TOOLS_UDP_FRAME_H
#define HG_TOOLS_UDP_FRAME_H

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

/* Its headers' length. */
#define HGL_UDP_HDRS (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + \
		      sizeof(struct rte_udp_hdr))

/* Addresses and ports in network order; ip_id in host order. The UDP
 * checksum is 0: none computed (RFC 768), as the daemon accepts. Returns
 * the frame's length; out holds at least the headers and len. */
static inline uint32_t
hgl_udp_frame(uint8_t *out, const struct rte_ether_addr *dst,
	      const struct rte_ether_addr *src, uint32_t sip, uint32_t dip,
	      uint16_t sport, uint16_t dport, uint16_t ip_id, const void *payload,
	      size_t len)
{
	struct rte_ether_hdr *e = (struct rte_ether_hdr *)out;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(e + 1);
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)(ip + 1);

	e->dst_addr = *dst;
	e->src_addr = *src;
	e->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	*ip = (struct rte_ipv4_hdr){
		.version_ihl = RTE_IPV4_VHL_DEF, .time_to_live = 64,
		.next_proto_id = IPPROTO_UDP, .packet_id = rte_cpu_to_be_16(ip_id),
		.total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*u) + len)),
		.src_addr = sip, .dst_addr = dip,
	};
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	*u = (struct rte_udp_hdr){
		.src_port = sport, .dst_port = dport,
		.dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*u) + len)),
	};
	memcpy(u + 1, payload, len);
	return (uint32_t)(HGL_UDP_HDRS + len);
}

#endif /* HG_TOOLS_UDP_FRAME_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The XDP programs' look at a frame (xdp_shed.c's, xdp_bounce.c's), apart
 * so that the host compiler builds the same code for the fuzz target
 * (tests/fuzz/fuzz_xdp.c): every read is checked against the frame's end
 * first, as the verifier demands and as a fuzzer checks.
 */
#ifndef HG_BPF_XDP_PARSE_H
#define HG_BPF_XDP_PARSE_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/types.h>
#include <linux/udp.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HG_XDP_BE16(x) __builtin_bswap16(x)
#else
#define HG_XDP_BE16(x) (x)
#endif

/* The UDP header of an unfragmented IPv4 datagram (its IP header in
 * *ipp), or NULL: ARP, ICMP, fragments (more to come, or an offset: no
 * port of their own), VLANs, anything else. */
static __always_inline struct udphdr *
hg_xdp_udp(void *data, const void *end, struct iphdr **ipp)
{
	struct ethhdr *eth = data;
	struct iphdr *iph;
	struct udphdr *udp;
	__u32 ihl;

	if ((void *)(eth + 1) > end || eth->h_proto != HG_XDP_BE16(ETH_P_IP))
		return 0;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > end || iph->version != 4 || iph->protocol != IPPROTO_UDP ||
	    (iph->frag_off & HG_XDP_BE16(0x3fff)))
		return 0;
	ihl = (__u32)(iph->ihl & 0xf) * 4;
	if (ihl < sizeof(*iph))
		return 0;
	udp = (void *)((__u8 *)iph + ihl);
	if ((void *)(udp + 1) > end)
		return 0;
	*ipp = iph;
	return udp;
}

/* The frame's UDP destination port (host order) if it is an unfragmented
 * IPv4 UDP datagram to ip (network order); else -1: everything else goes
 * to the daemon as it is. */
static __always_inline int
hg_xdp_udp_port(const void *data, const void *end, __u32 ip)
{
	struct iphdr *iph;
	const struct udphdr *udp = hg_xdp_udp((void *)data, end, &iph);

	return udp != 0 && iph->daddr == ip ? HG_XDP_BE16(udp->dest) : -1;
}

/* hgload's link bounce (bpf/xdp_bounce.c): turns a datagram around, to
 * where it came from, in place: the Ethernet addresses, the IP addresses
 * and the UDP ports each swapped. The IP header's checksum stays right (a
 * ones'-complement sum does not depend on the order of its words); the
 * UDP checksum becomes 0, "none" (RFC 768), whoever answered: a kernel's
 * answer on a veth carries only its pseudo-header's part (checksum
 * offload), which a redirected frame no longer says, and every such
 * request failed the kernel's check. iph and udp are hg_xdp_udp's. */
static __always_inline void
hg_xdp_swap(void *data, struct iphdr *iph, struct udphdr *udp)
{
	struct ethhdr *eth = data;
	__u8 mac[ETH_ALEN];
	__u32 a;
	__u16 p;

	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	a = iph->saddr;
	iph->saddr = iph->daddr;
	iph->daddr = a;
	p = udp->source;
	udp->source = udp->dest;
	udp->dest = p;
	udp->check = 0;
}

#endif /* HG_BPF_XDP_PARSE_H */

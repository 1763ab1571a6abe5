/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The XDP program's look at a frame (xdp_shed.c), apart so that the host
 * compiler builds the same code for the fuzz target (tests/fuzz/
 * fuzz_xdp.c): every read is checked against the frame's end first, as
 * the verifier demands and as a fuzzer checks.
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

/* The frame's UDP destination port (host order) if it is an unfragmented
 * IPv4 UDP datagram to ip (network order); else -1: ARP, ICMP, fragments,
 * VLANs, anything else goes to the daemon as it is. */
static __always_inline int
hg_xdp_udp_port(const void *data, const void *end, __u32 ip)
{
	const struct ethhdr *eth = data;
	const struct iphdr *iph;
	const struct udphdr *udp;
	__u32 ihl;

	if ((const void *)(eth + 1) > end || eth->h_proto != HG_XDP_BE16(ETH_P_IP))
		return -1;
	iph = (const void *)(eth + 1);
	if ((const void *)(iph + 1) > end || iph->version != 4 ||
	    iph->protocol != IPPROTO_UDP || iph->daddr != ip)
		return -1;
	/* a fragment (more to come, or an offset) carries no port of its own */
	if (iph->frag_off & HG_XDP_BE16(0x3fff))
		return -1;
	ihl = (__u32)(iph->ihl & 0xf) * 4;
	if (ihl < sizeof(*iph))
		return -1;
	udp = (const void *)((const __u8 *)iph + ihl);
	if ((const void *)(udp + 1) > end)
		return -1;
	return HG_XDP_BE16(udp->dest);
}

#endif /* HG_BPF_XDP_PARSE_H */

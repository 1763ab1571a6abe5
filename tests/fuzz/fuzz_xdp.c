/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: the XDP program's look at a frame (bpf/xdp_parse.h),
 * compiled for the host. The frame ends where its buffer ends, so that
 * ASan catches a read past it (the verifier's check, here), and starts 2
 * bytes in, as a driver places it (NET_IP_ALIGN: the IP header 4-byte
 * aligned, which the program's struct reads assume); and
 * every datagram the daemon's own parser accepts as UDP to its address is
 * one the program names the same port of, so a tenant's frames are judged
 * as its own; and the cores' count of a frame (fastpath/xdp_slots.h) is
 * against the slot the program counts it against, one of the map's. And
 * hgload's link bounce (hg_xdp_udp, then hg_xdp_swap, as its program): a
 * frame it does not turn is left as it was; one it turns goes to where it came from, and a datagram the
 * daemon's parser took before the turn it takes after (the IP checksum
 * still right, the UDP one none). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../bpf/xdp_parse.h"
#include "../../fastpath/dp.h"
#include "../../fastpath/parse.h"
#include "../../fastpath/xdp_slots.h"
#include "../../proto/hg_xdp.h"

#define OUR_IP RTE_BE32(0xC6120001)	/* 198.18.0.1 */
#define TURN_PORT 9000u

/* Turns a datagram from ip:port (network order) around as the bounce's
 * program does: 0, or -1 if it is not such a datagram (left as it was). */
static int
turn(void *data, const void *end, uint32_t ip, uint16_t port)
{
	struct iphdr *iph;
	struct udphdr *udp = hg_xdp_udp(data, end, &iph);

	if (udp == NULL || iph->saddr != ip || udp->source != port)
		return -1;
	hg_xdp_swap(data, iph, udp);
	return 0;
}

/* turn() over a copy of the frame, placed as the program sees one */
static void
check_turn(const uint8_t *data, size_t size)
{
	uint8_t *a = malloc(size + 2), *b = malloc(size + 2), *was = a + 2, *f = b + 2;
	struct hg_parsed p;
	uint32_t dst;
	int took;

	if (a == NULL || b == NULL)
		goto out;
	memcpy(was, data, size);
	memcpy(f, data, size);
	if (turn(f, f + size, OUR_IP, RTE_BE16(TURN_PORT)) != 0) {
		if (memcmp(f, data, size) != 0)
			__builtin_trap();
		goto out;
	}
	/* turned: at least Ethernet, an IPv4 header and a UDP one */
	memcpy(&dst, was + 14 + 16, sizeof(dst));
	took = hg_parse(was, (uint32_t)size, dst, &p) == HG_PKT_UDP;
	if (hg_xdp_udp_port(f, f + size, OUR_IP) != (int)TURN_PORT)
		__builtin_trap();
	if (took && (hg_parse(f, (uint32_t)size, OUR_IP, &p) != HG_PKT_UDP ||
		     p.src_ip != dst || p.dst_port != RTE_BE16(TURN_PORT)))
		__builtin_trap();
out:
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t ports[HG_XDP_PORTS];
	struct hg_parsed p;
	uint8_t *buf, *f;
	uint32_t slot;
	uint16_t len;
	int port;

	if (size > 2048)
		return -1;
	if ((buf = malloc(size + 2)) == NULL)
		return 0;
	f = buf + 2;
	memcpy(f, data, size);
	port = hg_xdp_udp_port(f, f + size, OUR_IP);
	if (port > 65535)
		__builtin_trap();
	if (hg_parse(f, (uint32_t)size, OUR_IP, &p) == HG_PKT_UDP &&
	    port != rte_be_to_cpu_16(p.dst_port))
		__builtin_trap();
	/* an owner from the frame's own bytes: any value, a hostile one too */
	if (port >= 0) {
		ports[port] = 0;
		memcpy(&ports[port], data, size < 8 ? size : 8);
	}
	/* as an mbuf holds it: the frame at an 8-byte boundary */
	memmove(buf, f, size);
	len = (uint16_t)size;
	hg_xdp_slots((const uint8_t *const *)&buf, &len, 1, OUR_IP, ports, &slot);
	if (slot >= HG_XDP_SLOTS - 1 ||
	    slot != hg_xdp_slot(port, port >= 0 ? ports[port] : 0))
		__builtin_trap();
	free(buf);
	check_turn(data, size);
	return 0;
}

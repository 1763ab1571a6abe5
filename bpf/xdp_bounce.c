/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's link bounce (tools/hgload_xdp.c): attached to the client's end
 * of the link while hgload --bounce runs, it sends every answer from a
 * load's target back to the target as a new request (hg_xdp_swap,
 * xdp_parse.h), counting it for the load; everything else passes. Layout:
 * proto/hg_xdp_bounce.h.
 *
 * It sends by a redirect out of the interface it came in on, not by
 * XDP_TX: on a veth, XDP_TX's frames wake the other end's NAPI only where
 * that end has an XDP program of its own (6.18), and without one (the
 * kernel's stack behind GRO) 256 frames filled its ring and stayed; a
 * redirect's flush wakes it whatever it runs.
 *
 * On a veth the program runs where the server's answer was transmitted,
 * in the server's own system call or softirq: the link's cost of each
 * turn (~0.2-0.4 us) is billed to the server's CPU, on either side of a
 * comparison alike.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../proto/hg_xdp_bounce.h"
#include "xdp_parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HGB_LOADS);
	__type(key, __u32);
	__type(value, struct hgb_conf);
} hgb_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HGB_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} hgb_count SEC(".maps");

static __always_inline void
count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&hgb_count, &k);

	if (v != 0)
		(*v)++;
}

/* Is a datagram from ip:port an answer load k turns? */
static __always_inline int
is_load(__u32 k, __u32 ip, __u16 port)
{
	const struct hgb_conf *c = bpf_map_lookup_elem(&hgb_conf, &k);

	return c != 0 && c->on && c->ip == ip && c->port == port;
}

SEC("xdp")
int
hgb_bounce(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	const void *end = (const void *)(long)ctx->data_end;
	struct iphdr *iph;
	struct udphdr *udp = hg_xdp_udp(data, end, &iph);
	__s32 load = -1;

	if (udp == 0)
		return XDP_PASS;
	/* unrolled, with no exit from the middle: each key a constant (a
	 * key goes to the helper through the stack, where the verifier loses
	 * a loop counter's bound) */
#pragma unroll
	for (__u32 k = 0; k < HGB_LOADS; k++)
		if (load < 0 && is_load(k, iph->saddr, udp->source))
			load = (__s32)k;
	if (load < 0) {
		count(HGB_PASSED);
		return XDP_PASS;
	}
	hg_xdp_swap(data, iph, udp);
	count((__u32)load);
	return (int)bpf_redirect(ctx->ingress_ifindex, 0);
}

char _license[] SEC("license") = "Dual BSD/GPL";

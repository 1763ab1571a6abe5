/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's link bounce (tools/hgload_xdp.c): attached to the client's end
 * of the link while hgload --bounce runs, it sends every answer from the
 * target back to the target as a new request (hg_xdp_turn, xdp_parse.h),
 * counting it; everything else passes. Layout: proto/hg_xdp_bounce.h.
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
	__uint(max_entries, 1);
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

SEC("xdp")
int
hgb_bounce(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	const void *end = (const void *)(long)ctx->data_end;
	const struct hgb_conf *c;
	__u32 k = 0;

	c = bpf_map_lookup_elem(&hgb_conf, &k);
	if (c == 0 || !c->on)
		return XDP_PASS;
	if (hg_xdp_turn(data, end, c->ip, c->port) != 0) {
		count(HGB_PASSED);
		return XDP_PASS;
	}
	count(HGB_TURNED);
	return (int)bpf_redirect(ctx->ingress_ifindex, 0);
}

char _license[] SEC("license") = "Dual BSD/GPL";

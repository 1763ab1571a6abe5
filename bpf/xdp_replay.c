/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's link replay (tools/hgload_xdp.c): run by BPF_PROG_RUN in
 * live-frames mode over copies of one prebuilt frame, it gives each copy
 * its flow's source port and returns XDP_TX, which the kernel turns into
 * a transmit out of the link. Layout: proto/hg_xdp_replay.h.
 *
 * hgload also attaches it, in generic mode, to the loopback device of its
 * network namespace for as long as it runs: only a program attached
 * somewhere stays in the kernel's XDP dispatcher, and a test run of a
 * program that is not there puts it there and takes it out again, with an
 * RCU grace period each way (~24 ms a run here). Frames that really
 * arrive on loopback are not the replay's (their ingress is not the
 * link): they pass untouched.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../proto/hg_xdp_replay.h"
#include "xdp_parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HGR_LOADS);
	__type(key, __u32);
	__type(value, struct hgr_conf);
} hgr_conf SEC(".maps");

SEC("xdp")
int
hgr_replay(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	const void *end = (const void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	struct udphdr *udp = (void *)(iph + 1);
	struct hgr_conf *c;
	__u32 k;

	/* hgload's frame: no IP options (it builds it) */
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	k = HG_XDP_BE16(iph->id);
	c = bpf_map_lookup_elem(&hgr_conf, &k);
	if (c == NULL || c->ifindex != ctx->ingress_ifindex || c->flows == 0)
		return XDP_PASS;
	udp->source = c->sport[(__u32)(c->next++ % c->flows) & (HGR_FLOWS - 1)];
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";

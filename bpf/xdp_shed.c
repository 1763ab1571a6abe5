/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's XDP program on a net_af_xdp link: a datagram of a tenant
 * that its RX queue's fast-path core sheds is dropped here, in the
 * driver, before the kernel copies it into the AF_XDP socket; so is one
 * of a tenant that holds its share of the socket's ring while the ring
 * backs up (a flood would otherwise fill the ring, and the kernel would
 * drop a quiet tenant's next datagram with the flood's), and a frame of
 * no tenant (ARP, ICMP, a port nobody owns) beyond theirs. Everything
 * else goes to the socket of its queue (xsks_map), as net_af_xdp's own
 * program would send it, counted against its slot. The maps it shares
 * with the daemon are proto/hg_xdp.h's.
 *
 * Built with clang -target bpf; net_af_xdp loads it (xdp_prog=) and the
 * daemon finds its maps on the interface (slowpath/xdp_link.c).
 *
 * Where the daemon reads several queues of the interface, one net_af_xdp
 * vdev each, the PMD loads this program for the first only; the others'
 * sockets go through libxdp, which reuses a program attached to the
 * interface only if it looks like its own default one: the entry point
 * named xsk_def_prog, and an xsk_prog_version it supports in the
 * xdp_metadata section. Then it puts their sockets into this xsks_map.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../proto/hg_xdp.h"
#include "xdp_parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, HG_XDP_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hg_xdp_conf);
} hg_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, HG_XDP_PORTS);
	__type(key, __u32);
	__type(value, __u64);
} hg_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, HG_XDP_QUEUES * HG_XDP_TENANTS);
	__type(key, __u32);
	__type(value, __u64);
} hg_shed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, HG_XDP_QUEUES * HG_XDP_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hg_passed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, HG_XDP_QUEUES * HG_XDP_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hg_taken SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, HG_XDP_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hg_share SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HG_XDP_OTHER + 1);
	__type(key, __u32);
	__type(value, struct hg_xdp_count);
} hg_count SEC(".maps");

/* What slot s holds of queue q's ring, by the counts; signed: a core
 * that set the counts even while a frame was on its way into the ring
 * takes one it had not counted. 0 where a map has no entry. */
static __always_inline __s64
held(__u32 q, __u32 s, __u64 **passed)
{
	__u32 key = HG_XDP_RING_KEY(q, s);
	const __u64 *taken = bpf_map_lookup_elem(&hg_taken, &key);

	*passed = bpf_map_lookup_elem(&hg_passed, &key);
	return *passed != NULL && taken != NULL ? (__s64)(**passed - *taken) : 0;
}

/* Does the slot hold its share of queue q's ring, which backs up? Else
 * counts the frame in. */
static __always_inline int
over_share(__u32 q, __u32 slot)
{
	__u32 total = HG_XDP_TOTAL;
	const __u64 *share = bpf_map_lookup_elem(&hg_share, &slot);
	const __u64 *busy = bpf_map_lookup_elem(&hg_share, &total);
	__u64 *passed, *all;
	__s64 mine = held(q, slot, &passed), ring = held(q, total, &all);

	if (share != NULL && busy != NULL && *share != 0 && *busy != 0 &&
	    ring >= (__s64)*busy && mine >= (__s64)*share)
		return 1;
	if (passed != NULL)
		__sync_fetch_and_add(passed, 1);
	if (all != NULL)
		__sync_fetch_and_add(all, 1);
	return 0;
}

SEC("xdp")
int
xsk_def_prog(struct xdp_md *ctx)
{
	const void *data = (const void *)(long)ctx->data;
	const void *end = (const void *)(long)ctx->data_end;
	__u32 zero = 0, q = ctx->rx_queue_index, port, t, key, slot;
	const struct hg_xdp_conf *conf = bpf_map_lookup_elem(&hg_conf, &zero);
	struct hg_xdp_count *cnt = NULL;
	const __u64 *owner = NULL, *shed;
	int p;

	if (conf == NULL || q >= HG_XDP_QUEUES)
		return bpf_redirect_map(&xsks_map, q, XDP_PASS);
	p = hg_xdp_udp_port(data, end, conf->ip);
	if (p >= 0) {
		port = (__u32)p;
		owner = bpf_map_lookup_elem(&hg_ports, &port);
	}
	slot = hg_xdp_slot(p, owner != NULL ? *owner : 0);
	t = slot;
	cnt = bpf_map_lookup_elem(&hg_count, &t);
	if (slot != HG_XDP_OTHER) {
		key = HG_XDP_SHED_KEY(q, t);
		shed = bpf_map_lookup_elem(&hg_shed, &key);
		if (shed != NULL && *shed != 0) {
			if (cnt != NULL)
				cnt->dropped++;
			return XDP_DROP;
		}
	}
	if (over_share(q, slot)) {
		if (cnt != NULL)
			cnt->over_share++;
		return XDP_DROP;
	}
	if (cnt != NULL)
		cnt->passed++;
	return bpf_redirect_map(&xsks_map, q, XDP_PASS);
}

/* libxdp's version of its default program that this one stands for (1:
 * redirect by rx_queue_index into xsks_map, XDP_PASS where no socket) */
__uint(xsk_prog_version, 1) SEC("xdp_metadata");

char _license[] SEC("license") = "Dual BSD/GPL";

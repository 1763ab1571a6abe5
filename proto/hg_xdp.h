/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the daemon's XDP program (bpf/xdp_shed.c) and the daemon share on
 * a net_af_xdp link: four BPF maps, found by name.
 *
 *   hg_conf   array, 1 entry, mmap-able: the daemon's address. Written by
 *             the slow path.
 *   hg_ports  array, one entry per UDP port, mmap-able: the tenant slot
 *             + 1 that owns the port (0: nobody). Written by the slow path
 *             wherever it writes its own port map.
 *   hg_shed   array, one entry per (RX queue, tenant), mmap-able: nonzero
 *             while that queue's fast-path core sheds the tenant (out of
 *             budget while another tenant has work). One writer per entry:
 *             the core that polls the queue, with plain stores into the
 *             mapping, no system call.
 *   hg_count  per-CPU array, one entry per tenant: what the program passed
 *             and dropped. Read by the slow path for stats.
 *   xsks_map  the AF_XDP sockets by RX queue, as net_af_xdp wants it.
 *
 * An array map's elements are 8-byte aligned in its mapping, so every
 * mmap-able entry here is a 64-bit word. The program reads an entry the
 * daemon may be writing: each is one aligned word, so it sees the old
 * value or the new one.
 *
 * Compiled by clang -target bpf and by the host compiler: kernel types
 * only.
 */
#ifndef HG_PROTO_XDP_H
#define HG_PROTO_XDP_H

#include <linux/types.h>

#define HG_XDP_TENANTS    4096u	/* = HG_MAX_TENANTS (asserted in xdp_link.c) */
#define HG_XDP_PORTS      65536u
#define HG_XDP_QUEUES     16u	/* RX queues of one device the program serves */

struct hg_xdp_conf {
	__u32 ip;		/* the daemon's address, network order */
	__u32 pad;
};

struct hg_xdp_count {
	__u64 passed;		/* UDP datagrams of the tenant handed on */
	__u64 dropped;		/* ... dropped in the driver: shed */
};

/* hg_shed's key for (queue, tenant) */
#define HG_XDP_SHED_KEY(q, t) ((__u32)(q) * HG_XDP_TENANTS + (__u32)(t))

_Static_assert(sizeof(struct hg_xdp_conf) == 8, "one 8-byte element");
_Static_assert(sizeof(struct hg_xdp_count) == 16, "two counters");
_Static_assert((HG_XDP_TENANTS & (HG_XDP_TENANTS - 1)) == 0, "a power of two");

#endif /* HG_PROTO_XDP_H */

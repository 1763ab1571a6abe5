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
 *   hg_count  per-CPU array, one entry per tenant and one for frames of no
 *             tenant (HG_XDP_OTHER): what the program passed and dropped.
 *             Read by the slow path for stats.
 *   xsks_map  the AF_XDP sockets by RX queue, as net_af_xdp wants it.
 *
 * Ring shares: one AF_XDP socket's ring is shared by every tenant whose
 * datagrams come in on its queue, and when it is full the kernel drops
 * whatever comes next, a quiet tenant's datagram as readily as a flood's.
 * Once a ring holds more than hg_share[HG_XDP_TOTAL] frames (it backs
 * up), each tenant may hold at most its share of it; the rest of its
 * datagrams are dropped in the driver. A ring that does not back up takes
 * any tenant's burst. Every frame the program hands to a socket is
 * counted against a slot, its tenant's or HG_XDP_OTHER (ARP, ICMP, ports
 * nobody owns), and against HG_XDP_TOTAL.
 *   hg_passed array, one entry per (RX queue, slot) (HG_XDP_RING_KEY),
 *             mmap-able: frames the program handed to the queue's socket.
 *             Written by the program (an atomic add: it may run on any CPU).
 *   hg_taken  the same keys, mmap-able: frames of the slot the queue's core
 *             took off the ring, by the same look at the frame
 *             (bpf/xdp_parse.h). One writer per entry: that core. passed -
 *             taken is what the slot holds in the ring.
 *   hg_share  array, one entry per slot, mmap-able: the most frames of the
 *             slot a ring that backs up may hold (0: no limit); at
 *             HG_XDP_TOTAL, the frames beyond which a ring backs up.
 *             Written by the slow path from the tenants' weights.
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
#define HG_XDP_OTHER      HG_XDP_TENANTS	/* ring slot of frames of no tenant */
#define HG_XDP_TOTAL      (HG_XDP_TENANTS + 1u)	/* ... of every frame */
#define HG_XDP_SLOTS      (HG_XDP_TENANTS + 2u)

struct hg_xdp_conf {
	__u32 ip;		/* the daemon's address, network order */
	__u32 pad;
};

struct hg_xdp_count {
	__u64 passed;		/* UDP datagrams of the tenant handed on */
	__u64 dropped;		/* ... dropped in the driver: shed */
	__u64 over_share;	/* ... dropped in the driver: the tenant held
				 * its share of the socket's ring */
};

/* hg_shed's key for (queue, tenant) */
#define HG_XDP_SHED_KEY(q, t) ((__u32)(q) * HG_XDP_TENANTS + (__u32)(t))
/* hg_passed's and hg_taken's key for (queue, slot) */
#define HG_XDP_RING_KEY(q, s) ((__u32)(q) * HG_XDP_SLOTS + (__u32)(s))

/* The slot a frame counts against: the owner of its UDP port (port: the
 * program's look, bpf/xdp_parse.h; owner: hg_ports' entry for it), else
 * HG_XDP_OTHER. The program and the cores both use it, so that they count
 * every frame against the same slot. */
static inline __attribute__((always_inline)) __u32
hg_xdp_slot(int port, __u64 owner)
{
	return port >= 0 && owner != 0 && owner <= HG_XDP_TENANTS ? (__u32)owner - 1 :
	       HG_XDP_OTHER;
}

_Static_assert(sizeof(struct hg_xdp_conf) == 8, "one 8-byte element");
_Static_assert(sizeof(struct hg_xdp_count) == 24, "three counters");
_Static_assert((HG_XDP_TENANTS & (HG_XDP_TENANTS - 1)) == 0, "a power of two");

#endif /* HG_PROTO_XDP_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The neighbour table (struct hg_dp's neigh, neigh_asked): the MAC of
 * each on-link host, learned from its datagrams and from answers to our
 * ARP requests, read by SCHED and the credit updates to address frames.
 * Lock-free: every core may write an entry, each write one atomic word.
 */
#ifndef HG_FASTPATH_NEIGH_H
#define HG_FASTPATH_NEIGH_H

#include <stdint.h>
#include <string.h>

#include <rte_ether.h>

#include "dp.h"
#include "parse.h"

/* Neighbour table: on-link hosts only, indexed by host bits.
 *
 * Who may write an entry (README, "Neighbours"): one spoofed frame must not
 * redirect every tenant's traffic to a host, so an entry is
 *  - set by an ARP reply to our address for a host we asked about within
 *    neigh_wait (the first answer wins and closes the question);
 *  - filled, when empty, by a datagram to a port an app has bound;
 *  - never overwritten by a datagram from a different MAC: that only
 *    makes us ask again (a broadcast ARP request, at most one per host
 *    per neigh_retry), and the answer decides.
 * ARP requests and ICMP echoes are answered from the frame itself and
 * teach us nothing. */
static inline int
hg_neigh_index(const struct hg_dp *dp, uint32_t ip_net, uint32_t *idx)
{
	uint32_t ip = rte_be_to_cpu_32(ip_net);
	uint32_t net = rte_be_to_cpu_32(dp->ip) & dp->netmask;

	if ((ip & dp->netmask) != net)
		return -1;
	*idx = ip & ~dp->netmask;
	return 0;
}

#define HG_NEIGH_VALID (1ull << 63)

static inline uint64_t
hg_neigh_entry(const struct rte_ether_addr *mac)
{
	uint64_t v = 0;

	memcpy(&v, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
	return v | HG_NEIGH_VALID;
}

/* Records that we ask about host i now; 0 if we asked within neigh_retry
 * (then nothing is sent). Cores race benignly: two may ask at once. */
static inline int
hg_neigh_ask(struct hg_dp *dp, uint32_t i, uint64_t now)
{
	uint64_t last = __atomic_load_n(&dp->neigh_asked[i], __ATOMIC_RELAXED);

	if (last != 0 && now - last < dp->neigh_retry)
		return 0;
	__atomic_store_n(&dp->neigh_asked[i], now | 1, __ATOMIC_RELAXED);
	return 1;
}

/* SCHED: may we send an ARP request for ip_net now? */
static inline int
hg_neigh_may_ask(struct hg_dp *dp, uint32_t ip_net, uint64_t now)
{
	uint32_t i;

	return hg_neigh_index(dp, ip_net, &i) == 0 && hg_neigh_ask(dp, i, now);
}

enum hg_neigh_verdict { HG_NEIGH_KNOWN, HG_NEIGH_LEARNED, HG_NEIGH_CHECK };

/* A datagram to a bound port from (ip, mac): fills an empty entry; a
 * different MAC says HG_NEIGH_CHECK when the caller should ask. */
static inline enum hg_neigh_verdict
hg_neigh_learn(struct hg_dp *dp, uint32_t ip_net, const struct rte_ether_addr *mac,
	       uint64_t now)
{
	uint64_t v, cur;
	uint32_t i;

	if (hg_neigh_index(dp, ip_net, &i) < 0 || rte_is_multicast_ether_addr(mac))
		return HG_NEIGH_KNOWN;
	v = hg_neigh_entry(mac);
	cur = __atomic_load_n(&dp->neigh[i], __ATOMIC_RELAXED);
	if (cur == v)
		return HG_NEIGH_KNOWN;	/* no write: the line stays shared */
	if (!(cur & HG_NEIGH_VALID)) {
		__atomic_store_n(&dp->neigh[i], v, __ATOMIC_RELAXED);
		return HG_NEIGH_LEARNED;
	}
	return hg_neigh_ask(dp, i, now) ? HG_NEIGH_CHECK : HG_NEIGH_KNOWN;
}

/* An ARP reply to our address: taken only if we asked about its sender
 * within neigh_wait; returns 1 if it set the entry. */
static inline int
hg_neigh_arp_reply(struct hg_dp *dp, const struct hg_parsed *p, uint64_t now)
{
	uint64_t asked;
	uint32_t i;

	if (hg_neigh_index(dp, p->src_ip, &i) < 0 ||
	    rte_is_multicast_ether_addr(&p->src_mac))
		return 0;
	asked = __atomic_load_n(&dp->neigh_asked[i], __ATOMIC_RELAXED);
	if (asked == 0 || now - asked > dp->neigh_wait)
		return 0;
	__atomic_store_n(&dp->neigh[i], hg_neigh_entry(&p->src_mac), __ATOMIC_RELAXED);
	__atomic_store_n(&dp->neigh_asked[i], 0, __ATOMIC_RELAXED);
	return 1;
}

static inline int
hg_neigh_lookup(const struct hg_dp *dp, uint32_t ip_net, struct rte_ether_addr *mac)
{
	uint32_t i;
	uint64_t v;

	if (hg_neigh_index(dp, ip_net, &i) < 0)
		return -1;
	v = __atomic_load_n(&dp->neigh[i], __ATOMIC_RELAXED);
	if (!(v & HG_NEIGH_VALID))
		return -1;
	memcpy(mac->addr_bytes, &v, RTE_ETHER_ADDR_LEN);
	return 0;
}

#endif /* HG_FASTPATH_NEIGH_H */

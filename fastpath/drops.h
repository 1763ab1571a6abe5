/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the fast path drops and why: per core (bad or unowned frames) and
 * per tenant. Names are the keys of stats and telemetry (drops.c).
 */
#ifndef HG_FASTPATH_DROPS_H
#define HG_FASTPATH_DROPS_H

/* Drops that belong to no tenant (the frame was bad or unowned). */
#define HG_CORE_DROPS(X)                      \
	X(RUNT, "runt")                       \
	X(ETHERTYPE, "bad_ethertype")         \
	X(ARP, "bad_arp")                     \
	X(IP_HDR, "bad_ip_header")            \
	X(IP_LEN, "bad_ip_length")            \
	X(IP_CSUM, "bad_ip_checksum")         \
	X(IP_FRAG, "ip_fragment")             \
	X(NOT_US, "not_for_us")               \
	X(PROTO, "bad_ip_proto")              \
	X(UDP_HDR, "bad_udp_header")          \
	X(UDP_CSUM, "bad_udp_checksum")       \
	X(ICMP, "bad_icmp")                   \
	X(NO_TENANT, "no_tenant")             \
	X(MULTISEG, "multi_segment")          \
	X(ARP_UNASKED, "unsolicited_arp")     \
	X(NIC_FULL, "nic_tx_full")            \
	X(NO_MBUF, "no_mbuf")                 \
	X(LINK_DESC, "bad_link_descriptor")

/* Drops charged to a tenant. */
#define HG_TENANT_DROPS(X)                    \
	X(UNBOUND, "unbound_port")            \
	X(NO_BUF, "no_buffer")                \
	X(RING_FULL, "rx_ring_full")          \
	X(BAD_DESC, "bad_descriptor")         \
	X(NO_NEIGH, "no_neighbor")            \
	X(NIC_FULL, "nic_tx_full")            \
	X(NO_MBUF, "no_mbuf")                 \
	X(OVER_BUDGET, "rx_over_budget")      \
	X(BAD_RPC, "bad_rpc_header")          \
	X(NO_CREDIT, "rpc_reject_no_credit")  \
	X(OVERLOAD, "rpc_reject_overload")    \
	X(NO_SESSION, "rpc_reject_no_session") \
	X(TOO_BIG, "too_big")

#define HG_ENUM_ENTRY(name, str) HG_DROP_##name,
enum hg_core_drop { HG_CORE_DROPS(HG_ENUM_ENTRY) HG_DROP_N };
#undef HG_ENUM_ENTRY
#define HG_ENUM_ENTRY(name, str) HG_TDROP_##name,
enum hg_tenant_drop { HG_TENANT_DROPS(HG_ENUM_ENTRY) HG_TDROP_N };
#undef HG_ENUM_ENTRY

extern const char *const hg_core_drop_names[HG_DROP_N];
extern const char *const hg_tenant_drop_names[HG_TDROP_N];

#endif /* HG_FASTPATH_DROPS_H */

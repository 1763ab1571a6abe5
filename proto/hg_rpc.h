/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RPC wire header (design.md §8): at the start of the UDP payload on a
 * tenant's RPC ports, network byte order, 32 bytes. Raw ports carry
 * payloads untouched and get no credits.
 *
 * A client session (its address, port and session id) may have at most
 * `credits` requests outstanding, the number the last response, reject or
 * credit update granted it (a new session starts with one). Requests carry
 * the client's demand (requests queued behind the window) in `credits`.
 * The daemon sets `flags` and `credits` of every response it transmits;
 * everything else is echoed. A reject (credits = 0) answers a request that
 * came without credit or while the tenant is overloaded.
 */
#ifndef HG_PROTO_RPC_H
#define HG_PROTO_RPC_H

#include <stdint.h>

#define HG_RPC_MAGIC   0x4852u	/* "HR" */
#define HG_RPC_VERSION 1u

enum hg_rpc_flags {
	HG_RPC_REQUEST = 0x01,
	HG_RPC_RESPONSE = 0x02,
	HG_RPC_REJECT = 0x04,
	HG_RPC_CREDIT = 0x08,	/* credit update, no request behind it */
};

struct hg_rpc_hdr {
	uint16_t magic;		/* HG_RPC_MAGIC */
	uint8_t version;	/* HG_RPC_VERSION */
	uint8_t flags;		/* enum hg_rpc_flags */
	uint8_t type;		/* request type (class) */
	uint8_t pad0;
	uint16_t credits;	/* demand in requests, grant otherwise */
	uint32_t session;	/* client-chosen session id */
	uint32_t pad1;
	uint64_t req_id;	/* echoed */
	uint64_t ts;		/* opaque client timestamp, echoed */
} __attribute__((packed));

#define HG_RPC_HDR_LEN 32u
_Static_assert(sizeof(struct hg_rpc_hdr) == HG_RPC_HDR_LEN, "RPC header is 32 bytes");

#endif /* HG_PROTO_RPC_H */

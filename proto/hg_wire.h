/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Headers carried inside UDP payloads.
 *
 * Synthetic-work header: a request whose payload starts with this header
 * asks hg-echo to spin for service_ns before echoing the whole payload back
 * unchanged. hgload puts its own sequence number and send timestamp right
 * after it, so the reply carries everything needed to match and time it.
 * All fields in network byte order.
 */
#ifndef HG_PROTO_WIRE_H
#define HG_PROTO_WIRE_H

#include <stdint.h>

/* The largest UDP payload, the one a 1500-byte MTU carries; the library's
 * public HG_MSG_MAX is asserted equal (libclient/client.h). */
#define HG_MAX_PAYLOAD  1472u

#define HG_WORK_MAGIC   0x48475752u	/* "HGWR" */
#define HG_WORK_VERSION 1u

struct hg_work_hdr {
	uint32_t magic;		/* HG_WORK_MAGIC */
	uint8_t version;	/* HG_WORK_VERSION */
	uint8_t type;		/* request type (class), 0..HG_WORK_MAX_TYPES-1 */
	uint16_t flags;		/* reserved, 0 */
	uint32_t service_ns;	/* CPU time the server spends on it */
	uint32_t pad;
	uint64_t seq;		/* client's request sequence number */
	uint64_t tx_ns;		/* client's send timestamp (opaque to servers) */
} __attribute__((packed));

#define HG_WORK_MAX_TYPES 8u
_Static_assert(sizeof(struct hg_work_hdr) == 32, "work header is 32 bytes");

#endif /* HG_PROTO_WIRE_H */

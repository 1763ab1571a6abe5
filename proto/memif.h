/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The memif protocol, version 2.0, as libmemif, VPP and DPDK's net_memif
 * speak it: control messages of 128 bytes on a SOCK_SEQPACKET socket
 * (file descriptors ride along as SCM_RIGHTS), and rings of 16-byte
 * descriptors in shared memory the client creates.
 *
 * The handshake, server (the daemon) and client (the peer):
 *   server: HELLO (its limits)
 *   client: INIT (version, interface id, secret)       server: ACK
 *   client: ADD_REGION (index, size) + memfd, each     server: ACK
 *   client: ADD_RING (direction, index, region,        server: ACK
 *           offset, log2 size) + eventfd, each
 *   client: CONNECT                                     server: CONNECTED
 *   either: DISCONNECT (code, reason)
 *
 * A ring from the client to the server (C2S, the daemon's RX): the client
 * fills desc[head & mask] and moves head; the server reads up to head and
 * moves tail. From the server to the client (S2C, the daemon's TX): the
 * client posts empty buffers (length = their size) by moving head; the
 * server fills them up to head, sets each length, and moves tail.
 *
 * Everything in a region is the peer's to write at any moment: the daemon
 * reads each descriptor once into its own memory and checks it against
 * the region sizes it recorded at ADD_REGION (fastpath/memif.c).
 */
#ifndef HG_PROTO_MEMIF_H
#define HG_PROTO_MEMIF_H

#include <stddef.h>
#include <stdint.h>

#define HG_MEMIF_COOKIE      0x3E31F20u
#define HG_MEMIF_VERSION     0x0200u	/* 2.0 */
#define HG_MEMIF_NAME_SZ     32u
#define HG_MEMIF_SECRET_SZ   24u
#define HG_MEMIF_REASON_SZ   96u
#define HG_MEMIF_LOG2_RING_MAX 14u	/* 16,384 slots, DPDK's limit too */

enum hg_memif_msg_type {
	HG_MEMIF_MSG_NONE,
	HG_MEMIF_MSG_ACK,
	HG_MEMIF_MSG_HELLO,
	HG_MEMIF_MSG_INIT,
	HG_MEMIF_MSG_ADD_REGION,
	HG_MEMIF_MSG_ADD_RING,
	HG_MEMIF_MSG_CONNECT,
	HG_MEMIF_MSG_CONNECTED,
	HG_MEMIF_MSG_DISCONNECT,
};

#define HG_MEMIF_MODE_ETHERNET 0u
#define HG_MEMIF_RING_C2S      1u	/* ADD_RING flag: client to server */
#define HG_MEMIF_RING_FLAG_MASK_INT 1u	/* the receiver polls: no eventfd */
#define HG_MEMIF_DESC_FLAG_NEXT 1u	/* the frame goes on in the next slot */

struct __attribute__((packed)) hg_memif_hello {
	uint8_t name[HG_MEMIF_NAME_SZ];
	uint16_t min_version, max_version;
	uint16_t max_region;		/* highest region index */
	uint16_t max_s2c_ring;		/* highest ring index, server to client */
	uint16_t max_c2s_ring;		/* ... client to server */
	uint8_t max_log2_ring_size;
};

struct __attribute__((packed)) hg_memif_init {
	uint16_t version;
	uint32_t id;			/* interface id on the socket */
	uint8_t mode;			/* HG_MEMIF_MODE_ETHERNET */
	uint8_t secret[HG_MEMIF_SECRET_SZ];
	uint8_t name[HG_MEMIF_NAME_SZ];
};

struct __attribute__((packed)) hg_memif_add_region {
	uint16_t index;
	uint64_t size;
};

struct __attribute__((packed)) hg_memif_add_ring {
	uint16_t flags;			/* HG_MEMIF_RING_C2S */
	uint16_t index;
	uint16_t region;
	uint32_t offset;		/* of the ring in its region */
	uint8_t log2_ring_size;
	uint16_t private_hdr_size;
};

struct __attribute__((packed)) hg_memif_if_name {
	uint8_t if_name[HG_MEMIF_NAME_SZ];
};

struct __attribute__((packed)) hg_memif_disconnect {
	uint32_t code;
	uint8_t string[HG_MEMIF_REASON_SZ];
};

struct __attribute__((packed, aligned(128))) hg_memif_msg {
	uint16_t type;			/* enum hg_memif_msg_type */
	union __attribute__((packed)) {
		struct hg_memif_hello hello;
		struct hg_memif_init init;
		struct hg_memif_add_region add_region;
		struct hg_memif_add_ring add_ring;
		struct hg_memif_if_name connect, connected;
		struct hg_memif_disconnect disconnect;
	};
};

/* A buffer descriptor. */
struct __attribute__((packed)) hg_memif_desc {
	uint16_t flags;			/* HG_MEMIF_DESC_FLAG_NEXT */
	uint16_t region;
	uint32_t length;
	uint32_t offset;		/* of the buffer in its region */
	uint32_t metadata;
};

/* A ring's header; desc[] follows at HG_MEMIF_RING_DESC. head and tail
 * sit on cache lines of their own, each written by one side. */
struct hg_memif_ring {
	uint32_t cookie;		/* HG_MEMIF_COOKIE */
	uint16_t flags;			/* HG_MEMIF_RING_FLAG_MASK_INT */
	uint16_t head;
	uint8_t pad0[56];
	uint16_t tail;
	uint8_t pad1[62];
	struct hg_memif_desc desc[];
};

#define HG_MEMIF_RING_DESC 128u

/* Bytes a ring of 2^log2 slots takes in its region. */
static inline uint64_t
hg_memif_ring_bytes(unsigned log2)
{
	return HG_MEMIF_RING_DESC + (sizeof(struct hg_memif_desc) << log2);
}

_Static_assert(sizeof(struct hg_memif_msg) == 128, "memif message");
_Static_assert(sizeof(struct hg_memif_hello) == 43, "memif hello");
_Static_assert(sizeof(struct hg_memif_init) == 63, "memif init");
_Static_assert(sizeof(struct hg_memif_add_ring) == 13, "memif add ring");
_Static_assert(sizeof(struct hg_memif_disconnect) == 100, "memif disconnect");
_Static_assert(sizeof(struct hg_memif_desc) == 16, "memif descriptor");
_Static_assert(offsetof(struct hg_memif_ring, head) == 6, "memif head");
_Static_assert(offsetof(struct hg_memif_ring, tail) == 64, "memif tail");
_Static_assert(offsetof(struct hg_memif_ring, desc) == HG_MEMIF_RING_DESC,
	       "memif descriptors");

#endif /* HG_PROTO_MEMIF_H */

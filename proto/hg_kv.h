/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-kv's requests and answers: after the RPC header on a
 * tenant's RPC port, network byte order. The RPC header's type is the
 * operation, so each operation is a request class (DARC reserves workers
 * per class). Any client that speaks the RPC header (proto/hg_rpc.h) and
 * this can use hg-kv; README "A LevelDB server" has an example.
 *
 *   request:  struct hg_kv_req, then key_len key bytes, then (PUT)
 *             val_len value bytes
 *   answer:   struct hg_kv_reply, then
 *             GET found: uint16 value length, the value
 *             SCAN:      n x (uint16 key length, uint16 value length, key,
 *                        value), keys in order from the start key. The
 *                        server reads count keys (a SCAN's work is its
 *                        count); more: the answer holds only those that
 *                        fit in one datagram
 */
#ifndef HG_PROTO_KV_H
#define HG_PROTO_KV_H

#include <stdint.h>

enum hg_kv_op {			/* the RPC header's type */
	HG_KV_GET = 0,
	HG_KV_PUT = 1,
	HG_KV_DELETE = 2,
	HG_KV_SCAN = 3,
	HG_KV_OPS
};

enum hg_kv_status {
	HG_KV_OK = 0,
	HG_KV_NOT_FOUND = 1,
	HG_KV_BAD_REQUEST = 2,
	HG_KV_ERROR = 3,
};

#define HG_KV_KEY_MAX   128u
#define HG_KV_SCAN_MAX  1000u	/* keys one SCAN may ask for */

struct hg_kv_req {
	uint16_t key_len;	/* GET, PUT, DELETE: the key; SCAN: the start */
	uint16_t val_len;	/* PUT */
	uint16_t count;		/* SCAN: keys wanted */
	uint16_t pad;
} __attribute__((packed));

struct hg_kv_reply {
	uint8_t status;		/* enum hg_kv_status */
	uint8_t more;		/* SCAN: more keys wanted than fitted */
	uint16_t n;		/* GET: 1 if found; SCAN: pairs that follow */
} __attribute__((packed));

_Static_assert(sizeof(struct hg_kv_req) == 8, "kv request header is 8 bytes");
_Static_assert(sizeof(struct hg_kv_reply) == 4, "kv answer header is 4 bytes");

#endif /* HG_PROTO_KV_H */

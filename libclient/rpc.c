/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RPC ports for applications (design.md §8): answering with the request's
 * header echoed, so that the daemon can write the session's new credits
 * into the answer (reading it is rx.c's).
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <endian.h>

#include "client.h"
#include "hg_rpc.h"

int
hg_rpc_reply(hg_ctx_t *ctx, struct hg_msg *req, const void *body, size_t len)
{
	uint8_t *p = req->data;
	struct hg_rpc_hdr h;

	if (hg_rpc_header(req, &h) < 0)
		return hg_fail(EPROTO, "not an RPC request");
	if (len > HG_MSG_MAX - HG_RPC_HDR_LEN)
		return hg_fail(EMSGSIZE, "%zu bytes and the RPC header are more than %u",
			       len, HG_MSG_MAX);
	/* body may overlap the header's place only if it already follows it */
	if (body != p + HG_RPC_HDR_LEN)
		memmove(p + HG_RPC_HDR_LEN, body, len);
	h.flags = HG_RPC_RESPONSE;
	h.credits = 0;		/* the daemon writes the grant */
	memcpy(p, &h, sizeof(h));
	return hg_send(ctx, req, p, HG_RPC_HDR_LEN + len);
}

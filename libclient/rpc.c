/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RPC ports for applications (DESIGN §8): reading a request's header and
 * answering with it echoed, so that the daemon can write the session's
 * new credits into the answer.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <endian.h>

#include "client.h"
#include "hg_rpc.h"

/* The header is read by copy: it sits in a shared buffer at any
 * alignment, and its bytes are the client's, not to be trusted. */
static int
header(const struct hg_msg *m, struct hg_rpc_hdr *h)
{
	if (m->data == NULL || m->len < HG_RPC_HDR_LEN)
		return -EPROTO;
	memcpy(h, m->data, sizeof(*h));
	if (ntohs(h->magic) != HG_RPC_MAGIC || h->version != HG_RPC_VERSION ||
	    !(h->flags & HG_RPC_REQUEST))
		return -EPROTO;
	return 0;
}

int
hg_rpc_parse(const struct hg_msg *m, struct hg_rpc_req *r)
{
	struct hg_rpc_hdr h;

	/* no error text: telling raw datagrams from RPC ones is routine */
	if (header(m, &h) < 0)
		return -EPROTO;
	*r = (struct hg_rpc_req){
		.type = h.type, .session = ntohl(h.session),
		.req_id = be64toh(h.req_id),
		.body = (const uint8_t *)m->data + HG_RPC_HDR_LEN,
		.body_len = m->len - HG_RPC_HDR_LEN,
	};
	return 0;
}

int
hg_rpc_reply(hg_ctx_t *ctx, struct hg_msg *req, const void *body, size_t len)
{
	uint8_t *p = req->data;
	struct hg_rpc_hdr h;

	if (header(req, &h) < 0)
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

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The receive side of the per-message path: descriptors off a worker's
 * own RX rings (and its stash of stolen ones) into messages, and reading
 * a request's RPC header. Ring operations only, no syscalls. Which
 * request to take next is worker_pick.c's business.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include <rte_ring.h>

#include "client.h"
#include "hg_rpc.h"

int
hg_desc_to_msg(const hg_app_t *app, const struct hg_desc *d, struct hg_msg *m)
{
	if (d->buf >= app->hdr->n_bufs || d->len > HG_BUF_SIZE)
		return 0;	/* cannot happen with a sane daemon */
	m->data = hg_buf_ptr(app, d->buf);
	m->len = d->len;
	m->src.ip = d->peer_ip;
	m->src.port = d->peer_port;
	m->local_port = d->local_port;
	m->buf = d->buf;
	return 1;
}

int
hg_poll_local(hg_ctx_t *w, struct hg_msg *m)
{
	const hg_app_t *app = w->app;
	struct hg_desc d;
	uint32_t i, core;

	while (w->stash_i < w->stash_n) {
		w->rx_tsc = w->stash[w->stash_i].tsc;
		if (hg_desc_to_msg(app, &w->stash[w->stash_i++], m))
			return 1;
	}
	for (i = 0; i < app->n_cores; i++) {
		core = (w->rx_next + i) % app->n_cores;
		if (rte_ring_mc_rts_dequeue_bulk_elem(w->ring[core][HG_RING_RX], &d,
						      sizeof(d), 1, NULL) == 0)
			continue;
		w->rx_next = core + 1;
		w->rx_tsc = d.tsc;
		if (hg_desc_to_msg(app, &d, m))
			return 1;
	}
	return 0;
}

/* The header is read by copy: it sits in a shared buffer at any
 * alignment, and its bytes are the client's, not to be trusted. */
int
hg_rpc_header(const struct hg_msg *m, struct hg_rpc_hdr *h)
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
	if (hg_rpc_header(m, &h) < 0)
		return -EPROTO;
	*r = (struct hg_rpc_req){
		.type = h.type, .session = ntohl(h.session),
		.req_id = be64toh(h.req_id),
		.body = (const uint8_t *)m->data + HG_RPC_HDR_LEN,
		.body_len = m->len - HG_RPC_HDR_LEN,
	};
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The send side of the per-message path: replies, datagrams, freed
 * buffers onto the context's TX ring; ring operations only, no syscalls.
 * The receive side is rx.c; which request to take next, worker_pick.c.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_pause.h>

#include "client.h"

static int
push_tx(hg_ctx_t *ctx, struct hg_desc *d)
{
	uint32_t core = d->buf / ctx->app->per_core;

	if (rte_ring_sp_enqueue_elem(ctx->ring[core][HG_RING_TX], d,
				     sizeof(*d)) != 0)
		return hg_fail_fixed(EAGAIN, "transmit queue full");
	return 0;
}

/* What a reply may be: at most HG_MSG_MAX bytes, in a buffer of the
 * app's region (a message hg_recv did not fill names none). */
static int
msg_ok(const hg_ctx_t *ctx, uint32_t buf, size_t len)
{
	return len <= HG_MSG_MAX && buf < ctx->app->hdr->n_bufs;
}

/* Why a message msg_ok refused was refused: errno and hg_strerror. */
static int
msg_fail(size_t len)
{
	if (len > HG_MSG_MAX)
		return hg_fail(EMSGSIZE, "%zu bytes is more than %u", len, HG_MSG_MAX);
	return hg_fail(EINVAL, "the message has no buffer (hg_recv did not fill it)");
}

int
hg_send(hg_ctx_t *c, struct hg_msg *req, const void *data, size_t len)
{
	hg_ctx_t *ctx = hg_self(c);
	struct hg_desc d = { .buf = req->buf, .len = (uint16_t)len,
			     .op = HG_OP_SEND, .peer_ip = req->src.ip,
			     .peer_port = req->src.port,
			     .local_port = req->local_port };
	uint8_t *p;
	int rc;

	if (!msg_ok(ctx, req->buf, len))
		return msg_fail(len);
	p = hg_buf_ptr(ctx->app, req->buf);
	if (data != p)
		memmove(p, data, len);
	rc = push_tx(ctx, &d);
	if (rc == 0)
		hg_req_end(ctx);
	return rc;
}

/* Runs of replies whose buffers belong to one fast-path core go onto that
 * core's TX ring in one enqueue; the first run that does not fit ends it. */
int
hg_send_burst(hg_ctx_t *c, struct hg_msg *m, unsigned n)
{
	hg_ctx_t *ctx = hg_self(c);
	struct hg_desc d[HG_BURST_MAX];
	unsigned i, k, run, sent = 0;
	uint32_t core;

	n = n < HG_BURST_MAX ? n : HG_BURST_MAX;
	for (i = 0; i < n; i++) {
		if (!msg_ok(ctx, m[i].buf, m[i].len))
			break;
		d[i] = (struct hg_desc){ .buf = m[i].buf, .len = (uint16_t)m[i].len,
					 .op = HG_OP_SEND, .peer_ip = m[i].src.ip,
					 .peer_port = m[i].src.port,
					 .local_port = m[i].local_port };
	}
	if (i == 0 && n > 0)
		return msg_fail(m[0].len);
	n = i;
	while (sent < n) {
		core = d[sent].buf / ctx->app->per_core;
		for (run = 1; sent + run < n && d[sent + run].buf / ctx->app->per_core == core;
		     run++)
			;
		k = rte_ring_sp_enqueue_burst_elem(ctx->ring[core][HG_RING_TX], &d[sent],
						   sizeof(d[0]), run, NULL);
		sent += k;
		if (k < run)
			break;
	}
	return (int)sent;
}

/* A free buffer of some core: the context's cache first, then the fill
 * ring the daemon keeps stocked. */
static int
take_buffer(hg_ctx_t *ctx, uint32_t *buf)
{
	uint32_t i, core, n = ctx->app->n_cores;

	for (i = 0; i < n; i++) {
		core = (ctx->tx_next + i) % n;
		if (ctx->n_cache[core] > 0) {
			*buf = ctx->cache[core][--ctx->n_cache[core]];
			ctx->tx_next = core + 1;
			return 0;
		}
		if (rte_ring_sc_dequeue_elem(ctx->ring[core][HG_RING_FILL], buf,
					     sizeof(*buf)) == 0 &&
		    *buf / ctx->app->per_core == core) {
			ctx->tx_next = core + 1;
			return 0;
		}
	}
	return hg_fail_fixed(ENOBUFS, "no free buffer yet");
}

static void
cache_buffer(hg_ctx_t *ctx, uint32_t buf)
{
	uint32_t core = buf / ctx->app->per_core;
	struct hg_desc d = { .buf = buf, .op = HG_OP_FREE };
	int tries;

	if (ctx->n_cache[core] < HG_CACHE) {
		ctx->cache[core][ctx->n_cache[core]++] = buf;
		return;
	}
	/* a full queue drains within microseconds unless the daemon is gone;
	 * then the buffer is lost with the region anyway */
	for (tries = 0; tries < 100000 && push_tx(ctx, &d) != 0; tries++)
		rte_pause();
}

int
hg_sendto(hg_ctx_t *c, uint16_t local_port, const struct hg_addr *to,
	  const void *data, size_t len)
{
	hg_ctx_t *ctx = hg_self(c);
	struct hg_desc d = { .len = (uint16_t)len, .op = HG_OP_SEND,
			     .peer_ip = to->ip, .peer_port = to->port,
			     .local_port = local_port };
	int rc;

	if (len > HG_MSG_MAX)
		return hg_fail(EMSGSIZE, "%zu bytes is more than %u", len,
			       HG_MSG_MAX);
	if ((rc = take_buffer(ctx, &d.buf)) < 0)
		return rc;
	memcpy(hg_buf_ptr(ctx->app, d.buf), data, len);
	rc = push_tx(ctx, &d);
	if (rc < 0)
		cache_buffer(ctx, d.buf);
	return rc;
}

void
hg_msg_free(hg_ctx_t *c, struct hg_msg *m)
{
	hg_ctx_t *ctx = hg_self(c);

	cache_buffer(ctx, m->buf);
	m->data = NULL;
	hg_req_end(ctx);
}

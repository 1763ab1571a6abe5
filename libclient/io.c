/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The per-message path of the library: ring operations only, no syscalls
 * except while a blocking hg_recv has nothing to do.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_pause.h>

#include "client.h"

#define SPIN_POLLS   2000u	/* empty polls before sleeping */
#define SLEEP_MAX_US 200u
#define ALIVE_EVERY  64u	/* sleeps between daemon liveness checks */

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int
poll_rx(hg_ctx_t *ctx, struct hg_msg *m)
{
	const hg_app_t *app = ctx->app;
	struct hg_desc d;
	uint32_t i, core;

	for (i = 0; i < app->n_cores; i++) {
		core = (ctx->rx_next + i) % app->n_cores;
		if (rte_ring_mc_dequeue_elem(ctx->ring[core][HG_RING_RX], &d,
					     sizeof(d)) != 0)
			continue;
		ctx->rx_next = core + 1;
		if (d.buf >= app->hdr->n_bufs || d.len > HG_BUF_SIZE)
			continue;	/* cannot happen with a sane daemon */
		m->data = hg_buf_ptr(app, d.buf);
		m->len = d.len;
		m->src.ip = d.peer_ip;
		m->src.port = d.peer_port;
		m->local_port = d.local_port;
		m->buf = d.buf;
		return 1;
	}
	return 0;
}

int
hg_recv(hg_ctx_t *ctx, struct hg_msg *m, long timeout_us)
{
	uint64_t deadline = 0;
	unsigned empty = 0, sleeps = 0, us = 10;

	if (poll_rx(ctx, m))
		return 1;
	if (timeout_us == 0)
		return 0;
	if (timeout_us > 0)
		deadline = now_us() + (uint64_t)timeout_us;
	for (;;) {
		if (poll_rx(ctx, m))
			return 1;
		if (++empty < SPIN_POLLS) {
			rte_pause();
			continue;
		}
		if (deadline != 0 && now_us() >= deadline)
			return 0;
		if (++sleeps % ALIVE_EVERY == 0 && !hg_daemon_alive(ctx->app))
			return hg_fail(ENOTCONN, "hourglassd went away");
		struct timespec ts = { 0, (long)us * 1000 };

		nanosleep(&ts, NULL);
		us = us * 2 > SLEEP_MAX_US ? SLEEP_MAX_US : us * 2;
	}
}

static int
push_tx(hg_ctx_t *ctx, struct hg_desc *d)
{
	uint32_t core = d->buf / ctx->app->per_core;

	if (rte_ring_sp_enqueue_elem(ctx->ring[core][HG_RING_TX], d,
				     sizeof(*d)) != 0)
		return hg_fail(EAGAIN, "transmit queue full");
	return 0;
}

int
hg_send(hg_ctx_t *ctx, struct hg_msg *req, const void *data, size_t len)
{
	struct hg_desc d = { .buf = req->buf, .len = (uint16_t)len,
			     .op = HG_OP_SEND, .peer_ip = req->src.ip,
			     .peer_port = req->src.port,
			     .local_port = req->local_port };
	uint8_t *p = hg_buf_ptr(ctx->app, req->buf);

	if (len > HG_MSG_MAX)
		return hg_fail(EMSGSIZE, "%zu bytes is more than %u", len,
			       HG_MSG_MAX);
	if (data != p)
		memmove(p, data, len);
	return push_tx(ctx, &d);
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
	return hg_fail(ENOBUFS, "no free buffer yet");
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
hg_sendto(hg_ctx_t *ctx, uint16_t local_port, const struct hg_addr *to,
	  const void *data, size_t len)
{
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
hg_msg_free(hg_ctx_t *ctx, struct hg_msg *m)
{
	cache_buffer(ctx, m->buf);
	m->data = NULL;
}

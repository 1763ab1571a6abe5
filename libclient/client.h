/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libhgclient internals shared by attach.c and io.c.
 */
#ifndef HG_LIBCLIENT_CLIENT_H
#define HG_LIBCLIENT_CLIENT_H

#include <pthread.h>
#include <stdarg.h>

#include <rte_ring.h>

#include "../proto/hg_shm.h"
#include "hourglass.h"

#define HG_CACHE 32u	/* free buffers a context keeps per core */

struct hg_app {
	int sock;
	pthread_mutex_t lock;	/* serialises control calls */
	uint64_t next_id;
	uint8_t *base;
	size_t size;
	const struct hg_region_hdr *hdr;
	uint32_t n_cores;
	uint32_t per_core;	/* buffers per fast-path core */
};

struct hg_ctx {
	hg_app_t *app;
	uint32_t id;
	uint32_t rx_next;	/* core whose RX ring is polled first */
	uint32_t tx_next;	/* core hg_sendto tries first */
	struct hg_ctx_shm *shm;
	struct rte_ring *ring[HG_MAX_FP_CORES][HG_RING_KINDS];
	uint32_t n_cache[HG_MAX_FP_CORES];
	uint32_t cache[HG_MAX_FP_CORES][HG_CACHE];
};

/* Sets the thread's error text; returns -err for convenience. */
int hg_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Is the daemon still on the other end of the control socket? */
int hg_daemon_alive(const hg_app_t *app);

static inline uint8_t *
hg_buf_ptr(const hg_app_t *app, uint32_t buf)
{
	return app->base + app->hdr->buf_off + (uint64_t)buf * HG_BUF_SIZE;
}

#endif /* HG_LIBCLIENT_CLIENT_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Attaching to a tenant: control calls, mapping and checking the region,
 * opening contexts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_version.h>

#include "../proto/ctl_frame.h"
#include "../proto/hg_shm_ring.h"
#include "client.h"

/* One control round trip; on error the daemon's reason becomes ours. */
static int
call(hg_app_t *app, Hg__Request *req, Hg__Response **rsp, int *fd)
{
	int rc = 0;

	pthread_mutex_lock(&app->lock);
	req->id = ++app->next_id;
	*rsp = hg_ctl_call(app->sock, req, fd);
	pthread_mutex_unlock(&app->lock);
	if (*rsp == NULL)
		return hg_fail(errno, "daemon: %s", strerror(errno));
	if ((*rsp)->status != 0) {
		rc = hg_fail((*rsp)->status, "%s", (*rsp)->error ? (*rsp)->error
								  : "error");
		hg__response__free_unpacked(*rsp, NULL);
		*rsp = NULL;
	}
	return rc;
}

/* The region comes from the daemon, but a mismatched build would make
 * every ring access wrong: check what we rely on before touching it. */
static int
check_region(const struct hg_region_hdr *h, size_t size)
{
	uint64_t rings = (uint64_t)h->max_ctx * h->n_cores * HG_RING_KINDS;

	if (size < HG_PAGE_SIZE || h->magic != HG_SHM_MAGIC)
		return hg_fail(EPROTO, "shared region has a bad magic");
	if (h->version != HG_SHM_VERSION || h->dpdk_version != RTE_VERSION)
		return hg_fail(EPROTO, "shared region layout %u/DPDK %08x, this "
			       "library speaks %u/%08x: rebuild against the "
			       "daemon's version", h->version, h->dpdk_version,
			       HG_SHM_VERSION, RTE_VERSION);
	if (h->region_size != size || h->n_cores == 0 ||
	    h->n_cores > HG_MAX_FP_CORES || h->max_ctx > HG_MAX_CTX ||
	    h->ring_size != HG_RING_SIZE || h->buf_size != HG_BUF_SIZE ||
	    h->desc_size != sizeof(struct hg_desc) ||
	    h->ring_geom_bytes != offsetof(struct rte_ring, prod) ||
	    h->n_bufs % h->n_cores != 0 ||
	    h->ring_off + rings * h->ring_stride > h->buf_off ||
	    h->buf_off + (uint64_t)h->n_bufs * h->buf_size > h->class_off ||
	    h->class_stride < sizeof(struct hg_class_block) ||
	    h->class_off + (uint64_t)h->max_ctx * h->class_stride > size)
		return hg_fail(EPROTO, "shared region header is inconsistent");
	return 0;
}

static int
map_region(hg_app_t *app, int fd, uint64_t size)
{
	app->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (app->base == MAP_FAILED)
		return hg_fail(errno, "cannot map region: %s", strerror(errno));
	app->size = size;
	app->hdr = (const struct hg_region_hdr *)app->base;
	if (check_region(app->hdr, size) < 0) {
		int err = errno;

		munmap(app->base, size);
		return -err;
	}
	app->n_cores = app->hdr->n_cores;
	app->per_core = app->hdr->n_bufs / app->n_cores;
	app->steer = &app->hdr->steer;
	return 0;
}

/* The app's own block and wait queue, from its slot. */
static int
map_app(hg_app_t *app, uint32_t slot)
{
	const struct hg_region_hdr *h = app->hdr;
	uint64_t wq;

	if (slot >= HG_MAX_APPS ||
	    h->app_off + HG_MAX_APPS * sizeof(struct hg_app_shm) > h->ring_off)
		return hg_fail(EPROTO, "daemon sent a bad app slot");
	app->slot = slot;
	app->shm = (struct hg_app_shm *)(app->base + h->app_off) + slot;
	wq = app->shm->wq_off;
	if (wq < h->wq_off || wq + h->wq_stride > h->buf_off)
		return hg_fail(EPROTO, "shared region header is inconsistent");
	app->wq = (struct rte_ring *)(app->base + wq);
	return 0;
}

/* How long an idle worker polls before it asks to park or blocks:
 * $HG_SPIN_US if the app set it, else -1, the tenant's poll-us. */
static int64_t
spin_ns(void)
{
	const char *s = getenv("HG_SPIN_US");
	char *end;
	unsigned long us;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	us = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || us > 1000000)
		return -1;
	return (int64_t)us * 1000;
}

/* The tenant's park bell: idle workers ring it when they ask to park. */
static int
get_park_bell(hg_app_t *app)
{
	Hg__Request req = HG__REQUEST__INIT;
	Hg__Empty e = HG__EMPTY__INIT;
	Hg__Response *rsp;
	int fd = -1, rc;

	req.body_case = HG__REQUEST__BODY_PARK_BELL;
	req.park_bell = &e;
	rc = call(app, &req, &rsp, &fd);
	if (rsp != NULL)
		hg__response__free_unpacked(rsp, NULL);
	if (rc == 0 && fd < 0)
		rc = hg_fail(EPROTO, "daemon sent no park bell");
	if (rc < 0 && fd >= 0)
		close(fd);
	app->park_bell = rc < 0 ? -1 : fd;
	return rc;
}

hg_app_t *
hg_attach(const char *ctl_path, const char *tenant)
{
	Hg__Request req = HG__REQUEST__INIT;
	Hg__Attach at = HG__ATTACH__INIT;
	Hg__Response *rsp;
	hg_app_t *app;
	int fd = -1, rc;

	if (ctl_path == NULL)
		ctl_path = getenv("HG_CTL") ? getenv("HG_CTL") : HG_DEFAULT_CTL;
	app = calloc(1, sizeof(*app));
	if (app == NULL) {
		hg_fail(ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&app->lock, NULL);
	pthread_mutex_init(&app->gt_lock, NULL);
	app->park_bell = -1;
	app->spin_ns = spin_ns();
	app->sock = hg_ctl_connect(ctl_path);
	if (app->sock < 0) {
		hg_fail(-app->sock, "cannot reach hourglassd at %s: %s", ctl_path,
			strerror(-app->sock));
		free(app);
		return NULL;
	}
	at.tenant = (char *)tenant;
	req.body_case = HG__REQUEST__BODY_ATTACH;
	req.attach = &at;
	rc = call(app, &req, &rsp, &fd);
	if (rc == 0 && (rsp->body_case != HG__RESPONSE__BODY_ATTACH || fd < 0))
		rc = hg_fail(EPROTO, "daemon sent no region");
	if (rc == 0) {
		rc = map_region(app, fd, rsp->attach->region_size);
		if (rc == 0 && ((rc = map_app(app, rsp->attach->app)) < 0 ||
				(rc = get_park_bell(app)) < 0))
			munmap(app->base, app->size);
	} else if (fd >= 0) {
		close(fd);
	}
	if (rsp != NULL)
		hg__response__free_unpacked(rsp, NULL);
	if (rc < 0) {
		close(app->sock);
		free(app);
		errno = -rc;
		return NULL;
	}
	return app;
}

int
hg_bind(hg_app_t *app, uint16_t port)
{
	Hg__Request req = HG__REQUEST__INIT;
	Hg__Bind b = HG__BIND__INIT;
	Hg__Response *rsp;
	int rc;

	b.port = port;
	req.body_case = HG__REQUEST__BODY_BIND;
	req.bind = &b;
	rc = call(app, &req, &rsp, NULL);
	if (rsp != NULL)
		hg__response__free_unpacked(rsp, NULL);
	return rc;
}

hg_ctx_t *
hg_ctx_open(hg_app_t *app)
{
	Hg__Request req = HG__REQUEST__INIT;
	Hg__Empty e = HG__EMPTY__INIT;
	Hg__Response *rsp;
	hg_ctx_t *ctx;
	uint32_t id, core, kind;
	int bell = -1;

	req.body_case = HG__REQUEST__BODY_CTX_OPEN;
	req.ctx_open = &e;
	if (call(app, &req, &rsp, &bell) < 0) {
		if (bell >= 0)
			close(bell);
		return NULL;
	}
	id = rsp->body_case == HG__RESPONSE__BODY_CTX_OPEN ? rsp->ctx_open->ctx
							    : UINT32_MAX;
	hg__response__free_unpacked(rsp, NULL);
	if (id >= app->hdr->max_ctx || app->n_ctxs >= HG_MAX_CTX || bell < 0) {
		hg_fail(EPROTO, bell < 0 ? "daemon sent no doorbell"
					 : "daemon sent a bad context id");
		if (bell >= 0)
			close(bell);
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		close(bell);
		hg_fail(ENOMEM, "out of memory");
		return NULL;
	}
	ctx->app = app;
	ctx->id = id;
	ctx->bell = bell;
	ctx->wait_fd = -1;
	ctx->poll_win_ns = UINT64_MAX;
	ctx->shm = (struct hg_ctx_shm *)(app->base + app->hdr->ctx_off) + id;
	ctx->classes = (struct hg_class_block *)(app->base + app->hdr->class_off +
						 (uint64_t)id * app->hdr->class_stride);
	for (core = 0; core < app->n_cores; core++)
		for (kind = 0; kind < HG_RING_KINDS; kind++)
			ctx->ring[core][kind] = (struct rte_ring *)(app->base +
				hg_ring_offset(app->hdr, id, core, kind));
	/* visible to the other workers' stealing from now on */
	pthread_mutex_lock(&app->lock);
	ctx->n = app->n_ctxs;
	app->ctxs[ctx->n] = ctx;
	__atomic_store_n(&app->n_ctxs, ctx->n + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&app->lock);
	return ctx;
}

/* Other workers may still steal from it: it is freed with the app. */
void
hg_ctx_close(hg_ctx_t *ctx)
{
	(void)ctx;
}

void
hg_detach(hg_app_t *app)
{
	uint32_t i;

	if (app == NULL)
		return;
	close(app->sock);
	if (app->park_bell >= 0)
		close(app->park_bell);
	hg_green_free_all(app);
	hg_appq_free(app);
	for (i = 0; i < app->n_ctxs; i++) {
		if (app->ctxs[i]->bell >= 0)
			close(app->ctxs[i]->bell);
		if (app->ctxs[i]->wait_fd >= 0)
			close(app->ctxs[i]->wait_fd);
		free(app->ctxs[i]);
	}
	munmap(app->base, app->size);
	pthread_mutex_destroy(&app->lock);
	pthread_mutex_destroy(&app->gt_lock);
	free(app);
}

void
hg_set_classifier(hg_app_t *app, int (*fn)(const void *data, size_t len))
{
	__atomic_store_n(&app->classifier, fn, __ATOMIC_RELEASE);
}

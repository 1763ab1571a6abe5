/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_version.h>

#include "../proto/hg_shm_ring.h"
#include "region.h"

static uint64_t
page_round(uint64_t n)
{
	return (n + HG_PAGE_SIZE - 1) & ~(uint64_t)(HG_PAGE_SIZE - 1);
}

static void
layout(struct hg_region_hdr *h, uint32_t slot, uint32_t n_cores)
{
	/* sized for the largest element (descriptors); fill rings use less */
	uint64_t body = rte_ring_get_memsize_elem(sizeof(struct hg_desc),
						  HG_RING_SIZE) - HG_RING_GEOM_BYTES;

	*h = (struct hg_region_hdr){
		.magic = HG_SHM_MAGIC, .version = HG_SHM_VERSION,
		.dpdk_version = RTE_VERSION, .tenant_id = slot,
		.n_cores = n_cores, .max_ctx = HG_MAX_CTX,
		.ring_size = HG_RING_SIZE, .ring_geom_bytes = HG_RING_GEOM_BYTES,
		.desc_size = sizeof(struct hg_desc), .n_bufs = HG_N_BUFS,
		.buf_size = HG_BUF_SIZE,
	};
	h->ctx_off = HG_PAGE_SIZE;
	h->app_off = h->ctx_off + HG_MAX_CTX * sizeof(struct hg_ctx_shm);
	h->ring_off = page_round(h->app_off + HG_MAX_APPS * sizeof(struct hg_app_shm));
	/* one geometry page, then the ring's head/tail words and elements */
	h->ring_stride = HG_PAGE_SIZE + page_round(body);
	h->wq_off = h->ring_off + (uint64_t)HG_MAX_CTX * n_cores *
					  HG_RING_KINDS * h->ring_stride;
	h->wq_stride = page_round(rte_ring_get_memsize_elem(sizeof(struct hg_wq_entry),
							    HG_WQ_SIZE));
	h->buf_off = h->wq_off + (uint64_t)HG_MAX_APPS * h->wq_stride;
	h->class_off = h->buf_off + (uint64_t)HG_N_BUFS * HG_BUF_SIZE;
	h->class_stride = page_round(sizeof(struct hg_class_block));
	h->region_size = h->class_off + (uint64_t)HG_MAX_CTX * h->class_stride;
}

/* Replaces the daemon's view of a ring's geometry page with a private,
 * read-only copy: the tenant can still scribble on its own view of size and
 * mask, but the daemon indexes the ring only with the values it wrote. */
static int
privatize_geometry(uint8_t *page)
{
	uint8_t copy[HG_PAGE_SIZE];

	memcpy(copy, page, sizeof(copy));
	if (mmap(page, HG_PAGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		return -errno;
	memcpy(page, copy, sizeof(copy));
	return mprotect(page, HG_PAGE_SIZE, PROT_READ) < 0 ? -errno : 0;
}

/* (Re)initialises app slot a's block and wait queue: at region creation
 * and whenever the slot is handed to a new app, so that nothing a dead app
 * left there (its handles, its counters, a geometry it scribbled on) is
 * seen by the next one. The queues are multi-producer, multi-consumer
 * among the threads of one app (RTS: hg_shm_ring.h); the daemon only
 * reads their indices and masks them itself, so their geometry need not
 * be private. */
static int
init_app(struct hg_tenant *tn, uint32_t a)
{
	char name[RTE_RING_NAMESIZE];
	uint64_t off = tn->lay.wq_off + (uint64_t)a * tn->lay.wq_stride;

	memset(&tn->app_shm[a], 0, sizeof(tn->app_shm[a]));
	tn->app_shm[a].wq_off = off;
	tn->wq[a] = (struct rte_ring *)(tn->base + off);
	snprintf(name, sizeof(name), "hg%u.wq%u", tn->slot, a);
	return hg_shm_ring_init(tn->wq[a], name, HG_WQ_SIZE, HG_WQ_FLAGS);
}

/* Initialises one context's rings, the first time the context is opened:
 * an idle tenant costs neither the ring pages nor, in the daemon, the
 * mappings that keep each ring's geometry private (one per ring; 4,096
 * tenants with every ring set up would pass vm.max_map_count). */
static int
init_ctx_rings(struct hg_tenant *tn, uint32_t ctx, uint32_t n_cores)
{
	uint32_t core, kind;
	int rc;

	for (core = 0; core < n_cores; core++)
		for (kind = 0; kind < HG_RING_KINDS; kind++) {
			struct rte_ring *r = (void *)(tn->base +
				hg_ring_offset(&tn->lay, ctx, core, kind));
			char name[RTE_RING_NAMESIZE];

			snprintf(name, sizeof(name), "hg%u.%u.%u.%u",
				 tn->slot, ctx, core, kind);
			rc = hg_shm_ring_init(r, name, HG_RING_SIZE,
					      kind == HG_RING_RX ? HG_RING_RX_FLAGS : 0);
			if (rc == 0)
				rc = privatize_geometry((uint8_t *)r -
					(HG_PAGE_SIZE - HG_RING_GEOM_BYTES));
			if (rc < 0) {
				memset(tn->ring[ctx], 0, sizeof(tn->ring[ctx]));
				return rc;
			}
			tn->ring[ctx][core][kind] = r;
		}
	return 0;
}

/* Every failure leaves r as hg_region_destroy expects an empty one:
 * nothing mapped, fd -1. */
int
hg_region_create(struct hg_region *r, struct hg_tenant *tn, const char *name,
		 uint32_t slot, uint32_t n_cores, char *err, size_t errlen)
{
	char fdname[64];
	int rc;

	*r = (struct hg_region){ .fd = -1 };
	layout(&tn->lay, slot, n_cores);
	snprintf(fdname, sizeof(fdname), "hourglass-%s", name);
	r->fd = memfd_create(fdname, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	r->size = tn->lay.region_size;
	/* sealed so an app cannot truncate it and fault the daemon (SIGBUS) */
	if (r->fd < 0 || ftruncate(r->fd, (off_t)r->size) < 0 ||
	    fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create shared region: %s", strerror(-rc));
		hg_region_destroy(r);
		return rc;
	}
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		rc = -errno;
		r->base = NULL;
		snprintf(err, errlen, "cannot map shared region: %s", strerror(-rc));
		hg_region_destroy(r);
		return rc;
	}
	tn->base = r->base;
	tn->bufs = r->base + tn->lay.buf_off;
	tn->ctx_shm = (struct hg_ctx_shm *)(r->base + tn->lay.ctx_off);
	tn->app_shm = (struct hg_app_shm *)(r->base + tn->lay.app_off);
	memcpy(r->base, &tn->lay, sizeof(tn->lay));
	/* rings and wait queues are set up when a context opens and an app
	 * attaches (hg_region_reset_ctx, hg_region_reset_app) */
	return 0;
}

void
hg_region_destroy(struct hg_region *r)
{
	if (r->base != NULL)
		munmap(r->base, r->size);
	if (r->fd >= 0)
		close(r->fd);
	r->base = NULL;
	r->fd = -1;
}

/* Sets up (first open) or resets every ring of a context before it is
 * handed to an app. The daemon's view of each geometry page is private,
 * so the shared page the app sees (which a previous app may have
 * scribbled on) is rewritten through the memfd from the daemon's copy. */
int
hg_region_reset_ctx(const struct hg_region *reg, struct hg_tenant *tn,
		    uint32_t ctx, uint32_t n_cores)
{
	uint32_t core, kind;
	int rc = 0;

	if (tn->ring[ctx][0][0] == NULL)
		return init_ctx_rings(tn, ctx, n_cores);
	for (core = 0; core < n_cores; core++)
		for (kind = 0; kind < HG_RING_KINDS; kind++) {
			struct rte_ring *r = tn->ring[ctx][core][kind];

			rte_ring_reset(r);
			if (pwrite(reg->fd, r, HG_RING_GEOM_BYTES,
				   (off_t)hg_ring_offset(&tn->lay, ctx, core, kind)) !=
			    HG_RING_GEOM_BYTES)
				rc = -EIO;
		}
	return rc;
}

int
hg_region_reset_app(struct hg_tenant *tn, uint32_t app)
{
	return init_app(tn, app);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared region as an app sees it, and what a hostile app can and
 * cannot do to the daemon's view of it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../slowpath/region.h"

static struct hg_region r;
static struct hg_tenant tn;
static uint8_t *app;	/* a second mapping, as libhgclient makes */

static void
setup(void)
{
	char err[160];

	cr_assert_eq(hg_region_create(&r, &tn, "t", 3, 2, err, sizeof(err)), 0,
		     "%s", err);
	app = mmap(NULL, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	cr_assert_neq(app, MAP_FAILED);
}

static void
teardown(void)
{
	munmap(app, r.size);
	hg_region_destroy(&r);
	memset(&tn, 0, sizeof(tn));
}

TestSuite(region, .init = setup, .fini = teardown);

Test(region, header_describes_a_consistent_layout)
{
	const struct hg_region_hdr *h = (const void *)app;

	cr_assert_eq(h->magic, HG_SHM_MAGIC);
	cr_assert_eq(h->version, HG_SHM_VERSION);
	cr_assert_eq(h->tenant_id, 3);
	cr_assert_eq(h->n_cores, 2);
	cr_assert_eq(h->region_size, r.size);
	cr_assert_leq(h->buf_off + (uint64_t)h->n_bufs * h->buf_size, r.size);
}

Test(region, rings_are_shared_between_the_two_views)
{
	struct rte_ring *ar = (void *)(app + hg_ring_offset(&tn.lay, 5, 1, HG_RING_TX));
	struct hg_desc d = { .buf = 17, .len = 99 }, out;

	cr_assert_eq(hg_region_reset_ctx(&r, &tn, 5, 2), 0);
	cr_assert_eq(rte_ring_sp_enqueue_elem(ar, &d, sizeof(d)), 0);
	cr_assert_eq(rte_ring_sc_dequeue_elem(tn.ring[5][1][HG_RING_TX], &out,
					      sizeof(out)), 0);
	cr_assert_eq(out.buf, 17);
	cr_assert_eq(out.len, 99);
}

Test(region, app_cannot_change_the_daemons_ring_geometry)
{
	struct rte_ring *ar = (void *)(app + hg_ring_offset(&tn.lay, 0, 0, HG_RING_RX));
	struct rte_ring *dr = (hg_region_reset_ctx(&r, &tn, 0, 2),
			       tn.ring[0][0][HG_RING_RX]);
	uint8_t *next = app + hg_ring_offset(&tn.lay, 0, 0, HG_RING_TX) -
			(HG_PAGE_SIZE - HG_RING_GEOM_BYTES);
	size_t rest = r.size - (size_t)(next - app);
	uint8_t *snap = malloc(rest);
	struct hg_desc d = { .buf = 1 };
	unsigned i;

	memcpy(snap, next, rest);
	ar->mask = 0xffffffff;
	ar->size = 0x80000000;
	ar->capacity = 0x7fffffff;
	cr_assert_eq(dr->mask, HG_RING_SIZE - 1);
	cr_assert_eq(dr->capacity, HG_RING_SIZE - 1);
	/* corrupt head/tail words make the ring look empty forever, but
	 * every element still lands inside this ring's own slots */
	ar->cons.tail = ar->cons.head = 0x12345;
	for (i = 0; i < 4 * HG_RING_SIZE; i++)
		rte_ring_sp_enqueue_elem(dr, &d, sizeof(d));
	cr_assert_eq(memcmp(snap, next, rest), 0,
		     "the daemon wrote outside the ring");
	free(snap);
}

/* Every offset and size the daemon uses is its own
 * copy; an app that overwrites the header page changes none of them. */
/* The rings an app's threads take from together never make one wait for
 * another (hg_shm_ring.h): the app's side is RTS, its head free to run a
 * whole ring ahead of a stalled tail; the daemon's side is single. */
Test(region, rings_an_apps_threads_share_never_make_one_wait_for_another)
{
	struct rte_ring *rx, *wq;

	cr_assert_eq(hg_region_reset_ctx(&r, &tn, 2, 2), 0);
	cr_assert_eq(hg_region_reset_app(&tn, 0), 0);
	rx = (void *)(app + hg_ring_offset(&tn.lay, 2, 1, HG_RING_RX));
	wq = (void *)(app + tn.app_shm[0].wq_off);
	cr_assert_eq(rte_ring_get_cons_sync_type(rx), RTE_RING_SYNC_MT_RTS);
	cr_assert_eq(rte_ring_get_prod_sync_type(rx), RTE_RING_SYNC_ST);
	cr_assert_eq(rte_ring_get_cons_htd_max(rx), rte_ring_get_capacity(rx));
	cr_assert_eq(rte_ring_get_cons_sync_type(wq), RTE_RING_SYNC_MT_RTS);
	cr_assert_eq(rte_ring_get_prod_sync_type(wq), RTE_RING_SYNC_MT_RTS);
	cr_assert_eq(rte_ring_get_prod_htd_max(wq), rte_ring_get_capacity(wq));
}

Test(region, scribbling_the_header_changes_nothing_the_daemon_uses)
{
	struct hg_region_hdr before = tn.lay;
	uint8_t *bufs = tn.bufs;

	memset(app, 0xff, 2 * HG_PAGE_SIZE);
	cr_assert_eq(memcmp(&before, &tn.lay, sizeof(before)), 0);
	cr_assert_eq(bufs, tn.base + tn.lay.buf_off);
	cr_assert_eq(tn.app_shm, (void *)(tn.base + tn.lay.app_off));
	cr_assert_leq(hg_tenant_buf(&tn, HG_N_BUFS - 1) + HG_BUF_SIZE,
		      tn.base + r.size);
}

/* A reused app slot starts empty; a dead app's
 * handles in its wait queue must not reach the next app. */
Test(region, a_reused_app_slot_starts_with_an_empty_wait_queue)
{
	struct hg_app_shm *a = (struct hg_app_shm *)(app + tn.lay.app_off) + 2;
	struct hg_wq_entry e = { .handle = 0x100000001ull }, out;
	struct rte_ring *wq;

	cr_assert_eq(hg_region_reset_app(&tn, 2), 0, "the first app attaches");
	wq = (void *)(app + a->wq_off);
	cr_assert_eq(rte_ring_mp_enqueue_elem(wq, &e, sizeof(e)), 0);
	a->check_wait_queue = 1;
	a->preemptions = 99;
	wq->mask = 0;		/* and a geometry the next app would trip on */
	cr_assert_eq(hg_region_reset_app(&tn, 2), 0);
	cr_assert_eq(a->preemptions, 0);
	cr_assert_eq(a->check_wait_queue, 0);
	cr_assert_eq(a->wq_off, tn.lay.wq_off + 2 * tn.lay.wq_stride);
	cr_assert_eq(wq->mask, HG_WQ_SIZE - 1);
	cr_assert_neq(rte_ring_mc_dequeue_elem(wq, &out, sizeof(out)), 0,
		      "a stale handle survived the reset");
}

/* A context's rings, reset for a new app, show it the geometry the
 * daemon wrote, whatever the last app scribbled on its view. */
Test(region, a_reset_context_restores_the_apps_view_of_its_rings)
{
	struct rte_ring *ar = (void *)(app + hg_ring_offset(&tn.lay, 3, 1, HG_RING_RX));

	cr_assert_eq(hg_region_reset_ctx(&r, &tn, 3, 2), 0, "first open");
	ar->mask = 7;
	ar->capacity = 12345;
	cr_assert_eq(hg_region_reset_ctx(&r, &tn, 3, 2), 0);
	cr_assert_eq(ar->mask, HG_RING_SIZE - 1);
	cr_assert_eq(ar->capacity, HG_RING_SIZE - 1);
}

/* 4,096 tenants: a context's rings (and their private geometry
 * mappings) and an app slot's wait queue exist only once used, so an idle
 * tenant costs neither pages nor mappings. */
Test(region, rings_and_wait_queues_are_set_up_on_first_use)
{
	uint32_t ctx, a;

	for (ctx = 0; ctx < HG_MAX_CTX; ctx++)
		cr_assert_null(tn.ring[ctx][0][HG_RING_RX]);
	for (a = 0; a < HG_MAX_APPS; a++)
		cr_assert_null(tn.wq[a]);
	cr_assert_eq(hg_region_reset_ctx(&r, &tn, HG_MAX_CTX - 1, 2), 0);
	cr_assert_not_null(tn.ring[HG_MAX_CTX - 1][1][HG_RING_FILL]);
	cr_assert_null(tn.ring[HG_MAX_CTX - 2][0][HG_RING_RX]);
	cr_assert_eq(hg_region_reset_app(&tn, HG_MAX_APPS - 1), 0);
	cr_assert_not_null(tn.wq[HG_MAX_APPS - 1]);
}

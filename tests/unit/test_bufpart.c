/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../../fastpath/bufpart.h"

#define BASE 1000u
#define N    64u

static struct hg_bufpart p;
static void *mem;

static void
setup(void)
{
	mem = malloc(hg_bufpart_memsize(N));
	hg_bufpart_init(&p, BASE, N, mem);
}

static void
teardown(void)
{
	free(mem);
}

TestSuite(bufpart, .init = setup, .fini = teardown);

Test(bufpart, allocates_every_buffer_once_then_runs_out)
{
	uint8_t seen[N] = { 0 };
	uint32_t b, i;

	for (i = 0; i < N; i++) {
		cr_assert_eq(hg_bufpart_alloc(&p, 3, &b), 0);
		cr_assert(b >= BASE && b < BASE + N);
		cr_assert_eq(seen[b - BASE]++, 0, "buffer %u handed out twice", b);
		cr_assert(hg_bufpart_held_by(&p, b, 3));
		cr_assert_not(hg_bufpart_held_by(&p, b, 4));
	}
	cr_assert_eq(hg_bufpart_alloc(&p, 3, &b), -ENOBUFS);
}

Test(bufpart, held_by_rejects_foreign_and_free_buffers)
{
	uint32_t b = 0;

	hg_bufpart_alloc(&p, 1, &b);
	cr_assert_not(hg_bufpart_held_by(&p, BASE - 1, 1));
	cr_assert_not(hg_bufpart_held_by(&p, BASE + N, 1));
	cr_assert_not(hg_bufpart_held_by(&p, UINT32_MAX, 1));
	cr_assert_not(hg_bufpart_held_by(&p, b + 1, 1), "free buffer");
	cr_assert_not(hg_bufpart_held_by(&p, b, HG_OWNER_DAEMON));
	hg_bufpart_put(&p, b);
	cr_assert_not(hg_bufpart_held_by(&p, b, 1), "after put");
}

Test(bufpart, reclaim_returns_only_the_dead_apps_buffers)
{
	uint32_t b = 0, i, queued = 0;

	for (i = 0; i < 10; i++)
		hg_bufpart_alloc(&p, 1, &b);
	for (i = 0; i < 5; i++)
		hg_bufpart_alloc(&p, 2, &b);
	hg_bufpart_alloc(&p, 1, &queued);
	hg_bufpart_set_owner(&p, queued, HG_OWNER_TXQ);
	cr_assert_eq(p.top, N - 16);
	cr_assert_eq(hg_bufpart_reclaim(&p, 1), 10);
	cr_assert_eq(p.top, N - 6);
	cr_assert_eq(hg_bufpart_reclaim(&p, 1), 0, "idempotent");
	cr_assert_eq(hg_bufpart_reclaim(&p, HG_OWNER_DAEMON), 0);
	cr_assert_not(hg_bufpart_held_by(&p, queued, HG_OWNER_TXQ),
		      "queued buffers are never 'held' by an app");
	hg_bufpart_put(&p, queued);
	cr_assert_eq(p.top, N - 5);
}

/* An app that lies about its fill ring's indices
 * keeps asking; it gets its cap and no more, the rest stays for its
 * siblings. */
Test(bufpart, an_app_cannot_hold_more_than_its_cap)
{
	uint32_t b, i, got = 0;

	hg_bufpart_set_cap(&p, N / 4);
	for (i = 0; i < N; i++)
		got += hg_bufpart_alloc(&p, 2, &b) == 0;
	cr_assert_eq(got, N / 4);
	cr_assert_eq(p.held[2], N / 4);
	for (i = 0; i < N / 4; i++)
		cr_assert_eq(hg_bufpart_alloc(&p, 5, &b), 0, "sibling starved");
	/* a buffer queued for transmission no longer counts against the app */
	hg_bufpart_set_owner(&p, b, HG_OWNER_TXQ);
	cr_assert_eq(p.held[5], N / 4 - 1);
	cr_assert_eq(hg_bufpart_alloc(&p, 5, &b), 0);
	cr_assert_eq(hg_bufpart_reclaim(&p, 2), N / 4);
	cr_assert_eq(p.held[2], 0);
}

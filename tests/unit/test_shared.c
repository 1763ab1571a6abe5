/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The records the slow path and the cores share, used from two threads at
 * once as the daemon uses them: the shared sets (one writer and a reader;
 * markers and a collector) and a budget (the core tops up and charges, the
 * slow path peeks and sets rate and cap). Each test asserts what a reader
 * may see; `make test` also runs them under ThreadSanitizer (make tsan),
 * which fails on any access of them that is not atomic. Each test's
 * second thread waits for the first to be inside its loop, so that the
 * two overlap (a plain store in hg_aset_add was caught so, and missed
 * while the writer could finish first).
 */
#include <criterion/criterion.h>
#include <pthread.h>

#include "../../fastpath/dp.h"
#include "../../slowpath/registry.h"

#define ROUNDS 20000

/* ---- one writer, one reader: the active set (tenant.c adds and deletes,
 * tx.c's cold sweep walks it in laps) ---- */

static struct hg_aset active;
static int reader_in, writer_done;

static void *
add_and_del(void *arg)
{
	unsigned i;

	(void)arg;
	while (!__atomic_load_n(&reader_in, __ATOMIC_ACQUIRE))
		;	/* the reader walks while all of this runs */
	for (i = 0; i < ROUNDS; i++) {
		/* only even slots are ever members */
		hg_aset_add(&active, (i * 130u) % HG_MAX_TENANTS & ~1u);
		hg_aset_del(&active, (i * 70u) % HG_MAX_TENANTS & ~1u);
	}
	__atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(shared, a_lap_over_a_set_being_written_sees_members_only_and_ends)
{
	pthread_t w;
	unsigned laps = 0, start = 0;
	int t, steps;

	hg_aset_add(&active, 2);
	cr_assert_eq(pthread_create(&w, NULL, add_and_del, NULL), 0);
	while (!__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE) || laps < 10) {
		steps = 0;
		for (t = hg_aset_next(&active, start); t >= 0;
		     t = hg_aset_lap_next(&active, t, start)) {
			cr_assert(t < (int)HG_MAX_TENANTS && t % 2 == 0, "%d", t);
			cr_assert(++steps <= (int)HG_MAX_TENANTS, "a lap ends");
		}
		__atomic_store_n(&reader_in, 1, __ATOMIC_RELEASE);
		start = (start + 97) % HG_MAX_TENANTS;
		laps++;
	}
	pthread_join(w, NULL);
}

/* ---- many markers, one collector: the cores' touched sets (dp.h's
 * hg_touch; refill.c takes them each tick) ---- */

static struct hg_aset touched;
static int collector_in;

static void *
mark_all(void *arg)
{
	unsigned i, first = (unsigned)(uintptr_t)arg;

	while (!__atomic_load_n(&collector_in, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < ROUNDS; i++)
		hg_aset_mark(&touched, (first + i * 7u) % HG_MAX_TENANTS);
	return NULL;
}

Test(shared, every_mark_is_taken_by_the_collector)
{
	struct hg_tset got = { 0 };
	pthread_t m[2];
	unsigned t;

	cr_assert_eq(pthread_create(&m[0], NULL, mark_all, (void *)0), 0);
	cr_assert_eq(pthread_create(&m[1], NULL, mark_all, (void *)3), 0);
	for (t = 0; t < ROUNDS / 10; t++) {
		hg_aset_take(&touched, &got);
		__atomic_store_n(&collector_in, 1, __ATOMIC_RELEASE);
	}
	pthread_join(m[0], NULL);
	pthread_join(m[1], NULL);
	hg_aset_take(&touched, &got);
	cr_assert(hg_aset_empty(&touched));
	/* 7 is prime to 4096: ROUNDS steps of 7 from 0 and from 3 cover all */
	for (t = 0; t < HG_MAX_TENANTS; t++)
		cr_assert(hg_tset_has(&got, t), "tenant %u's mark was lost", t);
}

/* ---- a budget: the core's three words, the slow path's rate and cap ---- */

static struct hg_budget bud;
static struct hg_tenant_live pub;
static int slow_in, core_done;

static void *
core_side(void *arg)
{
	uint64_t now = 1;
	unsigned i;

	(void)arg;
	while (!__atomic_load_n(&slow_in, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < ROUNDS; i++, now += 100) {
		int64_t left = hg_budget_left(&bud, __atomic_load_n(&pub.rate, __ATOMIC_RELAXED),
					      __atomic_load_n(&pub.cap_auto, __ATOMIC_RELAXED), now);

		if (left > 0)
			hg_budget_charge(&bud, 50);
	}
	__atomic_store_n(&core_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(shared, the_slow_path_peeks_at_a_budget_the_core_writes)
{
	pthread_t c;
	uint64_t cap = 15000;
	int64_t left;

	__atomic_store_n(&pub.rate, HG_RATE_ONE / 2, __ATOMIC_RELAXED);
	__atomic_store_n(&pub.cap_auto, cap, __ATOMIC_RELAXED);
	cr_assert_eq(pthread_create(&c, NULL, core_side, NULL), 0);
	while (!__atomic_load_n(&core_done, __ATOMIC_ACQUIRE)) {
		left = hg_budget_peek(&bud, HG_RATE_ONE / 2, 20000, 1ull << 40);
		/* a torn read would show as a budget far outside the caps */
		cr_assert(left <= 20000 && left > -100000, "%ld", (long)left);
		cap = cap == 15000 ? 20000 : 15000;
		__atomic_store_n(&pub.cap_auto, cap, __ATOMIC_RELAXED);
		__atomic_store_n(&slow_in, 1, __ATOMIC_RELEASE);
	}
	pthread_join(c, NULL);
}

/* ---- a tenant's view: the slow path publishes new ones while a core
 * reads (publish.c, tenant_view.h) ---- */

#include <rte_rcu_qsbr.h>

#include "../../slowpath/publish.h"

static struct hg_registry *vreg;
static int views_done;
static unsigned views_seen;
static const char *view_bad;	/* what the core found wrong, if anything */

/* A core: reads tenant 0's view in each pass and reports a quiescent
 * point between passes, as loop.c does. A view is one whole: every
 * setting it holds was published together. */
static void *
core_reads_views(void *arg)
{
	struct hg_dp *dp = vreg->dp;
	const struct hg_tenant_view *v;

	(void)arg;
	rte_rcu_qsbr_thread_online(dp->qs, 0);
	while (!__atomic_load_n(&views_done, __ATOMIC_ACQUIRE) && view_bad == NULL) {
		rte_rcu_qsbr_quiescent(dp->qs, 0);
		v = hg_view(dp, 0);
		if (v->state == HG_TENANT_ACTIVE) {
			if (v->quantum != 1000u * v->weight)
				view_bad = "a torn view";
			else if (v->rpc_lo != v->rpc_hi)
				view_bad = "a torn port range";
			else if (v->map.n_live != v->weight % HG_MAX_CTX)
				view_bad = "a torn context map";
			views_seen++;
		}
		__atomic_store_n(&slow_in, 1, __ATOMIC_RELEASE);
	}
	rte_rcu_qsbr_thread_offline(dp->qs, 0);
	return NULL;
}

Test(shared, a_core_sees_whole_views_and_the_old_ones_are_freed_after_it_passed)
{
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	pthread_t core;
	unsigned i;

	vreg = calloc(1, sizeof(*vreg));
	cr_assert(vreg != NULL);
	vreg->dp = hg_dp_new(1);
	cr_assert(vreg->dp != NULL);
	vreg->dp->qs = calloc(1, sz);
	cr_assert(vreg->dp->qs != NULL && rte_rcu_qsbr_init(vreg->dp->qs, 1) == 0);
	cr_assert_eq(rte_rcu_qsbr_thread_register(vreg->dp->qs, 0), 0);
	vreg->t[0].state = HG_TENANT_ACTIVE;
	cr_assert_eq(pthread_create(&core, NULL, core_reads_views, NULL), 0);
	while (!__atomic_load_n(&slow_in, __ATOMIC_ACQUIRE))
		;
	for (i = 1; i <= ROUNDS / 4; i++) {
		struct hg_tenant_sp *t = &vreg->t[0];

		t->cfg.weight = i;
		t->cfg.cap = 1000u * i;
		t->cfg.credit.rpc_lo = t->cfg.credit.rpc_hi = i % 65536;
		t->map.n_live = i % HG_MAX_CTX;
		cr_assert_eq(hg_publish_view(vreg, 0), 0);
		hg_publish_reclaim(vreg);
		cr_assert(vreg->n_retired <= HG_RETIRED_MAX, "bounded: a full list waits");
	}
	__atomic_store_n(&views_done, 1, __ATOMIC_RELEASE);
	pthread_join(core, NULL);
	cr_assert(view_bad == NULL, "%s", view_bad);
	cr_assert(views_seen > 0);
	hg_publish_reclaim(vreg);
	cr_assert_eq(vreg->n_retired, 0, "once the core is offline, all go");
	hg_publish_fini(vreg);
	free(vreg->dp->qs);
	vreg->dp->qs = NULL;
	hg_dp_free(vreg->dp);
	free(vreg);
}

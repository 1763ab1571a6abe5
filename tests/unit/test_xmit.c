/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The NIC send's billing (xmit.c) against a daemon state of the test's own
 * and a memif link whose peer posted no buffer: a frame the link refuses
 * is kept for the next flush, and nobody is billed for the refusal. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../../fastpath/link.h"
#include "../../fastpath/memif.h"
#include "../../fastpath/xmit.h"

#define VICTIM 0

static struct hg_dp *dp;
static struct hg_fp_core *c;
static struct hg_mif mif;
static struct hg_mif_conn *conn;
static struct hg_memif_ring ring;

static void
setup(void)
{
	dp = hg_dp_new(1);
	cr_assert(dp != NULL);
	c = &dp->core[0];
	conn = calloc(1, sizeof(*conn));
	cr_assert(conn != NULL);
	/* the peer's S2C ring: no buffer posted (head == next), i.e. full */
	conn->n_tx = 1;
	conn->tx[0] = (struct hg_mif_ring){ .ring = &ring, .mask = 1023, .efd = -1 };
	mif.conn = conn;
	dp->mif = &mif;
}

static void
teardown(void)
{
	c->stage.n = 0;		/* the test's frames are not mbufs */
	dp->mif = NULL;
	free(conn);
	hg_dp_free(dp);
}

TestSuite(xmit, .init = setup, .fini = teardown);

/* What bench/isolation's shared queue showed: a victim's answer kept
 * behind a neighbour's full ring was billed a share of every flush it
 * waited through, its tenant ran into debt, and its next datagrams were
 * shed as rx_over_budget beside its nic_tx_full drops. */
Test(xmit, a_frame_the_link_refuses_is_kept_and_billed_to_nobody)
{
	static struct rte_mbuf fake;	/* never sent: only its length is read */
	struct rte_mbuf *m = &fake;
	uint64_t before;

	fake.data_len = 64;

	hg_fp_xmit(dp, c, &m, 1, VICTIM, HG_PT_SCHED, 1);
	before = c->unattributed;
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(hg_fp_flush(dp, c), 0);
	cr_assert_eq(c->stage.n, 1, "kept for the next flush");
	cr_assert_eq(c->t[VICTIM].cycles[HG_PT_SCHED], 0);
	cr_assert_eq(c->t[VICTIM].bud.consumed, 0, "no debt for the link's refusals");
	cr_assert_gt(c->unattributed, before, "the calls were the core's");
	cr_assert_eq(c->flushes, 1000);
}

/* What bench/isolation's shared queue showed (225 nic_tx_full drops of
 * a funded victim in one step): its 64 B answers, released in a clump
 * after waiting behind the ring, outnumbered a neighbour's 1400 B ones
 * in the stage, and the tenant with the most frames staged lost them.
 * The one with the most bytes staged loses. */
Test(xmit, the_link_refuses_the_tenant_with_the_most_bytes_first)
{
	struct hg_tx_stage *s = &c->stage;
	unsigned i;

	for (i = 0; i < 10; i++)
		s->who[s->n++] = (struct hg_stage_who){ .tenant = VICTIM, .len = 64 };
	for (i = 0; i < 4; i++)
		s->who[s->n++] = (struct hg_stage_who){ .tenant = 1, .len = 1400 };
	s->of[VICTIM] = 10;
	s->bytes[VICTIM] = 640;
	s->of[1] = 4;
	s->bytes[1] = 5600;
	s->heavy = VICTIM;
	cr_assert_eq(hg_stage_loser(c), 1, "more bytes, though fewer frames");
	s->bytes[1] = 600;
	cr_assert_eq(hg_stage_loser(c), VICTIM);
	s->n = 0;
}

/* What bench/isolation's queues of their own showed: at a flush in queue
 * order, a victim's one answer on its ring waited for the copy of a
 * flood's 32 frames of 1400 B into the ring before it, and for that
 * ring's wake-up. The ring with the fewest frames goes first; equal ones
 * in queue order; every ring once. */
Test(xmit, a_flush_sends_the_ring_with_fewest_frames_first)
{
	const uint16_t frames[] = { 0, 32, 1, 5, 1 };
	const uint8_t want[] = { 0, 2, 4, 3, 1 };
	uint8_t order[RTE_DIM(frames)];
	unsigned i;

	hg_flush_order(frames, RTE_DIM(frames), order);
	for (i = 0; i < RTE_DIM(frames); i++)
		cr_assert_eq(order[i], want[i], "place %u: queue %u, not %u", i, order[i], want[i]);
	hg_flush_order(frames, 1, order);
	cr_assert_eq(order[0], 0);
}

/* Each tenant's frames leave by its TX group's ring on every core, the
 * core's own (ARP) by group 0's, whatever the RX queues; per tenant only
 * where the peer gave a ring per group on every core. */
Test(xmit, a_tenants_frames_leave_by_its_tx_groups_ring)
{
	static struct hg_tenant_view v[2] = { { .txq = 2 }, { .txq = 1 } };
	struct hg_dp *two = hg_dp_new(2);

	cr_assert(two != NULL);
	two->view[0] = &v[0];
	two->view[1] = &v[1];
	two->txq_per_core = 3;
	cr_assert_eq(hg_link_txq(two, 0), 2);
	cr_assert_eq(hg_link_txq(two, 1), 1);
	cr_assert_eq(hg_link_txq(two, -1), 0, "the core's own frames");
	cr_assert_eq(hg_link_tx_ring(two, &two->core[1], hg_link_txq(two, 0)), 3 + 2);
	cr_assert(!hg_link_tx_per_tenant(two), "no memif link");
	two->mif = &mif;
	conn->n_tx = 5;
	cr_assert(!hg_link_tx_per_tenant(two), "5 rings: not 3 on each of 2 cores");
	conn->n_tx = 6;
	cr_assert(hg_link_tx_per_tenant(two));
	two->txq_per_core = 1;
	cr_assert(!hg_link_tx_per_tenant(two), "one group: the core's ring");
	two->mif = NULL;
	two->view[0] = two->view[1] = &hg_view_none;
	hg_dp_free(two);
}

/* A peer asleep on its ring is woken once ahead of the frames on their
 * way to it, not once per look, and only if its ring has been quiet; a
 * peer that polls (its ring masked) is never written to. */
Test(xmit, a_sleeping_peer_is_kicked_once_ahead_of_its_frames)
{
	const uint64_t quiet = 1000, sent = 5000;
	uint64_t v = 0;
	int efd = eventfd(0, EFD_NONBLOCK);

	cr_assert(efd >= 0);
	conn->tx[0].efd = efd;
	conn->tx[0].sent_tsc = sent;
	ring.flags = 0;
	hg_mif_kick_ahead(&mif, 0, sent + quiet - 1, quiet);
	cr_assert_eq(read(efd, &v, sizeof(v)), -1, "frames went out just now: no kick");
	hg_mif_kick_ahead(&mif, 0, sent + quiet, quiet);
	hg_mif_kick_ahead(&mif, 0, sent + quiet + 1, quiet);
	cr_assert_eq(read(efd, &v, sizeof(v)), sizeof(v));
	cr_assert_eq(v, 1, "one write for two looks, not %" PRIu64, v);
	cr_assert_eq(conn->tx[0].kicks, 1);
	hg_mif_kick_ahead(&mif, 1, sent + quiet, quiet);	/* a ring the peer did not give */
	conn->tx[0].ahead = 0;		/* as a send leaves it */
	ring.flags = HG_MEMIF_RING_FLAG_MASK_INT;
	hg_mif_kick_ahead(&mif, 0, sent + quiet, quiet);
	cr_assert_eq(read(efd, &v, sizeof(v)), -1, "a masked ring is not kicked");
	cr_assert_eq(conn->tx[0].kicks, 1);
	conn->tx[0].efd = -1;
	close(efd);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The marks RX sets in an XDP program's hg_shed map (xdp_shed.h), against
 * a daemon state of the test's own and plain arrays for the maps: a mark
 * goes where the program looks for it, stays while RX would shed the
 * tenant, and goes the first pass it would not. And the rings' counts: a
 * core counts what it takes against the slots the program counted it
 * against, and sets them even when a ring is empty. */
#include <stdlib.h>

#include <criterion/criterion.h>

#include "../../fastpath/xdp_shed.h"
#include "../../slowpath/xdp_link.h"
#include "flood_pair.h"
#include "frames.h"

#define DEV_QUEUE 3

static struct hg_dp *dp;
static struct hg_fp_core *c;
static struct hg_tenant_view view[2];
static uint64_t *shed, *passed, *taken, *ports;

static void
setup(void)
{
	dp = hg_dp_new(1);
	cr_assert(dp != NULL);
	shed = calloc(HG_XDP_QUEUES * HG_XDP_TENANTS, sizeof(*shed));
	passed = calloc(HG_XDP_QUEUES * HG_XDP_SLOTS, sizeof(*passed));
	taken = calloc(HG_XDP_QUEUES * HG_XDP_SLOTS, sizeof(*taken));
	ports = calloc(HG_XDP_PORTS, sizeof(*ports));
	cr_assert(shed && passed && taken && ports);
	dp->xdp.shed = shed;
	dp->xdp.passed = passed;
	dp->xdp.taken = taken;
	dp->xdp.ports = ports;
	dp->ip = OUR_IP;
	c = flood_pair(dp, view);
	c->n_rxq = 1;
	c->rxq[0].dev_queue = DEV_QUEUE;
	dp->n_active = 2;
	/* saturated, and another tenant's datagrams came in just now */
	c->last_empty = c->now - 5000 * US;
	c->busy_streak = 10000;
	c->rx_mixed = c->now;
}

static void
teardown(void)
{
	dp->xdp.shed = NULL;
	free(shed);
	free(passed);
	free(taken);
	free(ports);
	hg_dp_free(dp);
}

TestSuite(xdp_shed, .init = setup, .fini = teardown);

static uint64_t
word(unsigned t)
{
	return shed[HG_XDP_SHED_KEY(DEV_QUEUE, t)];
}

Test(xdp_shed, a_mark_lands_on_the_queue_the_program_sees)
{
	hg_xdp_mark(dp, c, 0, FLOOD);
	cr_assert_eq(word(FLOOD), 1);
	cr_assert_eq(shed[HG_XDP_SHED_KEY(0, FLOOD)], 0, "not another queue's");
	cr_assert(hg_tset_has(&c->xdp_marked, FLOOD));
	hg_xdp_mark(dp, c, 0, FLOOD);
	cr_assert_eq(c->xdp_marks, 1, "a mark is set once");
}

Test(xdp_shed, it_stays_while_rx_would_shed_and_goes_when_funded)
{
	hg_xdp_mark(dp, c, 0, FLOOD);
	cr_assert_eq(hg_xdp_review(dp, c), 0);
	cr_assert_eq(word(FLOOD), 1);
	c->t[FLOOD].bud.consumed = 0;		/* refilled */
	cr_assert_eq(hg_xdp_review(dp, c), 1);
	cr_assert_eq(word(FLOOD), 0);
	cr_assert(hg_tset_empty(&c->xdp_marked));
}

Test(xdp_shed, a_core_with_time_to_spare_lifts_it)
{
	hg_xdp_mark(dp, c, 0, FLOOD);
	c->last_empty = c->now - 400 * US;	/* an empty pass 400 us ago */
	cr_assert_eq(hg_xdp_review(dp, c), 1);
	cr_assert_eq(word(FLOOD), 0);
}

Test(xdp_shed, nobody_else_with_work_lifts_it)
{
	hg_xdp_mark(dp, c, 0, FLOOD);
	c->rx_mixed = c->now - 2000 * US;	/* only the flood arrives */
	cr_assert_eq(hg_xdp_review(dp, c), 1);
	/* ... unless a funded tenant's answers wait */
	hg_xdp_mark(dp, c, 0, FLOOD);
	hg_tset_add(&c->pend, VICTIM);
	cr_assert_eq(hg_xdp_review(dp, c), 0);
	cr_assert_eq(word(FLOOD), 1);
}

Test(xdp_shed, protection_off_or_a_lone_tenant_lifts_it)
{
	hg_xdp_mark(dp, c, 0, FLOOD);
	dp->live.protection = 0;
	cr_assert_eq(hg_xdp_review(dp, c), 1);
	dp->live.protection = 1;
	hg_xdp_mark(dp, c, 0, FLOOD);
	dp->n_active = 1;
	cr_assert_eq(hg_xdp_review(dp, c), 1);
	cr_assert_eq(word(FLOOD), 0);
}

Test(xdp_shed, no_map_no_mark)
{
	dp->xdp.shed = NULL;
	hg_xdp_mark(dp, c, 0, FLOOD);
	cr_assert(hg_tset_empty(&c->xdp_marked));
	cr_assert_eq(hg_xdp_review(dp, c), 0);
}

/* A full app ring: the tenant's next datagrams are dropped in the driver
 * for HG_XDP_FULL_US, funded or not; never for a tenant with RPC ports. */
Test(xdp_shed, a_full_ring_marks_for_a_while)
{
	c->t[VICTIM].bud.consumed = 0;		/* funded */
	hg_xdp_mark_full(dp, c, 0, VICTIM);
	cr_assert_eq(word(VICTIM), 1);
	cr_assert_eq(hg_xdp_review(dp, c), 0, "it stands");
	c->now += (HG_XDP_FULL_US + 1) * US;
	c->last_empty = c->now - 5000 * US;
	c->rx_mixed = c->now;
	cr_assert_eq(hg_xdp_review(dp, c), 1, "then RX looks again");
	cr_assert_eq(word(VICTIM), 0);
	view[VICTIM].rpc_lo = view[VICTIM].rpc_hi = 7000;
	hg_xdp_mark_full(dp, c, 0, VICTIM);
	cr_assert_eq(word(VICTIM), 0, "an RPC client is owed a reject");
}

/* ---- ring shares ---- */

static uint64_t
took(unsigned slot)
{
	return taken[HG_XDP_RING_KEY(DEV_QUEUE, slot)];
}

/* n frames as net_af_xdp hands them: UDP to port dport, or (dport 0) an
 * ARP request */
static unsigned
burst(struct rte_mbuf *m, struct rte_mbuf **pkts, uint8_t (*buf)[128], unsigned n,
      uint16_t dport)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = make_udp(buf[i], "x", 1);

		if (dport == 0)
			buf[i][12] = 0x08, buf[i][13] = 0x06;	/* ARP */
		else
			buf[i][36] = (uint8_t)(dport >> 8), buf[i][37] = (uint8_t)dport;
		m[i] = (struct rte_mbuf){ .buf_addr = buf[i], .data_len = (uint16_t)len };
		pkts[i] = &m[i];
	}
	return n;
}

Test(xdp_shed, a_burst_is_counted_against_the_slots_the_program_counts)
{
	static struct rte_mbuf m[8];
	static uint8_t buf[8][128];
	struct rte_mbuf *pkts[8];

	ports[7000] = FLOOD + 1;
	ports[8000] = VICTIM + 1;
	burst(m, pkts, buf, 3, 7000);
	burst(m + 3, pkts + 3, buf + 3, 1, 8000);
	burst(m + 4, pkts + 4, buf + 4, 1, 9000);	/* nobody's port */
	burst(m + 5, pkts + 5, buf + 5, 1, 0);		/* ARP */
	burst(m + 6, pkts + 6, buf + 6, 2, 7000);
	hg_xdp_took(dp, &c->rxq[0], pkts, 8, 0);
	cr_assert_eq(took(FLOOD), 5);
	cr_assert_eq(took(VICTIM), 1);
	cr_assert_eq(took(HG_XDP_OTHER), 2);
	cr_assert_eq(took(HG_XDP_TOTAL), 8, "the ring's whole count");
	cr_assert_eq(taken[HG_XDP_RING_KEY(0, FLOOD)], 0, "not another queue's");
	cr_assert(hg_tset_has(&c->rxq[0].xdp_held, FLOOD) &&
		  hg_tset_has(&c->rxq[0].xdp_held, VICTIM));
	cr_assert(c->rxq[0].xdp_other_held);
}

/* The program counted 10 of the flood's, the kernel dropped 4 of them at
 * a full ring: once the core finds the ring empty, the flood holds none. */
Test(xdp_shed, an_empty_ring_sets_the_counts_even)
{
	static struct rte_mbuf m[2];
	static uint8_t buf[2][128];
	struct rte_mbuf *pkts[2];

	ports[7000] = FLOOD + 1;
	passed[HG_XDP_RING_KEY(DEV_QUEUE, FLOOD)] = 10;
	passed[HG_XDP_RING_KEY(DEV_QUEUE, HG_XDP_TOTAL)] = 11;
	burst(m, pkts, buf, 2, 7000);
	hg_xdp_took(dp, &c->rxq[0], pkts, 2, 0);
	hg_xdp_took(dp, &c->rxq[0], pkts, 2, 0);
	cr_assert_eq(took(FLOOD), 4, "a full burst: more may wait");
	hg_xdp_took(dp, &c->rxq[0], pkts, 2, 1);
	cr_assert_eq(took(FLOOD), 10, "drained: even with what the program counted");
	cr_assert_eq(took(HG_XDP_TOTAL), 11);
	cr_assert(hg_tset_empty(&c->rxq[0].xdp_held), "until it takes more");
	passed[HG_XDP_RING_KEY(DEV_QUEUE, FLOOD)] = 12;
	hg_xdp_took(dp, &c->rxq[0], pkts, 0, 1);
	cr_assert_eq(took(FLOOD), 10, "an idle pass writes nothing");
}

/* Two tenants at 3:1 on a ring that holds 1,024 frames: the depth less no
 * tenant's 64 split by weight; a tenant that is not active, or whose
 * weight's part is tiny, may hold 32; the ring backs up at half. */
Test(xdp_shed, shares_are_the_weights_parts_of_the_depth)
{
	uint64_t w = 4 * HG_WEIGHT_ONE;

	cr_assert_eq(hg_xdp_share(1024, 0, 1, 3 * HG_WEIGHT_ONE, w), 720);
	cr_assert_eq(hg_xdp_share(1024, 1, 1, HG_WEIGHT_ONE, w), 240);
	cr_assert_eq(hg_xdp_share(1024, 2, 0, HG_WEIGHT_ONE, w), 32);
	cr_assert_eq(hg_xdp_share(1024, 3, 1, 1, w), 32);
	cr_assert_eq(hg_xdp_share(1024, HG_XDP_OTHER, 0, 0, w), 64);
	cr_assert_eq(hg_xdp_share(1024, HG_XDP_TOTAL, 0, 0, w), 512);
	cr_assert_eq(hg_xdp_share(1024, 0, 1, HG_WEIGHT_ONE, 0), 32, "no weights: the least");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * rte_flow rules for per-tenant RX queues (flow_rules.h).
 */
#include <stdio.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include "flow_rules.h"

/* One rule's description, built on the caller's stack. */
struct flow_desc {
	struct rte_flow_attr attr;
	struct rte_flow_item_udp spec, last, mask;
	struct rte_flow_item pattern[4];
	struct rte_flow_action_queue queue;
	struct rte_flow_action_rss rss;
	uint16_t queues[HG_MAX_FP_CORES];
	struct rte_flow_action actions[2];
};

static void
describe(struct flow_desc *d, const struct hg_dp *dp, uint32_t lo, uint32_t hi,
	 uint32_t group)
{
	uint32_t c;

	memset(d, 0, sizeof(*d));
	d->attr.ingress = 1;
	d->spec.hdr.dst_port = rte_cpu_to_be_16((uint16_t)lo);
	d->last.hdr.dst_port = rte_cpu_to_be_16((uint16_t)hi);
	d->mask.hdr.dst_port = RTE_BE16(0xffff);
	d->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	d->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	d->pattern[2] = (struct rte_flow_item){
		.type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &d->spec,
		.last = lo == hi ? NULL : &d->last, .mask = &d->mask };
	d->pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
	for (c = 0; c < dp->n_cores; c++)
		d->queues[c] = (uint16_t)(c * dp->rxq_per_core + group);
	if (dp->n_cores == 1) {
		d->queue.index = d->queues[0];
		d->actions[0] = (struct rte_flow_action){
			.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &d->queue };
	} else {
		d->rss = (struct rte_flow_action_rss){
			.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP,
			.queue_num = dp->n_cores, .queue = d->queues };
		d->actions[0] = (struct rte_flow_action){
			.type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &d->rss };
	}
	d->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

static void
say(const struct rte_flow_error *e, int rc, char *err, size_t n)
{
	snprintf(err, n, "%s", e->message != NULL ? e->message : rte_strerror(-rc));
}

int
hg_flow_probe(const struct hg_dp *dp, char *err, size_t n)
{
	struct rte_flow_error e = { 0 };
	struct flow_desc d;
	int rc;

	describe(&d, dp, 1, 1, dp->rxq_per_core - 1);
	rc = rte_flow_validate(dp->port_id, &d.attr, d.pattern, d.actions, &e);
	if (rc < 0)
		say(&e, rc, err, n);
	return rc;
}

struct rte_flow *
hg_flow_steer(const struct hg_dp *dp, uint32_t lo, uint32_t hi, uint32_t group,
	      char *err, size_t n)
{
	struct rte_flow_error e = { 0 };
	struct rte_flow *f;
	struct flow_desc d;

	describe(&d, dp, lo, hi, group);
	f = rte_flow_create(dp->port_id, &d.attr, d.pattern, d.actions, &e);
	if (f == NULL)
		say(&e, -rte_errno, err, n);
	return f;
}

void
hg_flow_remove(const struct hg_dp *dp, struct rte_flow *f)
{
	struct rte_flow_error e;

	if (f != NULL)
		rte_flow_destroy(dp->port_id, f, &e);
}

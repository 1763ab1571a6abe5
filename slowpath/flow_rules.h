/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A NIC's rte_flow rules that give a tenant's UDP ports an RX queue of
 * their own on every fast-path core (design.md §3). Where the NIC refuses
 * them (hg_flow_probe), the port falls back to one shared queue per core.
 */
#ifndef HG_SLOWPATH_FLOW_RULES_H
#define HG_SLOWPATH_FLOW_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "../fastpath/dp.h"

struct rte_flow;

/* Does the NIC take a rule of the kind hg_flow_steer installs? 0 or a
 * negative errno, with the NIC's reason in err. */
int hg_flow_probe(const struct hg_dp *dp, char *err, size_t n);

/* Steers UDP datagrams to ports lo..hi to RX queue `group` of each core
 * (one queue: a QUEUE action; several cores: RSS over their queues, so a
 * flow stays on one core). NULL on failure, with the reason in err. */
struct rte_flow *hg_flow_steer(const struct hg_dp *dp, uint32_t lo, uint32_t hi,
			       uint32_t group, char *err, size_t n);

void hg_flow_remove(const struct hg_dp *dp, struct rte_flow *f);

#endif /* HG_SLOWPATH_FLOW_RULES_H */

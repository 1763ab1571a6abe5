/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_PORT_H
#define HG_SLOWPATH_PORT_H

#include "../fastpath/dp.h"

/* Configures and starts the first port: a TX queue per fast-path core,
 * --rx-queues RX queues per core where the link steers (port.c), and the
 * cores' queue lists. */
int hg_port_init(struct hg_dp *dp, struct rte_mempool *pool);
void hg_port_fini(struct hg_dp *dp);

/* "shared queue", "memif peer" or "rte_flow". */
const char *hg_port_steering(const struct hg_dp *dp);

#endif /* HG_SLOWPATH_PORT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_PORT_H
#define HG_SLOWPATH_PORT_H

#include "../fastpath/dp.h"

/* Configures and starts the first port with dp->n_cores queue pairs. */
int hg_port_init(struct hg_dp *dp, struct rte_mempool *pool);
void hg_port_fini(struct hg_dp *dp);

#endif /* HG_SLOWPATH_PORT_H */

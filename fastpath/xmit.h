/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The NIC send (xmit.c), shared by SCHED, RX's replies and the credit
 * updates.
 */
#ifndef HG_FASTPATH_XMIT_H
#define HG_FASTPATH_XMIT_H

#include "dp.h"

/* Transmits n mbufs, frees and counts what the NIC refused; returns the
 * cycles spent in the PMD. */
uint64_t hg_fp_xmit(struct hg_dp *dp, struct hg_fp_core *c, struct rte_mbuf **m,
		    unsigned n, uint64_t *drop_ctr);

#endif /* HG_FASTPATH_XMIT_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fast path's construction (fp_init.c), after EAL and hg_dp_new and
 * before the port and the cores start. What EAL allocates here lives as
 * long as the daemon: rte_eal_cleanup returns it.
 */
#ifndef HG_FASTPATH_FP_INIT_H
#define HG_FASTPATH_FP_INIT_H

#include <stdint.h>

#include "dp.h"

struct hg_fp_params {
	uint32_t sessions;	/* RPC session slots per core (--sessions) */
	uint32_t link_bufs;	/* mbufs the link's queues keep for
				 * themselves (net_af_xdp's fill rings) */
};

/* Builds every part; on failure returns -1 with *failed naming the part
 * (most often out of EAL memory: a larger -m helps). */
int hg_fp_init(struct hg_dp *dp, const struct hg_fp_params *prm, const char **failed);

#endif /* HG_FASTPATH_FP_INIT_H */

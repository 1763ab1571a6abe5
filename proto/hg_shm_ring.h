/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared rings' layout against DPDK's struct rte_ring: the region
 * (hg_shm.h) keeps a ring's geometry out of the shared pages and relies on
 * where rte_ring's producer head starts. The daemon (region.c) and the
 * library (attach.c) both include this, so both builds check it.
 */
#ifndef HG_PROTO_SHM_RING_H
#define HG_PROTO_SHM_RING_H

#include <stddef.h>

#include <rte_ring.h>

#include "hg_shm.h"

_Static_assert(offsetof(struct rte_ring, prod) == HG_RING_GEOM_BYTES,
	       "struct rte_ring layout changed: update HG_RING_GEOM_BYTES");

#endif /* HG_PROTO_SHM_RING_H */

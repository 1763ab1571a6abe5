/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the EAL-backed fuzz targets share: EAL without hugepages or a NIC,
 * and a daemon state (struct hg_dp) with one fast-path core that the
 * target drives by hand instead of from an lcore. */
#ifndef HG_FUZZ_ENV_H
#define HG_FUZZ_ENV_H

#include "../../fastpath/dp.h"
#include "../../slowpath/tenant.h"

#define FUZZ_IP RTE_BE32(0xC6120001)	/* 198.18.0.1/24 */

/* Starts EAL once and builds the daemon state; exits on failure. */
struct hg_dp *fuzz_env(void);

/* Deletes every tenant and lets core 0 and the registry finish the
 * releases; traps if a slot stays used. */
void fuzz_del_all(struct hg_registry *reg);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon state's memory. Sized for HG_MAX_TENANTS (4,096) tenants,
 * it is tens of megabytes of which an idle daemon touches a few pages:
 * anonymous mappings hand out zero pages on first touch, so memory follows
 * the tenants in use. None of it is shared with the NIC or another process,
 * so it need not live in DPDK's (hugepage) heap.
 */
#include <sys/mman.h>

#include <rte_cycles.h>
#include <rte_debug.h>

#include "dp.h"

_Thread_local uint32_t hg_role = HG_ROLE_ANY;

/* Every free slot's view: state FREE, no ports, no contexts. */
const struct hg_tenant_view hg_view_none = { .state = HG_TENANT_FREE };

static void *
zero_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t
tenants_len(void)
{
	return (size_t)HG_MAX_TENANTS * sizeof(struct hg_fp_tenant);
}

struct hg_dp *
hg_dp_new(uint32_t n_cores)
{
	struct hg_dp *dp;
	uint32_t i;

	if (n_cores == 0 || n_cores > HG_MAX_FP_CORES)
		return NULL;
	dp = zero_map(sizeof(*dp));
	if (dp == NULL)
		return NULL;
	dp->n_cores = n_cores;
	dp->core = zero_map(n_cores * sizeof(*dp->core));
	if (dp->core == NULL)
		goto fail;
	for (i = 0; i < n_cores; i++) {
		dp->core[i].idx = i;
		dp->core[i].tsc_us = rte_get_tsc_hz() / 1000000;
		dp->core[i].nap_ep = dp->core[i].wake_fd = -1;
		dp->core[i].t = zero_map(tenants_len());
		if (dp->core[i].t == NULL)
			goto fail;
	}
	for (i = 0; i < HG_MAX_TENANTS; i++)
		dp->view[i] = &hg_view_none;
	hg_dp_set_rxq(dp, HG_RX_SHARED, 1);
	dp->txq_per_core = 1;
	return dp;
fail:
	hg_dp_free(dp);
	return NULL;
}

void
hg_dp_set_rxq(struct hg_dp *dp, enum hg_rx_steer steer, uint32_t per_core)
{
	uint32_t c, g;

	dp->rx_steer = (uint32_t)steer;
	dp->rxq_per_core = per_core;
	for (c = 0; c < dp->n_cores; c++) {
		struct hg_fp_core *fc = &dp->core[c];

		fc->n_rxq = per_core;
		fc->tx_port = dp->port_id;
		fc->tx_queue = (uint16_t)c;
		for (g = 0; g < per_core; g++)
			fc->rxq[g] = (struct hg_rxq){
				.port = dp->port_id, .id = (uint16_t)(c * per_core + g),
				.group = (uint16_t)g, .unfunded = -1, .tenant = -1 };
	}
}

void
hg_dp_spread_rxq(struct hg_dp *dp, const struct hg_devq *q, uint32_t n)
{
	uint32_t c, i;

	RTE_VERIFY(n >= dp->n_cores && n <= dp->n_cores * HG_MAX_RXQ);
	dp->rx_steer = HG_RX_SHARED;
	dp->rxq_per_core = 1;		/* one tenants' group: every queue */
	for (c = 0; c < dp->n_cores; c++) {
		dp->core[c].n_rxq = 0;
		dp->core[c].tx_port = q[c].port;
		dp->core[c].tx_queue = q[c].queue;
	}
	for (i = 0; i < n; i++) {
		struct hg_fp_core *fc = &dp->core[i % dp->n_cores];

		fc->rxq[fc->n_rxq++] = (struct hg_rxq){
			.port = q[i].port, .id = q[i].queue, .group = 0,
			.unfunded = -1, .tenant = -1 };
	}
}

void
hg_dp_free(struct hg_dp *dp)
{
	uint32_t i;

	if (dp == NULL)
		return;
	if (dp->core != NULL) {
		for (i = 0; i < dp->n_cores; i++)
			if (dp->core[i].t != NULL)
				munmap(dp->core[i].t, tenants_len());
		munmap(dp->core, dp->n_cores * sizeof(*dp->core));
	}
	munmap(dp, sizeof(*dp));
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Builds the fast path's parts in EAL memory before the cores start, one
 * step per part in a table, as Caladan's iok_init_handlers: the order is
 * read in one place, and the first step that fails names itself.
 */
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "dp.h"
#include "fp_init.h"

#define HG_CMD_RING 8192u	/* a full ring defers commands (tenant.c) */

/* mbufs for every core's RX and TX, at least 4,095 per core, beside
 * those the link's queues keep: a net_af_xdp queue fills its ring with
 * 2,048 at setup, and a fourth vdev's setup found the pool empty */
static int
init_mbufs(struct hg_dp *dp, const struct hg_fp_params *prm)
{
	unsigned n = RTE_MAX(8191u, dp->n_cores * 4096u - 1) + prm->link_bufs;

	dp->mbufs = rte_pktmbuf_pool_create("hg_mbufs", n, 256, 0,
					    RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	return dp->mbufs == NULL ? -1 : 0;
}

/* one entry per host of the on-link prefix (neigh.h) */
static int
init_neigh(struct hg_dp *dp, const struct hg_fp_params *prm)
{
	size_t len = sizeof(uint64_t) << (32 - dp->prefix);

	(void)prm;
	dp->neigh = rte_zmalloc("hg_neigh", len, 0);
	dp->neigh_asked = rte_zmalloc("hg_neigh_asked", len, 0);
	dp->neigh_retry = rte_get_tsc_hz() / 10;
	dp->neigh_wait = rte_get_tsc_hz();
	return dp->neigh == NULL || dp->neigh_asked == NULL ? -1 : 0;
}

/* each core's RPC session table (credit_sessions.h) */
static int
init_sessions(struct hg_dp *dp, const struct hg_fp_params *prm)
{
	char name[32];
	uint32_t i;

	for (i = 0; i < dp->n_cores; i++) {
		snprintf(name, sizeof(name), "hg_sess%u", i);
		dp->core[i].sess = hg_sessions_create(name, prm->sessions,
						      (int)rte_socket_id());
		if (dp->core[i].sess == NULL)
			return -1;
	}
	return 0;
}

/* the slow path's command ring to each core */
static int
init_commands(struct hg_dp *dp, const struct hg_fp_params *prm)
{
	char name[32];
	uint32_t i;

	(void)prm;
	for (i = 0; i < dp->n_cores; i++) {
		snprintf(name, sizeof(name), "hg_cmd%u", i);
		dp->core[i].cmd = rte_ring_create_elem(name, sizeof(struct hg_cmd),
						       HG_CMD_RING, rte_socket_id(),
						       RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (dp->core[i].cmd == NULL)
			return -1;
	}
	return 0;
}

/* core i runs on the i-th worker lcore, queue i of the port */
static int
init_lcores(struct hg_dp *dp, const struct hg_fp_params *prm)
{
	uint32_t i = 0, lcore;

	(void)prm;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == dp->n_cores)
			break;
		dp->core[i].idx = i;
		dp->core[i].lcore = lcore;
		dp->core[i].rng = 0x9E3779B97F4A7C15ull * (i + 1);
		dp->core[i].pool = dp->mbufs;
		i++;
	}
	return i == dp->n_cores ? 0 : -1;
}

/* the cores' quiescent points (dp.h), one reader thread per core */
static int
init_quiescence(struct hg_dp *dp, const struct hg_fp_params *prm)
{
	size_t sz = rte_rcu_qsbr_get_memsize(dp->n_cores);
	uint32_t i;

	(void)prm;
	dp->qs = rte_zmalloc("hg_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (dp->qs == NULL || rte_rcu_qsbr_init(dp->qs, dp->n_cores) < 0)
		return -1;
	for (i = 0; i < dp->n_cores; i++)
		if (rte_rcu_qsbr_thread_register(dp->qs, i) < 0)
			return -1;
	return 0;
}

static const struct {
	const char *name;
	int (*init)(struct hg_dp *dp, const struct hg_fp_params *prm);
} steps[] = {
	{ "mbuf pool", init_mbufs },
	{ "neighbour table", init_neigh },
	{ "session tables", init_sessions },
	{ "command rings", init_commands },
	{ "quiescence", init_quiescence },
	{ "lcores", init_lcores },
};

int
hg_fp_init(struct hg_dp *dp, const struct hg_fp_params *prm, const char **failed)
{
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].init(dp, prm) < 0) {
			*failed = steps[i].name;
			return -1;
		}
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_hash.h>
#include <rte_mbuf.h>

#include "../../common/eal_dir.h"
#include "../../slowpath/config.h"
#include "fuzz_env.h"

static int
eal(void)
{
	char prefix[64];
	char *argv[] = { "fuzz", "--no-huge", "-m", "256", "--no-pci",
			 "--no-shconf", "--file-prefix", prefix, "--log-level", "0",
			 "-l", "0", NULL };

	snprintf(prefix, sizeof(prefix), "hgfuzz%d", (int)getpid());
	atexit(hg_eal_dir_remove_own);
	return rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
}

struct hg_dp *
fuzz_env(void)
{
	static struct hg_dp *dp;
	struct hg_fp_core *c;

	if (dp != NULL)
		return dp;
	if (eal() < 0) {
		fprintf(stderr, "fuzz: EAL init failed\n");
		exit(1);
	}
	hg_config_defaults();
	dp = hg_dp_new(1);
	if (dp == NULL)
		exit(1);
	c = &dp->core[0];
	dp->ip = FUZZ_IP;
	dp->prefix = 24;
	dp->netmask = 0xffffff00u;
	dp->port_id = RTE_MAX_ETHPORTS - 1;	/* no device: bursts do nothing */
	dp->live.protection = 1;
	dp->live.rx_drop = 1;
	/* static: dp is an anonymous mapping, which LeakSanitizer does not
	 * scan, so heap blocks only it points to would look leaked */
	static uint64_t neigh[256], neigh_asked[256];
	static struct hg_sessions *sess;

	dp->neigh = neigh;
	dp->neigh_asked = neigh_asked;
	dp->neigh_retry = rte_get_tsc_hz() / 10;
	dp->neigh_wait = rte_get_tsc_hz();
	c->rng = 1;
	c->pool = rte_pktmbuf_pool_create("fz_mbufs", 1023, 0, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	c->cmd = rte_ring_create_elem("fz_cmd", sizeof(struct hg_cmd), 1024, 0,
				      RING_F_SP_ENQ | RING_F_SC_DEQ);
	c->sess = sess = hg_sessions_create("fz_sess", HG_SESSIONS, 0);
	if (c->pool == NULL || c->cmd == NULL || c->sess == NULL || !dp->neigh ||
	    !dp->neigh_asked)
		exit(1);
	hg_fp_set_dp(dp);
	return dp;
}

void
fuzz_del_all(struct hg_registry *reg)
{
	char err[HG_ERR_LEN];
	unsigned i, k;

	for (k = 0; k < 4; k++) {
		for (i = 0; i < HG_MAX_TENANTS; i++)
			if (reg->t[i].used && !reg->t[i].releasing)
				hg_tenant_del(reg, reg->t[i].name, err);
		hg_fp_commands(&reg->dp->core[0]);
		hg_registry_poll(reg);
	}
	for (i = 0; i < HG_MAX_TENANTS; i++)
		if (reg->t[i].used)
			__builtin_trap();
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hourglassd: EAL start, fast-path cores on the worker lcores, and the slow
 * path (control socket, tenant registry, housekeeping) on the main lcore.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "config.h"
#include "ctl.h"
#include "log.h"
#include "port.h"
#include "stats.h"
#include "tenant.h"

RTE_LOG_REGISTER(hg_logtype, hourglass, INFO);

#define HG_TICK_US 1000	/* slow-path housekeeping period */

static struct hg_dp *dp;
static volatile sig_atomic_t quit_signal;

static void
on_signal(int sig)
{
	(void)sig;
	quit_signal = 1;
}

static void
push_live_settings(void)
{
	__atomic_store_n(&dp->live.idle, (uint32_t)hg_cfg.idle, __ATOMIC_RELAXED);
	__atomic_store_n(&dp->live.protection, (uint32_t)hg_cfg.protection,
			 __ATOMIC_RELAXED);
}

static int
setup_cores(struct rte_mempool **pool)
{
	uint32_t i, lcore, hostbits = 32 - dp->prefix;
	unsigned n_mbufs = RTE_MAX(8191u, dp->n_cores * 4096u - 1);

	*pool = rte_pktmbuf_pool_create("hg_mbufs", n_mbufs, 256, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	dp->core = rte_zmalloc("hg_cores", dp->n_cores * sizeof(*dp->core),
			       RTE_CACHE_LINE_SIZE);
	dp->neigh = rte_zmalloc("hg_neigh", sizeof(uint64_t) << hostbits, 0);
	if (*pool == NULL || dp->core == NULL || dp->neigh == NULL) {
		HG_LOG(ERR, "out of memory (try a larger -m)");
		return -1;
	}
	i = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		char name[32];

		if (i == dp->n_cores)
			break;
		snprintf(name, sizeof(name), "hg_cmd%u", i);
		dp->core[i].idx = i;
		dp->core[i].lcore = lcore;
		dp->core[i].pool = *pool;
		/* holds more commands than can ever be outstanding */
		dp->core[i].cmd = rte_ring_create_elem(name, sizeof(struct hg_cmd),
			1024, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (dp->core[i].cmd == NULL)
			return -1;
		i++;
	}
	return 0;
}

static int
setup_dp(void)
{
	uint32_t ip, prefix;

	if (rte_lcore_count() < hg_cfg.fp_cores + 1) {
		HG_LOG(ERR, "--fp-cores %lu needs %lu lcores (the main one is the "
		       "slow path), EAL gave %u: use e.g. -l 0-%lu or "
		       "--lcores '(0-%lu)@0'", (unsigned long)hg_cfg.fp_cores,
		       (unsigned long)hg_cfg.fp_cores + 1, rte_lcore_count(),
		       (unsigned long)hg_cfg.fp_cores, (unsigned long)hg_cfg.fp_cores);
		return -1;
	}
	dp = rte_zmalloc("hg_dp", sizeof(*dp), RTE_CACHE_LINE_SIZE);
	if (dp == NULL)
		return -1;
	hg_parse_cidr(hg_cfg.ip, &ip, &prefix);
	dp->ip = ip;
	dp->prefix = prefix;
	dp->netmask = ~0u << (32 - prefix);
	dp->n_cores = (uint32_t)hg_cfg.fp_cores;
	push_live_settings();
	hg_fp_set_dp(dp);
	return 0;
}

struct slow {
	struct event_base *base;
	struct hg_registry *reg;
};

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct slow *s = arg;

	(void)fd;
	(void)what;
	hg_registry_poll(s->reg);
	if (quit_signal)
		event_base_loopbreak(s->base);
}

static void
run_slow_path(struct hg_registry *reg, struct event_base *base)
{
	struct slow s = { base, reg };
	struct timeval tv = { 0, HG_TICK_US };
	struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, &s);

	event_add(tick, &tv);
	while (!quit_signal)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
}

int
main(int argc, char **argv)
{
	static struct hg_registry reg;
	struct rte_mempool *pool = NULL;
	struct event_base *base = NULL;
	struct hg_ctl *ctl = NULL;
	uint32_t i;
	int ret, rc = EXIT_FAILURE;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "hourglassd: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		return EXIT_FAILURE;
	}
	argc -= ret;
	argv += ret;
	ret = hg_config_parse_args(argc, argv);
	if (ret != 0) {
		rte_eal_cleanup();
		return ret > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (setup_dp() < 0 || setup_cores(&pool) < 0 ||
	    hg_port_init(dp, pool) < 0)
		goto out_eal;
	hg_config_set_hook(push_live_settings);
	hg_registry_init(&reg, dp);
	base = event_base_new();
	if (base == NULL || (ctl = hg_ctl_open(base, &reg, hg_cfg.ctl)) == NULL)
		goto out_port;
	hg_telemetry_register(&reg);
	for (i = 0; i < dp->n_cores; i++)
		rte_eal_remote_launch(hg_fp_loop, &dp->core[i], dp->core[i].lcore);
	HG_LOG(INFO, "serving %s on %u fast-path core%s, control at %s",
	       hg_cfg.ip, dp->n_cores, dp->n_cores == 1 ? "" : "s", hg_cfg.ctl);

	run_slow_path(&reg, base);

	/* shutdown: stop the cores first, then what they were using */
	HG_LOG(INFO, "shutting down");
	dp->quit = 1;
	rte_eal_mp_wait_lcore();
	hg_ctl_close(ctl);
	hg_registry_fini(&reg);
	rc = EXIT_SUCCESS;
out_port:
	if (base != NULL)
		event_base_free(base);
	hg_port_fini(dp);
out_eal:
	rte_eal_cleanup();
	return rc;
}

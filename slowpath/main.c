/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hourglassd: EAL start, fast-path cores on the worker lcores, and the slow
 * path (control socket, tenant registry, housekeeping) on the main lcore.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <rte_eal.h>
#include <rte_hash.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "../common/eal_dir.h"
#include "../common/hg_util.h"
#include "../fastpath/fp_init.h"
#include "../fastpath/nap.h"
#include "app_cgroup.h"
#include "config.h"
#include "config_reload.h"
#include "core_alloc.h"
#include "core_steal.h"
#include "credit_pool.h"
#include "ctl.h"
#include "log.h"
#include "memif_server.h"
#include "port.h"
#include "preempt_timer.h"
#include "refill.h"
#include "startup_args.h"
#include "stats.h"
#include "tenant.h"
#include "xdp_link.h"

#define HG_TICK_US        1000	/* housekeeping period, and the longest nap */
#define HG_EVENTS_US      50	/* control socket served at least this often */
#define HG_IDLE_AFTER_MS  10	/* no fast-path consumption this long: nap */

static struct hg_dp *dp;
static volatile sig_atomic_t quit_signal, reload_signal;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_signal = 1;
	else
		quit_signal = 1;
}

/* SIGHUP: re-read the config file, as `hgctl config reload` does. */
static void
reload(struct hg_registry *reg)
{
	struct hg_reload_report rep = { 0 };
	char err[320];

	if (hg_config_reload(reg, &rep, err, sizeof(err)) == 0)
		HG_LOG(NOTICE, "config reloaded: %zu change%s", rep.n,
		       rep.n == 1 ? "" : "s");
	hg_reload_report_free(&rep);
}

static void
push_live_settings(void)
{
	__atomic_store_n(&dp->live.idle, (uint32_t)hg_cfg.idle, __ATOMIC_RELAXED);
	__atomic_store_n(&dp->live.protection, (uint32_t)hg_cfg.protection,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&dp->live.rx_drop, (uint32_t)hg_cfg.rx_overbudget,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&dp->live.own_burst, (uint32_t)hg_cfg.own_burst,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&dp->live.own_bytes, (uint32_t)hg_cfg.own_bytes,
			 __ATOMIC_RELAXED);
}

static int
setup_cores(void)
{
	struct hg_fp_params prm = { .sessions = (uint32_t)hg_cfg.sessions,
				    .link_bufs = hg_xdp_link_bufs() };
	const char *part;

	if (hg_fp_init(dp, &prm, &part) == 0)
		return 0;
	HG_LOG(ERR, "cannot make the fast path's %s: out of memory (try a larger -m)",
	       part);
	return -1;
}

/* Each tenant holds a memfd and each app and operator a connection: take
 * every descriptor the hard limit allows (the control socket's caps, not
 * the soft limit, bound them). */
static void
raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			HG_LOG(WARNING, "cannot raise the descriptor limit: %s",
			       strerror(errno));
	}
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
	dp = hg_dp_new((uint32_t)hg_cfg.fp_cores);
	if (dp == NULL) {
		HG_LOG(ERR, "cannot map the daemon state: %s", strerror(errno));
		return -1;
	}
	hg_parse_cidr(hg_cfg.ip, &ip, &prefix);
	dp->ip = ip;
	dp->prefix = prefix;
	dp->netmask = ~0u << (32 - prefix);
	push_live_settings();
	hg_fp_set_dp(dp);
	return 0;
}

struct slow {
	struct event_base *base;
	struct hg_registry *reg;
	uint64_t ticks;		/* of HG_TICK_US */
};

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct slow *s = arg;

	(void)fd;
	(void)what;
	hg_registry_poll(s->reg);
	hg_core_steal_tick(s->reg->dp, rte_get_tsc_hz());
	hg_xdp_tick(s->reg->dp);
	if (++s->ticks % (1000000 / HG_TICK_US) == 0)
		hg_stats_log_drops(s->reg);
	if (reload_signal) {
		reload_signal = 0;
		reload(s->reg);
	}
	if (quit_signal)
		event_base_loopbreak(s->base);
}

/* A park bell rang: its tenant's requests are decided at the next pass. */
static void
on_park_bell(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	hg_core_bells(arg);
}

/* Waits for the next refill as --slow-idle says: spin, yield, or sleep
 * (the timer slack is 1 µs, so a sleep is short). Spinning needs a core of
 * its own, as Virtuoso's slow path has; on a shared core it would starve
 * the apps. A late refill hands out more, up to the cap, and work
 * conservation keeps the fast path busy meanwhile. */
static void
pace(uint64_t deadline, uint64_t hz)
{
	uint64_t now = rte_rdtsc();

	switch (hg_cfg.slow_idle) {
	case HG_IDLE_POLL:
		while (rte_rdtsc() < deadline && !quit_signal)
			rte_pause();
		break;
	case HG_IDLE_YIELD:
		sched_yield();
		break;
	default:
		if (deadline > now) {
			uint64_t ns = (deadline - now) * 1000000000u / hz;
			struct timespec ts = { (time_t)(ns / 1000000000u),
					       (long)(ns % 1000000000u) };

			nanosleep(&ts, NULL);
		}
	}
}

/* The period of the slow path's fine pace. With a core of its own
 * (slow-idle poll) it ticks every refill-ns. On the apps' core each
 * wake-up is a timer interrupt and two context switches taken from the
 * apps (at 1 us, 80% of CPU 0 and a victim p99 of 4.8 ms in
 * bench/versus-kernel), so it ticks at most every tick-us. */
static uint64_t
fine_period(uint64_t refill, uint64_t hz)
{
	if (hg_cfg.slow_idle == HG_IDLE_POLL)
		return refill;
	return RTE_MAX(refill, hg_cfg.tick_us * (hz / 1000000u));
}

/* The slow path's loop: publish rates, act as the timer core (preemption,
 * wait queues), allocate workers and run the credit controller. It keeps
 * the fine pace, and serves the control socket every HG_EVENTS_US, only
 * while something needs the timer (credits, a long request, a wait queue
 * under watch, a worker waiting to park) or it has a core of its own.
 * Otherwise, and while the fast path is idle, it blocks in libevent: a
 * control message, a park bell or the 1 ms tick wakes it.
 * Budgets need no tick (the fast path tops them up itself); only a change
 * of rates waits for one. */
static void
run_slow_path(struct hg_registry *reg, struct event_base *base)
{
	struct slow s = { base, reg, 0 };
	struct timeval tv = { 0, HG_TICK_US };
	struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, &s);
	struct event *bells = event_new(base, reg->park_ep, EV_READ | EV_PERSIST,
					on_park_bell, reg);
	uint64_t hz = rte_get_tsc_hz(), next_events = 0, now, refill;
	static struct hg_timer tm;
	struct hg_refill rf;
	int timing = 0, parking = 0, fine;

	prctl(PR_SET_TIMERSLACK, 1000UL);
	event_add(tick, &tv);
	if (bells != NULL)
		event_add(bells, NULL);
	hg_refill_init(&rf, rte_rdtsc());
	while (!quit_signal) {
		now = rte_rdtsc();
		refill = RTE_MAX(1u, hg_cfg.refill_ns * hz / 1000000000u);
		if (hg_refill_tick(reg, &rf, now, refill)) {
			timing = hg_timer_tick(reg, &tm, hg_now_ns());
			parking = hg_core_tick(reg, now);
		}
		fine = hg_credit_tick(reg, now) > 0 || timing || parking ||
		       hg_cfg.slow_idle == HG_IDLE_POLL;
		if (!fine || now - rf.last_busy > hz / 1000 * HG_IDLE_AFTER_MS) {
			event_base_loop(base, EVLOOP_ONCE);
			continue;
		}
		if (now >= next_events) {
			event_base_loop(base, EVLOOP_NONBLOCK);
			next_events = now + hz / 1000000 * HG_EVENTS_US;
		}
		pace(rf.last + fine_period(refill, hz), hz);
	}
	if (bells != NULL)
		event_free(bells);
	event_free(tick);
}

/* The config file's tenants, before the cores start; a file that cannot
 * be applied stops the daemon with the line that is wrong. */
static int
start_tenants(struct hg_registry *reg)
{
	struct hg_reload_report rep = { 0 };
	char err[320];
	int rc = 0;

	if (hg_cfg.config[0] != '\0' &&
	    (rc = hg_config_reload(reg, &rep, err, sizeof(err))) < 0)
		fprintf(stderr, "hourglassd: %s\n", err);
	hg_reload_report_free(&rep);
	return rc;
}

/* Before the tenants: those of the settings file get their groups. */
static int
open_app_cgroup(void)
{
	char err[PATH_MAX + 200];
	int rc = hg_cg_open(hg_cfg.app_cgroup, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "hourglassd: %s\n", err);
	return rc;
}

int
main(int argc, char **argv)
{
	static struct hg_registry reg;
	struct event_base *base = NULL;
	struct hg_ctl *ctl = NULL;
	struct hg_memif_server *mif = NULL;
	char eal_dir[PATH_MAX];
	uint32_t i;
	int ret, rc = EXIT_FAILURE, eal_argc = argc;
	char *eal_help[] = { argv[0], (char *)"--help", NULL };

	ret = hg_startup_args(argc, argv, &eal_argc);
	if (ret == 2)
		return rte_eal_init(2, eal_help) < 0;	/* EAL prints and exits */
	if (ret != 0)
		return ret > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	/* net_af_xdp gets the daemon's XDP program: before EAL reads --vdev */
	if (hg_xdp_prepare(eal_argc, argv) < 0)
		return EXIT_FAILURE;
	rte_errno = 0;
	if (rte_eal_init(eal_argc, argv) < 0) {
		/* the folder EAL made before it failed goes, unless it is
		 * another daemon's */
		if (!hg_eal_failure(eal_argc, argv,
				    rte_errno ? rte_strerror(rte_errno) : ""))
			hg_eal_dir_remove(rte_eal_get_runtime_dir());
		return EXIT_FAILURE;
	}
	hg_log_stamped();
	hg_role = HG_ROLE_SLOW;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	if (setup_dp() < 0 || setup_cores() < 0)
		goto out_eal;
	/* a port left open by a failed start would keep its XDP program
	 * attached to the interface (the PMD detaches it at close) */
	if (hg_port_init(dp, dp->mbufs) < 0 || hg_xdp_open(dp, dp->ip) < 0)
		goto out_port;
	for (i = 0; i < dp->n_cores; i++) {
		unsigned armed = hg_nap_init(dp, &dp->core[i]);

		if (armed > 0)
			HG_LOG(INFO, "fast-path core %u naps on %u RX interrupt%s", i,
			       armed, armed == 1 ? "" : "s");
	}
	hg_config_set_hook(push_live_settings);
	hg_registry_init(&reg, dp);
	if (open_app_cgroup() < 0)
		goto out_reg;
	/* before the sockets: a daemon whose file is wrong never answers */
	if (start_tenants(&reg) < 0)
		goto out_reg;
	base = event_base_new();
	if (base == NULL ||
	    (ctl = hg_ctl_open(base, &reg, hg_cfg.ctl,
			       hg_cfg.app_ctl[0] ? hg_cfg.app_ctl : NULL)) == NULL)
		goto out_reg;
	if (dp->mif != NULL &&
	    (mif = hg_memif_open(base, dp, hg_cfg.memif,
				 (unsigned)hg_memif_parse_mode(hg_cfg.memif_mode))) == NULL)
		goto out_reg;
	reg.memif = mif;
	hg_telemetry_register(&reg);
	for (i = 0; i < dp->n_cores; i++)
		rte_eal_remote_launch(hg_fp_loop, &dp->core[i], dp->core[i].lcore);
	HG_LOG(INFO, "serving %s on %u fast-path core%s, control at %s, apps at %s",
	       hg_cfg.ip, dp->n_cores, dp->n_cores == 1 ? "" : "s", hg_cfg.ctl,
	       hg_cfg.app_ctl[0] ? hg_cfg.app_ctl : "(none)");

	run_slow_path(&reg, base);

	/* shutdown: stop the cores first, then what they were using */
	HG_LOG(INFO, "shutting down");
	dp->quit = 1;
	for (i = 0; i < dp->n_cores; i++)
		hg_nap_wake(&dp->core[i]);
	rte_eal_mp_wait_lcore();
	for (i = 0; i < dp->n_cores; i++)
		hg_nap_fini(&dp->core[i]);
	hg_core_steal_close(dp);
	rc = EXIT_SUCCESS;
out_reg:
	/* the cores have stopped, or never started: the peer's memory goes */
	hg_memif_close(mif);
	hg_ctl_close(ctl);
	hg_registry_fini(&reg);
	hg_cg_close();
	if (base != NULL)
		event_base_free(base);
out_port:
	hg_xdp_close(dp);
	hg_port_fini(dp);
out_eal:
	/* no secondary process can attach to a daemon: its runtime
	 * folder goes with it */
	snprintf(eal_dir, sizeof(eal_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	hg_eal_dir_remove(eal_dir);
	hg_dp_free(dp);
	return rc;
}

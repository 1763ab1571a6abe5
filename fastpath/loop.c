/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fast-path core loop. Each stage returns the work it did; commands
 * from the slow path and idling happen only after a pass that did nothing
 * (or every HG_CMD_EVERY busy passes, so a loaded core still obeys them).
 */
#include <sched.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "dp.h"
#include "nap.h"
#include "waiting.h"
#include "xmit.h"

#define HG_CMD_EVERY      1024u
#define HG_IDLE_SPIN      64u	/* empty passes before sleeping */
#define HG_IDLE_SLEEP_MAX 1000u	/* µs */
#define HG_SWEEP_IDLE     256u	/* cold tenants swept per empty pass */
#define HG_SWEEP_CHUNK    32u	/* ... with --idle poll, paced: */
#define HG_SWEEP_RATE     1000000u	/* cold tenants per second */

static struct hg_dp *g_dp;

void
hg_fp_set_dp(struct hg_dp *dp)
{
	g_dp = dp;
}

static void
release_tenant(struct hg_fp_tenant *ft)
{
	memset(ft, 0, sizeof(*ft));
}

void
hg_fp_commands(struct hg_fp_core *c)
{
	struct hg_cmd cmd[32];
	unsigned i, n;

	n = rte_ring_sc_dequeue_burst_elem(c->cmd, cmd, sizeof(cmd[0]),
					   RTE_DIM(cmd), NULL);
	for (i = 0; i < n; i++) {
		unsigned t = cmd[i].tenant % HG_MAX_TENANTS;
		struct hg_fp_tenant *ft = &c->t[t];

		if (cmd[i].op == HG_CMD_RECLAIM_APP) {
			hg_bufpart_reclaim(&ft->bufs, cmd[i].app + 1);
		} else if (cmd[i].op == HG_CMD_RELEASE_TENANT) {
			release_tenant(ft);
			hg_rpc_forget_tenant(c, (int)t);
			hg_tset_del(&c->pend, t);
			hg_tset_del(&c->hot, t);
		}
	}
	if (n > 0)
		__atomic_fetch_add(&c->cmd_done, n, __ATOMIC_RELEASE);
}

/* Backs off when there is no work: spin briefly, then yield or nap (on
 * RX interrupts where the port has them, nap.h) with a growing timeout,
 * as --idle says. Only reached on a pass that did
 * nothing, so the syscalls here never delay a packet already received;
 * and never before the cold sweep has looked at every tenant since the
 * last nap, so an app that sends first waits one nap, not one per slice
 * of tenants. */
static void
idle(struct hg_fp_core *c, unsigned *empty)
{
	uint32_t mode = __atomic_load_n(&g_dp->live.idle, __ATOMIC_RELAXED);
	unsigned us;

	c->idle_passes++;
	if (mode == HG_IDLE_POLL || c->unswept > 0 || ++*empty < HG_IDLE_SPIN) {
		rte_pause();
		return;
	}
	c->unswept = __atomic_load_n(&g_dp->n_active, __ATOMIC_RELAXED);
	/* off the books while away: the slow path need not wait for a
	 * core that sleeps to free what it unpublished */
	rte_rcu_qsbr_thread_offline(g_dp->qs, c->idx);
	if (mode == HG_IDLE_YIELD) {
		sched_yield();
	} else {
		us = RTE_MIN(HG_IDLE_SLEEP_MAX,
			     10u << RTE_MIN((*empty - HG_IDLE_SPIN) / 8, 7u));
		/* woken: the datagram may not be readable yet (net_tap
		 * counts SIGIOs, which reach another thread a moment
		 * later), so poll again before the next nap rather than
		 * nap the long timeout */
		if (hg_nap(c, us))
			*empty = 0;
	}
	rte_rcu_qsbr_thread_online(g_dp->qs, c->idx);
}

/* The sweep in a pass that found nothing. A polling core would otherwise
 * sweep without pause and pull thousands of cold tenants' lines through
 * its caches between two requests, and the next request would pay for
 * the misses (bench/scale); so it sweeps at HG_SWEEP_RATE, a lap of 4,096
 * tenants in about 4 ms. A core that naps sweeps at full speed, the nap
 * already costs more than that. */
static unsigned
idle_sweep(struct hg_dp *dp, struct hg_fp_core *c)
{
	uint64_t now;

	if (__atomic_load_n(&dp->live.idle, __ATOMIC_RELAXED) != HG_IDLE_POLL)
		return hg_fp_sweep(dp, c, HG_SWEEP_IDLE);
	now = rte_rdtsc();
	if (now < c->sweep_next)
		return 0;
	c->sweep_next = now + rte_get_tsc_hz() / (HG_SWEEP_RATE / HG_SWEEP_CHUNK);
	return hg_fp_sweep(dp, c, HG_SWEEP_CHUNK);
}

/* The round a pass adds once SCHED cut tenant `cut`'s batch short for
 * another tenant's work (sched.c): the other tenants' own RX queues,
 * their wake-ups, the transmit rings and SCHED again, all before the
 * pass's send. Without it that work waited for the cut batch's send and
 * the next pass's RX burst of the cut tenant's queue first: under a 16 x
 * 1400 B flood on a queue of its own (bench/isolation, ~25 us passes) a
 * victim's answer waited 7 us at the median from its app's send to TX's
 * poll, 3 us with it. Once a pass: a batch cut again in this round waits
 * for the next pass. */
static unsigned
serve_cut(struct hg_dp *dp, struct hg_fp_core *c, unsigned cut)
{
	unsigned work;

	c->cut_passes++;
	work = hg_fp_rx_others(dp, c, cut);
	if (hg_bells_behind(dp, c)) {
		hg_fp_flush(dp, c);
		hg_fp_bells(dp, c);
	}
	work += hg_fp_tx(dp, c);
	return work + hg_fp_sched(dp, c);
}

int
hg_fp_loop(void *arg)
{
	struct hg_fp_core *c = arg;
	struct hg_dp *dp = g_dp;
	unsigned work, empty = 0, since_cmd = 0;
	uint64_t t0, pmd0;

	hg_role = c->idx;
	__atomic_store_n(&c->tid, (int32_t)rte_sys_gettid(), __ATOMIC_RELEASE);
	rte_rcu_qsbr_thread_online(dp->qs, c->idx);
	if (hg_offcpu_attach() < 0)
		RTE_LOG(WARNING, USER1, "core %u: no rseq: a charge the OS preempts "
			"within its bound is billed whole\n", c->idx);
	while (!dp->quit) {
		/* nothing of the last pass is held across this point */
		rte_rcu_qsbr_quiescent(dp->qs, c->idx);
		t0 = rte_rdtsc();
		/* a departure between passes is no charge's (hg_bounded_n) */
		c->left_cpu += (uint64_t)hg_offcpu_left();
		c->now = t0;
		pmd0 = c->pmd_cycles;
		work = hg_fp_rx(dp, c);
		if (hg_bells_behind(dp, c)) {
			hg_fp_flush(dp, c);
			hg_fp_bells(dp, c);
		}
		work += hg_fp_tx(dp, c);
		c->sched_cut = -1;
		work += hg_fp_sched(dp, c);
		if (c->sched_cut >= 0)
			work += serve_cut(dp, c, (unsigned)c->sched_cut);
		/* the pass's frames leave in one call, then the wake-ups:
		 * the answers are on the wire before any system call for a
		 * thread on another CPU */
		hg_fp_flush(dp, c);
		hg_fp_bells(dp, c);
		if (work > 0) {
			/* everything a busy pass cost, attributed or not: what
			 * idle tenants would add to each request shows here */
			c->busy_cycles += rte_rdtsc() - t0;
			c->busy_pmd_cycles += c->pmd_cycles - pmd0;
			c->busy_passes++;
			/* relaxed stores: the slow path reads them too */
			__atomic_store_n(&c->busy_streak, c->busy_streak + 1,
					 __ATOMIC_RELAXED);
			empty = 0;
			if (++since_cmd < HG_CMD_EVERY)
				continue;
		}
		since_cmd = 0;
		hg_fp_commands(c);
		work += hg_rpc_scan(dp, c);
		hg_fp_flush(dp, c);
		if (work == 0)
			work = idle_sweep(dp, c);
		if (work == 0) {
			idle(c, &empty);
			/* a nap is the core's own time, not a departure */
			hg_offcpu_arm();
			/* after the nap: what arrived during it is a backlog
			 * of the nap's making, not of a saturated core */
			__atomic_store_n(&c->last_empty, rte_rdtsc(), __ATOMIC_RELAXED);
			__atomic_store_n(&c->busy_streak, 0, __ATOMIC_RELAXED);
		}
	}
	hg_offcpu_detach();
	rte_rcu_qsbr_thread_offline(dp->qs, c->idx);
	return 0;
}

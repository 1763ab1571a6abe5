/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Daemon state shared by the fast-path cores and the slow path.
 *
 * Ownership rules (no locks on the fast path):
 *  - struct hg_fp_core and everything in it is written only by its core,
 *    except the command ring, which the slow path produces into.
 *  - struct hg_tenant is written only by the slow path; a tenant's view
 *    and live words (tenant_view.h) and the port map only by
 *    slowpath/publish.c. A tenant becomes visible to the fast path when a
 *    view of it in state ACTIVE is published, and stops being used by a
 *    core once that core has processed the RELEASE command the slow path
 *    sent after publishing it DYING.
 */
#ifndef HG_FASTPATH_DP_H
#define HG_FASTPATH_DP_H

#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_debug.h>
#include <rte_ether.h>
#include <rte_ring.h>

#include "../proto/hg_shm.h"
#include "budget.h"
#include "bufpart.h"
#include "credit_sessions.h"
#include "drops.h"
#include "offcpu.h"
#include "parse.h"
#include "tenant_view.h"
#include "tset.h"

#define HG_BATCH        32u
/* own-bytes' bound: more than HG_BATCH frames of any size the ports take */
#define HG_OWN_BYTES_MAX (1u << 20)
#define HG_RX_BURSTS    2u	/* RX bursts per pass, over all its queues */
#define HG_MAX_RXQ      8u	/* RX queues per fast-path core */
#define HG_MAX_TXQ      8u	/* TX rings per fast-path core (--tx-queues) */
#define HG_PEND_SIZE    256u	/* validated TX descriptors per tenant and core */
/* Frames a pass may stage for the NIC (xmit.h): SCHED's batch, two replies
 * per received frame over the pass's bursts, a scan's credit updates. A
 * fuller stage is flushed early, so this bounds a call, not the work. */
#define HG_STAGE_SIZE   256u
/* Contexts a pass may ring (doorbell.h): every frame of every burst. */
#define HG_BELLS        (HG_RX_BURSTS * HG_BATCH)
#define HG_NAME_MAX     32u

enum hg_point { HG_PT_RX, HG_PT_TX, HG_PT_SCHED, HG_PT_N };

/* How datagrams reach a core's RX queues (port.c): all tenants in one
 * queue per core; or one queue per tenant group, steered by the memif
 * peer from the map `hgctl tenant list` shows, or by the NIC's rte_flow
 * rules (flow_rules.c). */
enum hg_rx_steer { HG_RX_SHARED, HG_RX_PEER, HG_RX_FLOW };

/* One of a core's RX queues. Where tenants have queues of their own, RX
 * polls a queue that last brought only an out-of-budget tenant's
 * datagrams after the others (rx.c): that tenant is remembered here and
 * its budget looked at again on every pass, so the queue is polled first
 * again as soon as the tenant is refilled. */
struct hg_rxq {
	uint16_t port;			/* the ethdev it is a queue of (not
					 * memif's) */
	uint16_t id;			/* queue id on the port */
	uint16_t group;			/* the tenants' rx-queue it carries */
	uint16_t dev_queue;		/* the device's queue (an XDP
					 * program's rx_queue_index) */
	int32_t unfunded;		/* that tenant, or -1 */
	int32_t tenant;			/* the last tenant RX met on it, -1 */
	uint64_t pkts;			/* received on it */
	uint64_t deferred;		/* passes it waited out, unfunded */
	uint64_t held;			/* passes it was left unread: its
					 * tenant's receive rings were full
					 * (hg_rx_room) */
	uint64_t bursts;		/* its bursts that took a frame */
	uint32_t frame_len;		/* the mean length of the frames its
					 * last such burst took (own-bytes),
					 * 0 before one */
	uint32_t was_full;		/* its last burst came back full */
	uint32_t blocked;		/* its tenant's rings were full at
					 * the last look: what waits on it is
					 * no one's work (hg_others_waiting) */
	uint32_t xdp_other_held;	/* took frames of no tenant, and */
	struct hg_tset xdp_held;	/* ... of these tenants, since its
					 * ring's counts were last set even
					 * (xdp_shed.h) */
};

enum hg_idle_mode { HG_IDLE_POLL, HG_IDLE_YIELD, HG_IDLE_SLEEP };

/* Port map entry: 0 = no tenant; low 16 bits tenant slot + 1; high 16 bits
 * the bound app slot + 1 (0 = owned but not bound). */
#define HG_PORT_TENANT(e) ((int)((e) & 0xffff) - 1)
#define HG_PORT_APP(e)    ((int)(((e) >> 16) & 0xffff) - 1)
#define HG_PORT_ENTRY(t, a) ((uint32_t)((t) + 1) | (uint32_t)((a) + 1) << 16)
_Static_assert(HG_MAX_TENANTS < 0xffff && HG_MAX_APPS < 0xffff, "port map entry");

/* A tenant as the fast path sees it. Everything the daemon relies on to
 * find its way in the region (offsets, sizes, geometry) is this copy in
 * daemon memory, made when the region was laid out: the region's own
 * header page is the app's to scribble on and is never read back. */
struct hg_tenant {
	uint32_t slot;
	uint8_t *base;			/* daemon's mapping of the region */
	struct hg_region_hdr lay;	/* the layout, daemon-private */
	uint8_t *bufs;			/* base + lay.buf_off */
	struct hg_ctx_shm *ctx_shm;	/* base + lay.ctx_off */
	struct hg_app_shm *app_shm;	/* base + lay.app_off */
	/* rings with daemon-private geometry, see proto/hg_shm.h */
	struct rte_ring *ring[HG_MAX_CTX][HG_MAX_FP_CORES][HG_RING_KINDS];
	struct rte_ring *wq[HG_MAX_APPS];	/* apps' wait queues (read only) */
	int32_t bell[HG_MAX_CTX];	/* eventfd of each open context, -1 */
} __rte_cache_aligned;

/* A tenant's work on one core, written only by that core. */
struct hg_fp_tenant {
	struct hg_budget bud;
	uint64_t cycles[HG_PT_N];
	uint64_t nic_cycles[HG_PT_N];	/* part of cycles spent in the PMD */
	uint64_t pkts[HG_PT_N];
	uint64_t throttles[HG_PT_N];	/* passed over with work, out of budget */
	uint64_t unfunded[HG_PT_N];	/* batches run out of budget (slack) */
	uint64_t drops[HG_TDROP_N];
	uint64_t xdp_until;		/* TSC a ring-full XDP mark stands to */
	uint64_t cut_at;		/* TSC of the last pass that cut a
					 * burst of its own queue short at
					 * hg_rx_own_bound (hg_bell_more) */
	uint64_t sched_avg;		/* EWMA of SCHED cycles per datagram */
	uint64_t credit_updates;	/* explicit credit messages sent */
	uint64_t sessions_trimmed;	/* past a lowered max-sessions */
	uint64_t credits_granted;	/* ... and responses' credits: the sum */
	uint64_t budget_answers;	/* answers that took a credit back for
					 * the budget (credit_sessions.c) */
	uint64_t doorbells;		/* armed workers woken */
	uint64_t doorbell_cycles;	/* ... their cost, part of RX cycles */
	uint64_t drop_cycles;		/* RX cycles of rx_over_budget drops */
	uint64_t drain_cycles;		/* RX cycles of drops on a shared
					 * queue that backed up, billed to
					 * no budget (hg_rx_drain) */
	uint64_t burst;			/* RX burst this tenant was last seen in */
	uint32_t burst_funded;		/* ... and whether it had budget then */
	uint32_t tx_idle;		/* empty TX polls since it was hot */
	struct hg_bufpart bufs;
	uint32_t pend_head, pend_tail;	/* FIFO of validated SEND descriptors */
	struct hg_desc pend[HG_PEND_SIZE];
} __rte_cache_aligned;

enum hg_cmd_op { HG_CMD_RECLAIM_APP = 1, HG_CMD_RELEASE_TENANT = 2 };

struct hg_cmd {
	uint16_t op;
	uint16_t tenant;
	uint16_t app;
	uint16_t pad;
};

/* A context RX delivered to in the current pass (doorbell.h). */
struct hg_bell {
	uint16_t tenant;
	uint16_t ctx;
};

/* Whom a staged frame is for (xmit.h). */
struct hg_stage_who {
	uint16_t tenant;	/* slot, or HG_STAGE_CORE */
	uint8_t pt;		/* enum hg_point */
	uint8_t billed;		/* its cost comes out of the budget */
	uint16_t len;		/* the frame's bytes */
};

/* The frames a pass hands the NIC in one call (xmit.c), and those the
 * link refused, kept for the next pass. */
struct hg_tx_stage {
	uint32_t n;
	uint32_t heavy;			/* a tenant with the most bytes here */
	struct rte_mbuf *m[HG_STAGE_SIZE];
	struct hg_stage_who who[HG_STAGE_SIZE];
	uint16_t of[HG_MAX_TENANTS];	/* frames here per tenant */
	uint32_t bytes[HG_MAX_TENANTS];	/* ... and their bytes */
};

struct hg_fp_core {
	uint32_t idx;			/* 0..fp_cores-1 = queue id */
	uint32_t lcore;
	uint16_t tx_port, tx_queue;	/* the ethdev queue it sends on */
	struct rte_mempool *pool;
	struct rte_ring *cmd;		/* slow path -> this core */
	uint64_t cmd_done;		/* commands processed, atomic */
	uint64_t unattributed;		/* cycles that belong to no tenant */
	uint64_t preempted;		/* ... of them, the OS's: charges cut
					 * to their bound (hg_bounded_n) */
	uint64_t left_cpu;		/* departures offcpu.h saw */
	uint64_t look;			/* TSC the last charge ended: a stall
					 * before it is booked */
	int32_t tid;			/* its thread, once running (atomic) */
	uint64_t stolen;		/* TSC its thread waited on its CPU's
					 * run queue: what else ran there
					 * (slowpath/core_steal.h: the one
					 * writer; atomic) */
	uint64_t busy_passes, idle_passes;
	uint64_t busy_cycles;		/* TSC spent in passes that did work */
	uint64_t pmd_cycles;		/* TSC spent in the PMD's burst calls */
	uint64_t busy_pmd_cycles;	/* ... in passes that did work */
	uint64_t rx_pkts, tx_pkts;
	uint64_t txq_pkts[HG_MAX_TXQ];	/* frames sent on each TX ring of
					 * its own (hg_link_tx_per_tenant) */
	uint64_t flushes;		/* calls that handed the NIC a stage */
	uint64_t sched_yields;		/* SCHED batches cut short for
					 * another tenant's work (sched.c) */
	uint64_t cut_passes;		/* ... whose work was then served in
					 * the same pass (loop.c) */
	int32_t sched_cut;		/* the tenant SCHED last cut short in
					 * this pass, -1: none */
	uint64_t rx_cuts;		/* ... RX bursts (rx.c) */
	uint64_t rx_holds;		/* RX bursts stopped at an unfunded
					 * tenant's frame on its own queue */
	uint64_t drops[HG_DROP_N];
	uint32_t sched_rr;		/* next tenant SCHED looks at */
	uint32_t tx_rr;			/* first tenant TX polls */
	uint32_t sweep;			/* next tenant the cold sweep looks at */
	uint32_t unswept;		/* tenants to sweep before sleeping */
	uint64_t sweep_next;		/* TSC of the next paced sweep */
	uint64_t rng;			/* for splitting slack by weight */
	uint64_t burst;			/* RX bursts so far */
	int32_t rx_last_t;		/* tenant of the last datagram RX billed */
	uint64_t rx_mixed;		/* TSC when RX last went from one
					 * tenant's datagrams to another's */
	uint64_t rx_backlog;		/* ... when a burst last came back
					 * full from a queue of several
					 * tenants that were mixing */
	uint64_t slack_held;		/* SCHED passes that served no slack
					 * while that queue backed up */
	uint64_t now;			/* TSC at the start of this pass */
	uint64_t tsc_us;		/* TSC ticks per microsecond */
	uint64_t last_empty;		/* ... of the last pass that found
					 * nothing to do */
	uint64_t busy_streak;		/* passes with work since then */
	uint32_t n_rxq;			/* RX queues this core polls */
	uint32_t rxq_rr;		/* the queue polled first */
	struct hg_rxq rxq[HG_MAX_RXQ];
	struct hg_sessions *sess;	/* RPC sessions seen on this core */
	uint32_t n_bell;		/* contexts delivered to this pass */
	struct hg_bell bell[HG_BELLS];
	struct hg_tx_stage stage;	/* frames for the pass's one send */
	struct hg_tset xdp_marked;	/* tenants it marked shed (xdp_shed.h) */
	uint64_t xdp_marks;		/* marks set so far */
	int nap_ep;			/* --idle sleep's epoll set (nap.h), -1 */
	int wake_fd;			/* eventfd the slow path rings, -1 */
	uint32_t n_armed;		/* RX queues with interrupts in it */
	uint32_t nap_sleep;		/* no epoll_pwait2: naps sleep */
	uint64_t naps;			/* idle waits */
	uint64_t nap_wakes;		/* ... cut short by a datagram or a
					 * command */
	uint16_t ip_id;
	struct hg_tset pend;		/* tenants with pending TX work here */
	struct hg_tset hot;		/* tenants TX polls on every pass */
	/* tenants this core worked for since the slow path last looked
	 * (hg_aset_mark here, hg_aset_take there) */
	struct hg_aset touched __rte_cache_aligned;
	/* HG_MAX_TENANTS entries, zero pages until a tenant is used */
	struct hg_fp_tenant *t;
} __rte_cache_aligned;

/* Settings the fast path reads live (written by the slow path). */
struct hg_live {
	uint32_t idle;			/* enum hg_idle_mode */
	uint32_t protection;		/* gate out-of-budget tenants */
	uint32_t rx_drop;		/* drop an out-of-budget tenant's RX */
	uint32_t own_burst;		/* hg_rx_room: 0 or 1..HG_BATCH */
	uint32_t own_bytes;		/* hg_rx_room: 0, or bytes a burst */
};

struct hg_mif;
struct rte_rcu_qsbr;

struct hg_dp {
	uint16_t port_id;		/* the ethdev, unless mif */
	struct hg_mif *mif;		/* the daemon's memif link (link.h), or NULL */
	/* a net_af_xdp link's maps, mmap-ed (proto/hg_xdp.h, xdp_shed.h),
	 * or all NULL; published together, shed last */
	struct {
		uint64_t *shed;
		const uint64_t *ports;	/* hg_ports: the program's port map */
		const uint64_t *passed;	/* hg_passed: the program's counts */
		uint64_t *taken;	/* hg_taken */
	} xdp;
	/* each core reports a quiescent point per pass, and goes offline
	 * while it naps: what the slow path unpublished is freed after */
	struct rte_rcu_qsbr *qs;
	uint32_t n_cores;
	uint32_t ip;			/* network order */
	uint32_t prefix;
	uint32_t netmask;		/* host order */
	struct rte_ether_addr mac;
	volatile int quit;
	struct hg_live live;
	uint32_t rx_steer;		/* enum hg_rx_steer, set before start */
	uint32_t rxq_per_core;		/* 1 with HG_RX_SHARED */
	uint32_t txq_per_core;		/* TX rings per core a tenant's
					 * answers may have (link.h) */
	uint32_t rx_intr;		/* RX queues have interrupts (nap.h) */
	uint32_t rxq_tenants[HG_MAX_RXQ];	/* active tenants per rx-queue,
						 * atomic: a queue of one tenant
						 * delays nobody else */
	struct hg_aset active;		/* tenants while ACTIVE */
	uint32_t n_active;		/* members of active, atomic */
	/* what the cores read of each tenant (tenant_view.h); one writer,
	 * slowpath/publish.c: a view pointer (atomic; hg_view) and the live
	 * words */
	const struct hg_tenant_view *view[HG_MAX_TENANTS];
	struct hg_tenant_live tenant_live[HG_MAX_TENANTS];
	uint64_t *neigh;		/* MAC | 1<<63 per on-link host, atomic */
	uint64_t *neigh_asked;		/* TSC of our last ARP request, 0: none */
	uint64_t neigh_retry;		/* TSC between two requests for a host */
	uint64_t neigh_wait;		/* TSC a request stays open for a reply */
	struct rte_mempool *mbufs;	/* every core's (fp_init.c) */
	struct hg_fp_core *core;	/* n_cores entries */
	struct hg_tenant tenant[HG_MAX_TENANTS];
	uint32_t port_map[65536];
};

/* Is core c saturated at TSC now: no pass with nothing to do for
 * HG_CORE_BUSY_US, over at least HG_CORE_BUSY_PASSES passes? Time alone
 * is not enough: a fast-path thread the OS took off its CPU for a
 * millisecond comes back to a backlog that a few passes drain. Read by
 * the core (RX's shedding) and by the slow path (credits that follow the
 * budget, credit_pool.c); the core is the only writer. */
#define HG_CORE_BUSY_US     1000u
#define HG_CORE_BUSY_PASSES 64u

static inline int
hg_core_saturated(const struct hg_fp_core *c, uint64_t now)
{
	uint64_t last = __atomic_load_n(&c->last_empty, __ATOMIC_RELAXED);

	return __atomic_load_n(&c->busy_streak, __ATOMIC_RELAXED) >= HG_CORE_BUSY_PASSES &&
	       now > last && now - last > c->tsc_us * HG_CORE_BUSY_US;
}

/* One datagram's work at a point, or one doorbell's write, is a few
 * microseconds; measured over its bound, the OS took the core in the
 * middle of it (an interrupt, a preemption, the hypervisor running
 * another guest), and billing that to the tenant at hand put a victim far
 * below its share into debt: it was shed for the OS's time
 * (test_saturation; bench/isolation lost 7 of a funded victim's requests
 * to rx_over_budget). Such a charge is cut to the bound, the rest booked
 * as the core's. A batch of n datagrams (SCHED, TX, a share of a PMD
 * call) is bounded at n times that, plus its synthetic work: a batch's
 * length is its tenant's, a stall in it is not.
 *
 * The bound is the tenant's own: HG_CHARGE_COSTS times what one of its
 * datagrams costs (the slow path's measure over every point, refill.c),
 * never below HG_CHARGE_MIN_US (a doorbell's write) nor above
 * HG_CHARGE_MAX_US (the bound of a tenant whose cost is not measured
 * yet). A flat 50 us was ~40 datagrams of a 64 B echo's (~3,400 cycles):
 * a few stalls in its charges, under a host's steal, emptied a bank of
 * two batches of its cost, and it was shed (bench/isolation, shared
 * queue: 32 of a funded victim's datagrams in a round whose charges saw
 * 27 ms of the OS's time). */
#define HG_CHARGE_MAX_US 50u
#define HG_CHARGE_MIN_US 5u
#define HG_CHARGE_COSTS  8u

/* What one of tenant t's datagrams costs, as the slow path measured it;
 * 0: not yet. */
static inline uint64_t
hg_tenant_cost(const struct hg_dp *dp, unsigned t)
{
	return __atomic_load_n(&dp->tenant_live[t % HG_MAX_TENANTS].cost, __ATOMIC_RELAXED);
}

/* The bound of one datagram's charge on core c for a tenant whose
 * datagrams cost cost cycles (0: not measured). */
static inline uint64_t
hg_charge_max(const struct hg_fp_core *c, uint64_t cost)
{
	uint64_t lo = c->tsc_us * HG_CHARGE_MIN_US, hi = c->tsc_us * HG_CHARGE_MAX_US;

	if (cost == 0 || cost > hi / HG_CHARGE_COSTS)
		return hi;
	return cost * HG_CHARGE_COSTS > lo ? cost * HG_CHARGE_COSTS : lo;
}

/* Books excess cycles of a charge that ended at TSC end as the OS's
 * (preempted: they refill nobody, hg_budget_clock), but only the part
 * after the last look: several charges can share one stalled PMD call,
 * and only the first books the stall. */
static inline void
hg_core_preempted(struct hg_fp_core *c, uint64_t end, uint64_t excess)
{
	uint64_t span = end > c->look ? end - c->look : 0;

	if (excess > span)
		excess = span;
	if (excess > 0)	/* the one writer; read by the slow path's budget clock */
		__atomic_store_n(&c->preempted, c->preempted + excess, __ATOMIC_RELAXED);
	if (end > c->look)
		c->look = end;
}

/* Tenant t's charge of cycles, which ended at TSC end, for a batch of n
 * datagrams (a poll that took nothing counts as one) with extra synthetic
 * cycles each. Where the kernel took the thread off its CPU since the last
 * look (offcpu.h), maybe in this very charge, the tenant pays at most
 * what n of its datagrams cost as measured: a preemption within the
 * bound, billed whole, put whoever met it up to HG_CHARGE_COSTS of its
 * datagrams in debt. */
static inline uint64_t
hg_bounded_n(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t, uint64_t cycles,
	     uint64_t end, unsigned n, uint64_t extra)
{
	uint64_t cost = hg_tenant_cost(dp, t), per = hg_charge_max(c, cost), max, billed;

	if (unlikely(hg_offcpu_left())) {
		c->left_cpu++;
		if (cost != 0 && cost < per)
			per = cost;
	}
	max = (per + extra) * (n > 0 ? n : 1u);
	billed = cycles <= max || c->tsc_us == 0 ? cycles : max;	/* 0: unit tests */
	c->unattributed += cycles - billed;
	hg_core_preempted(c, end, cycles - billed);
	return billed;
}

/* The clock budgets refill by on core c at TSC now: the TSC less the time
 * the core saw the OS take inside a charge (preempted, above). A tenant's
 * budget is a share of the cycles the core had, and such a stall refills
 * nobody (bench/weights shared, a sender on the core's CPU: gold 0.64 ->
 * 0.65-0.66 of cycles at 3:1). All of the thread's time off its CPU is not
 * taken, neither as the scheduler counts it (stolen, read each 1 ms) nor
 * as rseq shows it (every departure, offcpu.h): budgets then refill at
 * the boost of the core's own time, both tenants of bench/weights shared
 * were in debt at once, RX shed both alike, and gold fell to 0.42-0.57
 * (stolen) and 0.49-0.57 (rseq). Monotonic: preempted grows by time that
 * has already passed. */
static inline uint64_t
hg_budget_clock(const struct hg_fp_core *c, uint64_t now)
{
	return now - __atomic_load_n(&c->preempted, __ATOMIC_RELAXED);
}

/* One datagram's or one doorbell's charge of tenant t (hg_bounded_n). */
static inline uint64_t
hg_bounded(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t, uint64_t cycles,
	   uint64_t end)
{
	return hg_bounded_n(dp, c, t, cycles, end, 1, 0);
}

/* Charges cycles spent at a point to a tenant. Only work done while the
 * tenant was funded under protection is billed to its budget: a
 * work-conserving batch runs on slack nobody funded wanted, and billing
 * it would drive every backlogged tenant's budget down without bound and
 * turn the weights into plain round robin. Deficit stays bounded by one
 * funded batch's overrun. */
static inline void
hg_charge(struct hg_fp_tenant *ft, enum hg_point pt, uint64_t cycles,
	  uint32_t pkts, int billed)
{
	ft->cycles[pt] += cycles;
	ft->pkts[pt] += pkts;
	if (billed)
		hg_budget_charge(&ft->bud, cycles);
}

/* Tenant t's view (tenant_view.h): never NULL (a free slot's is
 * hg_view_none), valid until this core's next quiescent point, i.e. for
 * the rest of the pass. */
extern const struct hg_tenant_view hg_view_none;

static inline const struct hg_tenant_view *
hg_view(const struct hg_dp *dp, unsigned t)
{
	return __atomic_load_n(&dp->view[t % HG_MAX_TENANTS], __ATOMIC_ACQUIRE);
}

/* Tenant t's budget cap: its configured one (the view's quantum), or more
 * where its measured cost asks for more (refill.c). */
static inline uint64_t
hg_tenant_cap(const struct hg_dp *dp, unsigned t, const struct hg_tenant_view *v)
{
	uint64_t a = __atomic_load_n(&dp->tenant_live[t].cap_auto, __ATOMIC_RELAXED);

	return a > v->quantum ? a : v->quantum;
}

/* Who this thread is, for the one-writer rules' asserts (RTE_ASSERT: on
 * in debug and ASan builds): a fast-path core's index (loop.c), the slow
 * path (main.c), or nobody in particular (unit tests, tools), whom every
 * rule lets through. */
#define HG_ROLE_SLOW 0xfffeu
#define HG_ROLE_ANY  0xffffu
extern _Thread_local uint32_t hg_role;
_Static_assert(HG_MAX_FP_CORES < HG_ROLE_SLOW, "a core index is not a role");

/* Only core c writes this (its budgets, sets, counters). */
#define HG_ASSERT_CORE(c) RTE_ASSERT(hg_role == HG_ROLE_ANY || hg_role == (c)->idx)
/* Only the slow path writes this (what the cores read of tenants). */
#define HG_ASSERT_SLOW() RTE_ASSERT(hg_role == HG_ROLE_ANY || hg_role == HG_ROLE_SLOW)

/* Everything a core does for tenant t goes through here once per batch:
 * the slow path's per-tick work follows these marks, so its cost grows
 * with the tenants that had work, not with the tenants that exist. */
static inline void
hg_touch(struct hg_fp_core *c, unsigned t)
{
	hg_aset_mark(&c->touched, t);
}

/* Tops tenant t's budget on core c up to the pass's start, then says what
 * it has left: the refill happens here, when a point looks, never waiting
 * for the slow path (budget.h). */
static inline int64_t
hg_topup_left(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	HG_ASSERT_CORE(c);	/* budget.h: the core is its budgets' writer */
	return hg_budget_left(&c->t[t].bud,
			      __atomic_load_n(&dp->tenant_live[t].rate, __ATOMIC_RELAXED),
			      hg_tenant_cap(dp, t, hg_view(dp, t)),
			      hg_budget_clock(c, c->now));
}

/* Tops t's budget up (hg_topup_left): has it any left? */
static inline int
hg_topup_funded(const struct hg_dp *dp, struct hg_fp_core *c, unsigned t)
{
	return hg_topup_left(dp, c, t) > 0;
}

/* Does RX queue group g (a tenant's rx-queue) carry more than one tenant
 * on core c? */
static inline int
hg_rxq_group_shared(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned g)
{
	RTE_ASSERT(g < HG_MAX_RXQ);
	return c->n_rxq == 1 ||
	       __atomic_load_n(&dp->rxq_tenants[g], __ATOMIC_RELAXED) > 1;
}

/* Does queue q carry more than one tenant? A full burst from a queue of
 * its own delays only that tenant's datagrams, and its frames are only
 * that tenant's work. */
static inline int
hg_rxq_shared(const struct hg_dp *dp, const struct hg_fp_core *c,
	      const struct hg_rxq *q)
{
	return hg_rxq_group_shared(dp, c, q->group);
}

/* What tenant t's bank on core c must hold for the credits its sessions
 * hold there, in cycles, where its RX queue group g is shared: each
 * credit may bring a request, which RX sheds unless the tenant can pay
 * for it (at its measured cost), and the session that sent it waits out
 * a timeout. On a queue of its own RX leaves such a request in the link,
 * and nothing needs covering: 0. Read by the core and the slow path
 * (credit_pool.c); issued has one writer, the core. */
static inline int64_t
hg_credit_cover(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned t, unsigned g)
{
	if (c->sess == NULL || !hg_rxq_group_shared(dp, c, g))
		return 0;
	return __atomic_load_n(&c->sess->issued[t], __ATOMIC_RELAXED) *
	       (int64_t)hg_tenant_cost(dp, t);
}

static inline int
hg_protecting(const struct hg_dp *dp)
{
	return __atomic_load_n(&dp->live.protection, __ATOMIC_RELAXED) != 0;
}

/* The tenant's buffer buf, in the daemon's mapping. buf has been checked
 * against the tenant's partition (bufpart), so it is below lay.n_bufs. */
static inline uint8_t *
hg_tenant_buf(const struct hg_tenant *tn, uint32_t buf)
{
	return tn->bufs + (uint64_t)buf * HG_BUF_SIZE;
}

/* The port's RX layout, before the cores start: core c polls queues
 * c x per_core .. c x per_core + per_core - 1, one per rx-queue group,
 * and sends on TX queue c. */
void hg_dp_set_rxq(struct hg_dp *dp, enum hg_rx_steer steer, uint32_t per_core);

/* A queue pair of an ethdev: on a link whose every queue carries any
 * tenant's frames (HG_RX_SHARED), each must be read. */
struct hg_devq {
	uint16_t port, queue;
};

/* Deal n shared queue pairs out to the cores round robin: core c reads
 * q[c], q[c + n_cores], ... and sends on q[c]. Needs n_cores <= n <=
 * n_cores x HG_MAX_RXQ (asserted; port.c checks it first). */
void hg_dp_spread_rxq(struct hg_dp *dp, const struct hg_devq *q, uint32_t n);

/* The daemon state for n_cores fast-path cores, zeroed (dp.c). */
struct hg_dp *hg_dp_new(uint32_t n_cores);
void hg_dp_free(struct hg_dp *dp);

/* fastpath entry points */
int hg_fp_loop(void *arg);			/* lcore main, arg = hg_fp_core */
void hg_fp_set_dp(struct hg_dp *dp);
unsigned hg_fp_rx(struct hg_dp *dp, struct hg_fp_core *c);
/* ... only the queues other tenants have of their own than tenant t. */
unsigned hg_fp_rx_others(struct hg_dp *dp, struct hg_fp_core *c, unsigned t);
unsigned hg_fp_tx(struct hg_dp *dp, struct hg_fp_core *c);
/* Has hot tenant t a descriptor on a transmit ring of this core (tx.c)? */
int hg_tx_waiting(const struct hg_dp *dp, const struct hg_fp_core *c, unsigned t);
/* Looks at up to max cold tenants' transmit rings (tx.c). */
unsigned hg_fp_sweep(struct hg_dp *dp, struct hg_fp_core *c, unsigned max);
unsigned hg_fp_sched(struct hg_dp *dp, struct hg_fp_core *c);
/* Rings the doorbells the pass's deliveries owe, once per context (rx.c). */
unsigned hg_fp_bells(struct hg_dp *dp, struct hg_fp_core *c);
/* Runs the slow path's commands waiting on the core's ring. */
void hg_fp_commands(struct hg_fp_core *c);

#endif /* HG_FASTPATH_DP_H */

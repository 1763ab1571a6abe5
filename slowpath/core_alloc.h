/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Core allocation (design.md §5): the slow path decides how many of
 * each tenant's workers run, as Shenango's IOKernel does for its apps but
 * with no core of its own. An idle worker asks to park (proto/hg_shm.h:
 * park, and the tenant's park bell) and sleeps on its doorbell; the slow
 * path decides by the tenant's `policy` (CoreSync's Algorithm 1,
 * policy/coresync.c, or at once) whether it parks, i.e. leaves RX
 * steering, or stays allocated, and wakes one worker (its doorbell) when
 * the tenant's queueing delay passes core-delay-us.
 */
#ifndef HG_SLOWPATH_CORE_ALLOC_H
#define HG_SLOWPATH_CORE_ALLOC_H

#include <stdint.h>

#include "../policy/coresync.h"
#include "../proto/hg_shm.h"

/* Successive pool decreases that mean persistent overload: the pool is
 * cut at every update (update-us, 10 us) while D_m is above D_t, so a
 * few in a row are a burst, not overload; 50 are half a millisecond. */
#define HG_CS_DECREASES 50u

/* A time the kernel keeps per process, summed over a tenant's apps: those
 * that left included, each app's never less than it was last read (a
 * thread that exits takes its share of a per-thread time with it). */
struct hg_app_time {
	uint64_t gone_ns;		/* of apps that left */
	uint64_t app_ns[HG_MAX_APPS];	/* each app's, as last read */
	uint64_t seen_ns, seen_at;	/* the last rate sample */
	double rate;			/* time / wall between two samples */
};

/* What stats show of a tenant's apps on their CPUs (ns): their CPU time,
 * and how long their threads waited runnable for a CPU (the kernel's
 * schedstat run_delay) — the apps' side of time isolation, where the
 * fast path's budgets cannot reach. Each *_util is over wall time since
 * the previous sample at least 100 ms before (0 until there is one). */
struct hg_app_times {
	uint64_t cpu_ns, wait_ns;
	double cpu_util, wait_util;
};

/* A tenant's allocation state, in daemon memory only. */
struct hg_core_state {
	uint8_t parked[HG_MAX_CTX];	/* out of steering, blocked */
	uint32_t asked[HG_MAX_CTX];	/* the request being decided or granted */
	uint8_t kept[HG_MAX_CTX];	/* ... refused: the last worker running */
	struct hg_cs_worker w[HG_MAX_CTX];	/* Algorithm 1's progress */
	struct hg_cs_overload over;
	int overloaded;			/* at the last pool update */
	uint32_t n_parked;
	uint64_t parks;			/* parkings granted */
	uint64_t wakes_delay;		/* parked workers woken on delay */
	uint64_t wakes_self;		/* ... back on their own (delivery,
					 * a sibling, a timeout) */
	uint64_t revocations;		/* parkings that first took credits */
	double revoked;			/* credits taken out by parking, total */
	struct hg_app_time cpu;		/* the apps' CPU time */
	struct hg_app_time wait;	/* ... waiting runnable for a CPU */
};

struct hg_registry;

/* The epoll set of every tenant's park bell (made at registry init). */
int hg_core_init(struct hg_registry *reg);
void hg_core_fini(struct hg_registry *reg);
/* A tenant's park bell, made at tenant add and closed when it goes. */
int hg_core_bell_open(struct hg_registry *reg, int slot);
void hg_core_bell_close(struct hg_registry *reg, int slot);
/* The tenant's settings changed (a policy made static wakes its parked
 * workers): it is looked at next pass, even if it settled meanwhile. */
void hg_core_touch(struct hg_registry *reg, int slot);
/* Collects the park bells that rang: their tenants are looked at next. */
void hg_core_bells(struct hg_registry *reg);
/* Decides park requests, takes parked workers out of steering and wakes
 * one per tenant on delay. Returns 1 while a decision waits for credits
 * to come down (the slow path keeps its fine pace). */
int hg_core_tick(struct hg_registry *reg, uint64_t now_tsc);
/* A context closes (its app died or left): parked or parking, its
 * credits go back and it counts no more. */
void hg_core_forget(struct hg_registry *reg, int slot, uint32_t ctx);
/* The tenant's contexts that run: live and not parked. */
uint32_t hg_core_active(const struct hg_registry *reg, int slot);
/* Tells the tenant's apps how many run (a context opened, parked, woke or
 * left): a worker alone does not ask to park (the last is kept). */
void hg_core_publish_running(struct hg_registry *reg, int slot);
/* The tenant's apps' times (struct hg_app_times), read from /proc. */
void hg_core_app_times(struct hg_registry *reg, int slot, struct hg_app_times *out);
/* An app leaves: its process's times so far stay with the tenant. */
void hg_core_app_gone(struct hg_registry *reg, int slot, int app);

#endif /* HG_SLOWPATH_CORE_ALLOC_H */

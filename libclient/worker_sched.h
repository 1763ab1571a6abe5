/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The worker scheduler's parts, one file each (design.md §5, Synergy §II):
 *   req_timing.c    when requests begin and end, the EMA, the long timer
 *   green_threads.c the green-thread table, switching, preemption, hg_run
 *   worker_pick.c   the next request: Synergy's order or a central policy
 *   worker_park.c   idle workers: poll, park, wake; hg_recv
 * Internal to the library. Each file calls only those above it in this
 * list, and req_timing.c.
 */
#ifndef HG_LIBCLIENT_WORKER_SCHED_H
#define HG_LIBCLIENT_WORKER_SCHED_H

#include "client.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* req_timing.c */
/* The request the worker runs now: its green thread's, or its own. */
struct hg_req *hg_cur_req(hg_ctx_t *w);
/* A request taken: its clock starts. */
void hg_req_begin(hg_ctx_t *w);
/* Tells the daemon (the timer) that this worker runs a long request,
 * and that it no longer does. */
void hg_timer_start(hg_ctx_t *w);
void hg_timer_stop(hg_ctx_t *w);

/* green_threads.c */
/* Switches to a preempted request; the current green thread (in hg_recv,
 * between requests) waits as idle until this worker needs it again. The
 * worker has work: a request to park it made while idle is withdrawn.
 * Returns 0 if th is NULL, else 1 once this green thread runs again. */
int hg_resume(hg_ctx_t *w, struct hg_gt *th);
/* Resumes a preempted request from the app's wait queue (0: none). */
int hg_resume_waiting(hg_ctx_t *w);
/* The worker's own preempted requests (the wait queue off or full). */
struct hg_gt *hg_own_pop(hg_ctx_t *w);

/* worker_pick.c */
enum { PICK_NONE, PICK_MSG, PICK_SWITCHED };
/* The next request by the tenant's dispatch policy now (PICK_MSG, m
 * filled), a switch to a resumed request that has come back here
 * (PICK_SWITCHED: look again), or nothing. Requests a central policy
 * left in the app's queues are taken by any policy. */
int hg_pick(hg_ctx_t *w, struct hg_msg *m);

/* Work came, or the worker is back from its doorbell: no park request
 * stands. Here, below the three files, because each of them withdraws
 * the request (green_threads.c before it switches to a resumed request,
 * worker_park.c when hg_recv returns): in worker_park.c it made a call
 * circle of them (green_threads -> worker_park -> worker_pick ->
 * green_threads). The calls now go one way: worker_park -> worker_pick
 * -> green_threads. */
static inline void
hg_park_done(hg_ctx_t *w)
{
	if (!w->parking)
		return;
	w->parking = 0;
	__atomic_store_n(&w->shm->park, 0, __ATOMIC_RELEASE);
}

#endif /* HG_LIBCLIENT_WORKER_SCHED_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The time the OS kept each fast-path core's thread off its CPU while it
 * was runnable: its run-queue wait, as the scheduler counts it
 * (/proc/self/task/TID/schedstat, second field), read by the slow path
 * each tick into the core's stolen_cycles counter. The core sees a stall
 * only inside a charge (preempted_cycles, dp.h); this sees every one, and
 * tells an operator that something else runs on the fast path's CPU.
 * Budgets do not take it (hg_budget_clock says why).
 */
#ifndef HG_SLOWPATH_CORE_STEAL_H
#define HG_SLOWPATH_CORE_STEAL_H

#include <stdint.h>

struct hg_dp;

/* Once a tick: each core whose thread has said who it is (its tid) gets
 * its run-queue wait since the last look added to its stolen counter, in
 * TSC cycles at tsc_hz. Opens each core's schedstat once; a core whose
 * file cannot be read keeps only what it sees itself. */
void hg_core_steal_tick(struct hg_dp *dp, uint64_t tsc_hz);

/* Closes the files (the cores have stopped). */
void hg_core_steal_close(struct hg_dp *dp);

#endif /* HG_SLOWPATH_CORE_STEAL_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The time the OS kept each fast-path core's thread off its CPU while it
 * was runnable: its run-queue wait, as the scheduler counts it
 * (/proc/self/task/TID/schedstat, second field), read by the slow path
 * each tick and added to the core's stolen clock. Budgets refill by the
 * TSC less that time (hg_budget_clock): a share of a core is a share of
 * the cycles it had, so a thread on the core's CPU that takes it for
 * milliseconds refills nobody. The core sees a stall only inside a charge
 * (preempted, dp.h); this sees every one, a tick late.
 */
#ifndef HG_SLOWPATH_CORE_STEAL_H
#define HG_SLOWPATH_CORE_STEAL_H

#include <stdint.h>

struct hg_dp;

/* Once a tick: each core whose thread has said who it is (its tid) gets
 * its run-queue wait since the last look added to its stolen clock, in
 * TSC cycles at tsc_hz. Opens each core's schedstat once; a core whose
 * file cannot be read keeps only what it sees itself. */
void hg_core_steal_tick(struct hg_dp *dp, uint64_t tsc_hz);

/* Closes the files (the cores have stopped). */
void hg_core_steal_close(struct hg_dp *dp);

#endif /* HG_SLOWPATH_CORE_STEAL_H */

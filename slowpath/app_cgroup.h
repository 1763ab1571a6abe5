/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A tenant's weight extended to its apps' CPU (--app-cgroup NAME): the
 * daemon makes a cgroup per tenant in the CPU controller's hierarchy, gives
 * it the tenant's weight (cgroup v2 cpu.weight, v1 cpu.shares), and moves
 * each app it admits into it, back where it came from when it detaches.
 * The fast path's budgets split the fast-path core; this splits the CPU
 * the apps share, so a flooded app cannot take its neighbour's CPU time
 * beyond its tenant's weight.
 *
 * Slow path only; every failure after start-up is logged and leaves the
 * app where it was (the datapath does not depend on it).
 */
#ifndef HG_SLOWPATH_APP_CGROUP_H
#define HG_SLOWPATH_APP_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Finds the CPU controller and makes the group NAME (a leading '/': from
 * the hierarchy's root, else under the daemon's own cgroup). NAME "" turns
 * the feature off and succeeds. On failure, err says why. */
int hg_cg_open(const char *name, char *err, size_t len);

/* Makes or updates tenant's group with weight (HG_WEIGHT_ONE = 1). */
int hg_cg_tenant(const char *tenant, uint32_t weight);

/* Removes tenant's group; a process left in it goes to the daemon's. */
void hg_cg_tenant_gone(const char *tenant);

/* Moves pid into tenant's group, remembering where it was. */
int hg_cg_admit(const char *tenant, pid_t pid);

/* Moves pid back where hg_cg_admit found it (if it still lives). */
void hg_cg_release(pid_t pid);

/* Releases every app still admitted and removes the groups. */
void hg_cg_close(void);

/* The controller's value for a weight, per cgroup version (v2 cpu.weight
 * 1..10000 around 100, v1 cpu.shares 2..262144 around 1024). */
uint64_t hg_cg_weight_value(int v2, uint32_t weight);

#endif /* HG_SLOWPATH_APP_CGROUP_H */

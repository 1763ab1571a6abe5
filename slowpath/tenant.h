/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Tenant registry (slow path): tenants, their attached apps, contexts and
 * port bindings, and the hand-off with fast-path cores when an app dies or
 * a tenant is deleted. All functions return 0 or -errno and put a one-line
 * reason into err.
 */
#ifndef HG_SLOWPATH_TENANT_H
#define HG_SLOWPATH_TENANT_H

#include <sys/types.h>

#include "registry.h"

/* The credentials of an app's control connection (SO_PEERCRED). */
struct hg_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

void hg_registry_init(struct hg_registry *reg, struct hg_dp *dp);
void hg_registry_fini(struct hg_registry *reg);
/* Finishes reclaims and releases every core has acknowledged. */
void hg_registry_poll(struct hg_registry *reg);

int hg_tenant_find(const struct hg_registry *reg, const char *name);
/* The first port of lo..hi (0-0: none) that a tenant owns, or 0; *owner
 * that tenant. spare (if not NULL) names owners whose ports count as
 * free: a config reload's leaving tenants. */
uint32_t hg_ports_taken(const struct hg_registry *reg, uint32_t lo, uint32_t hi,
			int (*spare)(const void *arg, unsigned t), const void *arg,
			int *owner);
/* 1..HG_NAME_MAX-1 letters, digits, '_', '.', '-'; else -EINVAL. */
int hg_tenant_name_check(const char *name, char *err);
/* Adds a tenant with settings c (checked: hg_tenant_cfg_apply). */
int hg_tenant_add(struct hg_registry *reg, const char *name,
		  const struct hg_tenant_cfg *c, char *err);
/* Makes c (checked) the settings of the tenant in slot: refuses a change
 * of a setting that is not live, then publishes what changed. */
int hg_tenant_update(struct hg_registry *reg, int slot,
		     const struct hg_tenant_cfg *c, char *err);
/* `tenant add NAME KEY=VALUE...`: the defaults, then the pairs. */
int hg_tenant_add_kv(struct hg_registry *reg, const char *name,
		     const struct hg_kv *kv, size_t n, char *err);
/* `tenant set NAME KEY=VALUE...`: the tenant's settings, then the pairs,
 * applied to a copy and committed only if all of them and the rules
 * across them hold. */
int hg_tenant_set_kv(struct hg_registry *reg, const char *name,
		     const struct hg_kv *kv, size_t n, char *err);
int hg_tenant_del(struct hg_registry *reg, const char *name, char *err);

/* App lifecycle: attach returns the tenant slot and app slot. Only root,
 * the tenant's uid or a member of its gid may attach (-EACCES, counted). */
int hg_app_attach(struct hg_registry *reg, const char *tenant,
		  const struct hg_peer *peer, int *slot, int *app, char *err);
/* May peer attach to some tenant: root, or an owner of one (uid or gid)? */
int hg_peer_owns_a_tenant(const struct hg_registry *reg, const struct hg_peer *peer);
/* Opens a context: *ctx its index, *bell its doorbell (an eventfd the
 * daemon keeps; the reply passes the app a copy). */
int hg_app_ctx_open(struct hg_registry *reg, int slot, int app, uint32_t *ctx,
		    int *bell, char *err);
int hg_app_bind(struct hg_registry *reg, int slot, int app, uint32_t port,
		char *err);
void hg_app_detach(struct hg_registry *reg, int slot, int app);

uint32_t hg_tenant_apps(const struct hg_tenant_sp *t);

#endif /* HG_SLOWPATH_TENANT_H */

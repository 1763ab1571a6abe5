/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "../fastpath/nap.h"
#include "config.h"
#include "app_cgroup.h"
#include "credit_pool.h"
#include "flow_rules.h"
#include "log.h"
#include "publish.h"
#include "refill.h"
#include "tenant.h"
#include "xdp_link.h"

#define ERR(...) snprintf(err, HG_ERR_LEN, __VA_ARGS__)

void
hg_registry_init(struct hg_registry *reg, struct hg_dp *dp)
{
	memset(reg, 0, sizeof(*reg));
	reg->dp = dp;
	reg->tsc_us = rte_get_tsc_hz() / 1000000;
	pthread_mutex_init(&reg->lock, NULL);
	if (hg_core_init(reg) < 0)
		HG_LOG(ERR, "cannot make the park bells' epoll set: %s",
		       strerror(errno));
	hg_publish_reclaim(reg);	/* takes the spare view */
}

int
hg_tenant_find(const struct hg_registry *reg, const char *name)
{
	unsigned i;

	for (i = 0; i < HG_MAX_TENANTS; i++)
		if (reg->t[i].used && !reg->t[i].releasing &&
		    strcmp(reg->t[i].name, name) == 0)
			return (int)i;
	return -1;
}

uint32_t
hg_tenant_apps(const struct hg_tenant_sp *t)
{
	uint32_t i, n = 0;

	for (i = 0; i < HG_MAX_APPS; i++)
		n += t->app[i].used && !t->app[i].reclaiming;
	return n;
}

/* Is there room for one more command on every core's ring? The slow path
 * is the only producer, so room seen here is room at the enqueue. A core
 * that is slow to take its commands (they run after idle or every
 * HG_CMD_EVERY busy passes) makes a burst of deletes wait, never lose a
 * command: a lost one would leave every later target unreachable. */
static int
cmd_room(const struct hg_registry *reg, char *err)
{
	uint32_t c;

	for (c = 0; c < reg->dp->n_cores; c++)
		if (rte_ring_free_count(reg->dp->core[c].cmd) == 0) {
			ERR("fast-path core %u is behind on its commands; retry", c);
			return 0;
		}
	return 1;
}

/* Sends a command to every fast-path core (cmd_room said there is room)
 * and records when each will have done it. */
static void
send_cmd(struct hg_registry *reg, struct hg_cmd cmd, uint64_t *target)
{
	uint32_t c;

	for (c = 0; c < reg->dp->n_cores; c++) {
		rte_ring_sp_enqueue_elem(reg->dp->core[c].cmd, &cmd, sizeof(cmd));
		target[c] = ++reg->cmd_sent[c];
		hg_nap_wake(&reg->dp->core[c]);	/* a napping core runs it now */
	}
}

static int
cores_done(const struct hg_registry *reg, const uint64_t *target)
{
	uint32_t c;

	for (c = 0; c < reg->dp->n_cores; c++)
		if (__atomic_load_n(&reg->dp->core[c].cmd_done, __ATOMIC_ACQUIRE) <
		    target[c])
			return 0;
	return 1;
}

static int
valid_name(const char *s, char *err)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= HG_NAME_MAX) {
		ERR("tenant name must be 1..%u characters", HG_NAME_MAX - 1);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i])) {
			ERR("tenant name '%s' may only hold letters, digits, "
			    "'_', '.' and '-'", s);
			return 0;
		}
	}
	return 1;
}

int
hg_tenant_name_check(const char *name, char *err)
{
	return valid_name(name, err) ? 0 : -EINVAL;
}

uint32_t
hg_ports_taken(const struct hg_registry *reg, uint32_t lo, uint32_t hi,
	       int (*spare)(const void *arg, unsigned t), const void *arg,
	       int *owner)
{
	uint32_t p;

	for (p = lo; hi != 0 && p <= hi; p++) {
		*owner = HG_PORT_TENANT(reg->dp->port_map[p]);
		if (*owner >= 0 && (spare == NULL || !spare(arg, (unsigned)*owner)))
			return p;
	}
	return 0;
}

static int
ports_free(const struct hg_registry *reg, uint32_t lo, uint32_t hi, char *err)
{
	int t;
	uint32_t p = hg_ports_taken(reg, lo, hi, NULL, NULL, &t);

	if (p != 0)
		ERR("port %u belongs to tenant '%s'", p, reg->t[t].name);
	return p == 0;
}

/* Sessions a tenant reserves of each core's table: its max-sessions
 * while it has RPC ports, none without. */
static uint64_t
sessions_reserved(const struct hg_tenant_cfg *c)
{
	return c->credit.rpc_hi != 0 ? c->max_sessions : 0;
}

/* Does c's share of each core's session table fit beside every other
 * tenant's (slot: the tenant c replaces, or -1)? The shares are reserved
 * up front so that no tenant's clients can take slots another tenant was
 * promised (credit_sessions.h). */
static int
sessions_fit(const struct hg_registry *reg, int slot, const struct hg_tenant_cfg *c,
	     char *err)
{
	uint64_t held = 0, want = sessions_reserved(c);
	int i;

	if (want == 0)
		return 1;
	for (i = 0; i < (int)HG_MAX_TENANTS; i++)
		if (i != slot && reg->t[i].used)
			held += sessions_reserved(&reg->t[i].cfg);
	if (held + want <= hg_cfg.sessions)
		return 1;
	ERR("max-sessions %u does not fit: %" PRIu64 " of %" PRIu64 " session "
	    "slots per core are reserved (lower it, or raise --sessions)",
	    c->max_sessions, held, hg_cfg.sessions);
	return 0;
}

static int
free_slot(const struct hg_registry *reg)
{
	unsigned i;

	for (i = 0; i < HG_MAX_TENANTS; i++)
		if (!reg->t[i].used)
			return (int)i;
	return -1;
}

/* Gives each core its share of the tenant's buffers. */
static int
setup_buffers(struct hg_registry *reg, int slot)
{
	uint32_t c, per = HG_N_BUFS / reg->dp->n_cores;
	struct hg_tenant_sp *t = &reg->t[slot];

	for (c = 0; c < reg->dp->n_cores; c++) {
		struct hg_fp_tenant *ft = &reg->dp->core[c].t[slot];

		t->bufmem[c] = rte_zmalloc("hg_bufs", hg_bufpart_memsize(per), 0);
		if (t->bufmem[c] == NULL)
			return -ENOMEM;
		memset(ft, 0, sizeof(*ft));
		hg_bufpart_init(&ft->bufs, c * per, per, t->bufmem[c]);
	}
	return 0;
}

/* Only once no core can ring it: after the app's reclaim or the tenant's
 * release was acknowledged by every core (a closed number reused by
 * another open would be written to). */
static void
close_bell(struct hg_tenant *tn, uint32_t ctx)
{
	if (tn->bell[ctx] >= 0)
		close(tn->bell[ctx]);
	tn->bell[ctx] = -1;
}

static void
free_tenant(struct hg_registry *reg, int slot)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	uint32_t c;

	for (c = 0; c < HG_MAX_CTX; c++)
		close_bell(&reg->dp->tenant[slot], c);
	hg_core_bell_close(reg, slot);
	for (c = 0; c < HG_MAX_FP_CORES; c++)
		rte_free(t->bufmem[c]);
	hg_region_destroy(&t->region);
	memset(t, 0, sizeof(*t));
	t->region.fd = -1;
	t->park_bell = -1;
	memset(&reg->dp->tenant[slot], 0, sizeof(reg->dp->tenant[slot]));
}

/* Of n queues with tenants[g] tenants each (atomic: the cores read the
 * RX counts), the one fewest share; queue 0 counts one more, for what
 * belongs to no tenant (ARP, ICMP, unowned ports). */
static uint32_t
fewest_tenants(const uint32_t *tenants, uint32_t n)
{
	uint32_t g, q = 0;

	for (g = 1; g < n; g++)
		if (__atomic_load_n(&tenants[g], __ATOMIC_RELAXED) <
		    __atomic_load_n(&tenants[q], __ATOMIC_RELAXED) + (q == 0))
			q = g;
	return q;
}

/* The RX queue a new tenant's datagrams arrive on (design.md §3): the one
 * it asked for, or the one fewest tenants share; always 0 where the link
 * cannot steer. Queue 0 also takes what belongs to no tenant (ARP, ICMP,
 * datagrams to unowned ports, a flood of them too): it counts as one
 * tenant more. */
static int
pick_rx_queue(const struct hg_registry *reg, const struct hg_tenant_cfg *c,
	      uint32_t *q, char *err)
{
	const struct hg_dp *dp = reg->dp;
	uint32_t n = dp->rxq_per_core;

	*q = 0;
	if (dp->rx_steer == HG_RX_SHARED)
		return 0;
	if (c->rx_queue > 0) {
		*q = (uint32_t)c->rx_queue - 1;
		if (*q < n)
			return 0;
		ERR("rx-queue %u: the port has %u RX queue%s per core (--rx-queues)",
		    *q, n, n == 1 ? "" : "s");
		return -EINVAL;
	}
	*q = fewest_tenants(dp->rxq_tenants, n);
	return 0;
}

/* The TX group a new tenant's frames leave by on each core (link.h's
 * hg_link_tx_per_tenant): its RX queue's where there are as many groups
 * as RX queues (a queue's answers on its own ring, as a peer that reads
 * the RX map expects), else the group fewest tenants share. Group 0 also
 * takes the core's own frames (ARP, ICMP): it counts as one tenant more. */
static uint32_t
pick_tx_queue(const struct hg_registry *reg, uint32_t rxq)
{
	uint32_t n = reg->dp->txq_per_core;

	RTE_VERIFY(n >= 1 && n <= HG_MAX_TXQ);
	return n == reg->dp->rxq_per_core ? rxq : fewest_tenants(reg->txq_tenants, n);
}

/* A NIC that steers by rte_flow gets a rule for the tenant's ports; one
 * it refuses leaves them on the first queue, said in the log. */
static void
steer_ports(struct hg_registry *reg, struct hg_tenant_sp *t)
{
	char why[128];

	if (reg->dp->rx_steer != HG_RX_FLOW || t->cfg.port_hi == 0)
		return;
	t->flow = hg_flow_steer(reg->dp, t->cfg.port_lo, t->cfg.port_hi,
				t->rx_queue, why, sizeof(why));
	if (t->flow == NULL) {
		HG_LOG(WARNING, "tenant %s: no rte_flow rule for ports %u-%u (%s): "
		       "they arrive on RX queue 0", t->name, t->cfg.port_lo,
		       t->cfg.port_hi, why);
		t->rx_queue = 0;
		if (hg_publish_view(reg, (int)(t - reg->t)) < 0)
			HG_LOG(ERR, "tenant %s: out of memory for its view", t->name);
	}
}

int
hg_tenant_add(struct hg_registry *reg, const char *name,
	      const struct hg_tenant_cfg *c, char *err)
{
	struct hg_tenant *tn;
	struct hg_tenant_sp *t;
	int slot, rc;
	uint32_t p, rxq;

	if (!valid_name(name, err))
		return -EINVAL;
	if ((rc = hg_tenant_cfg_check(c, err, HG_ERR_LEN)) < 0)
		return rc;
	if (hg_tenant_find(reg, name) >= 0) {
		ERR("tenant '%s' already exists", name);
		return -EEXIST;
	}
	if (c->port_hi != 0 && !ports_free(reg, c->port_lo, c->port_hi, err))
		return -EADDRINUSE;
	if (!sessions_fit(reg, -1, c, err))
		return -ENOSPC;
	if ((rc = pick_rx_queue(reg, c, &rxq, err)) < 0)
		return rc;
	slot = free_slot(reg);
	if (slot < 0) {
		ERR("too many tenants (max %u)", HG_MAX_TENANTS);
		return -ENOSPC;
	}
	pthread_mutex_lock(&reg->lock);
	t = &reg->t[slot];
	tn = &reg->dp->tenant[slot];
	memset(t, 0, sizeof(*t));
	memset(tn, 0, sizeof(*tn));
	/* a zeroed region or bell would say fd 0: a refused add must not
	 * close it */
	t->region.fd = -1;
	t->park_bell = -1;
	for (p = 0; p < HG_MAX_CTX; p++)
		tn->bell[p] = -1;
	tn->slot = slot;
	t->used = 1;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->cfg = *c;
	t->rx_queue = rxq;
	t->tx_queue = pick_tx_queue(reg, rxq);
	t->pool = 16;
	t->next_update = 0;
	rc = hg_region_create(&t->region, tn, name, slot, reg->dp->n_cores, err,
			      HG_ERR_LEN);
	if (rc == 0 && (rc = setup_buffers(reg, slot)) < 0)
		ERR("out of memory for buffer tables");
	if (rc == 0 && (rc = hg_core_bell_open(reg, slot)) < 0)
		ERR("cannot make the park bell: %s", strerror(-rc));
	if (rc < 0) {
		free_tenant(reg, slot);
		pthread_mutex_unlock(&reg->lock);
		return rc;
	}
	/* everything, credits too: what a deleted tenant of this slot left
	 * (its D_m, its pool, its cap) must not judge the new one's first
	 * requests; then its view, ACTIVE, before any port names it */
	hg_publish_settings(reg, slot, ~0u);
	hg_refill_publish_cost(reg, slot);
	hg_refill_start(reg, slot);
	if ((rc = hg_publish_state(reg, slot, HG_TENANT_ACTIVE)) < 0) {
		ERR("out of memory for the tenant's view");
		t->state = HG_TENANT_FREE;
		free_tenant(reg, slot);
		pthread_mutex_unlock(&reg->lock);
		return rc;
	}
	if (c->port_hi != 0)
		for (p = c->port_lo; p <= c->port_hi; p++)
			hg_publish_port(reg, p, HG_PORT_ENTRY(slot, -1));
	steer_ports(reg, t);
	__atomic_fetch_add(&reg->dp->rxq_tenants[t->rx_queue], 1, __ATOMIC_RELEASE);
	reg->txq_tenants[t->tx_queue]++;
	hg_aset_add(&reg->dp->active, (unsigned)slot);
	__atomic_fetch_add(&reg->dp->n_active, 1, __ATOMIC_RELEASE);
	hg_tset_add(&reg->awake, (unsigned)slot);
	pthread_mutex_unlock(&reg->lock);
	hg_cg_tenant(name, c->weight);
	HG_LOG(INFO, "tenant %s added (slot %d, weight %g, cap %lu, rx queue %u, "
	       "tx group %u)", name, slot, (double)c->weight / HG_WEIGHT_ONE,
	       (unsigned long)c->cap, t->rx_queue, t->tx_queue);
	return 0;
}

int
hg_tenant_update(struct hg_registry *reg, int slot, const struct hg_tenant_cfg *c,
		 char *err)
{
	const struct hg_setting *fixed;
	char why[HG_ERR_LEN - HG_NAME_MAX - 10];
	struct hg_tenant_cfg old;
	unsigned what;
	int rc;

	what = hg_settings_diff(hg_tenant_settings(), &reg->t[slot].cfg, c, &fixed);
	if (fixed != NULL) {
		hg_settings_fixed(hg_tenant_settings(), fixed, why, sizeof(why));
		ERR("tenant %s: %s", reg->t[slot].name, why);
		return -EPERM;
	}
	if ((rc = hg_tenant_cfg_check(c, err, HG_ERR_LEN)) < 0)
		return rc;
	if (what == 0)
		return 0;
	if (!sessions_fit(reg, slot, c, err))
		return -ENOSPC;
	pthread_mutex_lock(&reg->lock);
	old = reg->t[slot].cfg;
	reg->t[slot].cfg = *c;
	if ((rc = hg_publish_settings(reg, slot, what)) < 0) {
		/* the cores keep the old view: so do we */
		reg->t[slot].cfg = old;
		hg_publish_settings(reg, slot, what & HG_TCFG_PUB_STEER);
		pthread_mutex_unlock(&reg->lock);
		ERR("tenant %s: out of memory for its new view", reg->t[slot].name);
		return rc;
	}
	hg_tset_add(&reg->awake, (unsigned)slot);
	if (what & (HG_TCFG_PUB_STEER | HG_TCFG_PUB_CORE))
		hg_core_touch(reg, slot);
	pthread_mutex_unlock(&reg->lock);
	if (what & HG_TCFG_PUB_BUDGET)
		hg_cg_tenant(reg->t[slot].name, c->weight);
	return 0;
}

int
hg_tenant_add_kv(struct hg_registry *reg, const char *name,
		 const struct hg_kv *kv, size_t n, char *err)
{
	struct hg_tenant_cfg c;
	int rc;

	if (!valid_name(name, err))
		return -EINVAL;
	hg_tenant_cfg_defaults(&c, hg_cfg.cap);
	if ((rc = hg_tenant_cfg_apply(&c, kv, n, 1, err, HG_ERR_LEN)) < 0)
		return rc;
	return hg_tenant_add(reg, name, &c, err);
}

int
hg_tenant_set_kv(struct hg_registry *reg, const char *name,
		 const struct hg_kv *kv, size_t n, char *err)
{
	int slot = hg_tenant_find(reg, name), rc;
	struct hg_tenant_cfg c;

	if (slot < 0) {
		ERR("unknown tenant '%s'", name);
		return -ENOENT;
	}
	if (n == 0) {
		ERR("nothing to set");
		return -EINVAL;
	}
	c = reg->t[slot].cfg;
	if ((rc = hg_tenant_cfg_apply(&c, kv, n, 0, err, HG_ERR_LEN)) < 0)
		return rc;
	return hg_tenant_update(reg, slot, &c, err);
}

int
hg_tenant_del(struct hg_registry *reg, const char *name, char *err)
{
	int slot = hg_tenant_find(reg, name);
	struct hg_tenant_sp *t;
	uint32_t p, apps;

	if (slot < 0) {
		ERR("unknown tenant '%s'", name);
		return -ENOENT;
	}
	t = &reg->t[slot];
	apps = hg_tenant_apps(t);
	if (apps > 0) {
		ERR("tenant '%s' has %u attached app%s; stop %s first", name, apps,
		    apps == 1 ? "" : "s", apps == 1 ? "it" : "them");
		return -EBUSY;
	}
	if (!cmd_room(reg, err))
		return -EAGAIN;
	pthread_mutex_lock(&reg->lock);
	if (t->cfg.port_hi != 0)
		for (p = t->cfg.port_lo; p <= t->cfg.port_hi; p++)
			hg_publish_port(reg, p, 0);
	hg_flow_remove(reg->dp, t->flow);
	t->flow = NULL;
	__atomic_fetch_sub(&reg->dp->rxq_tenants[t->rx_queue], 1, __ATOMIC_RELEASE);
	reg->txq_tenants[t->tx_queue]--;
	(void)hg_publish_state(reg, slot, HG_TENANT_DYING);	/* no memory */
	hg_aset_del(&reg->dp->active, (unsigned)slot);
	__atomic_fetch_sub(&reg->dp->n_active, 1, __ATOMIC_RELEASE);
	hg_cg_tenant_gone(name);
	t->releasing = 1;
	send_cmd(reg, (struct hg_cmd){ .op = HG_CMD_RELEASE_TENANT,
				       .tenant = (uint16_t)slot }, t->target);
	hg_tset_add(&reg->pending, (unsigned)slot);
	pthread_mutex_unlock(&reg->lock);
	HG_LOG(INFO, "tenant %s deleted", name);
	return 0;
}

/* Root, the tenant's uid, or a process whose group is the tenant's gid. */
static int
may_attach(const struct hg_tenant_sp *t, const struct hg_peer *peer)
{
	return peer->uid == 0 || peer->uid == t->cfg.uid ||
	       (t->cfg.gid >= 0 && (int64_t)peer->gid == t->cfg.gid);
}

int
hg_peer_owns_a_tenant(const struct hg_registry *reg, const struct hg_peer *peer)
{
	unsigned i;

	if (peer->uid == 0)
		return 1;
	for (i = 0; i < HG_MAX_TENANTS; i++)
		if (reg->t[i].used && !reg->t[i].releasing &&
		    may_attach(&reg->t[i], peer))
			return 1;
	return 0;
}

/* Each app may hold an equal share of a core's buffers (bufpart.h). */
static void
set_buffer_caps(struct hg_registry *reg, int slot)
{
	uint32_t c, n = hg_tenant_apps(&reg->t[slot]);
	uint32_t per = HG_N_BUFS / reg->dp->n_cores;

	for (c = 0; c < reg->dp->n_cores; c++)
		hg_bufpart_set_cap(&reg->dp->core[c].t[slot].bufs, per / (n ? n : 1));
}

int
hg_app_attach(struct hg_registry *reg, const char *tenant,
	      const struct hg_peer *peer, int *slot, int *app, char *err)
{
	unsigned i;
	int s = hg_tenant_find(reg, tenant);

	if (s < 0) {
		ERR("unknown tenant '%s'", tenant);
		return -ENOENT;
	}
	if (!may_attach(&reg->t[s], peer)) {
		reg->t[s].attach_refused++;
		reg->ctl.attach_refused++;
		HG_LOG(NOTICE, "pid %d (uid %u) refused: not an owner of tenant %s",
		       (int)peer->pid, (unsigned)peer->uid, tenant);
		ERR("tenant %s: permission denied", tenant);
		return -EACCES;
	}
	if (hg_tenant_apps(&reg->t[s]) >= reg->t[s].cfg.max_apps) {
		ERR("tenant '%s' has too many apps attached (max-apps %u)", tenant,
		    reg->t[s].cfg.max_apps);
		return -ENOSPC;
	}
	for (i = 0; i < HG_MAX_APPS; i++) {
		struct hg_app_sp *a = &reg->t[s].app[i];

		if (!a->used) {
			/* a new app must not see what the slot's last one left
			 * in its wait queue (stale handles) or control block */
			if (hg_region_reset_app(&reg->dp->tenant[s], i) < 0) {
				ERR("cannot reset app slot %u", i);
				return -EIO;
			}
			memset(a, 0, sizeof(*a));
			a->used = 1;
			a->pid = peer->pid;
			a->uid = peer->uid;
			*slot = s;
			*app = (int)i;
			set_buffer_caps(reg, s);
			HG_LOG(INFO, "app pid %d attached to tenant %s",
			       (int)peer->pid, tenant);
			hg_cg_admit(reg->t[s].name, peer->pid);
			return 0;
		}
	}
	ERR("tenant '%s' has too many apps attached (max %u)", tenant, HG_MAX_APPS);
	return -ENOSPC;
}

int
hg_app_ctx_open(struct hg_registry *reg, int slot, int app, uint32_t *ctx_out,
		int *bell_out, char *err)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_tenant *tn = &reg->dp->tenant[slot];
	struct hg_ctx_map *m = &t->map;
	struct hg_app_route *r = &m->route[app];
	struct hg_ctx_shm *cs;
	uint32_t ctx;
	int rc, bell;

	for (ctx = 0; ctx < HG_MAX_CTX && t->ctx_used[ctx]; ctx++)
		;
	if (ctx == HG_MAX_CTX) {
		ERR("tenant '%s' has no free context (max %u)", t->name, HG_MAX_CTX);
		return -ENOSPC;
	}
	rc = hg_region_reset_ctx(&t->region, tn, ctx, reg->dp->n_cores);
	if (rc < 0 && tn->ring[ctx][0][0] == NULL) {
		ERR("cannot set up the rings of context %u: %s", ctx, strerror(-rc));
		return rc;
	}
	if (rc < 0)
		HG_LOG(WARNING, "tenant %s: cannot restore the geometry of context "
		       "%u's rings in the app's view", t->name, ctx);
	/* a fresh doorbell per open: the last owner's copy rings nothing */
	bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (bell < 0) {
		rc = -errno;
		ERR("cannot make context %u's doorbell: %s", ctx, strerror(errno));
		return rc;
	}
	close_bell(tn, ctx);
	tn->bell[ctx] = bell;
	t->ctx_used[ctx] = 1;
	t->app[app].n_ctx++;
	cs = &tn->ctx_shm[ctx];
	memset(cs, 0, sizeof(*cs));
	cs->app = (uint32_t)app;
	cs->state = HG_CTX_OPEN;
	RTE_ASSERT(m->n_live < HG_MAX_CTX && r->n_ctx < HG_MAX_CTX);
	m->ctx_app[ctx] = (uint8_t)app;
	m->live_ctx[m->n_live++] = (uint8_t)ctx;
	r->ctx[r->n_ctx++] = (uint8_t)ctx;
	if ((rc = hg_publish_view(reg, slot)) < 0) {
		m->n_live--;
		r->n_ctx--;
		cs->state = HG_CTX_FREE;
		t->ctx_used[ctx] = 0;
		t->app[app].n_ctx--;
		close_bell(tn, ctx);
		ERR("out of memory for the tenant's view");
		return rc;
	}
	hg_core_publish_running(reg, slot);
	*ctx_out = ctx;
	*bell_out = bell;
	return 0;
}

int
hg_app_bind(struct hg_registry *reg, int slot, int app, uint32_t port, char *err)
{
	uint32_t e;
	int owner;

	if (port == 0 || port > 65535) {
		ERR("port %u out of range", port);
		return -EINVAL;
	}
	e = reg->dp->port_map[port];
	if (HG_PORT_TENANT(e) != slot) {
		ERR("port %u is not owned by tenant '%s'", port, reg->t[slot].name);
		return -EACCES;
	}
	owner = HG_PORT_APP(e);
	if (owner == app)
		return 0;
	if (owner >= 0) {
		ERR("port %u is already bound by app pid %d", port,
		    (int)reg->t[slot].app[owner].pid);
		return -EADDRINUSE;
	}
	hg_publish_port(reg, port, HG_PORT_ENTRY(slot, app));
	return 0;
}

/* Asks the cores to take a detached app's buffers back, now if their
 * rings have room, else from hg_registry_poll: a detach cannot fail. */
static void
send_reclaim(struct hg_registry *reg, int slot, int app)
{
	struct hg_app_sp *a = &reg->t[slot].app[app];
	char err[HG_ERR_LEN];

	if (a->reclaim_sent || !cmd_room(reg, err))
		return;
	send_cmd(reg, (struct hg_cmd){ .op = HG_CMD_RECLAIM_APP,
				       .tenant = (uint16_t)slot,
				       .app = (uint16_t)app }, a->target);
	a->reclaim_sent = 1;
}

/* Unpublishes everything of a dead app, then asks every core to take its
 * buffers back; the slots are reused once every core has done so. */
void
hg_app_detach(struct hg_registry *reg, int slot, int app)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_ctx_map *m = &t->map;
	struct hg_app_sp *a = &t->app[app];
	uint32_t p, k, n = 0;

	pthread_mutex_lock(&reg->lock);
	if (t->cfg.port_hi != 0)
		for (p = t->cfg.port_lo; p <= t->cfg.port_hi; p++)
			if (HG_PORT_APP(reg->dp->port_map[p]) == app)
				hg_publish_port(reg, p, HG_PORT_ENTRY(slot, -1));
	m->route[app].n_ctx = 0;
	for (k = 0; k < HG_MAX_CTX; k++)
		if (t->ctx_used[k] && m->ctx_app[k] == app)
			hg_core_forget(reg, slot, k);
	hg_core_app_gone(reg, slot, app);
	for (k = 0; k < m->n_live; k++)
		if (m->ctx_app[m->live_ctx[k]] != app)
			m->live_ctx[n++] = m->live_ctx[k];
	m->n_live = n;
	/* the cores must see it gone before they take its buffers back
	 * (hg_publish_view keeps a spare view for this) */
	if (hg_publish_view(reg, slot) < 0)
		HG_LOG(ERR, "tenant %s: out of memory for a view without app %d",
		       t->name, app);
	a->reclaiming = 1;
	hg_core_publish_running(reg, slot);
	send_reclaim(reg, slot, app);
	hg_tset_add(&reg->pending, (unsigned)slot);
	pthread_mutex_unlock(&reg->lock);
	hg_cg_release(a->pid);
	HG_LOG(INFO, "app pid %d of tenant %s detached", (int)a->pid,
	       reg->t[slot].name);
}

static void
finish_app(struct hg_registry *reg, int slot, int app)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_tenant *tn = &reg->dp->tenant[slot];
	uint32_t ctx;

	for (ctx = 0; ctx < HG_MAX_CTX; ctx++) {
		if (t->ctx_used[ctx] && t->map.ctx_app[ctx] == app) {
			tn->ctx_shm[ctx].state = HG_CTX_FREE;
			t->ctx_used[ctx] = 0;
			close_bell(tn, ctx);
		}
	}
	memset(&t->app[app], 0, sizeof(t->app[app]));
	set_buffer_caps(reg, slot);
}

/* Walks only the tenants with something waiting for the cores. */
void
hg_registry_poll(struct hg_registry *reg)
{
	unsigned a, left;
	int i;

	pthread_mutex_lock(&reg->lock);
	HG_TSET_FOREACH(i, &reg->pending) {
		struct hg_tenant_sp *t = &reg->t[i];

		left = 0;
		for (a = 0; a < HG_MAX_APPS; a++) {
			if (!t->app[a].reclaiming)
				continue;
			send_reclaim(reg, i, (int)a);
			if (t->app[a].reclaim_sent && cores_done(reg, t->app[a].target))
				finish_app(reg, i, (int)a);
			else
				left++;
		}
		if (t->releasing && cores_done(reg, t->target)) {
			(void)hg_publish_state(reg, i, HG_TENANT_FREE);	/* no memory */
			free_tenant(reg, i);
			left = 0;
		} else if (t->releasing) {
			left++;
		}
		if (left == 0)
			hg_tset_del(&reg->pending, (unsigned)i);
	}
	hg_publish_reclaim(reg);
	pthread_mutex_unlock(&reg->lock);
}

/* At shutdown, after the fast-path cores have stopped. */
void
hg_registry_fini(struct hg_registry *reg)
{
	unsigned i;

	for (i = 0; i < HG_MAX_TENANTS; i++)
		if (reg->t[i].used)
			free_tenant(reg, (int)i);
	hg_publish_fini(reg);
	hg_core_fini(reg);
	pthread_mutex_destroy(&reg->lock);
}

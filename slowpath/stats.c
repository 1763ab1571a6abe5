/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "../proto/counters.h"
#include "config.h"
#include "log.h"
#include "memif_server.h"
#include "credit_pool.h"
#include "port.h"
#include "refill.h"
#include "stats.h"
#include "xdp_link.h"

static void *
new_msg(struct hg_arena *a, size_t n, const ProtobufCMessageDescriptor *desc)
{
	void *m = hg_arena_alloc(a, n);

	if (m != NULL)
		protobuf_c_message_init(desc, m);
	return m;
}

#define NEW(a, type, name) ((type *)new_msg(a, sizeof(type), &hg__##name##__descriptor))
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static Hg__Counter **
counters(struct hg_arena *a, const uint64_t *v, const char *const *names,
	 unsigned n)
{
	Hg__Counter **c = hg_arena_alloc(a, n * sizeof(*c));
	unsigned i;

	for (i = 0; c && i < n; i++) {
		c[i] = NEW(a, Hg__Counter, counter);
		if (c[i] == NULL)
			return NULL;
		c[i]->name = (char *)names[i];
		c[i]->value = LOAD(v[i]);
	}
	return c;
}

/* ---- the counter tables (proto/counters.h) ---- */

/* A row as the daemon reads it: the name, and where in its record. */
struct counter_at {
	const char *name;
	size_t off;
};

#define CORE_AT(field, name, unit, help) { #name, offsetof(struct hg_fp_core, field) },
#define TENANT_AT(field, name, unit, help) { #name, offsetof(struct hg_fp_tenant, field) },
#define CONTROL_AT(field, name, unit, help) \
	{ #name, offsetof(struct hg_ctl_counters, field) },

static const struct counter_at core_at[] = { HG_CORE_COUNTERS(CORE_AT) };
static const struct counter_at tenant_at[] = { HG_TENANT_COUNTERS(TENANT_AT) };
static const struct counter_at control_at[] = { HG_CONTROL_COUNTERS(CONTROL_AT) };

/* every field a row names is read as a uint64_t */
#define IS_U64(rec, field) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((rec *)0)->field), \
						    uint64_t), #field " is a uint64_t");
#define CORE_U64(field, name, unit, help) IS_U64(struct hg_fp_core, field)
#define TENANT_U64(field, name, unit, help) IS_U64(struct hg_fp_tenant, field)
#define CONTROL_U64(field, name, unit, help) IS_U64(struct hg_ctl_counters, field)
HG_CORE_COUNTERS(CORE_U64)
HG_TENANT_COUNTERS(TENANT_U64)
HG_CONTROL_COUNTERS(CONTROL_U64)

static uint64_t
read_at(const void *rec, size_t off)
{
	return __atomic_load_n((const uint64_t *)((const char *)rec + off),
			       __ATOMIC_RELAXED);
}

/* Every row of a table, read from its record rec. */
static Hg__Counter **
table(struct hg_arena *a, const struct counter_at *at, size_t rows, const void *rec)
{
	Hg__Counter **c = hg_arena_alloc(a, rows * sizeof(*c));
	size_t i;

	for (i = 0; c && i < rows; i++) {
		if ((c[i] = NEW(a, Hg__Counter, counter)) == NULL)
			return NULL;
		c[i]->name = (char *)at[i].name;
		c[i]->value = read_at(rec, at[i].off);
	}
	return c;
}

static Hg__PointStats *
point(struct hg_arena *a, const struct hg_fp_tenant *ft, enum hg_point pt)
{
	Hg__PointStats *p = NEW(a, Hg__PointStats, point_stats);

	if (p) {
		p->cycles = LOAD(ft->cycles[pt]);
		p->nic_cycles = LOAD(ft->nic_cycles[pt]);
		p->throttles = LOAD(ft->throttles[pt]);
		p->unfunded = LOAD(ft->unfunded[pt]);
		p->packets = LOAD(ft->pkts[pt]);
	}
	return p;
}

static Hg__Credits *
credits_info(struct hg_arena *a, const struct hg_registry *reg, unsigned slot)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	Hg__Credits *c = NEW(a, Hg__Credits, credits);

	if (c == NULL)
		return NULL;
	c->pool = (uint64_t)t->pool;
	c->sessions = hg_credit_sessions(reg, (int)slot, &c->drained, &c->issued);
	c->dm_us = (double)t->dm_tsc * 1e6 / (double)rte_get_tsc_hz();
	c->has_withheld_budget = c->has_withheld_delay = c->has_budget_cuts = 1;
	c->withheld_budget = (uint64_t)t->withheld_budget;
	c->withheld_delay = (uint64_t)t->withheld_delay;
	c->budget_cuts = t->budget_cuts;
	return c;
}

/* The XDP program's counters of a tenant (a system call: slow path). */
static Hg__XdpCounts *
xdp_counts(struct hg_arena *a, unsigned slot)
{
	Hg__XdpCounts *x = NEW(a, Hg__XdpCounts, xdp_counts);
	struct hg_xdp_count n;

	if (x == NULL)
		return NULL;
	hg_xdp_count(slot, &n);
	x->passed = n.passed;
	x->dropped = n.dropped;
	x->has_over_share = 1;
	x->over_share = n.over_share;
	return x;
}

/* Core allocation: the workers and what CoreSync weighs. */
static Hg__Workers *
workers_info(struct hg_arena *a, struct hg_registry *reg, unsigned slot)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	const struct hg_core_state *cs = &t->core;
	Hg__Workers *w = NEW(a, Hg__Workers, workers);
	struct hg_app_times at;
	uint32_t drained = 0;
	int64_t issued = 0;
	char pol[32];

	if (w == NULL)
		return NULL;
	/* the policy's word as the settings table spells it */
	hg_setting_format(hg_tenant_setting_find("policy"), &t->cfg, pol, sizeof(pol));
	if ((w->policy = hg_arena_strdup(a, pol)) == NULL)
		return NULL;
	w->active = hg_core_active(reg, (int)slot);
	w->parked = cs->n_parked;
	w->parks = cs->parks;
	w->wakes_delay = cs->wakes_delay;
	w->wakes_self = cs->wakes_self;
	w->revocations = cs->revocations;
	w->revoked = cs->revoked;
	if (t->cfg.credit.rpc_hi != 0)
		w->credits_oc = hg_credit_sessions(reg, (int)slot, &drained, &issued);
	w->credits_prop = issued > (int64_t)w->credits_oc ? issued - w->credits_oc : 0;
	w->credits_target = t->cfg.core.r * w->active;
	w->overloaded = cs->overloaded || drained > 0;
	hg_core_app_times(reg, (int)slot, &at);
	w->cpu_ns = at.cpu_ns;
	w->cpu_util = at.cpu_util;
	w->has_cpu_wait_ns = w->has_cpu_wait_util = 1;
	w->cpu_wait_ns = at.wait_ns;
	w->cpu_wait_util = at.wait_util;
	return w;
}

/* One row of the settings table with c's value; schema: the row's bounds,
 * default, live and help too. */
static Hg__TenantSetting *
setting_msg(struct hg_arena *a, const struct hg_setting *s,
	    const struct hg_tenant_cfg *c, const struct hg_tenant_cfg *def,
	    int schema)
{
	Hg__TenantSetting *m = NEW(a, Hg__TenantSetting, tenant_setting);
	char v[96];

	if (m == NULL)
		return NULL;
	hg_setting_format(s, c, v, sizeof(v));
	m->key = (char *)s->name;
	m->value = hg_arena_strdup(a, v);
	m->number = hg_setting_numeric(s, v);
	m->is_default = hg_setting_same(s, c, def);
	if (schema) {
		hg_setting_bounds(s, v, sizeof(v));
		m->bounds = hg_arena_strdup(a, v);
		hg_setting_format(s, def, v, sizeof(v));
		m->def = hg_arena_strdup(a, v);
		m->has_live = 1;
		m->live = s->live;
		m->help = (char *)s->help;
		if (m->bounds == NULL || m->def == NULL)
			return NULL;
	}
	return m->value != NULL ? m : NULL;
}

/* Every row of the table (or only key's) for settings c; *n the count.
 * Stats, tenant list, tenant get and telemetry all show these. */
static Hg__TenantSetting **
settings_msgs(struct hg_arena *a, const struct hg_tenant_cfg *c,
	      const struct hg_tenant_cfg *def, const char *key, int schema,
	      size_t *n)
{
	const struct hg_settings *tab = hg_tenant_settings();
	const struct hg_setting *t = tab->row;
	Hg__TenantSetting **m;
	size_t rows = tab->n, i;

	*n = 0;
	if ((m = hg_arena_alloc(a, rows * sizeof(*m))) == NULL)
		return NULL;
	for (i = 0; i < rows; i++) {
		if (key != NULL && strcmp(key, t[i].name) != 0)
			continue;
		if ((m[*n] = setting_msg(a, &t[i], c, def, schema)) == NULL)
			return NULL;
		(*n)++;
	}
	return m;
}

Hg__TenantSettings *
hg_tenant_settings_collect(struct hg_registry *reg, int slot, const char *key,
			   struct hg_arena *a)
{
	Hg__TenantSettings *ts = NEW(a, Hg__TenantSettings, tenant_settings);
	struct hg_tenant_cfg def;

	if (ts == NULL)
		return NULL;
	hg_tenant_cfg_defaults(&def, hg_cfg.cap);
	if (slot >= 0)
		ts->name = reg->t[slot].name;
	ts->settings = settings_msgs(a, slot >= 0 ? &reg->t[slot].cfg : &def,
				     &def, key, 1, &ts->n_settings);
	return ts->settings != NULL ? ts : NULL;
}

/* The value below which a share p of the histogram's counts lie (the
 * bound of the bin that reaches it). */
static uint64_t
hist_pct(const uint64_t *h, uint64_t total, double p, unsigned base)
{
	uint64_t want = (uint64_t)((double)total * p), acc = 0;
	uint32_t b;

	for (b = 0; b < HG_HIST_BINS; b++)
		if ((acc += h[b]) > want)
			return hg_hist_high(b, base);
	return hg_hist_high(HG_HIST_BINS - 1, base);
}

/* One class summed over the tenant's contexts in use. */
struct class_sum {
	uint64_t n, svc, queue, svc_h[HG_HIST_BINS], slow_h[HG_HIST_BINS];
};

static void
sum_classes(const struct hg_registry *reg, unsigned slot, struct class_sum *sum)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	const struct hg_tenant *tn = &reg->dp->tenant[slot];
	uint32_t ctx, c, b;

	memset(sum, 0, sizeof(*sum) * HG_CLASSES_SHM);
	for (ctx = 0; ctx < HG_MAX_CTX; ctx++) {
		const struct hg_class_block *blk;

		if (!t->ctx_used[ctx])
			continue;
		blk = (const void *)(tn->base + tn->lay.class_off +
				     (uint64_t)ctx * tn->lay.class_stride);
		for (c = 0; c < HG_CLASSES_SHM; c++) {
			const struct hg_class_shm *k = &blk->c[c];

			sum[c].n += LOAD(k->requests);
			sum[c].svc += LOAD(k->service_tsc);
			sum[c].queue += LOAD(k->queue_tsc);
			for (b = 0; b < HG_HIST_BINS; b++) {
				sum[c].svc_h[b] += LOAD(k->service_hist[b]);
				sum[c].slow_h[b] += LOAD(k->slowdown_hist[b]);
			}
		}
	}
}

static Hg__ClassStats *
class_stats(struct hg_arena *a, uint32_t cls, const struct class_sum *s,
	    double us_per_tsc)
{
	Hg__ClassStats *m = NEW(a, Hg__ClassStats, class_stats);
	uint64_t hn = 0;
	uint32_t b;

	if (m == NULL)
		return NULL;
	for (b = 0; b < HG_HIST_BINS; b++)
		hn += s->slow_h[b];
	m->cls = cls;
	m->requests = s->n;
	m->service_mean_us = (double)s->svc / (double)s->n * us_per_tsc;
	m->queue_mean_us = (double)s->queue / (double)s->n * us_per_tsc;
	m->service_p99_us = (double)hist_pct(s->svc_h, hn, 0.99, HG_HIST_SVC_BASE) *
			    us_per_tsc;
	m->slowdown_p99 = (double)hist_pct(s->slow_h, hn, 0.99, HG_HIST_SLOW_BASE) / 16;
	m->slowdown_p999 = (double)hist_pct(s->slow_h, hn, 0.999,
					    HG_HIST_SLOW_BASE) / 16;
	return m;
}

/* The classes that saw requests, and DARC's reservation count. */
static int
classes_info(struct hg_registry *reg, unsigned slot, Hg__TenantStats *ts,
	     struct hg_arena *a)
{
	struct class_sum sum[HG_CLASSES_SHM];	/* 12 KiB: on the stack, not
						 * in a reply over 4,096 tenants */
	double us = 1e6 / (double)rte_get_tsc_hz();
	uint32_t c, app;

	if ((ts->classes = hg_arena_alloc(a, HG_CLASSES_SHM * sizeof(void *))) == NULL)
		return -1;
	sum_classes(reg, slot, sum);
	for (c = 0; c < HG_CLASSES_SHM; c++)
		if (sum[c].n != 0 &&
		    (ts->classes[ts->n_classes++] = class_stats(a, c, &sum[c], us)) == NULL)
			return -1;
	ts->has_darc_updates = 1;
	for (app = 0; app < HG_MAX_APPS; app++)
		if (reg->t[slot].app[app].used)
			ts->darc_updates += LOAD(reg->dp->tenant[slot].app_shm[app].darc_updates);
	return 0;
}

static Hg__TenantStats *
tenant_stats(struct hg_registry *reg, unsigned slot,
	     const struct hg_tenant_cfg *def, struct hg_arena *a)
{
	Hg__TenantStats *ts = NEW(a, Hg__TenantStats, tenant_stats);
	uint32_t c, n = reg->dp->n_cores;
	uint64_t now = rte_rdtsc();

	if (ts == NULL)
		return NULL;
	ts->name = reg->t[slot].name;
	ts->id = slot;
	ts->settings = settings_msgs(a, &reg->t[slot].cfg, def, NULL, 0,
				     &ts->n_settings);
	if (ts->settings == NULL)
		return NULL;
	ts->has_effective_cap = 1;
	ts->effective_cap = hg_refill_cap(&reg->t[slot]);
	ts->cores = hg_arena_alloc(a, n * sizeof(*ts->cores));
	if (ts->cores == NULL)
		return NULL;
	ts->n_cores = n;
	for (c = 0; c < n; c++) {
		const struct hg_fp_tenant *ft = &reg->dp->core[c].t[slot];
		Hg__TenantCoreStats *cs = NEW(a, Hg__TenantCoreStats,
					      tenant_core_stats);

		if (cs == NULL)
			return NULL;
		cs->core = c;
		cs->budget = hg_budget_peek(&ft->bud, LOAD(reg->dp->tenant_live[slot].rate),
					    hg_refill_cap(&reg->t[slot]),
					    hg_budget_clock(&reg->dp->core[c], now));
		cs->debt = cs->budget < 0 ? (uint64_t)-cs->budget : 0;
		cs->counters = table(a, tenant_at, RTE_DIM(tenant_at), ft);
		cs->n_counters = RTE_DIM(tenant_at);
		cs->rx = point(a, ft, HG_PT_RX);
		cs->tx = point(a, ft, HG_PT_TX);
		cs->sched = point(a, ft, HG_PT_SCHED);
		cs->drops = counters(a, ft->drops, hg_tenant_drop_names, HG_TDROP_N);
		cs->n_drops = HG_TDROP_N;
		if (!cs->rx || !cs->tx || !cs->sched || !cs->drops || !cs->counters)
			return NULL;
		ts->cores[c] = cs;
	}
	if (classes_info(reg, slot, ts, a) < 0 ||
	    (ts->workers = workers_info(a, reg, slot)) == NULL)
		return NULL;
	if (hg_xdp_link() && (ts->xdp = xdp_counts(a, slot)) == NULL)
		return NULL;
	/* drained sessions are the persistent-overload signal (CoreSync) */
	if (reg->t[slot].cfg.credit.rpc_hi != 0 &&
	    (ts->credits = credits_info(a, reg, slot)) == NULL)
		return NULL;
	return ts;
}

static Hg__RxQueueStats **
rx_queue_stats(const struct hg_fp_core *fc, struct hg_arena *a)
{
	Hg__RxQueueStats **qs = hg_arena_alloc(a, fc->n_rxq * sizeof(*qs));
	uint32_t i;

	for (i = 0; qs != NULL && i < fc->n_rxq; i++) {
		if ((qs[i] = NEW(a, Hg__RxQueueStats, rx_queue_stats)) == NULL)
			return NULL;
		qs[i]->queue = fc->rxq[i].id;
		qs[i]->has_port = 1;
		qs[i]->port = fc->rxq[i].port;
		qs[i]->group = fc->rxq[i].group;
		qs[i]->packets = LOAD(fc->rxq[i].pkts);
		qs[i]->deferred = LOAD(fc->rxq[i].deferred);
		qs[i]->has_held = 1;
		qs[i]->held = LOAD(fc->rxq[i].held);
		qs[i]->has_bursts = 1;
		qs[i]->bursts = LOAD(fc->rxq[i].bursts);
	}
	return qs;
}

/* The frames each TX group's own ring took (link.h's
 * hg_link_tx_per_tenant: 0 while the peer gave fewer rings). */
static uint64_t *
tx_queue_stats(const struct hg_fp_core *fc, uint32_t n, struct hg_arena *a)
{
	uint64_t *v = hg_arena_alloc(a, n * sizeof(*v));
	uint32_t g;

	RTE_VERIFY(n <= HG_MAX_TXQ);
	for (g = 0; v != NULL && g < n; g++)
		v[g] = LOAD(fc->txq_pkts[g]);
	return v;
}

static Hg__CoreStats *
core_stats(const struct hg_dp *dp, const struct hg_fp_core *fc, struct hg_arena *a)
{
	Hg__CoreStats *cs = NEW(a, Hg__CoreStats, core_stats);

	if (cs == NULL)
		return NULL;
	cs->core = fc->idx;
	cs->counters = table(a, core_at, RTE_DIM(core_at), fc);
	cs->n_counters = RTE_DIM(core_at);
	cs->has_rx_interrupts = 1;
	cs->rx_interrupts = LOAD(fc->n_armed);
	cs->drops = counters(a, fc->drops, hg_core_drop_names, HG_DROP_N);
	cs->n_drops = HG_DROP_N;
	cs->rx_queues = rx_queue_stats(fc, a);
	cs->n_rx_queues = fc->n_rxq;
	if (dp->mif != NULL && dp->txq_per_core > 1) {	/* with a peer or not */
		cs->tx_queue_packets = tx_queue_stats(fc, dp->txq_per_core, a);
		cs->n_tx_queue_packets = dp->txq_per_core;
	}
	return cs->drops && cs->rx_queues && cs->counters &&
	       (cs->n_tx_queue_packets == 0 || cs->tx_queue_packets) ? cs : NULL;
}

/* Does a reply show tenant i (all live tenants, or only slot)? */
static int
shown(const struct hg_registry *reg, unsigned i, int slot)
{
	return reg->t[i].used && !reg->t[i].releasing &&
	       (slot < 0 || (int)i == slot);
}

/* A reply's tenant array, sized to what it shows: sized to the 4,096
 * possible tenants, every request allocated 32 KiB for a handful. */
static void *
tenant_array(const struct hg_registry *reg, int slot, struct hg_arena *a)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < HG_MAX_TENANTS; i++)
		n += (size_t)shown(reg, i, slot);
	return hg_arena_alloc(a, (n ? n : 1) * sizeof(void *));
}

/* The memif link's server, for the operator (stats is an operator
 * command: the peer's name is no tenant's secret). */
static Hg__MemifStats *
memif_stats(struct hg_arena *a, const struct hg_memif_server *srv)
{
	Hg__MemifStats *m = NEW(a, Hg__MemifStats, memif_stats);
	struct hg_memif_status st;

	if (m == NULL)
		return NULL;
	hg_memif_get_status(srv, &st);
	m->connected = st.connected;
	m->rx_rings = st.rx_rings;
	m->tx_rings = st.tx_rings;
	m->ring_slots = st.ring_slots;
	m->connects = st.connects;
	m->refused = st.refused;
	m->kicks = st.kicks;
	m->peer = hg_arena_strdup(a, st.peer);
	m->refusal = hg_arena_strdup(a, st.refusal);
	return m->peer != NULL && m->refusal != NULL ? m : NULL;
}

Hg__Stats *
hg_stats_collect(struct hg_registry *reg, int slot, struct hg_arena *a)
{
	Hg__Stats *s = NEW(a, Hg__Stats, stats);
	uint32_t i, n = reg->dp->n_cores;
	struct hg_tenant_cfg def;

	if (s == NULL)
		return NULL;
	hg_tenant_cfg_defaults(&def, hg_cfg.cap);
	s->tsc_hz = rte_get_tsc_hz();
	s->tenants = tenant_array(reg, slot, a);
	s->cores = hg_arena_alloc(a, n * sizeof(*s->cores));
	if (s->tenants == NULL || s->cores == NULL)
		return NULL;
	for (i = 0; i < HG_MAX_TENANTS; i++) {
		if (!shown(reg, i, slot))
			continue;
		if ((s->tenants[s->n_tenants++] = tenant_stats(reg, i, &def, a)) == NULL)
			return NULL;
	}
	s->has_tsc = 1;
	s->tsc = rte_rdtsc();
	for (i = 0; i < n; i++)
		if ((s->cores[s->n_cores++] = core_stats(reg->dp, &reg->dp->core[i], a)) == NULL)
			return NULL;
	if ((s->control = NEW(a, Hg__ControlStats, control_stats)) == NULL)
		return NULL;
	s->control->counters = table(a, control_at, RTE_DIM(control_at), &reg->ctl);
	s->control->n_counters = RTE_DIM(control_at);
	if (reg->memif != NULL && (s->memif = memif_stats(a, reg->memif)) == NULL)
		return NULL;
	if (hg_xdp_link() && (s->xdp_other = xdp_counts(a, HG_XDP_OTHER)) == NULL)
		return NULL;
	return s->control->counters ? s : NULL;
}

static Hg__Steering *
steering_info(struct hg_arena *a, const struct hg_tenant_sp *t,
	      const struct hg_tenant *tn)
{
	Hg__Steering *s = NEW(a, Hg__Steering, steering);
	const struct hg_app_shm *apps = tn->app_shm;
	unsigned i;

	if (s == NULL)
		return NULL;
	s->preemptions = t->preemptions;
	for (i = 0; i < HG_MAX_APPS; i++)
		s->congested_apps += t->app[i].used && apps[i].check_wait_queue;
	return s;
}

static int
bound_ports(struct hg_registry *reg, unsigned slot, Hg__TenantInfo *ti,
	    struct hg_arena *a)
{
	const struct hg_tenant_cfg *c = &reg->t[slot].cfg;
	uint32_t p;

	if (c->port_hi == 0)
		return 0;
	ti->bound_ports = hg_arena_alloc(a, (c->port_hi - c->port_lo + 1u) *
					    sizeof(uint32_t));
	if (ti->bound_ports == NULL)
		return -1;
	for (p = c->port_lo; p <= c->port_hi; p++)
		if (HG_PORT_APP(reg->dp->port_map[p]) >= 0)
			ti->bound_ports[ti->n_bound_ports++] = p;
	return 0;
}

static Hg__TenantInfo *
tenant_info(struct hg_registry *reg, unsigned slot,
	    const struct hg_tenant_cfg *def, struct hg_arena *a)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	Hg__TenantInfo *ti = NEW(a, Hg__TenantInfo, tenant_info);
	uint32_t ctx;

	if (ti == NULL)
		return NULL;
	ti->name = (char *)t->name;
	ti->id = slot;
	ti->settings = settings_msgs(a, &t->cfg, def, NULL, 0, &ti->n_settings);
	ti->effective_cap = hg_refill_cap(t);
	ti->cost = t->cost;
	ti->steering = steering_info(a, t, &reg->dp->tenant[slot]);
	if (t->cfg.credit.rpc_hi != 0)
		ti->credits = credits_info(a, reg, slot);
	if (ti->settings == NULL || ti->steering == NULL ||
	    (t->cfg.credit.rpc_hi != 0 && ti->credits == NULL))
		return NULL;
	ti->attach_refused = t->attach_refused;
	ti->has_rx_queue = 1;
	ti->rx_queue = t->rx_queue;
	ti->has_tx_queue = 1;
	ti->tx_queue = t->tx_queue;
	ti->apps = hg_tenant_apps(t);
	for (ctx = 0; ctx < HG_MAX_CTX; ctx++)
		ti->contexts += t->ctx_used[ctx];
	return bound_ports(reg, slot, ti, a) == 0 ? ti : NULL;
}

Hg__TenantList *
hg_tenants_collect(struct hg_registry *reg, struct hg_arena *a)
{
	Hg__TenantList *l = NEW(a, Hg__TenantList, tenant_list);
	struct hg_tenant_cfg def;
	unsigned i;

	if (l == NULL)
		return NULL;
	hg_tenant_cfg_defaults(&def, hg_cfg.cap);
	l->has_rx_queues_per_core = l->has_fp_cores = 1;
	l->rx_queues_per_core = reg->dp->rxq_per_core;
	l->has_tx_queues_per_core = 1;
	l->tx_queues_per_core = reg->dp->txq_per_core;
	l->fp_cores = reg->dp->n_cores;
	l->has_link_queues = 1;
	for (i = 0; i < reg->dp->n_cores; i++)
		l->link_queues += reg->dp->core[i].n_rxq;
	l->rx_steering = (char *)hg_port_steering(reg->dp);
	l->tenants = tenant_array(reg, -1, a);
	if (l->tenants == NULL)
		return NULL;
	for (i = 0; i < HG_MAX_TENANTS; i++) {
		if (!shown(reg, i, -1))
			continue;
		if ((l->tenants[l->n_tenants++] = tenant_info(reg, i, &def, a)) == NULL)
			return NULL;
	}
	return l;
}

/* ---- DPDK telemetry: the same views as /hourglass/... commands ---- */

static struct hg_registry *tel_reg;

static void
tel_counters(struct rte_tel_data *d, const char *key, Hg__Counter **c, size_t n)
{
	struct rte_tel_data *x = rte_tel_data_alloc();
	size_t i;

	if (x == NULL)
		return;
	rte_tel_data_start_dict(x);
	for (i = 0; i < n; i++)
		rte_tel_data_add_dict_u64(x, c[i]->name, c[i]->value);
	rte_tel_data_add_dict_container(d, key, x, 0);
}

/* One setting: telemetry takes names of letters, digits and '_' only (it
 * dropped every hyphenated key), so '-' becomes '_'; a whole number goes
 * as a number, anything else (ranges, words, fractions: telemetry has no
 * doubles) as text. */
static void
tel_setting(struct rte_tel_data *x, const char *key, const char *value)
{
	char name[RTE_TEL_MAX_STRING_LEN], *end;
	unsigned long long u;
	size_t i;

	snprintf(name, sizeof(name), "%s", key);
	for (i = 0; name[i] != '\0'; i++)
		if (name[i] == '-')
			name[i] = '_';
	errno = 0;
	u = strtoull(value, &end, 10);
	if (value[0] >= '0' && value[0] <= '9' && *end == '\0' && errno == 0)
		rte_tel_data_add_dict_u64(x, name, u);
	else
		rte_tel_data_add_dict_string(x, name, value);
}

/* A tenant's settings under the table's keys, as /hourglass/config's. */
static void
tel_settings(struct rte_tel_data *x, Hg__TenantSetting **s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tel_setting(x, s[i]->key, s[i]->value);
}

/* A tenant's classes, "class0" ... (telemetry has no doubles: ns and
 * slowdowns x 1000). */
static void
tel_classes(struct rte_tel_data *x, const Hg__TenantStats *ts)
{
	struct rte_tel_data *c;
	char key[16];
	size_t i;

	for (i = 0; i < ts->n_classes; i++) {
		const Hg__ClassStats *k = ts->classes[i];

		if ((c = rte_tel_data_alloc()) == NULL)
			return;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "requests", k->requests);
		rte_tel_data_add_dict_u64(c, "service_mean_ns",
					  (uint64_t)(k->service_mean_us * 1000));
		rte_tel_data_add_dict_u64(c, "service_p99_ns",
					  (uint64_t)(k->service_p99_us * 1000));
		rte_tel_data_add_dict_u64(c, "queue_mean_ns",
					  (uint64_t)(k->queue_mean_us * 1000));
		rte_tel_data_add_dict_u64(c, "slowdown_p999_milli",
					  (uint64_t)(k->slowdown_p999 * 1000));
		snprintf(key, sizeof(key), "class%u", k->cls);
		rte_tel_data_add_dict_container(x, key, c, 0);
	}
}

/* One tenant, summed over cores: cycles and packets per point, drops. */
static void
tel_tenant(struct rte_tel_data *d, const Hg__TenantStats *ts)
{
	static const char *const key[3][2] = {
		{ "rx_cycles", "rx_packets" }, { "tx_cycles", "tx_packets" },
		{ "sched_cycles", "sched_packets" } };
	struct rte_tel_data *x = rte_tel_data_alloc(), *dr = rte_tel_data_alloc();
	uint64_t v[3][2] = { { 0 } }, drops[HG_TDROP_N] = { 0 };
	uint64_t sum[RTE_DIM(tenant_at)] = { 0 };
	size_t c, i;

	if (x == NULL || dr == NULL) {
		rte_tel_data_free(x);
		rte_tel_data_free(dr);
		return;
	}
	for (c = 0; c < ts->n_cores; c++) {
		const Hg__PointStats *p[3] = { ts->cores[c]->rx, ts->cores[c]->tx,
					       ts->cores[c]->sched };

		for (i = 0; i < 3; i++) {
			v[i][0] += p[i]->cycles;
			v[i][1] += p[i]->packets;
		}
		for (i = 0; i < ts->cores[c]->n_drops && i < HG_TDROP_N; i++)
			drops[i] += ts->cores[c]->drops[i]->value;
		for (i = 0; i < ts->cores[c]->n_counters && i < RTE_DIM(sum); i++)
			sum[i] += ts->cores[c]->counters[i]->value;
	}
	rte_tel_data_start_dict(x);
	for (i = 0; i < 3; i++) {
		rte_tel_data_add_dict_u64(x, key[i][0], v[i][0]);
		rte_tel_data_add_dict_u64(x, key[i][1], v[i][1]);
	}
	tel_settings(x, ts->settings, ts->n_settings);
	rte_tel_data_add_dict_u64(x, "effective_cap", ts->effective_cap);
	for (i = 0; i < RTE_DIM(sum); i++)
		rte_tel_data_add_dict_u64(x, tenant_at[i].name, sum[i]);
	if (ts->credits != NULL) {
		rte_tel_data_add_dict_u64(x, "credit_pool", ts->credits->pool);
		rte_tel_data_add_dict_u64(x, "rpc_sessions", ts->credits->sessions);
		rte_tel_data_add_dict_u64(x, "drained_sessions", ts->credits->drained);
		rte_tel_data_add_dict_u64(x, "credits_withheld_budget",
					  ts->credits->withheld_budget);
		rte_tel_data_add_dict_u64(x, "credits_withheld_delay",
					  ts->credits->withheld_delay);
	}
	if (ts->workers != NULL) {
		const Hg__Workers *w = ts->workers;

		rte_tel_data_add_dict_string(x, "policy", w->policy);
		rte_tel_data_add_dict_u64(x, "workers_active", w->active);
		rte_tel_data_add_dict_u64(x, "workers_parked", w->parked);
		rte_tel_data_add_dict_u64(x, "parks", w->parks);
		rte_tel_data_add_dict_u64(x, "wakes_delay", w->wakes_delay);
		rte_tel_data_add_dict_u64(x, "wakes_self", w->wakes_self);
		rte_tel_data_add_dict_u64(x, "credits_prop", (uint64_t)w->credits_prop);
		rte_tel_data_add_dict_u64(x, "credits_oc", w->credits_oc);
		rte_tel_data_add_dict_u64(x, "cpu_ns", w->cpu_ns);
		rte_tel_data_add_dict_u64(x, "cpu_wait_ns", w->cpu_wait_ns);
	}
	if (ts->xdp != NULL) {
		rte_tel_data_add_dict_u64(x, "xdp_passed", ts->xdp->passed);
		rte_tel_data_add_dict_u64(x, "xdp_dropped", ts->xdp->dropped);
	}
	rte_tel_data_start_dict(dr);
	for (i = 0; i < HG_TDROP_N; i++)
		rte_tel_data_add_dict_u64(dr, hg_tenant_drop_names[i], drops[i]);
	rte_tel_data_add_dict_container(x, "drops", dr, 0);
	tel_classes(x, ts);
	rte_tel_data_add_dict_container(d, ts->name, x, 0);
}

static int
fill_stats(struct rte_tel_data *d, struct hg_arena *a)
{
	Hg__Stats *s = hg_stats_collect(tel_reg, -1, a);
	char key[32];
	size_t i;

	if (s == NULL)
		return -ENOMEM;
	rte_tel_data_add_dict_u64(d, "tsc_hz", s->tsc_hz);
	rte_tel_data_add_dict_u64(d, "tsc", s->tsc);
	for (i = 0; i < s->n_tenants; i++)
		tel_tenant(d, s->tenants[i]);
	for (i = 0; i < s->n_cores; i++) {
		snprintf(key, sizeof(key), "core%u_drops", s->cores[i]->core);
		tel_counters(d, key, s->cores[i]->drops, s->cores[i]->n_drops);
		snprintf(key, sizeof(key), "core%u", s->cores[i]->core);
		tel_counters(d, key, s->cores[i]->counters, s->cores[i]->n_counters);
	}
	tel_counters(d, "control", s->control->counters, s->control->n_counters);
	return 0;
}

static int
fill_tenants(struct rte_tel_data *d, struct hg_arena *a)
{
	Hg__TenantList *l = hg_tenants_collect(tel_reg, a);
	struct rte_tel_data *x;
	size_t i;

	for (i = 0; l != NULL && i < l->n_tenants; i++) {
		if ((x = rte_tel_data_alloc()) == NULL)
			break;
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_u64(x, "id", l->tenants[i]->id);
		tel_settings(x, l->tenants[i]->settings, l->tenants[i]->n_settings);
		rte_tel_data_add_dict_u64(x, "apps", l->tenants[i]->apps);
		rte_tel_data_add_dict_u64(x, "contexts", l->tenants[i]->contexts);
		rte_tel_data_add_dict_container(d, l->tenants[i]->name, x, 0);
	}
	return l ? 0 : -ENOMEM;
}

static void
tel_config_entry(void *arg, const char *key, const char *value, int live,
		 const char *help)
{
	(void)live;
	(void)help;
	tel_setting(arg, key, value);
}

static int
fill_config(struct rte_tel_data *d, struct hg_arena *a)
{
	(void)a;
	hg_config_foreach(tel_config_entry, d);
	return 0;
}

/* Every view: a dict filled under the registry lock (DPDK's telemetry
 * thread reads while the slow path may change tenants), its reply
 * memory freed after. */
static int
tel_view(struct rte_tel_data *d, int (*fill)(struct rte_tel_data *,
					     struct hg_arena *))
{
	struct hg_arena a = { 0 };
	int rc;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_reg->lock);
	rc = fill(d, &a);
	pthread_mutex_unlock(&tel_reg->lock);
	hg_arena_free(&a);
	return rc;
}

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	return tel_view(d, fill_stats);
}

static int
tel_tenants(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	return tel_view(d, fill_tenants);
}

static int
tel_config(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *d)
{
	return tel_view(d, fill_config);
}

void
hg_telemetry_register(struct hg_registry *reg)
{
	tel_reg = reg;
	rte_telemetry_register_cmd("/hourglass/stats", tel_stats,
				   "Per-tenant cycles and packets per point, drops");
	rte_telemetry_register_cmd("/hourglass/tenants", tel_tenants,
				   "Tenants: every setting, apps, contexts");
	rte_telemetry_register_cmd("/hourglass/config", tel_config,
				   "Daemon settings");
}

/* "rx_ring_full 12 no_buffer 3" of the counters that moved since seen[],
 * which is brought up to date; empty if none did. */
static void
moved(char *out, size_t n, const uint64_t *now, uint64_t *seen, size_t k,
      const char *const *names)
{
	size_t i, off = 0;

	out[0] = '\0';
	for (i = 0; i < k; i++) {
		/* a slot taken again starts its counters from 0 */
		uint64_t d = now[i] >= seen[i] ? now[i] - seen[i] : now[i];

		if (d != 0 && off < n)
			off += (size_t)snprintf(out + off, n - off, " %s %" PRIu64,
						names[i], d);
		seen[i] = now[i];
	}
}

void
hg_stats_log_drops(struct hg_registry *reg)
{
	static uint64_t core_seen[HG_MAX_FP_CORES][HG_DROP_N];
	const struct hg_dp *dp = reg->dp;
	uint64_t now[(size_t)HG_TDROP_N > (size_t)HG_DROP_N ? (size_t)HG_TDROP_N : (size_t)HG_DROP_N];
	char line[512];
	uint32_t c, i, d;

	if (!rte_log_can_log(hg_logtype, RTE_LOG_DEBUG))
		return;
	for (c = 0; c < dp->n_cores; c++) {
		for (d = 0; d < HG_DROP_N; d++)
			now[d] = LOAD(dp->core[c].drops[d]);
		moved(line, sizeof(line), now, core_seen[c], HG_DROP_N, hg_core_drop_names);
		if (line[0])
			HG_LOG(DEBUG, "core %u drops in the last second:%s", c, line);
	}
	for (i = 0; i < HG_MAX_TENANTS; i++) {
		struct hg_tenant_sp *t = &reg->t[i];

		if (!t->used)
			continue;
		memset(now, 0, sizeof(now));
		for (c = 0; c < dp->n_cores; c++)
			for (d = 0; d < HG_TDROP_N; d++)
				now[d] += LOAD(dp->core[c].t[i].drops[d]);
		moved(line, sizeof(line), now, t->drops_logged, HG_TDROP_N,
		      hg_tenant_drop_names);
		if (line[0])
			HG_LOG(DEBUG, "tenant %s drops in the last second:%s", t->name, line);
	}
}

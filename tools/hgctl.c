/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgctl: operator CLI for hourglassd. Commands are registered in one table
 * with their argument counts and the options they take, so every misuse is
 * reported the same way: one line on stderr and exit status 2; a refusal
 * from the daemon is one line and exit status 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl_frame.h"
#include "counters.h"
#include "../common/hg_util.h"

#define MAX_PAIRS 64		/* --KEY VALUE settings on one command */

enum { O_TENANT = 1,		/* --tenant NAME (stats) */
       O_SETTINGS = 2,		/* --KEY VALUE tenant settings */
       O_WATCH = 4 };		/* --interval S [--count N] (stats) */

/* The settings are the daemon's table: hgctl forwards every --KEY VALUE
 * it does not know itself as a pair, and the daemon checks it, so every
 * client gets the same answer and a new setting needs no new hgctl. */
struct opts {
	const char *ctl;
	int json, help;
	const char *tenant;
	double interval;	/* stats: seconds between views, 0: once */
	long count;		/* stats: views, 0: until interrupted */
	Hg__KeyValue kv[MAX_PAIRS];
	Hg__KeyValue *kvp[MAX_PAIRS];
	size_t n_kv;
	const char *first_kv;	/* the first pair's flag, for errors */
};

struct cmd {
	const char *w1, *w2;	/* command words; w2 NULL for one word */
	int min_args, max_args;	/* positional arguments after the words */
	unsigned allowed;	/* O_* options it takes */
	const char *usage;
	Hg__Request__BodyCase body;
	Hg__Response__BodyCase reply;	/* what a success carries */
	int (*print)(const Hg__Response *rsp, const struct opts *o);
};

#define die_usage(...) hg_die(2, "hgctl", " (see hgctl --help)", __VA_ARGS__)

/* ---- requests ---- */

/* Fills r's body for cmd from its words a and the options; every body
 * lives in static storage. tenant get without a name (what `tenant add|set
 * --help` asks) is the table itself. tenant add and set share a oneof
 * slot and a message. */
static void
build(Hg__Request *r, const struct cmd *cmd, char **a, const struct opts *o)
{
	static Hg__TenantChange change = HG__TENANT_CHANGE__INIT;
	static Hg__TenantGet get = HG__TENANT_GET__INIT;
	static Hg__TenantName name = HG__TENANT_NAME__INIT;
	static Hg__StatsGet stats = HG__STATS_GET__INIT;
	static Hg__ConfigGet cget = HG__CONFIG_GET__INIT;
	static Hg__ConfigSet cset = HG__CONFIG_SET__INIT;
	static Hg__Empty empty = HG__EMPTY__INIT;

	/* every body gets its fields; only cmd's is sent */
	change.name = get.name = name.name = a[0];
	change.settings = (Hg__KeyValue **)o->kvp;
	change.n_settings = o->n_kv;
	get.key = a[0] ? a[1] : NULL;
	stats.tenant = (char *)o->tenant;
	cget.key = cset.key = a[0];
	cset.value = a[1];
	if (cmd->body == HG__REQUEST__BODY_TENANT_SET && o->n_kv == 0)
		die_usage("tenant set: give at least one setting");
	r->body_case = cmd->body;
	switch (cmd->body) {
	case HG__REQUEST__BODY_TENANT_ADD:
	case HG__REQUEST__BODY_TENANT_SET: r->tenant_add = &change; break;
	case HG__REQUEST__BODY_TENANT_GET: r->tenant_get = &get; break;
	case HG__REQUEST__BODY_TENANT_DEL: r->tenant_del = &name; break;
	case HG__REQUEST__BODY_STATS: r->stats = &stats; break;
	case HG__REQUEST__BODY_CONFIG_GET: r->config_get = &cget; break;
	case HG__REQUEST__BODY_CONFIG_SET: r->config_set = &cset; break;
	default: r->tenant_list = &empty;	/* tenant list, config reload */
	}
}

/* ---- output ---- */

static int
emit_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(j);
	if (s == NULL)
		return 1;
	puts(s);
	free(s);
	return 0;
}

static int
p_ok(const Hg__Response *rsp, const struct opts *o)
{
	(void)rsp;
	return o->json ? emit_json(json_pack("{s:b}", "ok", 1)) : 0;
}

/* JSON has one kind of number; an integer is written as one (7000, not
 * 7000.0), anything else as a double. */
static json_t *
number_json(const char *v)
{
	if (strpbrk(v, ".eE") != NULL)
		return json_real(strtod(v, NULL));
	return json_integer((json_int_t)strtoll(v, NULL, 10));
}

/* A tenant's settings under the table's keys. */
static json_t *
settings_into(json_t *j, Hg__TenantSetting **s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_object_set_new(j, s[i]->key, s[i]->number
				    ? number_json(s[i]->value)
				    : json_string(s[i]->value));
	return j;
}

/* The settings that differ from the defaults, as "KEY=VALUE ...". */
static void
print_set(Hg__TenantSetting **s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!s[i]->is_default)
			printf("%s%s=%s", k++ ? " " : "", s[i]->key, s[i]->value);
	puts(k ? "" : "(defaults)");
}

/* The credit controller's state; null for a tenant without RPC ports. */
static json_t *
credits_json(const Hg__Credits *c)
{
	return c == NULL ? json_null() : json_pack("{s:I, s:I, s:i, s:i, s:f, s:I, s:I, s:I}",
			 "pool", (json_int_t)c->pool, "issued", (json_int_t)c->issued,
			 "sessions", (int)c->sessions, "drained", (int)c->drained,
			 "dm_us", c->dm_us,
			 "withheld_budget", (json_int_t)c->withheld_budget,
			 "withheld_delay", (json_int_t)c->withheld_delay,
			 "budget_cuts", (json_int_t)c->budget_cuts);
}

/* Core allocation (CoreSync); null from a daemon that has none. */
static json_t *
workers_json(const Hg__Workers *w)
{
	return w == NULL ? json_null() : json_pack(
		"{s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:f, s:I, s:i, s:f, s:b, s:I, s:f, "
		"s:I, s:f}",
		"policy", w->policy, "active", (int)w->active, "parked", (int)w->parked,
		"parks", (json_int_t)w->parks, "wakes_delay", (json_int_t)w->wakes_delay,
		"wakes_self", (json_int_t)w->wakes_self,
		"revocations", (json_int_t)w->revocations, "revoked", w->revoked,
		"credits_prop", (json_int_t)w->credits_prop,
		"credits_oc", (int)w->credits_oc, "credits_target", w->credits_target,
		"overloaded", (int)w->overloaded, "cpu_ns", (json_int_t)w->cpu_ns,
		"cpu_util", w->cpu_util, "cpu_wait_ns", (json_int_t)w->cpu_wait_ns,
		"cpu_wait_util", w->cpu_wait_util);
}

/* rpc: the tenant has RPC ports, where CoreSync's credits apply. */
static void
print_workers(const Hg__Workers *w, int rpc)
{
	if (w == NULL)
		return;
	printf("  workers (%s): %u active, %u parked; %" PRIu64 " parks, %" PRIu64
	       " wakes on queueing delay, %" PRIu64 " by themselves%s; the apps' "
	       "CPU time %.3f s (%.0f%% of a CPU lately), waiting for a CPU "
	       "%.3f s (%.0f%% lately)\n",
	       w->policy, w->active, w->parked, w->parks, w->wakes_delay,
	       w->wakes_self, w->overloaded ? "; overloaded" : "",
	       (double)w->cpu_ns / 1e9, w->cpu_util * 100,
	       (double)w->cpu_wait_ns / 1e9, w->cpu_wait_util * 100);
	if (rpc)
		printf("  core credits: proposed %" PRId64 " (target %.0f), "
		       "overcommitted %u\n", w->credits_prop, w->credits_target,
		       w->credits_oc);
}

static json_t *
tenant_json(const Hg__TenantInfo *t)
{
	json_t *bound = json_array(), *j = json_pack("{s:s, s:i}", "name", t->name,
						     "id", (int)t->id);
	size_t i;

	for (i = 0; i < t->n_bound_ports; i++)
		json_array_append_new(bound, json_integer(t->bound_ports[i]));
	settings_into(j, t->settings, t->n_settings);
	json_object_update_new(j, json_pack("{s:i, s:i, s:o, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:i}, s:o}",
		"apps", (int)t->apps, "contexts", (int)t->contexts,
		"bound_ports", bound,
		"effective_cap", (json_int_t)t->effective_cap,
		"cost_per_datagram", (json_int_t)t->cost,
		"attach_refused", (json_int_t)t->attach_refused,
		"rx_queue", (json_int_t)t->rx_queue,
		"tx_queue", (json_int_t)t->tx_queue,
		"steering", "preemptions", (json_int_t)t->steering->preemptions,
		"congested_apps", (int)t->steering->congested_apps,
		"credits", credits_json(t->credits)));
	return j;
}

static int
p_tenant_list(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__TenantList *l = rsp->tenants;
	size_t i;

	if (o->json) {
		json_t *arr = json_array();

		for (i = 0; i < l->n_tenants; i++)
			json_array_append_new(arr, tenant_json(l->tenants[i]));
		return emit_json(json_pack("{s:o, s:i, s:i, s:i, s:i, s:s}", "tenants", arr,
					   "rx_queues_per_core", (int)l->rx_queues_per_core,
					   "tx_queues_per_core", (int)l->tx_queues_per_core,
					   "fp_cores", (int)l->fp_cores,
					   "link_queues", (int)l->link_queues, "rx_steering",
					   l->rx_steering ? l->rx_steering : "shared queue"));
	}
	printf("RX: %u queue%s per fast-path core x %u core%s (%s)",
	       l->rx_queues_per_core, l->rx_queues_per_core == 1 ? "" : "s",
	       l->fp_cores, l->fp_cores == 1 ? "" : "s",
	       l->rx_steering ? l->rx_steering : "shared queue");
	if (l->link_queues > l->rx_queues_per_core * l->fp_cores)
		printf(", %u link queues read, each shared", l->link_queues);
	printf("; TX: %u group%s per core\n", l->tx_queues_per_core,
	       l->tx_queues_per_core == 1 ? "" : "s");
	printf("%-20s %4s %4s %4s %3s %3s %8s  %s\n", "NAME", "ID", "APPS", "CTXS",
	       "RXQ", "TXQ", "EFF.CAP", "SETTINGS (not defaults)");
	for (i = 0; i < l->n_tenants; i++) {
		const Hg__TenantInfo *t = l->tenants[i];

		printf("%-20s %4u %4u %4u %3u %3u %8" PRIu64 "  ", t->name, t->id, t->apps,
		       t->contexts, t->rx_queue, t->tx_queue, t->effective_cap);
		print_set(t->settings, t->n_settings);
	}
	return 0;
}

/* tenant get NAME [KEY] and tenant add|set --help: the table's rows. */
static int
p_tenant_get(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__TenantSettings *ts = rsp->tenant_settings;
	size_t i;

	if (o->json)
		return emit_json(settings_into(json_object(), ts->settings,
					       ts->n_settings));
	if (ts->name != NULL && ts->n_settings == 1) {	/* one value: scripts */
		puts(ts->settings[0]->value);
		return 0;
	}
	/* a tenant's values next to the defaults; the table alone (tenant
	 * add|set --help) has only the defaults */
	if (ts->name != NULL)
		printf("%-17s %-12s %-10s %-5s %s\n", "KEY", "VALUE", "DEFAULT",
		       "LIVE", "BOUNDS: HELP");
	else
		printf("%-17s %-12s %-5s %s\n", "--KEY", "DEFAULT", "LIVE",
		       "BOUNDS: HELP");
	for (i = 0; i < ts->n_settings; i++) {
		const Hg__TenantSetting *s = ts->settings[i];

		if (ts->name != NULL)
			printf("%-17s %-12s %-10s ", s->key, s->value, s->def);
		else
			printf("%-17s %-12s ", s->key, s->value);
		printf("%-5s %s: %s\n", s->live ? "live" : "add", s->bounds,
		       s->help);
	}
	return 0;
}

/* config reload: each change on a line of its own, or in a JSON list. */
static int
p_reload(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__ReloadReport *r = rsp->reload;
	json_t *changes = json_array();
	size_t i, n = r->n_changes;

	for (i = 0; i < n; i++)
		if (o->json)
			json_array_append_new(changes, json_string(r->changes[i]));
		else
			puts(r->changes[i]);
	if (o->json)
		return emit_json(json_pack("{s:o}", "changes", changes));
	json_decref(changes);
	if (n == 0)
		puts("nothing changed");
	return 0;
}

/* ---- counters: whatever (name, value) pairs the daemon sends, named
 * and explained by proto/counters.h ---- */

static const struct hg_counter_doc counter_doc[] = {
	HG_CORE_COUNTERS(HG_COUNTER_DOC)
	HG_TENANT_COUNTERS(HG_COUNTER_DOC)
	HG_CONTROL_COUNTERS(HG_COUNTER_DOC)
};

static const char *
unit_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(counter_doc) / sizeof(counter_doc[0]); i++)
		if (strcmp(counter_doc[i].name, name) == 0)
			return counter_doc[i].unit;
	return "";
}

/* Counter name's value in c, 0 if the daemon sent none. */
static uint64_t
counter(Hg__Counter *const *c, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(c[i]->name, name) == 0)
			return c[i]->value;
	return 0;
}

/* Each pair as a key of o. */
static json_t *
counters_into(json_t *o, Hg__Counter *const *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_object_set_new(o, c[i]->name, json_integer((json_int_t)c[i]->value));
	return o;
}

static json_t *
drops_json(Hg__Counter **c, size_t n)
{
	return counters_into(json_object(), c, n);
}

/* "name value unit, ..." of the counters that are not zero, on lines of
 * their own after indent. */
static void
print_counters(const char *indent, Hg__Counter *const *c, size_t n)
{
	size_t i, col = 0;
	char one[160];
	int w;

	for (i = 0; i < n; i++) {
		if (c[i]->value == 0)
			continue;
		w = snprintf(one, sizeof(one), "%s %" PRIu64 " %s", c[i]->name,
			     c[i]->value, unit_of(c[i]->name));
		if (col > 0 && col + (size_t)w + 2 > 78) {
			putchar('\n');
			col = 0;
		}
		col += (size_t)printf("%s%s", col ? ", " : indent, one);
	}
	if (col > 0)
		putchar('\n');
}

/* Sums of one point over cores; a single core's point is a sum of one. */
struct point_sum {
	uint64_t cycles, nic, packets, throttles, unfunded;
	uint64_t bells;		/* doorbell cycles, part of cycles (rx) */
};

static void
add_point(struct point_sum *s, const Hg__PointStats *p)
{
	s->cycles += p->cycles;
	s->nic += p->nic_cycles;
	s->packets += p->packets;
	s->throttles += p->throttles;
	s->unfunded += p->unfunded;
}

static json_t *
per_packet(uint64_t cycles, uint64_t packets)
{
	return packets ? json_real((double)cycles / (double)packets) : json_null();
}

/* syscall_cycles: what the point spent in calls that may enter the
 * kernel, the PMD's (net_af_packet's sendto, memif's interrupt write)
 * and the doorbells' eventfd writes */
static json_t *
point_json(const struct point_sum *s)
{
	return json_pack("{s:I, s:I, s:I, s:o, s:I, s:o, s:I, s:I}",
			 "cycles", (json_int_t)s->cycles,
			 "nic_cycles", (json_int_t)s->nic,
			 "packets", (json_int_t)s->packets, "cycles_per_packet",
			 per_packet(s->cycles, s->packets),
			 "syscall_cycles", (json_int_t)(s->nic + s->bells),
			 "syscall_cycles_per_packet",
			 per_packet(s->nic + s->bells, s->packets),
			 "throttles", (json_int_t)s->throttles,
			 "unfunded", (json_int_t)s->unfunded);
}

static json_t *
one_point_json(const Hg__PointStats *p, uint64_t bells)
{
	struct point_sum s = { .bells = bells };

	add_point(&s, p);
	return point_json(&s);
}

#define ONE_ROW(...) +1
enum { N_TENANT_COUNTERS = 0 HG_TENANT_COUNTERS(ONE_ROW) };

struct totals {
	struct point_sum pt[3];
	uint64_t drops, over_budget;
	int64_t budget;
	uint64_t debt;
	/* the tenant counters summed over cores, as the daemon named them */
	Hg__Counter sum[N_TENANT_COUNTERS];
	Hg__Counter *c[N_TENANT_COUNTERS];
	size_t n;
};

static void
sum_tenant(const Hg__TenantStats *t, struct totals *s)
{
	size_t c, d;

	memset(s, 0, sizeof(*s));
	for (c = 0; c < t->n_cores; c++) {
		const Hg__TenantCoreStats *cs = t->cores[c];

		add_point(&s->pt[0], cs->rx);
		add_point(&s->pt[1], cs->tx);
		add_point(&s->pt[2], cs->sched);
		s->budget += cs->budget;
		s->debt += cs->debt;
		s->pt[0].bells += counter(cs->counters, cs->n_counters, "doorbell_cycles");
		for (d = 0; d < cs->n_counters && d < N_TENANT_COUNTERS; d++) {
			s->sum[d].name = cs->counters[d]->name;
			s->sum[d].value += cs->counters[d]->value;
			s->c[d] = &s->sum[d];
			s->n = d + 1 > s->n ? d + 1 : s->n;
		}
		for (d = 0; d < cs->n_drops; d++) {
			s->drops += cs->drops[d]->value;
			if (strcmp(cs->drops[d]->name, "rx_over_budget") == 0)
				s->over_budget += cs->drops[d]->value;
		}
	}
}

static json_t *
classes_json(const Hg__TenantStats *t)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < t->n_classes; i++) {
		const Hg__ClassStats *c = t->classes[i];

		json_array_append_new(a, json_pack("{s:i, s:I, s:f, s:f, s:f, s:f, s:f}",
			"class", (int)c->cls, "requests", (json_int_t)c->requests,
			"service_mean_us", c->service_mean_us,
			"service_p99_us", c->service_p99_us,
			"queue_mean_us", c->queue_mean_us,
			"slowdown_p99", c->slowdown_p99,
			"slowdown_p999", c->slowdown_p999));
	}
	return a;
}

static json_t *
xdp_json(const Hg__XdpCounts *x)
{
	if (x == NULL)
		return json_null();
	return json_pack("{s:I, s:I, s:I}", "passed", (json_int_t)x->passed,
			 "dropped", (json_int_t)x->dropped,
			 "over_share", (json_int_t)x->over_share);
}

static void
print_xdp(const char *what, const Hg__XdpCounts *x)
{
	printf("%s: %" PRIu64 " passed, %" PRIu64 " dropped in the driver (shed), %"
	       PRIu64 " there over its share of the ring\n", what, x->passed, x->dropped,
	       x->over_share);
}

static void
print_classes(const Hg__TenantStats *t)
{
	size_t i;

	for (i = 0; i < t->n_classes; i++) {
		const Hg__ClassStats *c = t->classes[i];

		printf("  class %u: %" PRIu64 " requests, service mean %.1f us p99 %.1f "
		       "us, queue mean %.1f us, slowdown p99 %.1f p99.9 %.1f\n",
		       c->cls, c->requests, c->service_mean_us, c->service_p99_us,
		       c->queue_mean_us, c->slowdown_p99, c->slowdown_p999);
	}
	if (t->darc_updates)
		printf("  darc reservations made: %" PRIu64 "\n", t->darc_updates);
	if (t->xdp != NULL)
		print_xdp("  xdp", t->xdp);
}

static json_t *
tenant_stats_json(const Hg__TenantStats *t)
{
	json_t *cores = json_array(), *j;
	uint64_t drop_cycles;
	struct totals s;
	size_t c;

	for (c = 0; c < t->n_cores; c++) {
		const Hg__TenantCoreStats *cs = t->cores[c];

		json_array_append_new(cores, counters_into(json_pack("{s:i, s:I, s:I, s:o, s:o, s:o, s:o}",
			"core", (int)cs->core, "budget", (json_int_t)cs->budget,
			"debt", (json_int_t)cs->debt,
			"rx", one_point_json(cs->rx, counter(cs->counters, cs->n_counters,
							      "doorbell_cycles")),
			"tx", one_point_json(cs->tx, 0),
			"sched", one_point_json(cs->sched, 0),
			"drops", drops_json(cs->drops, cs->n_drops)), cs->counters,
			cs->n_counters));
	}
	sum_tenant(t, &s);
	drop_cycles = counter(s.c, s.n, "over_budget_drop_cycles");
	j = json_pack("{s:s, s:i}", "name", t->name, "id", (int)t->id);
	settings_into(j, t->settings, t->n_settings);
	json_object_update_new(j, json_pack("{s:I, s:o, s:o, s:o}",
			 "effective_cap", (json_int_t)t->effective_cap, "total",
			 counters_into(json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I}",
				"rx", point_json(&s.pt[0]), "tx", point_json(&s.pt[1]),
				"sched", point_json(&s.pt[2]),
				"cycles", (json_int_t)(s.pt[0].cycles + s.pt[1].cycles +
						       s.pt[2].cycles),
				"budget", (json_int_t)s.budget, "debt", (json_int_t)s.debt,
				"drops", (json_int_t)s.drops,
				"over_budget_drops", (json_int_t)s.over_budget), s.c, s.n),
			 "cores", cores, "credits", credits_json(t->credits)));
	/* what shedding costs: RX's cycles per rx_over_budget drop */
	json_object_set_new(j, "over_budget_drop_cycles", json_integer((json_int_t)drop_cycles));
	json_object_set_new(j, "cycles_per_over_budget_drop",
			    per_packet(drop_cycles, s.over_budget));
	json_object_set_new(j, "classes", classes_json(t));
	json_object_set_new(j, "darc_updates", json_integer((json_int_t)t->darc_updates));
	json_object_set_new(j, "workers", workers_json(t->workers));
	if (t->xdp != NULL)
		json_object_set_new(j, "xdp", xdp_json(t->xdp));
	return j;
}

static json_t *
rx_queues_json(const Hg__CoreStats *c)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < c->n_rx_queues; i++)
		json_array_append_new(a, json_pack("{s:i, s:i, s:i, s:I, s:I, s:I, s:I}",
			"port", (int)c->rx_queues[i]->port,
			"queue", (int)c->rx_queues[i]->queue,
			"group", (int)c->rx_queues[i]->group,
			"packets", (json_int_t)c->rx_queues[i]->packets,
			"deferred", (json_int_t)c->rx_queues[i]->deferred,
			"held", (json_int_t)c->rx_queues[i]->held,
			"bursts", (json_int_t)c->rx_queues[i]->bursts));
	return a;
}

/* The frames each TX group's own ring took, by group: [] where every
 * frame leaves by the core's one queue. */
static json_t *
tx_queues_json(const Hg__CoreStats *c)
{
	json_t *a = json_array();
	size_t g;

	for (g = 0; g < c->n_tx_queue_packets; g++)
		json_array_append_new(a, json_integer((json_int_t)c->tx_queue_packets[g]));
	return a;
}

static json_t *
core_stats_json(const Hg__CoreStats *c)
{
	return counters_into(json_pack("{s:i, s:i, s:o, s:o, s:o}", "core", (int)c->core,
				       "rx_interrupts", (int)c->rx_interrupts,
				       "drops", drops_json(c->drops, c->n_drops),
				       "rx_queues", rx_queues_json(c),
				       "tx_queues", tx_queues_json(c)),
			     c->counters, c->n_counters);
}

static void
print_point(const char *name, const struct point_sum *p)
{
	printf("  %-6s %12" PRIu64 " pkts %16" PRIu64 " cycles", name, p->packets,
	       p->cycles);
	if (p->packets)
		printf(" %9.1f cyc/pkt (%.1f in system calls)",
		       (double)p->cycles / (double)p->packets,
		       (double)(p->nic + p->bells) / (double)p->packets);
	if (p->throttles || p->unfunded)
		printf(", throttled %" PRIu64 ", unfunded %" PRIu64, p->throttles,
		       p->unfunded);
	putchar('\n');
}

static void
print_drops(Hg__Counter **c, size_t n, const char *indent)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i]->value)
			printf("%sdrop %-18s %" PRIu64 "\n", indent, c[i]->name,
			       c[i]->value);
}

static json_t *
control_json(const Hg__ControlStats *c)
{
	if (c == NULL)
		return json_null();
	return counters_into(json_object(), c->counters, c->n_counters);
}

static json_t *
memif_json(const Hg__MemifStats *m)
{
	if (m == NULL)
		return json_null();
	return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
			 "connected", m->connected, "rx_rings", (json_int_t)m->rx_rings,
			 "tx_rings", (json_int_t)m->tx_rings,
			 "ring_slots", (json_int_t)m->ring_slots,
			 "connects", (json_int_t)m->connects,
			 "refused", (json_int_t)m->refused, "kicks", (json_int_t)m->kicks,
			 "peer", m->peer ? m->peer : "", "refusal", m->refusal ? m->refusal : "");
}

static void
print_memif(const Hg__MemifStats *m)
{
	if (m->connected)
		printf("memif link: peer '%s', %u rings in, %u out, %u slots each\n",
		       m->peer ? m->peer : "", m->rx_rings, m->tx_rings, m->ring_slots);
	else
		printf("memif link: no peer\n");
	printf("  %" PRIu64 " peers served, %" PRIu64 " refused, %" PRIu64 " kicks\n",
	       m->connects, m->refused, m->kicks);
	if (m->refusal != NULL && m->refusal[0] != '\0')
		printf("  last refusal: %s\n", m->refusal);
}

static int
p_stats(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__Stats *st = rsp->stats;
	size_t i, c;

	if (o->json) {
		json_t *ts = json_array(), *cs = json_array();

		for (i = 0; i < st->n_tenants; i++)
			json_array_append_new(ts, tenant_stats_json(st->tenants[i]));
		for (i = 0; i < st->n_cores; i++)
			json_array_append_new(cs, core_stats_json(st->cores[i]));
		return emit_json(json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "tsc_hz",
					   (json_int_t)st->tsc_hz, "tsc", (json_int_t)st->tsc,
					   "tenants", ts,
					   "cores", cs, "control",
					   control_json(st->control), "memif",
					   memif_json(st->memif), "xdp_other",
					   xdp_json(st->xdp_other)));
	}
	for (i = 0; i < st->n_tenants; i++) {
		const Hg__TenantStats *t = st->tenants[i];
		struct totals s;

		sum_tenant(t, &s);
		printf("tenant %s (id %u, effective cap %" PRIu64 "): budget %" PRId64
		       " cycles, debt %" PRIu64 "\n  settings: ", t->name, t->id,
		       t->effective_cap, s.budget, s.debt);
		print_set(t->settings, t->n_settings);
		print_point("rx", &s.pt[0]);
		print_point("tx", &s.pt[1]);
		print_point("sched", &s.pt[2]);
		print_counters("  ", s.c, s.n);
		if (s.over_budget)
			printf("  rx over-budget drops %" PRIu64 ", %.0f cycles each\n",
			       s.over_budget,
			       (double)counter(s.c, s.n, "over_budget_drop_cycles") /
			       (double)s.over_budget);
		if (t->credits)
			printf("  credits: pool %" PRIu64 ", issued %" PRId64 ", sessions %u,"
			       " drained %u, D_m %.0f us\n",
			       t->credits->pool, t->credits->issued, t->credits->sessions,
			       t->credits->drained, t->credits->dm_us);
		if (t->credits && (t->credits->withheld_budget || t->credits->withheld_delay))
			printf("  credits withheld: %" PRIu64 " for the budget (%" PRIu64
			       " updates out of it), %" PRIu64 " for the delay\n",
			       t->credits->withheld_budget, t->credits->budget_cuts,
			       t->credits->withheld_delay);
		print_workers(t->workers, t->credits != NULL);
		print_classes(t);
		for (c = 0; c < t->n_cores; c++)
			print_drops(t->cores[c]->drops, t->cores[c]->n_drops, "  ");
	}
	for (i = 0; i < st->n_cores; i++) {
		const Hg__CoreStats *cs = st->cores[i];

		printf("core %u:\n", cs->core);
		print_counters("  ", cs->counters, cs->n_counters);
		print_drops(cs->drops, cs->n_drops, "  ");
	}
	if (st->control != NULL) {
		printf("control sockets:\n");
		print_counters("  ", st->control->counters, st->control->n_counters);
	}
	if (st->memif != NULL)
		print_memif(st->memif);
	if (st->xdp_other != NULL)
		print_xdp("xdp, frames of no tenant", st->xdp_other);
	return 0;
}

static int
p_config(const Hg__Response *rsp, const struct opts *o)
{
	json_t *j = o->json ? json_object() : NULL;
	size_t i;

	for (i = 0; i < rsp->config->n_entries; i++) {
		const Hg__ConfigEntry *e = rsp->config->entries[i];

		if (j != NULL)
			json_object_set_new(j, e->key, json_string(e->value));
		else
			printf("%-12s %-26s %s%s\n", e->key, e->value, e->help,
			       e->live ? "" : " [startup only]");
	}
	return j != NULL ? emit_json(j) : 0;
}

static const struct cmd cmds[] = {
	{ "tenant", "add", 1, 1, O_SETTINGS,
	  "tenant add NAME [--KEY VALUE ...]   (keys: hgctl tenant add --help)",
	  HG__REQUEST__BODY_TENANT_ADD, HG__RESPONSE__BODY__NOT_SET, p_ok },
	{ "tenant", "set", 1, 1, O_SETTINGS,
	  "tenant set NAME --KEY VALUE ...     (live keys: hgctl tenant set "
	  "NAME --help)", HG__REQUEST__BODY_TENANT_SET, HG__RESPONSE__BODY__NOT_SET, p_ok },
	{ "tenant", "get", 1, 2, 0, "tenant get NAME [KEY] [--json]",
	  HG__REQUEST__BODY_TENANT_GET,
	  HG__RESPONSE__BODY_TENANT_SETTINGS, p_tenant_get },
	{ "tenant", "del", 1, 1, 0, "tenant del NAME", HG__REQUEST__BODY_TENANT_DEL, HG__RESPONSE__BODY__NOT_SET, p_ok },
	{ "tenant", "list", 0, 0, 0, "tenant list [--json]", HG__REQUEST__BODY_TENANT_LIST,
	  HG__RESPONSE__BODY_TENANTS,
	  p_tenant_list },
	{ "stats", NULL, 0, 0, O_TENANT | O_WATCH,
	  "stats [--json] [--tenant NAME] [--interval S [--count N]]",
	  HG__REQUEST__BODY_STATS,
	  HG__RESPONSE__BODY_STATS, p_stats },
	{ "config", "get", 0, 1, 0, "config get [KEY] [--json]", HG__REQUEST__BODY_CONFIG_GET,
	  HG__RESPONSE__BODY_CONFIG,
	  p_config },
	{ "config", "set", 2, 2, 0, "config set KEY VALUE", HG__REQUEST__BODY_CONFIG_SET, HG__RESPONSE__BODY__NOT_SET, p_ok },
	{ "config", "reload", 0, 0, 0, "config reload [--json]   (also: SIGHUP)",
	  HG__REQUEST__BODY_CONFIG_RELOAD,
	  HG__RESPONSE__BODY_RELOAD, p_reload },
};

static void usage_of(FILE *f, const char *w1);

static void
usage(FILE *f)
{
	fprintf(f, "usage: hgctl [--ctl PATH] [--json] COMMAND [ARGS] [OPTIONS]\n\n"
		"commands:\n");
	usage_of(f, NULL);
	fprintf(f, "\n--ctl defaults to $HG_CTL or %s; hgctl COMMAND --help shows "
		"one command;\n--version the version\n", HG_CTL_DEFAULT_PATH);
}

/* --KEY VALUE or --KEY=VALUE: *i moves past what it used. */
static const char *
option_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq != NULL)
		return eq + 1;
	if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
		die_usage("%s needs a value", argv[*i]);
	return argv[++*i];
}

/* A flag hgctl does not know is a tenant setting: kept as a pair for the
 * daemon's table to judge. --KEY=VALUE is split in place. */
static void
add_pair(struct opts *o, char *flag, char *eq, const char *value)
{
	Hg__KeyValue *kv = &o->kv[o->n_kv];

	if (o->n_kv == MAX_PAIRS)
		die_usage("more than %d settings", MAX_PAIRS);
	if (o->first_kv == NULL)
		o->first_kv = flag;
	if (eq != NULL)
		*eq = '\0';
	hg__key_value__init(kv);
	kv->key = flag + 2;
	kv->value = (char *)value;
	o->kvp[o->n_kv++] = kv;
}

/* Is argv[*i] NAME or NAME=...? */
static int
is_opt(const char *a, const char *name, char **eq)
{
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return 0;
	*eq = a[n] == '=' ? (char *)a + n : NULL;
	return 1;
}

/* A number within [lo, hi] for option flag. */
static double
number_opt(const char *flag, const char *v, double lo, double hi)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end != '\0' || !(d >= lo && d <= hi))
		die_usage("%s must be a number in [%g, %g], not '%s'", flag, lo, hi, v);
	return d;
}

/* The options every command takes, wherever they stand. */
static int
global_opt(int argc, char **argv, int *i, struct opts *o)
{
	char *a = argv[*i], *eq;

	if (strcmp(a, "--json") == 0)
		o->json = 1;
	else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
		o->help = 1;
	else if (is_opt(a, "--ctl", &eq))
		o->ctl = option_value(argc, argv, i, eq);
	else
		return 0;
	return 1;
}

static void
usage_of(FILE *f, const char *w1)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (w1 == NULL || strcmp(cmds[i].w1, w1) == 0)
			fprintf(f, "  hgctl %s\n", cmds[i].usage);
}

/* The command named by w[0] (and w[1] for the two-word ones). */
static const struct cmd *
find_cmd(int n, char **w, int help, int *used)
{
	size_t i;
	int known = 0;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].w1, w[0]) != 0)
			continue;
		known = 1;
		if (cmds[i].w2 == NULL) {
			*used = 1;
			return &cmds[i];
		}
		if (n > 1 && strcmp(cmds[i].w2, w[1]) == 0) {
			*used = 2;
			return &cmds[i];
		}
	}
	if (!known)
		die_usage("unknown command '%s'", w[0]);
	if (n > 1)
		die_usage("unknown command '%s %s'", w[0], w[1]);
	if (help) {
		printf("usage:\n");
		usage_of(stdout, w[0]);
		exit(0);
	}
	fprintf(stderr, "hgctl: '%s' needs a subcommand:\n", w[0]);
	usage_of(stderr, w[0]);
	exit(2);
}

/* hgctl [GLOBAL] COMMAND [ARGS] [OPTIONS], as ip(8) and ovs-vsctl read
 * theirs: the command's words first, then its arguments and options in
 * any order. Each command takes only its own options; for tenant add and
 * set, a --KEY VALUE hgctl does not know is a setting. */
static const struct cmd *
parse_args(int argc, char **argv, struct opts *o, char **words, int *n_words)
{
	const struct cmd *cmd;
	int i = 1, n = 0, used;
	char *eq;

	for (; i < argc && argv[i][0] == '-'; i++)
		if (!global_opt(argc, argv, &i, o))
			die_usage("unknown option '%s'", argv[i]);
	if (i == argc) {
		if (o->help) {
			usage(stdout);
			exit(0);
		}
		die_usage("no command given");
	}
	words[n++] = argv[i++];
	if (i < argc && argv[i][0] != '-')
		words[n++] = argv[i++];
	for (used = i; used < argc; used++)	/* tenant --help: the group's */
		o->help |= strcmp(argv[used], "--help") == 0 || strcmp(argv[used], "-h") == 0;
	cmd = find_cmd(n, words, o->help, &used);
	if (used < n)		/* a one-word command's first argument */
		i--, n--;
	for (; i < argc; i++) {
		char *a = argv[i];

		if (global_opt(argc, argv, &i, o))
			continue;
		if (a[0] != '-' || a[1] == '\0') {
			if (n == 8)
				die_usage("too many arguments");
			words[n++] = a;
		} else if ((cmd->allowed & O_TENANT) && is_opt(a, "--tenant", &eq)) {
			o->tenant = option_value(argc, argv, &i, eq);
		} else if ((cmd->allowed & O_WATCH) && is_opt(a, "--interval", &eq)) {
			o->interval = number_opt(a, option_value(argc, argv, &i, eq), 0.1, 3600);
		} else if ((cmd->allowed & O_WATCH) && is_opt(a, "--count", &eq)) {
			o->count = (long)number_opt(a, option_value(argc, argv, &i, eq), 1, 1e9);
		} else if ((cmd->allowed & O_SETTINGS) && strncmp(a, "--", 2) == 0 &&
			   a[2] != '\0') {
			eq = strchr(a, '=');
			add_pair(o, a, eq, option_value(argc, argv, &i, eq));
		} else {
			die_usage("unknown option '%s' for '%s%s%s'", a, cmd->w1,
				  cmd->w2 ? " " : "", cmd->w2 ? cmd->w2 : "");
		}
	}
	*n_words = n;
	return cmd;
}

/* The time above each view of stats --interval. */
static void
print_time(void)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;

	strftime(ts, sizeof(ts), "%H:%M:%S", localtime_r(&now, &tm));
	printf("== %s\n", ts);
}

static Hg__Response *
call(const char *ctl, Hg__Request *req)
{
	Hg__Response *rsp;
	int sock = hg_ctl_connect(ctl);

	if (sock < 0) {
		fprintf(stderr, "hgctl: cannot reach hourglassd at %s: %s\n", ctl,
			strerror(-sock));
		exit(1);
	}
	req->id = 1;
	rsp = hg_ctl_call(sock, req, NULL);
	close(sock);
	if (rsp == NULL) {
		fprintf(stderr, "hgctl: no answer from hourglassd: %s\n",
			strerror(errno));
		exit(1);
	}
	if (rsp->status != 0) {
		fprintf(stderr, "hgctl: %s\n", rsp->error ? rsp->error : "failed");
		hg__response__free_unpacked(rsp, NULL);
		exit(1);
	}
	return rsp;
}

/* `tenant add|set [NAME] --help`: the keys, bounds and defaults come from
 * the daemon's table, so they are never out of date. */
static const struct cmd *
settings_help(const struct cmd *cmd, const struct opts *o)
{
	static const struct cmd get = { "tenant", "get", 0, 0, 0, "",
		HG__REQUEST__BODY_TENANT_GET, HG__RESPONSE__BODY_TENANT_SETTINGS,
		p_tenant_get };

	if (!o->json)
		printf("usage: hgctl %s\n\n", cmd->usage);
	return &get;
}

int
main(int argc, char **argv)
{
	struct opts o = { .ctl = getenv("HG_CTL") ? getenv("HG_CTL")
						  : HG_CTL_DEFAULT_PATH };
	Hg__Request req = HG__REQUEST__INIT;
	char *words[16] = { NULL };
	const struct cmd *cmd;
	Hg__Response *rsp;
	int n, used = 0, rc;
	long views;

	hg_tool_version(argc, argv, "hgctl");
	cmd = parse_args(argc, argv, &o, words, &n);
	used = cmd->w2 ? 2 : 1;
	if (o.help && !(cmd->allowed & O_SETTINGS)) {
		printf("usage: hgctl %s\n", cmd->usage);
		return 0;
	}
	if (o.help) {
		cmd = settings_help(cmd, &o);
		words[used] = NULL;
	} else if (n - used < cmd->min_args || n - used > cmd->max_args) {
		die_usage("usage: hgctl %s", cmd->usage);
	}
	if (o.count && !o.interval)
		die_usage("--count goes with --interval");
	build(&req, cmd, words + used, &o);
	for (views = 0;; views++) {
		if (o.interval > 0 && !o.json)
			print_time();
		rsp = call(o.ctl, &req);
		if (cmd->reply != HG__RESPONSE__BODY__NOT_SET && rsp->body_case != cmd->reply)
			hg_die(1, "hgctl", "", "the daemon's reply carries no answer");
		rc = cmd->print(rsp, &o);
		hg__response__free_unpacked(rsp, NULL);
		if (rc != 0 || o.interval <= 0 || (o.count && views + 1 >= o.count))
			return rc;
		fflush(stdout);
		usleep((useconds_t)(o.interval * 1e6));
	}
}

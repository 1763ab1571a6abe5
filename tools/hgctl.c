/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgctl: operator CLI for hourglassd. Commands are registered in one table
 * with their argument counts and the options they take, so every misuse is
 * reported the same way: one line on stderr and exit status 2; a refusal
 * from the daemon is one line and exit status 1.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl_frame.h"
#include "util.h"

enum { O_WEIGHT = 1, O_CAP = 2, O_PORTS = 4, O_TENANT = 8, O_EXTRA = 16,
       O_STEER = 32,	/* any of the steering or credit options */
       O_RPC = 64,
       O_OWNER = 128 };	/* --uid, --gid, --max-sessions */

struct opts {
	const char *ctl;
	int json;
	unsigned given;
	double weight;
	uint64_t cap;
	uint32_t port_lo, port_hi;
	uint64_t extra;
	const char *tenant;
	Hg__TenantSet steer;	/* steering options, has_ flags set when given */
};

struct cmd {
	const char *w1, *w2;	/* command words; w2 NULL for one word */
	int min_args, max_args;	/* positional arguments after the words */
	unsigned allowed;	/* O_* options it takes */
	const char *usage;
	int (*build)(Hg__Request *req, char **args, const struct opts *o);
	int (*print)(const Hg__Response *rsp, const struct opts *o);
};

#define die_usage(...) hg_die(2, "hgctl", " (see hgctl --help)", __VA_ARGS__)

/* ---- request builders; each body lives in static storage ---- */

static int
b_tenant_add(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__TenantAdd m = HG__TENANT_ADD__INIT;

	m.name = a[0];
	m.has_weight = !!(o->given & O_WEIGHT);
	m.weight = o->weight;
	m.has_cap = !!(o->given & O_CAP);
	m.cap = o->cap;
	m.has_extra_cycles = !!(o->given & O_EXTRA);
	m.extra_cycles = o->extra;
	m.has_rpc_lo = m.has_rpc_hi = o->steer.has_rpc_lo;
	m.rpc_lo = o->steer.rpc_lo;
	m.rpc_hi = o->steer.rpc_hi;
	m.has_uid = o->steer.has_uid;
	m.uid = o->steer.uid;
	m.has_gid = o->steer.has_gid;
	m.gid = o->steer.gid;
	m.has_max_sessions = o->steer.has_max_sessions;
	m.max_sessions = o->steer.max_sessions;
	m.has_port_lo = m.has_port_hi = !!(o->given & O_PORTS);
	m.port_lo = o->port_lo;
	m.port_hi = o->port_hi;
	r->body_case = HG__REQUEST__BODY_TENANT_ADD;
	r->tenant_add = &m;
	return 0;
}

static int
b_tenant_set(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__TenantSet m;

	if (!(o->given & (O_WEIGHT | O_CAP | O_EXTRA | O_STEER | O_RPC | O_OWNER)))
		die_usage("tenant set: give at least one setting");
	m = o->steer;
	m.name = a[0];
	m.has_extra_cycles = !!(o->given & O_EXTRA);
	m.extra_cycles = o->extra;
	m.has_weight = !!(o->given & O_WEIGHT);
	m.weight = o->weight;
	m.has_cap = !!(o->given & O_CAP);
	m.cap = o->cap;
	r->body_case = HG__REQUEST__BODY_TENANT_SET;
	r->tenant_set = &m;
	return 0;
}

static int
b_tenant_del(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__TenantName m = HG__TENANT_NAME__INIT;

	(void)o;
	m.name = a[0];
	r->body_case = HG__REQUEST__BODY_TENANT_DEL;
	r->tenant_del = &m;
	return 0;
}

static int
b_tenant_list(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__Empty m = HG__EMPTY__INIT;

	(void)a;
	(void)o;
	r->body_case = HG__REQUEST__BODY_TENANT_LIST;
	r->tenant_list = &m;
	return 0;
}

static int
b_stats(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__StatsGet m = HG__STATS_GET__INIT;

	(void)a;
	m.tenant = (char *)o->tenant;
	r->body_case = HG__REQUEST__BODY_STATS;
	r->stats = &m;
	return 0;
}

static int
b_config_get(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__ConfigGet m = HG__CONFIG_GET__INIT;

	(void)o;
	m.key = a[0];
	r->body_case = HG__REQUEST__BODY_CONFIG_GET;
	r->config_get = &m;
	return 0;
}

static int
b_config_set(Hg__Request *r, char **a, const struct opts *o)
{
	static Hg__ConfigSet m = HG__CONFIG_SET__INIT;

	(void)o;
	m.key = a[0];
	m.value = a[1];
	r->body_case = HG__REQUEST__BODY_CONFIG_SET;
	r->config_set = &m;
	return 0;
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

static json_t *
steering_json(const Hg__Steering *s)
{
	return json_pack("{s:s, s:f, s:f, s:i, s:i, s:b, s:b, s:b, s:b, s:i, s:I, s:i}",
			 "steer", s->steer, "quantum_factor", s->quantum_factor,
			 "congested_factor", s->congested_factor,
			 "thresh_wqd_us", (int)s->thresh_wqd_us,
			 "steal_threshold", (int)s->steal_threshold,
			 "preempt", s->preempt, "preempt_always", s->preempt_always,
			 "wait_queue", s->wait_queue,
			 "steal", s->steal, "quantum_us", (int)s->quantum_us,
			 "preemptions", (json_int_t)s->preemptions,
			 "congested_apps", (int)s->congested_apps);
}

static json_t *
credits_json(const Hg__Credits *c)
{
	return json_pack("{s:o, s:i, s:i, s:i, s:f, s:f, s:I, s:I, s:i, s:i, s:I, s:f}",
			 "rpc_ports", c->rpc_hi ? json_pack("{s:i, s:i}", "lo",
				(int)c->rpc_lo, "hi", (int)c->rpc_hi) : json_null(),
			 "dt_us", (int)c->dt_us, "ddrop_us", (int)c->ddrop_us,
			 "update_us", (int)c->update_us,
			 "alpha", c->alpha, "beta", c->beta,
			 "pool", (json_int_t)c->pool, "issued", (json_int_t)c->issued,
			 "sessions", (int)c->sessions, "drained", (int)c->drained,
			 "credit_updates", (json_int_t)c->credit_updates,
			 "dm_us", c->dm_us);
}

static json_t *
tenant_json(const Hg__TenantInfo *t)
{
	json_t *bound = json_array();
	size_t i;

	for (i = 0; i < t->n_bound_ports; i++)
		json_array_append_new(bound, json_integer(t->bound_ports[i]));
	return json_pack("{s:s, s:i, s:f, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:i, s:i, s:o,"
			 " s:{s:I, s:o}, s:i, s:I}",
			 "name", t->name, "id", (int)t->id, "weight", t->weight,
			 "cap", (json_int_t)t->cap,
			 "effective_cap", (json_int_t)t->effective_cap,
			 "cost_per_datagram", (json_int_t)t->cost,
			 "extra_cycles", (json_int_t)t->extra_cycles,
			 "steering", steering_json(t->steering),
			 "credits", credits_json(t->credits), "ports",
			 t->port_hi ? json_pack("{s:i, s:i}", "lo", (int)t->port_lo,
						"hi", (int)t->port_hi)
				    : json_null(),
			 "apps", (int)t->apps, "contexts", (int)t->contexts,
			 "bound_ports", bound,
			 "owner", "uid", (json_int_t)t->uid, "gid",
			 t->gid >= 0 ? json_integer(t->gid) : json_null(),
			 "max_sessions", (int)t->max_sessions,
			 "attach_refused", (json_int_t)t->attach_refused);
}

static int
p_tenant_list(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__TenantList *l = rsp->tenants;
	size_t i;

	if (l == NULL)
		return 1;
	if (o->json) {
		json_t *arr = json_array();

		for (i = 0; i < l->n_tenants; i++)
			json_array_append_new(arr, tenant_json(l->tenants[i]));
		return emit_json(json_pack("{s:o}", "tenants", arr));
	}
	printf("%-20s %3s %8s %10s %10s %-13s %4s %4s\n", "NAME", "ID", "WEIGHT",
	       "CAP", "EFF.CAP", "PORTS", "APPS", "CTXS");
	for (i = 0; i < l->n_tenants; i++) {
		const Hg__TenantInfo *t = l->tenants[i];
		char ports[16] = "-";

		if (t->port_hi)
			snprintf(ports, sizeof(ports), "%u-%u", t->port_lo, t->port_hi);
		printf("%-20s %3u %8g %10" PRIu64 " %10" PRIu64 " %-13s %4u %4u\n",
		       t->name, t->id, t->weight, t->cap, t->effective_cap, ports,
		       t->apps, t->contexts);
	}
	return 0;
}

static json_t *
drops_json(Hg__Counter **c, size_t n)
{
	json_t *d = json_object();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_set_new(d, c[i]->name, json_integer((json_int_t)c[i]->value));
	return d;
}

/* Sums of one point over cores; a single core's point is a sum of one. */
struct point_sum {
	uint64_t cycles, nic, packets, throttles, unfunded;
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
point_json(const struct point_sum *s)
{
	return json_pack("{s:I, s:I, s:I, s:o, s:I, s:I}",
			 "cycles", (json_int_t)s->cycles,
			 "nic_cycles", (json_int_t)s->nic,
			 "packets", (json_int_t)s->packets, "cycles_per_packet",
			 s->packets ? json_real((double)s->cycles / (double)s->packets)
				    : json_null(),
			 "throttles", (json_int_t)s->throttles,
			 "unfunded", (json_int_t)s->unfunded);
}

static json_t *
one_point_json(const Hg__PointStats *p)
{
	struct point_sum s = { 0 };

	add_point(&s, p);
	return point_json(&s);
}

struct totals {
	struct point_sum pt[3];
	uint64_t drops, over_budget, doorbells, doorbell_cycles;
	int64_t budget;
	uint64_t debt;
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
		s->doorbells += cs->doorbells;
		s->doorbell_cycles += cs->doorbell_cycles;
		for (d = 0; d < cs->n_drops; d++) {
			s->drops += cs->drops[d]->value;
			if (strcmp(cs->drops[d]->name, "rx_over_budget") == 0)
				s->over_budget += cs->drops[d]->value;
		}
	}
}

static json_t *
tenant_stats_json(const Hg__TenantStats *t)
{
	json_t *cores = json_array();
	struct totals s;
	size_t c;

	for (c = 0; c < t->n_cores; c++) {
		const Hg__TenantCoreStats *cs = t->cores[c];

		json_array_append_new(cores, json_pack("{s:i, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o}",
			"core", (int)cs->core, "budget", (json_int_t)cs->budget,
			"debt", (json_int_t)cs->debt,
			"doorbells", (json_int_t)cs->doorbells,
			"doorbell_cycles", (json_int_t)cs->doorbell_cycles,
			"rx", one_point_json(cs->rx), "tx", one_point_json(cs->tx),
			"sched", one_point_json(cs->sched),
			"drops", drops_json(cs->drops, cs->n_drops)));
	}
	sum_tenant(t, &s);
	return json_pack("{s:s, s:i, s:f, s:I, s:I, s:{s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:o, s:o}",
			 "name", t->name, "id", (int)t->id, "weight", t->weight,
			 "cap", (json_int_t)t->cap,
			 "effective_cap", (json_int_t)t->effective_cap, "total",
			 "rx", point_json(&s.pt[0]), "tx", point_json(&s.pt[1]),
			 "sched", point_json(&s.pt[2]),
			 "cycles", (json_int_t)(s.pt[0].cycles + s.pt[1].cycles +
						s.pt[2].cycles),
			 "budget", (json_int_t)s.budget, "debt", (json_int_t)s.debt,
			 "drops", (json_int_t)s.drops,
			 "over_budget_drops", (json_int_t)s.over_budget,
			 "doorbells", (json_int_t)s.doorbells,
			 "doorbell_cycles", (json_int_t)s.doorbell_cycles,
			 "cores", cores,
			 "credits", t->credits ? credits_json(t->credits) : json_null());
}

static json_t *
core_stats_json(const Hg__CoreStats *c)
{
	return json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "core", (int)c->core,
			 "unattributed_cycles", (json_int_t)c->unattributed_cycles,
			 "busy_cycles", (json_int_t)c->busy_cycles,
			 "busy_pmd_cycles", (json_int_t)c->busy_pmd_cycles,
			 "busy_passes", (json_int_t)c->busy_passes,
			 "idle_passes", (json_int_t)c->idle_passes,
			 "rx_packets", (json_int_t)c->rx_packets,
			 "tx_packets", (json_int_t)c->tx_packets,
			 "drops", drops_json(c->drops, c->n_drops));
}

static void
print_point(const char *name, const struct point_sum *p)
{
	printf("  %-6s %12" PRIu64 " pkts %16" PRIu64 " cycles", name, p->packets,
	       p->cycles);
	if (p->packets)
		printf(" %9.1f cyc/pkt (%.1f in the PMD)",
		       (double)p->cycles / (double)p->packets,
		       (double)p->nic / (double)p->packets);
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
	return json_pack("{s:i, s:i, s:I, s:I, s:I, s:I, s:I}",
			 "ctl_conns", (int)c->ctl_conns, "app_conns", (int)c->app_conns,
			 "conns_refused", (json_int_t)c->conns_refused,
			 "accept_errors", (json_int_t)c->accept_errors,
			 "attach_refused", (json_int_t)c->attach_refused,
			 "commands_refused", (json_int_t)c->commands_refused,
			 "reads_paused", (json_int_t)c->reads_paused);
}

static int
p_stats(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__Stats *st = rsp->stats;
	size_t i, c;

	if (st == NULL)
		return 1;
	if (o->json) {
		json_t *ts = json_array(), *cs = json_array();

		for (i = 0; i < st->n_tenants; i++)
			json_array_append_new(ts, tenant_stats_json(st->tenants[i]));
		for (i = 0; i < st->n_cores; i++)
			json_array_append_new(cs, core_stats_json(st->cores[i]));
		return emit_json(json_pack("{s:I, s:o, s:o, s:o}", "tsc_hz",
					   (json_int_t)st->tsc_hz, "tenants", ts,
					   "cores", cs, "control",
					   control_json(st->control)));
	}
	for (i = 0; i < st->n_tenants; i++) {
		const Hg__TenantStats *t = st->tenants[i];
		struct totals s;

		sum_tenant(t, &s);
		printf("tenant %s (id %u, weight %g, cap %" PRIu64 ", effective %" PRIu64
		       "): budget %" PRId64 " cycles, debt %" PRIu64 "\n", t->name,
		       t->id, t->weight, t->cap, t->effective_cap, s.budget, s.debt);
		print_point("rx", &s.pt[0]);
		print_point("tx", &s.pt[1]);
		print_point("sched", &s.pt[2]);
		if (s.doorbells)
			printf("  doorbells %" PRIu64 " (armed workers woken), %.0f "
			       "cycles each\n", s.doorbells,
			       (double)s.doorbell_cycles / (double)s.doorbells);
		if (t->credits)
			printf("  credits: pool %" PRIu64 ", issued %" PRId64 ", sessions %u,"
			       " drained %u, updates sent %" PRIu64 ", D_m %.0f us\n",
			       t->credits->pool, t->credits->issued, t->credits->sessions,
			       t->credits->drained, t->credits->credit_updates,
			       t->credits->dm_us);
		for (c = 0; c < t->n_cores; c++)
			print_drops(t->cores[c]->drops, t->cores[c]->n_drops, "  ");
	}
	for (i = 0; i < st->n_cores; i++) {
		const Hg__CoreStats *cs = st->cores[i];

		printf("core %u: rx %" PRIu64 " tx %" PRIu64 " pkts, unattributed %"
		       PRIu64 " cycles, %" PRIu64 " busy / %" PRIu64 " idle passes\n",
		       cs->core, cs->rx_packets, cs->tx_packets,
		       cs->unattributed_cycles, cs->busy_passes, cs->idle_passes);
		print_drops(cs->drops, cs->n_drops, "  ");
	}
	return 0;
}

static int
p_config(const Hg__Response *rsp, const struct opts *o)
{
	const Hg__Config *c = rsp->config;
	size_t i;

	if (c == NULL)
		return 1;
	if (o->json) {
		json_t *j = json_object();

		for (i = 0; i < c->n_entries; i++)
			json_object_set_new(j, c->entries[i]->key,
					    json_string(c->entries[i]->value));
		return emit_json(j);
	}
	for (i = 0; i < c->n_entries; i++)
		printf("%-12s %-26s %s%s\n", c->entries[i]->key,
		       c->entries[i]->value, c->entries[i]->help,
		       c->entries[i]->live ? "" : " [startup only]");
	return 0;
}

static const struct cmd cmds[] = {
	{ "tenant", "add", 1, 1,
	  O_WEIGHT | O_CAP | O_PORTS | O_EXTRA | O_RPC | O_OWNER,
	  "tenant add NAME [--weight W] [--cap CYCLES] [--ports LO-HI] "
	  "[--extra-cycles N] [--rpc-ports LO-HI] [--uid USER] "
	  "[--gid GROUP|none] [--max-sessions N]",
	  b_tenant_add, p_ok },
	{ "tenant", "set", 1, 1,
	  O_WEIGHT | O_CAP | O_EXTRA | O_STEER | O_RPC | O_OWNER,
	  "tenant set NAME [--weight W] [--cap CYCLES] [--extra-cycles N]\n"
	  "        [--steer flow|jsq] [--quantum-factor F] [--congested-factor F]\n"
	  "        [--thresh-wqd-us US] [--steal-threshold N] [--quantum-us US]\n"
	  "        [--preempt on|off|always] [--wait-queue on|off] [--steal on|off]\n"
	  "        [--rpc-ports LO-HI] [--dt-us US] [--ddrop-us US] [--alpha A]"
	  " [--beta B]\n        [--update-us US] [--uid USER] [--gid GROUP|none]"
	  " [--max-sessions N]",
	  b_tenant_set, p_ok },
	{ "tenant", "del", 1, 1, 0, "tenant del NAME", b_tenant_del, p_ok },
	{ "tenant", "list", 0, 0, 0, "tenant list [--json]", b_tenant_list,
	  p_tenant_list },
	{ "stats", NULL, 0, 0, O_TENANT, "stats [--json] [--tenant NAME]",
	  b_stats, p_stats },
	{ "config", "get", 0, 1, 0, "config get [KEY] [--json]", b_config_get,
	  p_config },
	{ "config", "set", 2, 2, 0, "config set KEY VALUE", b_config_set, p_ok },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: hgctl [--ctl PATH] [--json] COMMAND\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  hgctl %s\n", cmds[i].usage);
	fprintf(f, "\n--ctl defaults to $HG_CTL or %s\n", HG_CTL_DEFAULT_PATH);
}

static double
parse_double(const char *flag, const char *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno)
		die_usage("%s wants a number, not '%s'", flag, v);
	return d;
}

static uint64_t
parse_u64(const char *flag, const char *v)
{
	char *end;
	unsigned long long u;

	errno = 0;
	u = strtoull(v, &end, 10);
	if (end == v || *end || errno || v[0] == '-')
		die_usage("%s wants a non-negative integer, not '%s'", flag, v);
	return u;
}

static void
parse_ports(const char *v, struct opts *o)
{
	unsigned lo, hi;
	char tail;

	if (sscanf(v, "%u-%u%c", &lo, &hi, &tail) != 2 || lo == 0 || lo > hi ||
	    hi > 65535)
		die_usage("--ports wants LO-HI with 1 <= LO <= HI <= 65535, not '%s'", v);
	o->port_lo = lo;
	o->port_hi = hi;
}

static int
parse_on_off(const char *flag, const char *v)
{
	if (strcmp(v, "on") == 0)
		return 1;
	if (strcmp(v, "off") != 0)
		die_usage("%s wants on or off, not '%s'", flag, v);
	return 0;
}

static uint32_t
parse_u32(const char *flag, const char *v)
{
	uint64_t u = parse_u64(flag, v);

	if (u > UINT32_MAX)
		die_usage("%s is too large", flag);
	return (uint32_t)u;
}

/* One steering option into the TenantSet message (the daemon checks the
 * ranges, so that every client gets the same answer). */
static void
parse_steering(int c, const char *v, Hg__TenantSet *m)
{
	switch (c) {
	case 's':
		if (strcmp(v, "flow") != 0 && strcmp(v, "jsq") != 0)
			die_usage("--steer wants flow or jsq, not '%s'", v);
		m->steer = (char *)v;
		break;
	case 'q': m->has_quantum_factor = 1;
		  m->quantum_factor = parse_double("--quantum-factor", v); break;
	case 'g': m->has_congested_factor = 1;
		  m->congested_factor = parse_double("--congested-factor", v); break;
	case 'W': m->has_thresh_wqd_us = 1;
		  m->thresh_wqd_us = parse_u32("--thresh-wqd-us", v); break;
	case 'T': m->has_steal_threshold = 1;
		  m->steal_threshold = parse_u32("--steal-threshold", v); break;
	case 'Q': m->has_quantum_us = 1;
		  m->quantum_us = parse_u32("--quantum-us", v); break;
	case 'P':
		/* "always": preempt at quantum expiry even with nothing
		 * queued, to show what the conditional rule buys */
		m->has_preempt = m->has_preempt_always = 1;
		m->preempt_always = strcmp(v, "always") == 0;
		m->preempt = m->preempt_always || parse_on_off("--preempt", v);
		break;
	case 'Y': m->has_wait_queue = 1;
		  m->wait_queue = parse_on_off("--wait-queue", v); break;
	case 'S': m->has_steal = 1; m->steal = parse_on_off("--steal", v); break;
	case 'D': m->has_dt_us = 1; m->dt_us = parse_u32("--dt-us", v); break;
	case 'E': m->has_ddrop_us = 1; m->ddrop_us = parse_u32("--ddrop-us", v); break;
	case 'A': m->has_alpha = 1; m->alpha = parse_double("--alpha", v); break;
	case 'B': m->has_beta = 1; m->beta = parse_double("--beta", v); break;
	case 'U': m->has_update_us = 1; m->update_us = parse_u32("--update-us", v); break;
	}
}

/* --uid and --gid take a name or a number; --gid none drops the group. */
static void
parse_owner(int c, const char *v, Hg__TenantSet *m)
{
	struct passwd *pw;
	struct group *gr;

	switch (c) {
	case 'u':
		m->has_uid = 1;
		if ((pw = getpwnam(v)) != NULL)
			m->uid = pw->pw_uid;
		else
			m->uid = parse_u32("--uid", v);
		break;
	case 'G':
		m->has_gid = 1;
		if (strcmp(v, "none") == 0)
			m->gid = -1;
		else if ((gr = getgrnam(v)) != NULL)
			m->gid = gr->gr_gid;
		else
			m->gid = parse_u32("--gid", v);
		break;
	case 'M':
		m->has_max_sessions = 1;
		m->max_sessions = parse_u32("--max-sessions", v);
		break;
	}
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ctl", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "weight", required_argument, NULL, 'w' },
		{ "cap", required_argument, NULL, 'C' },
		{ "ports", required_argument, NULL, 'p' },
		{ "tenant", required_argument, NULL, 't' },
		{ "extra-cycles", required_argument, NULL, 'x' },
		{ "steer", required_argument, NULL, 's' },
		{ "quantum-factor", required_argument, NULL, 'q' },
		{ "congested-factor", required_argument, NULL, 'g' },
		{ "thresh-wqd-us", required_argument, NULL, 'W' },
		{ "steal-threshold", required_argument, NULL, 'T' },
		{ "quantum-us", required_argument, NULL, 'Q' },
		{ "preempt", required_argument, NULL, 'P' },
		{ "wait-queue", required_argument, NULL, 'Y' },
		{ "steal", required_argument, NULL, 'S' },
		{ "rpc-ports", required_argument, NULL, 'R' },
		{ "dt-us", required_argument, NULL, 'D' },
		{ "ddrop-us", required_argument, NULL, 'E' },
		{ "alpha", required_argument, NULL, 'A' },
		{ "beta", required_argument, NULL, 'B' },
		{ "update-us", required_argument, NULL, 'U' },
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'G' },
		{ "max-sessions", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->ctl = optarg; break;
		case 'j': o->json = 1; break;
		case 'w': o->weight = parse_double("--weight", optarg);
			  o->given |= O_WEIGHT; break;
		case 'C': o->cap = parse_u64("--cap", optarg);
			  o->given |= O_CAP; break;
		case 'p': parse_ports(optarg, o); o->given |= O_PORTS; break;
		case 't': o->tenant = optarg; o->given |= O_TENANT; break;
		case 'x': o->extra = parse_u64("--extra-cycles", optarg);
			  o->given |= O_EXTRA; break;
		case 's': case 'q': case 'g': case 'W': case 'T': case 'Q':
		case 'P': case 'Y': case 'S': case 'D': case 'E': case 'A': case 'B':
		case 'U':
			  parse_steering(c, optarg, &o->steer);
			  o->given |= O_STEER; break;
		case 'u': case 'G': case 'M':
			  parse_owner(c, optarg, &o->steer);
			  o->given |= O_OWNER; break;
		case 'R': {
			struct opts tmp = *o;

			parse_ports(optarg, &tmp);
			o->steer.has_rpc_lo = o->steer.has_rpc_hi = 1;
			o->steer.rpc_lo = tmp.port_lo;
			o->steer.rpc_hi = tmp.port_hi;
			o->given |= O_RPC;
			break;
		}
		case 'h': usage(stdout); exit(0);
		case ':': die_usage("%s needs a value", argv[optind - 1]);
		default: die_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	return optind;
}

static const struct cmd *
find_cmd(int n, char **w, int *used)
{
	size_t i;

	if (n == 0)
		die_usage("no command given");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].w1, w[0]) != 0)
			continue;
		if (cmds[i].w2 == NULL) {
			*used = 1;
			return &cmds[i];
		}
		if (n > 1 && strcmp(cmds[i].w2, w[1]) == 0) {
			*used = 2;
			return &cmds[i];
		}
	}
	if (n > 1)
		die_usage("unknown command '%s %s'", w[0], w[1]);
	die_usage("unknown command '%s'", w[0]);
}

/* Options may come anywhere: collect words first, then options. */
int
main(int argc, char **argv)
{
	struct opts o = { .ctl = getenv("HG_CTL") ? getenv("HG_CTL")
						  : HG_CTL_DEFAULT_PATH,
			  .steer = HG__TENANT_SET__INIT };
	Hg__Request req = HG__REQUEST__INIT;
	char *words[16];
	int n = 0, used, sock, rc, i;
	const struct cmd *cmd;
	Hg__Response *rsp;

	/* GNU getopt_long with "+" stops at the first word; loop so that
	 * options before, between and after the words are all taken */
	optind = 1;
	while (optind < argc) {
		parse_opts(argc, argv, &o);
		if (optind < argc) {
			if (n == 8)
				die_usage("too many arguments");
			words[n++] = argv[optind++];
		}
	}
	cmd = find_cmd(n, words, &used);
	if (n - used < cmd->min_args || n - used > cmd->max_args)
		die_usage("usage: hgctl %s", cmd->usage);
	if (o.given & ~cmd->allowed)
		die_usage("option not valid for '%s%s%s'", cmd->w1,
			  cmd->w2 ? " " : "", cmd->w2 ? cmd->w2 : "");
	for (i = n; i < used + 2; i++)
		words[i] = NULL;
	cmd->build(&req, words + used, &o);
	sock = hg_ctl_connect(o.ctl);
	if (sock < 0) {
		fprintf(stderr, "hgctl: cannot reach hourglassd at %s: %s\n", o.ctl,
			strerror(-sock));
		return 1;
	}
	req.id = 1;
	rsp = hg_ctl_call(sock, &req, NULL);
	close(sock);
	if (rsp == NULL) {
		fprintf(stderr, "hgctl: no answer from hourglassd: %s\n",
			strerror(errno));
		return 1;
	}
	if (rsp->status != 0) {
		fprintf(stderr, "hgctl: %s\n", rsp->error ? rsp->error : "failed");
		hg__response__free_unpacked(rsp, NULL);
		return 1;
	}
	rc = cmd->print(rsp, &o);
	hg__response__free_unpacked(rsp, NULL);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fastpath/dp.h"
#include "../policy/coresync.h"
#include "../policy/dispatch.h"
#include "../proto/hg_shm.h"
#include "tenant_cfg.h"

#define OFF(f) offsetof(struct hg_tenant_cfg, f)

static const char *const steer_modes[] = { "flow", "jsq", NULL };
static const char *const on_off[] = { "off", "on", NULL };
/* an enum so that "auto" and the numbers share one parser: choice k + 1
 * is queue k (HG_MAX_RXQ of them) */
static const char *const rx_queues[] = { "auto", "0", "1", "2", "3", "4", "5",
					 "6", "7", NULL };
static const char *const preempt_modes[] = { "off", "on", "always", NULL };
/* in enum hg_dispatch's order (policy/dispatch.h) */
static const char *const dispatch_modes[] = { "synergy", "cfcfs", "darc", "fc",
					      NULL };
/* in enum hg_core_policy's order (policy/coresync.h) */
static const char *const core_policies[] = { "coresync", "shenango", "static",
					     NULL };

enum {
	BUDGET = HG_TCFG_PUB_BUDGET, EXTRA = HG_TCFG_PUB_EXTRA,
	STEER = HG_TCFG_PUB_STEER, CREDIT = HG_TCFG_PUB_CREDIT,
	SESS = HG_TCFG_PUB_SESSIONS, OWNER = HG_TCFG_PUB_OWNER,
	PORTS = HG_TCFG_PUB_PORTS, CORE = HG_TCFG_PUB_CORE,
};

#define D HG_TCFG_DOUBLE
#define H HG_TCFG_HUNDREDTHS
#define U32 HG_TCFG_U32
#define U64 HG_TCFG_U64
#define BOOL HG_TCFG_BOOL

/* name, type, offset, min, max, min open, default, live, publish, choices,
 * help. Bounds and defaults are DESIGN §9's. */
static const struct hg_tenant_setting table[] = {
	{ "weight", H, OFF(weight), 0.01, 10000, 0, "1", 1, BUDGET, NULL,
	  "share of each fast-path core when it is contended" },
	{ "cap", U64, OFF(cap), 100, 1e9, 0, NULL, 1, BUDGET, NULL,
	  "budget cap per core (cycles); the most one batch spends" },
	{ "ports", HG_TCFG_RANGE, OFF(port_lo), 1, 65535, 0, "none", 0, PORTS,
	  NULL, "UDP ports the tenant owns: PORT or LO-HI" },
	{ "rx-queue", HG_TCFG_ENUM, OFF(rx_queue), 0, 0, 0, "auto", 0, PORTS,
	  rx_queues, "each core's RX queue its datagrams arrive on, where the "
	  "link steers (--rx-queues); auto: the queue with fewest tenants" },
	{ "extra-cycles", U64, OFF(extra_cycles), 0, 1e7, 0, "0", 1, EXTRA,
	  NULL, "synthetic fast-path work per datagram (benchmarks)" },
	{ "steer", HG_TCFG_ENUM, OFF(steer.jsq), 0, 0, 0, "flow", 1, STEER,
	  steer_modes, "RX steering to contexts: flow hash or jsq" },
	{ "quantum-factor", H, OFF(steer.quantum_factor), 0.1, 1000, 0, "2", 1,
	  STEER, NULL, "long-request quantum, x the short service time EMA" },
	{ "congested-factor", H, OFF(steer.congested_factor), 0.1, 1000, 0,
	  "10", 1, STEER, NULL, "the quantum's factor under wait-queue congestion" },
	{ "thresh-wqd-us", U32, OFF(steer.thresh_wqd_us), 0, 1e6, 0, "0", 1,
	  STEER, NULL, "wait-queue delay that means congestion (0: off)" },
	{ "steal-threshold", U32, OFF(steer.steal_threshold), 0, HG_RING_SIZE,
	  0, "1", 1, STEER, NULL, "requests a context holds before others steal" },
	{ "quantum-us", U32, OFF(steer.quantum_us), 0, 1e6, 0, "0", 1, STEER,
	  NULL, "fixed long-request quantum (0: adaptive)" },
	{ "preempt", HG_TCFG_ENUM, OFF(steer.preempt), 0, 0, 0, "on", 1, STEER,
	  preempt_modes, "preempt long requests when short ones wait (always: "
	  "at every quantum expiry, for ablation)" },
	{ "dispatch", HG_TCFG_ENUM, OFF(steer.dispatch), 0, 0, 0, "synergy", 1,
	  STEER, dispatch_modes, "how the app's workers take requests: synergy "
	  "(own queues, stealing, preemption), cfcfs (one central queue), darc "
	  "(Perséphone: workers reserved per class), fc (flat combining)" },
	{ "wait-queue", BOOL, OFF(steer.wait_queue), 0, 1, 0, "on", 1, STEER,
	  NULL, "preempted requests go to the app's shared wait queue" },
	{ "steal", BOOL, OFF(steer.steal), 0, 1, 0, "on", 1, STEER, NULL,
	  "idle workers steal from busy contexts" },
	{ "rpc-ports", HG_TCFG_RANGE, OFF(credit.rpc_lo), 1, 65535, 0, "none",
	  1, CREDIT, NULL, "ports with the RPC header and credits: PORT or LO-HI" },
	{ "dt-us", U32, OFF(credit.dt_us), 1, 1e6, 0, "50", 1, CREDIT, NULL,
	  "D_t: target queueing delay" },
	{ "ddrop-us", U32, OFF(credit.ddrop_us), 1, 1e7, 0, "100", 1, CREDIT,
	  NULL, "D_drop: delay beyond which requests are rejected" },
	{ "alpha", D, OFF(credit.alpha), 0, 1e6, 0, "0", 1, CREDIT, NULL,
	  "additive increase (0: 0.001 x sessions, at least 1)" },
	{ "beta", D, OFF(credit.beta), 0, 1, 1, "0.02", 1, CREDIT, NULL,
	  "multiplicative decrease per unit of excess delay" },
	{ "update-us", U32, OFF(credit.update_us), 1, 1e6, 0, "10", 1, CREDIT,
	  NULL, "credit pool update period, about one round trip" },
	{ "budget-feedback", BOOL, OFF(credit.budget_feedback), 0, 1, 0, "on", 1,
	  CREDIT, NULL, "credits follow the budget: on a saturated core, a tenant "
	  "below budget-mark shrinks its pool as if its delay were above dt-us" },
	{ "budget-mark", D, OFF(credit.budget_mark), 0, 1, 0, "0", 1, CREDIT, NULL,
	  "budget-feedback's threshold, a fraction of the cap (0: in debt; "
	  "higher cuts earlier, Virtuoso's ECN threshold)" },
	{ "policy", HG_TCFG_ENUM, OFF(core.policy), 0, 0, 0, "coresync", 1,
	  STEER, core_policies, "who decides how many workers run: coresync "
	  "(park when credits are proportional), shenango (park when idle) or "
	  "static (never park)" },
	{ "coresync-r", D, OFF(core.r), 0, 1e6, 0, "50", 1, CORE, NULL,
	  "R: credits beyond one per session, per active worker" },
	{ "poll-us", U32, OFF(core.poll_us), 0, 1e6, 0, "20", 1, STEER, NULL,
	  "an idle worker polls this long before it asks to park" },
	{ "core-delay-us", U32, OFF(core.delay_us), 1, 1e6, 0, "10", 1, CORE, NULL,
	  "queueing delay that wakes a parked worker (well below dt-us)" },
	{ "max-sessions", U32, OFF(max_sessions), 1, HG_SESSIONS_MAX, 0, "2048", 1,
	  SESS, NULL, "RPC sessions per fast-path core: the tenant's share of "
	  "each core's table (--sessions), reserved while it has RPC ports" },
	{ "max-apps", U32, OFF(max_apps), 1, HG_MAX_APPS, 0, "64", 1, OWNER,
	  NULL, "apps attached at once; a lower value refuses new attaches" },
	{ "uid", HG_TCFG_UID, OFF(uid), 0, 4294967294.0, 0, "0", 1, OWNER, NULL,
	  "owner: this user may attach apps (so may root)" },
	{ "gid", HG_TCFG_GID, OFF(gid), -1, 4294967294.0, 0, "none", 1, OWNER,
	  NULL, "members of this group may attach apps" },
};

#undef D
#undef H
#undef U32
#undef U64
#undef BOOL

_Static_assert(HG_SESSIONS / 32 == 2048, "max-sessions' default: 32 RPC tenants fill the default table");
_Static_assert(HG_MAX_APPS == 64, "max-apps' default is HG_MAX_APPS");
_Static_assert(sizeof(rx_queues) / sizeof(rx_queues[0]) == HG_MAX_RXQ + 2, "rx-queue: auto, then every queue");
_Static_assert(HG_DISPATCH_N == 4 && HG_DISPATCH_FC == 3,
	       "dispatch's words follow enum hg_dispatch");
_Static_assert(HG_CORE_N == 3 && HG_CORE_STATIC == 2,
	       "policy's words follow enum hg_core_policy");

const struct hg_tenant_setting *
hg_tenant_settings(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

const struct hg_tenant_setting *
hg_tenant_setting_find(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, key) == 0)
			return &table[i];
	return NULL;
}

/* A number in [min, max] (min excluded if min_open), all digits used. */
static int
parse_num(const struct hg_tenant_setting *s, const char *v, double *out)
{
	char *end;
	double d;

	if (*v == '\0' || isspace((unsigned char)*v))
		return -1;
	errno = 0;
	d = strtod(v, &end);
	if (*end || errno || d != d || d < s->min || d > s->max ||
	    (s->min_open && d == s->min))
		return -1;
	/* integers are integers: 1.5 sessions or 1e3 cycles are typos */
	if (s->type != HG_TCFG_DOUBLE && s->type != HG_TCFG_HUNDREDTHS &&
	    (strpbrk(v, ".eExXpP") != NULL || d != (double)(int64_t)d))
		return -1;
	*out = d;
	return 0;
}

static int
parse_range(const struct hg_tenant_setting *s, const char *v, uint32_t *lo,
	    uint32_t *hi)
{
	unsigned long a, b;
	char *end;

	if (strcmp(v, "none") == 0) {
		*lo = *hi = 0;
		return 0;
	}
	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	a = b = strtoul(v, &end, 10);
	/* PORT alone is the range PORT-PORT */
	if (!errno && *end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return -1;
		b = strtoul(end + 1, &end, 10);
	}
	if (errno || *end || a < s->min || b > s->max || a > b)
		return -1;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

/* The words a BOOL or ENUM setting takes, in index order. */
static const char *const *
choices_of(const struct hg_tenant_setting *s)
{
	return s->type == HG_TCFG_BOOL ? on_off : s->choices;
}

static int
parse_choice(const char *const *choices, const char *v)
{
	int i;

	for (i = 0; choices[i] != NULL; i++)
		if (strcmp(choices[i], v) == 0)
			return i;
	return -1;
}

void
hg_tenant_setting_bounds(const struct hg_tenant_setting *s, char *out, size_t n)
{
	int i;
	size_t k = 0;

	switch (s->type) {
	case HG_TCFG_BOOL:
	case HG_TCFG_ENUM:
		out[0] = '\0';
		for (i = 0; choices_of(s)[i] != NULL && k < n; i++)
			k += (size_t)snprintf(out + k, n - k, "%s%s", i ? "|" : "",
					      choices_of(s)[i]);
		return;
	case HG_TCFG_RANGE:
		snprintf(out, n, "PORT or LO-HI within %.0f-%.0f, or none", s->min, s->max);
		return;
	case HG_TCFG_UID:
		snprintf(out, n, "a user name or [0, %.0f]", s->max);
		return;
	case HG_TCFG_GID:
		snprintf(out, n, "a group name, [0, %.0f] or none", s->max);
		return;
	default:
		snprintf(out, n, "%c%.15g, %.15g]", s->min_open ? '(' : '[',
			 s->min, s->max);
	}
}

/* A user or group given by name: the daemon resolves it, so that a config
 * file and every client say "www-data" alike. Numbers are numbers. */
static int
parse_owner(const struct hg_tenant_setting *s, const char *v, void *p)
{
	const struct passwd *pw;
	const struct group *gr;
	double d;

	if (s->type == HG_TCFG_GID && strcmp(v, "none") == 0) {
		*(int64_t *)p = -1;
		return 0;
	}
	if (isdigit((unsigned char)*v) || *v == '-') {
		if (parse_num(s, v, &d) < 0)
			return -1;
		if (s->type == HG_TCFG_UID)
			*(uint32_t *)p = (uint32_t)d;
		else
			*(int64_t *)p = (int64_t)d;
		return 0;
	}
	if (s->type == HG_TCFG_UID) {
		if ((pw = getpwnam(v)) == NULL)
			return -1;
		*(uint32_t *)p = pw->pw_uid;
		return 0;
	}
	if ((gr = getgrnam(v)) == NULL)
		return -1;
	*(int64_t *)p = gr->gr_gid;
	return 0;
}

/* Parses v for setting s into the value slot at p. */
static int
parse_into(const struct hg_tenant_setting *s, const char *v, void *p)
{
	double d;
	int i;

	switch (s->type) {
	case HG_TCFG_BOOL:
	case HG_TCFG_ENUM:
		if ((i = parse_choice(choices_of(s), v)) < 0)
			return -1;
		*(int *)p = i;
		return 0;
	case HG_TCFG_RANGE:
		return parse_range(s, v, (uint32_t *)p, (uint32_t *)p + 1);
	case HG_TCFG_UID:
	case HG_TCFG_GID:
		return parse_owner(s, v, p);
	default:
		break;
	}
	if (parse_num(s, v, &d) < 0)
		return -1;
	switch (s->type) {
	case HG_TCFG_DOUBLE:
		*(double *)p = d;
		break;
	case HG_TCFG_HUNDREDTHS:
		*(uint32_t *)p = (uint32_t)(d * 100 + 0.5);
		break;
	case HG_TCFG_U32:
		*(uint32_t *)p = (uint32_t)d;
		break;
	case HG_TCFG_U64:
		*(uint64_t *)p = (uint64_t)d;
		break;
	default:
		*(int64_t *)p = (int64_t)d;
	}
	return 0;
}

static size_t
value_size(const struct hg_tenant_setting *s)
{
	switch (s->type) {
	case HG_TCFG_DOUBLE: return sizeof(double);
	case HG_TCFG_U32:
	case HG_TCFG_HUNDREDTHS:
	case HG_TCFG_UID: return sizeof(uint32_t);
	case HG_TCFG_RANGE: return 2 * sizeof(uint32_t);
	case HG_TCFG_BOOL:
	case HG_TCFG_ENUM: return sizeof(int);
	default: return sizeof(uint64_t);
	}
}

int
hg_tenant_cfg_set(struct hg_tenant_cfg *c, const char *key, const char *value,
		  int adding, unsigned *changed, char *err, size_t errlen)
{
	const struct hg_tenant_setting *s = hg_tenant_setting_find(key);
	uint8_t *p = (uint8_t *)c, old[16];
	char b[96];

	if (s == NULL) {
		snprintf(err, errlen, "no tenant setting '%.40s' (hgctl tenant "
			 "set NAME --help lists them)", key);
		return -ENOENT;
	}
	if (!adding && !s->live) {
		snprintf(err, errlen, "%s is set when the tenant is added; "
			 "delete and add it again", key);
		return -EPERM;
	}
	memcpy(old, p + s->off, value_size(s));
	if (parse_into(s, value, p + s->off) < 0) {
		hg_tenant_setting_bounds(s, b, sizeof(b));
		snprintf(err, errlen, "%s must be %s, not '%.32s'", key, b, value);
		return -EINVAL;
	}
	if (memcmp(old, p + s->off, value_size(s)) != 0)
		*changed |= s->publish;
	return 0;
}

int
hg_tenant_cfg_apply(struct hg_tenant_cfg *c, const struct hg_kv *kv, size_t n,
		    int adding, unsigned *changed, char *err, size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = hg_tenant_cfg_set(c, kv[i].key, kv[i].value, adding,
					    changed, err, errlen)) < 0)
			return rc;
	return hg_tenant_cfg_check(c, err, errlen);
}

void
hg_tenant_cfg_defaults(struct hg_tenant_cfg *c, uint64_t daemon_cap)
{
	unsigned ignored = 0;
	char err[160];
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].def != NULL)
			hg_tenant_cfg_set(c, table[i].name, table[i].def, 1,
					  &ignored, err, sizeof(err));
	c->cap = daemon_cap;
}

int
hg_tenant_cfg_check(const struct hg_tenant_cfg *c, char *err, size_t errlen)
{
	const struct hg_credit_cfg *k = &c->credit;

	if (k->ddrop_us < k->dt_us) {
		snprintf(err, errlen, "ddrop-us (%u) must be at least dt-us (%u)",
			 k->ddrop_us, k->dt_us);
		return -EINVAL;
	}
	if (k->rpc_hi != 0 && (c->port_hi == 0 || k->rpc_lo < c->port_lo ||
			       k->rpc_hi > c->port_hi)) {
		snprintf(err, errlen, "rpc-ports %u-%u are not within the "
			 "tenant's ports %u-%u", k->rpc_lo, k->rpc_hi, c->port_lo,
			 c->port_hi);
		return -EINVAL;
	}
	return 0;
}

int
hg_tenant_cfg_same(const struct hg_tenant_cfg *a, const struct hg_tenant_cfg *b,
		   const struct hg_tenant_setting *s)
{
	return memcmp((const uint8_t *)a + s->off, (const uint8_t *)b + s->off,
		      value_size(s)) == 0;
}

unsigned
hg_tenant_cfg_diff(const struct hg_tenant_cfg *a, const struct hg_tenant_cfg *b,
		   const struct hg_tenant_setting **fixed)
{
	unsigned bits = 0;
	size_t i;

	if (fixed != NULL)
		*fixed = NULL;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (hg_tenant_cfg_same(a, b, &table[i]))
			continue;
		bits |= table[i].publish;
		if (!table[i].live && fixed != NULL && *fixed == NULL)
			*fixed = &table[i];
	}
	return bits;
}

int
hg_tenant_setting_numeric(const struct hg_tenant_setting *s, const char *value)
{
	switch (s->type) {
	case HG_TCFG_BOOL:
	case HG_TCFG_ENUM:
	case HG_TCFG_RANGE:
		return 0;
	case HG_TCFG_GID:
		return strcmp(value, "none") != 0;
	default:
		return 1;
	}
}

/* The shortest text that reads back as the same double. */
static void
format_double(double d, char *out, size_t n)
{
	int prec;

	for (prec = 6; prec < 17; prec++) {
		snprintf(out, n, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			return;
	}
	snprintf(out, n, "%.17g", d);
}

void
hg_tenant_cfg_format(const struct hg_tenant_cfg *c,
		     const struct hg_tenant_setting *s, char *out, size_t n)
{
	const uint8_t *p = (const uint8_t *)c + s->off;
	const uint32_t *r = (const uint32_t *)p;

	switch (s->type) {
	case HG_TCFG_DOUBLE:
		format_double(*(const double *)p, out, n);
		break;
	case HG_TCFG_HUNDREDTHS:
		format_double(*(const uint32_t *)p / 100.0, out, n);
		break;
	case HG_TCFG_U32:
	case HG_TCFG_UID:
		snprintf(out, n, "%" PRIu32, *(const uint32_t *)p);
		break;
	case HG_TCFG_U64:
		snprintf(out, n, "%" PRIu64, *(const uint64_t *)p);
		break;
	case HG_TCFG_I64:
		snprintf(out, n, "%" PRId64, *(const int64_t *)p);
		break;
	case HG_TCFG_GID:
		if (*(const int64_t *)p < 0)
			snprintf(out, n, "none");
		else
			snprintf(out, n, "%" PRId64, *(const int64_t *)p);
		break;
	case HG_TCFG_BOOL:
	case HG_TCFG_ENUM:
		snprintf(out, n, "%s", choices_of(s)[*(const int *)p]);
		break;
	case HG_TCFG_RANGE:
		if (r[1] == 0)
			snprintf(out, n, "none");
		else
			snprintf(out, n, "%" PRIu32 "-%" PRIu32, r[0], r[1]);
		break;
	}
}

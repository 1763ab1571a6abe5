/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fastpath/dp.h"
#include "config.h"
#include "config_file.h"

struct hg_config hg_cfg;
static hg_config_hook live_hook;

enum setting_type { T_UINT, T_DOUBLE, T_ENUM, T_STR, T_CIDR };

struct setting {
	const char *name;
	enum setting_type type;
	int live;		/* may change while running */
	void *ptr;
	size_t size;		/* T_STR buffer size */
	uint64_t umin, umax;
	double dmin, dmax;
	const char *const *choices;	/* T_ENUM, NULL-terminated */
	const char *def;
	const char *help;
};

static const char *const on_off[] = { "off", "on", NULL };
static const char *const idle_modes[] = { "poll", "yield", "sleep", NULL };
static const char *const admit_drop[] = { "admit", "drop", NULL };

#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

#define FIELD(f) &hg_cfg.f, sizeof(hg_cfg.f)

_Static_assert(HG_SESSIONS == 65536, "sessions' default is HG_SESSIONS");

static const struct setting settings[] = {
	{ "ip", T_CIDR, 0, FIELD(ip), 0, 0, 0, 0, NULL, "",
	  "address/prefix the daemon answers on (prefix 16..30)" },
	{ "ctl", T_STR, 0, FIELD(ctl), 0, 0, 0, 0, NULL,
	  "/run/hourglass/ctl.sock", "control socket path" },
	{ "app-ctl", T_STR, 0, FIELD(app_ctl), 0, 0, 0, 0, NULL,
	  "/run/hourglass/app.sock", "app socket path (mode 0666): attach, "
	  "contexts, bind only" },
	{ "max-ctl-conns", T_UINT, 1, FIELD(max_ctl_conns), 1, 4096, 0, 0, NULL,
	  "32", "operator connections at once" },
	{ "max-app-conns", T_UINT, 1, FIELD(max_app_conns), 1, 65536, 0, 0, NULL,
	  "1024", "app connections at once" },
	{ "max-conn-out", T_UINT, 1, FIELD(max_conn_out), 65536, 1u << 30, 0, 0,
	  NULL, "1048576", "reply bytes queued per connection before the "
	  "daemon stops reading its requests" },
	{ "max-app-conns-per-uid", T_UINT, 1, FIELD(max_app_conns_per_uid), 1,
	  65536, 0, 0, NULL, "256", "app connections one uid may hold (keep it "
	  "below max-app-conns: one user leaves the socket to others)" },
	{ "attach-timeout-ms", T_UINT, 1, FIELD(attach_timeout_ms), 100,
	  3600000, 0, 0, NULL, "10000", "an app connection that has not "
	  "attached this long after it connected is closed" },
	{ "max-conns-buffered", T_UINT, 1, FIELD(max_conns_buffered), 1u << 20,
	  1ull << 34, 0, 0, NULL, "67108864", "request and reply bytes held "
	  "for all connections together; past it, a connection with bytes "
	  "held is not read until they fall" },
	{ "config", T_STR, 0, FIELD(config), 0, 0, 0, 0, NULL, "",
	  "settings file: one 'key value' per line" },
	{ "fp-cores", T_UINT, 0, FIELD(fp_cores), 1, HG_MAX_FP_CORES, 0, 0,
	  NULL, "1", "fast-path cores, one TX queue and --rx-queues RX queues each" },
	{ "rx-queues", T_UINT, 0, FIELD(rx_queues), 1, HG_MAX_RXQ, 0, 0, NULL,
	  "1", "RX queues per fast-path core: above 1, tenants get queues of "
	  "their own (rx-queue) where the link steers (a memif peer that "
	  "reads the map, a NIC's rte_flow); af_packet and tap share one" },
	{ "sessions", T_UINT, 0, FIELD(sessions), HG_SESSIONS_MIN, HG_SESSIONS_MAX,
	  0, 0, NULL, "65536", "RPC session slots per fast-path core; each "
	  "tenant with RPC ports reserves its max-sessions of them" },
	{ "refill-ns", T_UINT, 1, FIELD(refill_ns), 100, 1000000000, 0, 0,
	  NULL, "1000", "budget refill period (ns)" },
	{ "tick-us", T_UINT, 1, FIELD(tick_us), 1, 1000, 0, 0, NULL, "10",
	  "with slow-idle sleep|yield: the slow path's period while a tenant "
	  "has credits or a long request to watch (else it waits for events)" },
	{ "boost", T_DOUBLE, 1, FIELD(boost), 0, 0, 0.01, 1.0, NULL, "0.85",
	  "share of elapsed cycles handed out per refill" },
	{ "cap", T_UINT, 1, FIELD(cap), 100, 1000000000, 0, 0, NULL, "15000",
	  "per-core budget cap of tenants added later (cycles)" },
	{ "cap-batches", T_UINT, 1, FIELD(cap_batches), 0, 16, 0, 0, NULL, "2",
	  "a tenant's effective cap is at least this many batches of its "
	  "measured cost per datagram (0: the configured cap only)" },
	{ "protection", T_ENUM, 1, FIELD(protection), 0, 0, 0, 0, on_off,
	  "on", "time protection on or off" },
	{ "idle", T_ENUM, 1, FIELD(idle), 0, 0, 0, 0, idle_modes, "poll",
	  "what a fast-path core does without work: poll|yield|sleep" },
	{ "slow-idle", T_ENUM, 1, FIELD(slow_idle), 0, 0, 0, 0, idle_modes,
	  "sleep", "how the slow path waits between refills: poll|yield|sleep "
	  "(poll needs a core of its own)" },
	{ "rx-overbudget", T_ENUM, 1, FIELD(rx_overbudget), 0, 0, 0, 0,
	  admit_drop, "drop",
	  "an out-of-budget tenant's received datagrams: admit|drop" },
};

/* Settings given as flags: they win over the file, at startup and at
 * every reload. */
static uint8_t from_flag[N_SETTINGS];

void
hg_config_set_hook(hg_config_hook hook)
{
	live_hook = hook;
}

static const struct setting *
find(const char *key)
{
	size_t i;

	for (i = 0; i < N_SETTINGS; i++)
		if (strcmp(settings[i].name, key) == 0)
			return &settings[i];
	return NULL;
}

int
hg_parse_cidr(const char *s, uint32_t *ip_net, uint32_t *prefix)
{
	char addr[32], *end;
	const char *slash = strchr(s, '/');
	struct in_addr in;
	unsigned long p;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	memcpy(addr, s, slash - s);
	addr[slash - s] = '\0';
	errno = 0;
	p = strtoul(slash + 1, &end, 10);
	if (inet_pton(AF_INET, addr, &in) != 1 || errno || *end ||
	    end == slash + 1 || p < 16 || p > 30)
		return -1;
	*ip_net = in.s_addr;
	*prefix = (uint32_t)p;
	return 0;
}

static int
parse_value(const struct setting *s, const char *v, char *err, size_t n)
{
	char *end;
	size_t i;

	switch (s->type) {
	case T_UINT: {
		unsigned long long u;

		errno = 0;
		u = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || errno ||
		    u < s->umin || u > s->umax) {
			snprintf(err, n, "%s must be an integer in [%" PRIu64
				 ", %" PRIu64 "], not '%s'", s->name, s->umin,
				 s->umax, v);
			return -EINVAL;
		}
		*(uint64_t *)s->ptr = u;
		return 0;
	}
	case T_DOUBLE: {
		double d;

		errno = 0;
		d = strtod(v, &end);
		if (end == v || *end || errno || !(d >= s->dmin && d <= s->dmax)) {
			snprintf(err, n, "%s must be a number in [%g, %g], not '%s'",
				 s->name, s->dmin, s->dmax, v);
			return -EINVAL;
		}
		*(double *)s->ptr = d;
		return 0;
	}
	case T_ENUM:
		for (i = 0; s->choices[i] != NULL; i++) {
			if (strcmp(s->choices[i], v) == 0) {
				*(uint64_t *)s->ptr = i;
				return 0;
			}
		}
		snprintf(err, n, "%s must be one of %s%s%s%s%s, not '%s'", s->name,
			 s->choices[0], s->choices[1] ? "|" : "",
			 s->choices[1] ? s->choices[1] : "",
			 s->choices[1] && s->choices[2] ? "|" : "",
			 s->choices[1] && s->choices[2] ? s->choices[2] : "", v);
		return -EINVAL;
	case T_CIDR: {
		uint32_t ip, p;

		if (hg_parse_cidr(v, &ip, &p) < 0) {
			snprintf(err, n, "%s must be IPv4ADDR/PREFIX with prefix "
				 "16..30, not '%s'", s->name, v);
			return -EINVAL;
		}
	}
		/* stored as text */
		__attribute__((fallthrough));
	case T_STR:
		if (strlen(v) >= s->size) {
			snprintf(err, n, "%s is too long (max %zu)", s->name,
				 s->size - 1);
			return -EINVAL;
		}
		strcpy(s->ptr, v);
		return 0;
	}
	return -EINVAL;
}

int
hg_config_set(const char *key, const char *value, int runtime, char *err,
	      size_t errlen)
{
	const struct setting *s = find(key);
	int rc;

	if (s == NULL) {
		snprintf(err, errlen, "unknown setting '%s'", key);
		return -ENOENT;
	}
	if (runtime && !s->live) {
		snprintf(err, errlen, "'%s' can only be set at startup", key);
		return -EPERM;
	}
	rc = parse_value(s, value, err, errlen);
	if (rc == 0 && runtime && live_hook != NULL)
		live_hook();
	return rc;
}

/* s's value in c (hg_cfg or a copy of it) as text. */
static void
format_in(const struct hg_config *c, const struct setting *s, char *out,
	  size_t n)
{
	const void *p = (const char *)c + ((const char *)s->ptr -
					   (const char *)&hg_cfg);

	switch (s->type) {
	case T_UINT:
		snprintf(out, n, "%" PRIu64, *(const uint64_t *)p);
		break;
	case T_DOUBLE:
		snprintf(out, n, "%g", *(const double *)p);
		break;
	case T_ENUM:
		snprintf(out, n, "%s", s->choices[*(const uint64_t *)p]);
		break;
	case T_STR:
	case T_CIDR:
		snprintf(out, n, "%s", (const char *)p);
		break;
	}
}

static void
format(const struct setting *s, char *out, size_t n)
{
	format_in(&hg_cfg, s, out, n);
}

int
hg_config_get(const char *key, char *out, size_t n)
{
	const struct setting *s = find(key);

	if (s == NULL)
		return -ENOENT;
	format(s, out, n);
	return 0;
}

void
hg_config_foreach(hg_config_visit fn, void *arg)
{
	char v[256];
	size_t i;

	for (i = 0; i < N_SETTINGS; i++) {
		format(&settings[i], v, sizeof(v));
		fn(arg, settings[i].name, v, settings[i].live, settings[i].help);
	}
}

void
hg_config_defaults(void)
{
	char err[128];
	size_t i;

	memset(&hg_cfg, 0, sizeof(hg_cfg));
	for (i = 0; i < N_SETTINGS; i++)
		if (settings[i].def[0] != '\0')
			parse_value(&settings[i], settings[i].def, err, sizeof(err));
}

/* The last line of f that sets s, or 0. */
static int
line_of(const struct hg_conf_file *f, const struct setting *s)
{
	size_t i;
	int line = 0;

	for (i = 0; i < f->n_set; i++)
		if (strcmp(f->set[i].key, s->name) == 0)
			line = f->set[i].line;
	return line;
}

/* A running daemon cannot take a new startup-only value from the file. */
static int
check_startup_only(const struct hg_conf_file *f, const struct hg_config *old,
		   const char *path, char *err, size_t errlen)
{
	char a[256], b[256];
	size_t i;

	for (i = 0; i < N_SETTINGS; i++) {
		if (settings[i].live)
			continue;
		format_in(old, &settings[i], a, sizeof(a));
		format(&settings[i], b, sizeof(b));
		if (strcmp(a, b) != 0) {
			snprintf(err, errlen, "%s:%d: %s can only be set at startup "
				 "(running with %.40s); restart to change it", path,
				 line_of(f, &settings[i]), settings[i].name, a);
			return -EPERM;
		}
	}
	return 0;
}

/* What the file said, at startup, of each setting a flag gave. */
static char file_said[N_SETTINGS][256];

/* A line for a setting the command line gave: the flag wins. At startup
 * the line's value is noted; at reload a line that says something else
 * (an edit that expects a change) is refused, so that it is never
 * reported as applied; the line the daemon started with, or one that
 * says what runs, passes. */
static int
flag_wins(const struct setting *s, const char *value, int running, char *e,
	  size_t n)
{
	struct hg_config keep = hg_cfg;
	size_t i = (size_t)(s - settings);
	char file[256], now[256];
	int rc;

	rc = hg_config_set(s->name, value, 0, e, n);
	format(s, file, sizeof(file));
	hg_cfg = keep;
	if (!running) {
		if (rc == 0)
			snprintf(file_said[i], sizeof(file_said[i]), "%s", file);
		return 0;
	}
	if (rc < 0)
		return rc;
	format(s, now, sizeof(now));
	if (strcmp(file, file_said[i]) == 0 || strcmp(file, now) == 0)
		return 0;
	snprintf(e, n, "%s is given on the command line (--%s %.40s), which "
		 "the file cannot change; restart without the flag to set it here",
		 s->name, s->name, now);
	return -EPERM;
}

int
hg_config_apply_file(const struct hg_conf_file *f, const char *path,
		     int running, char *err, size_t errlen)
{
	struct hg_config old = hg_cfg;
	const struct setting *s;
	char e[256];
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < f->n_set; i++) {
		s = find(f->set[i].key);
		if (s != NULL && from_flag[s - settings]) {
			if ((rc = flag_wins(s, f->set[i].value, running, e, sizeof(e))) < 0)
				snprintf(err, errlen, "%s:%d: %s", path, f->set[i].line, e);
			continue;
		}
		if (strcmp(f->set[i].key, "config") == 0) {
			snprintf(e, sizeof(e), "config cannot nest");
			rc = -EINVAL;
		} else {
			rc = hg_config_set(f->set[i].key, f->set[i].value, 0, e,
					   sizeof(e));
		}
		if (rc < 0)
			snprintf(err, errlen, "%s:%d: %s", path, f->set[i].line, e);
	}
	if (rc == 0 && running)
		rc = check_startup_only(f, &old, path, err, errlen);
	if (rc < 0)
		hg_cfg = old;
	return rc;
}

void
hg_config_changes(const struct hg_config *old, hg_config_change fn, void *arg)
{
	char a[256], b[256];
	size_t i;

	for (i = 0; i < N_SETTINGS; i++) {
		format_in(old, &settings[i], a, sizeof(a));
		format(&settings[i], b, sizeof(b));
		if (strcmp(a, b) != 0)
			fn(arg, settings[i].name, a, b);
	}
}

void
hg_config_changed(void)
{
	if (live_hook != NULL)
		live_hook();
}

/* Applies the settings file at startup; a key also given as a flag keeps
 * the flag's value. Tenant lines are checked and added once the daemon
 * runs (config_reload.c). */
static int
load_file(const char *path)
{
	struct hg_conf_file f;
	char err[320];
	int rc;

	rc = hg_conf_read(path, &f, err, sizeof(err));
	if (rc == 0)
		rc = hg_config_apply_file(&f, path, 0, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "hourglassd: %s\n", err);
	hg_conf_file_free(&f);
	return rc;
}

void
hg_config_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: hourglassd [EAL options] -- --ip ADDR/PREFIX [options]\n\n"
		"EAL options (before '--'; hourglassd --help-eal lists them all), "
		"for example:\n"
		"  --no-huge -m 512 --lcores 0@0,1@1 --vdev net_af_packet0,iface=veth0\n"
		"\noptions (after '--'; also KEY VALUE lines in --config FILE):\n");
	for (i = 0; i < N_SETTINGS; i++)
		fprintf(f, "  --%-12s %s (default: %s)%s\n",
			settings[i].name, settings[i].help,
			settings[i].def[0] ? settings[i].def : "none",
			settings[i].live ? "" : " [startup only]");
	fprintf(f, "  --help        this text\n  --version     the version\n");
}

/* One pass of the application flags through getopt_long. */
static int
apply_flags(int argc, char **argv)
{
	struct option opts[N_SETTINGS + 2];
	char err[256];
	size_t i;
	int c, idx;

	for (i = 0; i < N_SETTINGS; i++)
		opts[i] = (struct option){ settings[i].name, required_argument,
					   NULL, 0 };
	opts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[i] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	opterr = 0;	/* one line of ours instead of getopt's and ours */
	while ((c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
		if (c == 'h') {
			hg_config_usage(stdout);
			return 1;
		}
		if (c != 0) {
			fprintf(stderr, "hourglassd: %s '%s' (see hourglassd --help)\n",
				c == ':' ? "no value for" : "unknown option",
				argv[optind - 1]);
			return -1;
		}
		if (hg_config_set(settings[idx].name, optarg, 0, err,
				  sizeof(err)) < 0) {
			fprintf(stderr, "hourglassd: %s\n", err);
			return -1;
		}
		from_flag[idx] = 1;
	}
	if (optind < argc) {
		fprintf(stderr, "hourglassd: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

int
hg_config_parse_args(int argc, char **argv)
{
	int rc;

	hg_config_defaults();
	memset(from_flag, 0, sizeof(from_flag));
	memset(file_said, 0, sizeof(file_said));
	rc = apply_flags(argc, argv);
	if (rc != 0)
		return rc;
	if (hg_cfg.config[0] != '\0') {
		char path[sizeof(hg_cfg.config)];

		strcpy(path, hg_cfg.config);
		if (load_file(path) < 0)
			return -1;
	}
	if (hg_cfg.ip[0] == '\0') {
		fprintf(stderr, "hourglassd: --ip ADDR/PREFIX is required\n");
		return -1;
	}
	return 0;
}

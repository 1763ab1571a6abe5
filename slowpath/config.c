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

#define FIELD(f) &hg_cfg.f, sizeof(hg_cfg.f)

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
	{ "config", T_STR, 0, FIELD(config), 0, 0, 0, 0, NULL, "",
	  "settings file: one 'key value' per line" },
	{ "fp-cores", T_UINT, 0, FIELD(fp_cores), 1, HG_MAX_FP_CORES, 0, 0,
	  NULL, "1", "fast-path cores, one RX/TX queue pair each" },
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

void
hg_config_set_hook(hg_config_hook hook)
{
	live_hook = hook;
}

static const struct setting *
find(const char *key)
{
	size_t i;

	for (i = 0; i < RTE_DIM(settings); i++)
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

static void
format(const struct setting *s, char *out, size_t n)
{
	switch (s->type) {
	case T_UINT:
		snprintf(out, n, "%" PRIu64, *(uint64_t *)s->ptr);
		break;
	case T_DOUBLE:
		snprintf(out, n, "%g", *(double *)s->ptr);
		break;
	case T_ENUM:
		snprintf(out, n, "%s", s->choices[*(uint64_t *)s->ptr]);
		break;
	case T_STR:
	case T_CIDR:
		snprintf(out, n, "%s", (char *)s->ptr);
		break;
	}
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

	for (i = 0; i < RTE_DIM(settings); i++) {
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
	for (i = 0; i < RTE_DIM(settings); i++)
		if (settings[i].def[0] != '\0')
			parse_value(&settings[i], settings[i].def, err, sizeof(err));
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Applies a settings file; a key also given as a flag keeps the flag's value
 * (the flags are applied again afterwards). */
static int
load_file(const char *path)
{
	char line[512], err[256];
	FILE *f = fopen(path, "r");
	int lineno = 0, rc = 0;

	if (f == NULL) {
		fprintf(stderr, "hourglassd: cannot open config %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *key, *val, *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (*key == '\0')
			continue;
		val = key + strcspn(key, " \t=");
		if (*val != '\0')
			*val++ = '\0';
		val = trim(val + (*val == '=' ? 1 : 0));
		if (*val == '=')
			val = trim(val + 1);
		if (strcmp(key, "config") == 0 ||
		    hg_config_set(key, val, 0, err, sizeof(err)) < 0) {
			fprintf(stderr, "hourglassd: %s:%d: %s\n", path, lineno,
				strcmp(key, "config") ? err : "config cannot nest");
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}

static void
usage(void)
{
	size_t i;

	fprintf(stderr, "usage: hourglassd [EAL args] -- --ip ADDR/PREFIX "
		"[options]\n\noptions:\n");
	for (i = 0; i < RTE_DIM(settings); i++)
		fprintf(stderr, "  --%-12s %s (default: %s)%s\n",
			settings[i].name, settings[i].help,
			settings[i].def[0] ? settings[i].def : "none",
			settings[i].live ? "" : " [startup only]");
}

/* One pass of the application flags through getopt_long. */
static int
apply_flags(int argc, char **argv)
{
	struct option opts[RTE_DIM(settings) + 2];
	char err[256];
	size_t i;
	int c, idx;

	for (i = 0; i < RTE_DIM(settings); i++)
		opts[i] = (struct option){ settings[i].name, required_argument,
					   NULL, 0 };
	opts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[i] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		if (c == 'h') {
			usage();
			return 1;
		}
		if (c != 0) {
			usage();
			return -1;
		}
		if (hg_config_set(settings[idx].name, optarg, 0, err,
				  sizeof(err)) < 0) {
			fprintf(stderr, "hourglassd: %s\n", err);
			return -1;
		}
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
	rc = apply_flags(argc, argv);
	if (rc != 0)
		return rc;
	if (hg_cfg.config[0] != '\0') {
		char path[sizeof(hg_cfg.config)];

		strcpy(path, hg_cfg.config);
		if (load_file(path) < 0 || apply_flags(argc, argv) != 0)
			return -1;
	}
	if (hg_cfg.ip[0] == '\0') {
		fprintf(stderr, "hourglassd: --ip ADDR/PREFIX is required\n");
		return -1;
	}
	return 0;
}

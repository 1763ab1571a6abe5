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
#include "settings.h"

struct hg_config hg_cfg;
static hg_config_hook live_hook;

static const char *const idle_modes[] = { "poll", "yield", "sleep", NULL };
static const char *const admit_drop[] = { "admit", "drop", NULL };

#define FIELD(f) offsetof(struct hg_config, f), sizeof(((struct hg_config *)0)->f)
#define U64 HG_SET_U64
#define STR HG_SET_STR

_Static_assert(HG_SESSIONS == 65536, "sessions' default is HG_SESSIONS");
_Static_assert(sizeof(hg_cfg.config) <= HG_SETTING_VALUE_MAX &&
	       sizeof(hg_cfg.ctl) <= HG_SETTING_VALUE_MAX &&
	       sizeof(hg_cfg.app_ctl) <= HG_SETTING_VALUE_MAX &&
	       sizeof(hg_cfg.ip) <= HG_SETTING_VALUE_MAX &&
	       sizeof(hg_cfg.memif) <= HG_SETTING_VALUE_MAX &&
	       sizeof(hg_cfg.app_cgroup) <= HG_SETTING_VALUE_MAX,
	       "the engine holds a value");

/* A row of the engine's table (settings.h) in struct hg_setting's order:
 * name, type, offset and size (FIELD), min, max, min open, default,
 * live, choices, help. Without the tenant table's publish bits: a live
 * daemon setting runs the hook instead. */
#define D(name, type, field, lo, hi, open, def, live, choices, help) \
	{ name, type, field, lo, hi, open, def, live, 0, choices, help }

static const struct hg_setting settings[] = {
	D("ip", HG_SET_CIDR, FIELD(ip), 0, 0, 0, NULL, 0, NULL,
	  "address/prefix the daemon answers on (prefix 16..30)"),
	D("ctl", STR, FIELD(ctl), 0, 0, 0, "/run/hourglass/ctl.sock", 0, NULL,
	  "control socket path"),
	D("app-ctl", STR, FIELD(app_ctl), 0, 0, 0, "/run/hourglass/app.sock",
	  0, NULL, "app socket path (mode 0666): attach, contexts, bind "
	  "only"),
	D("max-ctl-conns", U64, FIELD(max_ctl_conns), 1, 4096, 0, "32", 1,
	  NULL, "operator connections at once"),
	D("max-app-conns", U64, FIELD(max_app_conns), 1, 65536, 0, "1024", 1,
	  NULL, "app connections at once"),
	D("max-conn-out", U64, FIELD(max_conn_out), 65536, 1u << 30, 0,
	  "1048576", 1, NULL, "reply bytes queued per connection before the "
	  "daemon stops reading its requests"),
	D("max-app-conns-per-uid", U64, FIELD(max_app_conns_per_uid), 1, 65536,
	  0, "256", 1, NULL, "app connections root or a tenant's owner may "
	  "hold (keep it below max-app-conns: one user leaves the socket to "
	  "others)"),
	D("max-app-conns-per-guest", U64, FIELD(max_app_conns_per_guest), 1,
	  65536, 0, "4", 1, NULL, "app connections a uid that owns no "
	  "tenant may hold: it can attach nowhere, a connection only tells it "
	  "why"),
	D("app-conns-reserve", U64, FIELD(app_conns_reserve), 0, 65536, 0,
	  "64", 1, NULL, "the last this many of max-app-conns are for root "
	  "and the owners of tenants alone"),
	D("attach-timeout-ms", U64, FIELD(attach_timeout_ms), 100, 3600000, 0,
	  "10000", 1, NULL, "an app connection that has not attached this "
	  "long after it connected is closed"),
	D("max-conns-buffered", U64, FIELD(max_conns_buffered), 1u << 20,
	  (double)(1ull << 34), 0, "67108864", 1, NULL, "request and reply "
	  "bytes held for all connections together; past it, a connection with "
	  "bytes held is not read until they fall"),
	D("config", STR, FIELD(config), 0, 0, 0, NULL, 0, NULL,
	  "settings file: one 'key value' per line"),
	D("memif", STR, FIELD(memif), 0, 0, 0, "", 0, NULL,
	  "serve memif peers on this socket, the port instead of an ethdev "
	  "(@NAME: an abstract socket any local process may reach)"),
	D("memif-mode", STR, FIELD(memif_mode), 0, 0, 0, "0600", 0, NULL,
	  "the memif socket file's mode (octal): who may be the peer"),
	D("mac", STR, FIELD(mac), 0, 0, 0, "", 0, NULL, "the port's MAC "
	  "where the link has none of its own (memif); default "
	  "02:48:47:00:00:01"),
	D("app-cgroup", STR, FIELD(app_cgroup), 0, 0, 0, "", 0, NULL,
	  "a cgroup per tenant under this one (a leading '/': from the cpu "
	  "hierarchy's root, else under the daemon's own), weighted by the "
	  "tenant's weight; the apps it admits run in it"),
	D("fp-cores", U64, FIELD(fp_cores), 1, HG_MAX_FP_CORES, 0, "1", 0,
	  NULL, "fast-path cores, one TX queue and --rx-queues RX queues "
	  "each"),
	D("rx-queues", U64, FIELD(rx_queues), 1, HG_MAX_RXQ, 0, "1", 0, NULL,
	  "RX queues per fast-path core: above 1, tenants get queues of their "
	  "own (rx-queue) where the link steers (a memif peer that reads the "
	  "map, a NIC's rte_flow); af_packet and tap share one"),
	D("tx-queues", U64, FIELD(tx_queues), 0, HG_MAX_TXQ, 0, "0", 0, NULL,
	  "TX rings per fast-path core on a --memif link: each tenant's "
	  "answers leave by its group's own (tx_queue in tenant list), so "
	  "they wait behind its group's only, whatever --rx-queues; 0: as "
	  "many as --rx-queues. Other ports: one TX queue per core"),
	D("sessions", U64, FIELD(sessions), HG_SESSIONS_MIN, HG_SESSIONS_MAX,
	  0, "65536", 0, NULL, "RPC session slots per fast-path core; each "
	  "tenant with RPC ports reserves its max-sessions of them"),
	D("refill-ns", U64, FIELD(refill_ns), 100, 1000000000, 0, "1000", 1,
	  NULL, "budget refill period (ns)"),
	D("tick-us", U64, FIELD(tick_us), 1, 1000, 0, "10", 1, NULL,
	  "with slow-idle sleep|yield: the slow path's period while a tenant "
	  "has credits or a long request to watch (else it waits for events)"),
	D("boost", HG_SET_DOUBLE, FIELD(boost), 0.01, 1.0, 0, "0.85", 1, NULL,
	  "share of elapsed cycles handed out per refill"),
	D("cap", U64, FIELD(cap), 100, 1000000000, 0, "15000", 1, NULL,
	  "per-core budget cap of tenants added later (cycles)"),
	D("cap-batches", U64, FIELD(cap_batches), 0, 16, 0, "2", 1, NULL,
	  "a tenant's effective cap is at least this many batches of its "
	  "measured cost per datagram (0: the configured cap only)"),
	D("own-burst", U64, FIELD(own_burst), 0, HG_BATCH, 0, "0", 1, NULL,
	  "with protection on, the most frames a burst of a tenant's own RX "
	  "queue takes while another tenant is active (0: a full burst): "
	  "shorter passes make the other tenant's datagrams and answers wait "
	  "less, at a fixed cost per pass to the tenant that floods"),
	D("own-bytes", U64, FIELD(own_bytes), 0, HG_OWN_BYTES_MAX, 0, "0", 1, NULL,
	  "as own-burst, in bytes of frames (at least one frame; 0: no "
	  "bound): shortens the passes of large frames only"),
	D("protection", HG_SET_BOOL, FIELD(protection), 0, 0, 0, "on", 1, NULL,
	  "time protection on or off"),
	D("idle", HG_SET_ENUM, FIELD(idle), 0, 0, 0, "poll", 1, idle_modes,
	  "what a fast-path core does without work"),
	D("slow-idle", HG_SET_ENUM, FIELD(slow_idle), 0, 0, 0, "sleep", 1,
	  idle_modes, "how the slow path waits between refills (poll needs "
	  "a core of its own)"),
	D("rx-overbudget", HG_SET_ENUM, FIELD(rx_overbudget), 0, 0, 0, "drop",
	  1, admit_drop, "an out-of-budget tenant's received datagrams"),
};

#undef D
#undef U64
#undef STR

#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

static const struct hg_settings daemon_settings = {
	.row = settings, .n = N_SETTINGS,
	.unknown = "unknown setting", .unknown_hint = "",
	.fixed = "can only be set at startup; restart to change it",
};

/* Settings given as flags: they win over the file, at startup and at
 * every reload. */
static uint8_t from_flag[N_SETTINGS];

void
hg_config_set_hook(hg_config_hook hook)
{
	live_hook = hook;
}

int
hg_config_set(const char *key, const char *value, int runtime, char *err,
	      size_t errlen)
{
	int rc = hg_settings_set(&daemon_settings, &hg_cfg, key, value, runtime,
				 NULL, err, errlen);

	if (rc == 0 && runtime && live_hook != NULL)
		live_hook();
	return rc;
}

static void
format(const struct hg_setting *s, char *out, size_t n)
{
	hg_setting_format(s, &hg_cfg, out, n);
}

int
hg_config_get(const char *key, char *out, size_t n)
{
	const struct hg_setting *s = hg_settings_find(&daemon_settings, key);

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
	hg_settings_defaults(&daemon_settings, &hg_cfg, sizeof(hg_cfg));
}

/* The last line of f that sets s, or 0. */
static int
line_of(const struct hg_conf_file *f, const struct hg_setting *s)
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
	const struct hg_setting *fixed;
	char a[256], why[160];

	hg_settings_diff(&daemon_settings, old, &hg_cfg, &fixed);
	if (fixed == NULL)
		return 0;
	hg_setting_format(fixed, old, a, sizeof(a));
	hg_settings_fixed(&daemon_settings, fixed, why, sizeof(why));
	snprintf(err, errlen, "%s:%d: %s (running with %.40s)", path,
		 line_of(f, fixed), why, a);
	return -EPERM;
}

/* What the file said, at startup, of each setting a flag gave. */
static char file_said[N_SETTINGS][256];

/* A line for a setting the command line gave: the flag wins. At startup
 * the line's value is noted; at reload a line that says something else
 * (an edit that expects a change) is refused, so that it is never
 * reported as applied; the line the daemon started with, or one that
 * says what runs, passes. */
static int
flag_wins(const struct hg_setting *s, const char *value, int running, char *e,
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
	const struct hg_setting *s;
	char e[256];
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < f->n_set; i++) {
		s = hg_settings_find(&daemon_settings, f->set[i].key);
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
		if (hg_setting_same(&settings[i], old, &hg_cfg))
			continue;
		hg_setting_format(&settings[i], old, a, sizeof(a));
		format(&settings[i], b, sizeof(b));
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
	char bounds[96];
	size_t i;

	fprintf(f, "usage: hourglassd [EAL options] -- --ip ADDR/PREFIX [options]\n\n"
		"EAL options (before '--'; hourglassd --help-eal lists them all), "
		"for example:\n"
		"  --no-huge -m 512 --lcores 0@0,1@1 --vdev net_af_packet0,iface=veth0\n"
		"\noptions (after '--'; also KEY VALUE lines in --config FILE):\n");
	for (i = 0; i < N_SETTINGS; i++) {
		hg_setting_bounds(&settings[i], bounds, sizeof(bounds));
		fprintf(f, "  --%-12s %s: %s (default: %s)%s\n",
			settings[i].name, settings[i].help, bounds,
			settings[i].def ? settings[i].def : "none",
			settings[i].live ? "" : " [startup only]");
	}
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

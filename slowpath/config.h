/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Daemon settings. One table of the settings engine (settings.h,
 * config.c) drives the command-line flags, the --config file and `hgctl
 * config get|set`, Redis config.c style.
 */
#ifndef HG_SLOWPATH_CONFIG_H
#define HG_SLOWPATH_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "settings.h"	/* hg_parse_cidr */

struct hg_config {
	char ip[32];		/* ADDR/PREFIX */
	char ctl[108];
	char app_ctl[108];
	uint64_t max_ctl_conns;	/* operator connections */
	uint64_t max_app_conns;	/* app connections */
	uint64_t max_conn_out;	/* reply bytes queued per connection */
	uint64_t max_app_conns_per_uid;	/* app connections of one uid */
	uint64_t max_app_conns_per_guest; /* of a uid that owns no tenant */
	uint64_t app_conns_reserve;	/* the last ones: root's and owners' */
	uint64_t attach_timeout_ms;	/* app connections that never attach */
	uint64_t max_conns_buffered;	/* bytes held for all connections */
	char config[256];
	char memif[108];	/* the memif server's socket, "" = none */
	char memif_mode[8];	/* its file's mode, octal */
	char mac[18];		/* the port's address where the link has none */
	char app_cgroup[108];	/* apps' CPU groups per tenant, "" = none */
	uint64_t fp_cores;
	uint64_t rx_queues;	/* per fast-path core */
	uint64_t tx_queues;	/* per fast-path core on memif, 0: rx_queues */
	uint64_t sessions;	/* RPC session slots per fast-path core */
	uint64_t refill_ns;
	uint64_t tick_us;	/* slow path's pace on a shared core */
	uint64_t cap;
	uint64_t cap_batches;	/* effective cap: batches of measured cost */
	uint64_t own_burst;	/* frames a burst of an own queue, shared core */
	uint64_t own_bytes;	/* the same in bytes of frames */
	double boost;
	int protection;		/* off|on */
	int idle;		/* enum hg_idle_mode */
	int slow_idle;		/* enum hg_idle_mode, the slow path's */
	int rx_overbudget;	/* index into admit/drop */
};

extern struct hg_config hg_cfg;

/* Called after a live setting changed (pushes it to the fast path). */
typedef void (*hg_config_hook)(void);
void hg_config_set_hook(hg_config_hook hook);

void hg_config_defaults(void);

/* Sets one setting from text. runtime != 0 refuses settings that need a
 * restart. Returns 0 or -errno with a one-line reason in err. */
int hg_config_set(const char *key, const char *value, int runtime, char *err,
		  size_t errlen);
int hg_config_get(const char *key, char *out, size_t outlen);

/* Walks every setting: name, current value, live?, help. */
typedef void (*hg_config_visit)(void *arg, const char *key, const char *value,
				int live, const char *help);
void hg_config_foreach(hg_config_visit fn, void *arg);

struct hg_conf_file;

/* Applies a config file's daemon settings (config_file.h) to hg_cfg,
 * except those given as flags (flags win). running: a startup-only
 * setting may not change. On failure hg_cfg is as it was and err says
 * "PATH:LINE: reason". The live hook is not called: see
 * hg_config_changed. */
int hg_config_apply_file(const struct hg_conf_file *f, const char *path,
			 int running, char *err, size_t errlen);

/* Walks the settings whose value differs between old and hg_cfg. */
typedef void (*hg_config_change)(void *arg, const char *key,
				 const char *before, const char *after);
void hg_config_changes(const struct hg_config *old, hg_config_change fn,
		       void *arg);

/* Runs the live hook: settings changed other than by hg_config_set. */
void hg_config_changed(void);

/* Application arguments (after EAL's "--"), then the --config file if one
 * was named; flags win over the file. Returns 0, 1 for --help, -1 on error
 * (already reported on stderr). */
int hg_config_parse_args(int argc, char **argv);
/* The daemon's options, one line each, and how EAL's go before them. */
void hg_config_usage(FILE *f);

#endif /* HG_SLOWPATH_CONFIG_H */

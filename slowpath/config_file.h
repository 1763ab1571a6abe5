/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The --config file, read into lines without applying anything: daemon
 * settings ("KEY VALUE" or "KEY = VALUE", config.c's table) and tenants
 * ("tenant NAME KEY=VALUE ...", tenant_cfg.c's table). '#' starts a
 * comment. Startup and `hgctl config reload` (config_reload.c) both read
 * it here, check every line, and only then apply it.
 */
#ifndef HG_SLOWPATH_CONFIG_FILE_H
#define HG_SLOWPATH_CONFIG_FILE_H

#include <stddef.h>

#include "tenant_cfg.h"

#define HG_CONF_MAX_BYTES (4u << 20)	/* a file larger than this is refused */
#define HG_CONF_MAX_PAIRS 64		/* KEY=VALUE pairs on one tenant line */

struct hg_conf_setting {
	int line;
	const char *key, *value;
};

struct hg_conf_tenant {
	int line;
	const char *name;
	struct hg_kv kv[HG_CONF_MAX_PAIRS];
	size_t n;
};

struct hg_conf_file {
	char *buf;			/* the text; every string points into it */
	struct hg_conf_setting *set;
	size_t n_set;
	struct hg_conf_tenant *ten;
	size_t n_ten;
};

/* Parses text (len bytes, taken over: freed by hg_conf_file_free).
 * Returns 0, or -errno with "LINE: reason" in err. */
int hg_conf_parse(char *text, size_t len, struct hg_conf_file *f, char *err,
		  size_t errlen);

/* Reads and parses path; err says "PATH:LINE: reason" or why it cannot
 * be read. */
int hg_conf_read(const char *path, struct hg_conf_file *f, char *err,
		 size_t errlen);

void hg_conf_file_free(struct hg_conf_file *f);

#endif /* HG_SLOWPATH_CONFIG_FILE_H */

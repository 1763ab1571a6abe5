/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Applying the --config file to a running daemon: at startup (its
 * tenants), on `hgctl config reload` and on SIGHUP. Every line is checked
 * before anything changes; a bad file changes nothing and says which line
 * is wrong. Then only the difference is applied: tenants the file added,
 * tenants it declared before and no longer does, and the changed
 * settings of the rest (published as `tenant set` does, so their traffic
 * never stops). Tenants added with hgctl and not named in the file are
 * left alone; daemon settings given as flags keep the flag's value.
 */
#ifndef HG_SLOWPATH_CONFIG_RELOAD_H
#define HG_SLOWPATH_CONFIG_RELOAD_H

#include <stddef.h>

#include "tenant.h"

/* What a reload changed, one line each, for the operator. */
struct hg_reload_report {
	char **line;
	size_t n, cap;
};

/* Re-reads hg_cfg.config and applies the difference. Returns 0 or -errno
 * with a one-line reason ("PATH:LINE: ...") in err. */
int hg_config_reload(struct hg_registry *reg, struct hg_reload_report *rep,
		     char *err, size_t errlen);

void hg_reload_report_free(struct hg_reload_report *rep);

#endif /* HG_SLOWPATH_CONFIG_RELOAD_H */

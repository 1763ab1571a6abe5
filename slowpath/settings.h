/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The settings engine: one row per setting (its name, which is also its
 * flag's and its config-file key; type; place in its struct; bounds;
 * default; live or not; what to publish when it changes; help), and the
 * code that parses, bounds, formats and compares a row's value. Two
 * tables use it, Redis config.c style: the daemon's (config.c, struct
 * hg_config) and each tenant's (tenant_cfg.c, struct hg_tenant_cfg).
 * Every path that reads or writes a setting goes through here: flags,
 * the --config file and its reload, `hgctl config`, `hgctl tenant
 * add|set|get|list`, stats and telemetry.
 */
#ifndef HG_SLOWPATH_SETTINGS_H
#define HG_SLOWPATH_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

enum hg_set_type {
	HG_SET_U32, HG_SET_U64, HG_SET_DOUBLE,
	HG_SET_HUNDREDTHS,	/* uint32: a number kept in hundredths */
	HG_SET_BOOL,		/* int: off|on */
	HG_SET_ENUM,		/* int: index into choices */
	HG_SET_RANGE,		/* two uint32: LO-HI, or none (0-0) */
	HG_SET_UID,		/* uint32: a user name or number */
	HG_SET_GID,		/* int64: a group name, number, or none (-1) */
	HG_SET_STR,		/* char[size] */
	HG_SET_CIDR,		/* char[size]: ADDR/PREFIX, prefix 16..30 */
};

/* The largest value a row holds (a STR or CIDR buffer); tables assert
 * their buffers fit. */
#define HG_SETTING_VALUE_MAX 256u

struct hg_setting {
	const char *name;
	enum hg_set_type type;
	size_t off;			/* in the table's struct */
	size_t size;			/* STR, CIDR: the buffer */
	double min, max;		/* numbers; each end of a range */
	int min_open;			/* min itself is refused */
	const char *def;		/* NULL: none, or set by the caller */
	int live;			/* may change while running */
	unsigned publish;		/* what a change needs pushed (the
					 * table's own bits) */
	const char *const *choices;	/* ENUM: NULL-terminated */
	const char *help;
};

/* A table of settings and how it speaks of them. */
struct hg_settings {
	const struct hg_setting *row;
	size_t n;
	const char *unknown;		/* "unknown setting", ... + " 'KEY'" */
	const char *unknown_hint;	/* after it: where to look */
	const char *fixed;		/* "KEY " + why a setting that is not
					 * live cannot change while running */
};

const struct hg_setting *hg_settings_find(const struct hg_settings *t,
					  const char *key);

/* Sets key in obj from text. running: only live settings may change (the
 * rule, and its message, for both tables). ORs the row's publish bits
 * into *changed (if not NULL) when the value differs. Returns 0, or
 * -ENOENT, -EPERM, -EINVAL with a one-line reason in err. */
int hg_settings_set(const struct hg_settings *t, void *obj, const char *key,
		    const char *value, int running, unsigned *changed, char *err,
		    size_t errlen);

/* Every row with a default, at its default (obj zeroed first). */
void hg_settings_defaults(const struct hg_settings *t, void *obj, size_t size);

/* "KEY <t->fixed>": why s cannot change while running. */
void hg_settings_fixed(const struct hg_settings *t, const struct hg_setting *s,
		       char *err, size_t errlen);

/* The publish bits of every row that differs between a and b; *fixed (if
 * not NULL) the first differing row that is not live, else NULL. */
unsigned hg_settings_diff(const struct hg_settings *t, const void *a,
			  const void *b, const struct hg_setting **fixed);

/* s's value in obj as text, as hg_settings_set reads it back. */
void hg_setting_format(const struct hg_setting *s, const void *obj, char *out,
		       size_t n);

/* What s accepts, as text: "[0.01, 10000]", "flow|jsq", ... */
void hg_setting_bounds(const struct hg_setting *s, char *out, size_t n);

/* Does s hold the same value in a and b? */
int hg_setting_same(const struct hg_setting *s, const void *a, const void *b);

/* Is value (as hg_setting_format wrote it) a number, for JSON? */
int hg_setting_numeric(const struct hg_setting *s, const char *value);

/* Parses ADDR/PREFIX (prefix 16..30); ip_net in network order. */
int hg_parse_cidr(const char *s, uint32_t *ip_net, uint32_t *prefix);

#endif /* HG_SLOWPATH_SETTINGS_H */

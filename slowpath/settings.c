/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

static const char *const on_off[] = { "off", "on", NULL };

const struct hg_setting *
hg_settings_find(const struct hg_settings *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->row[i].name, key) == 0)
			return &t->row[i];
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
is_integer(enum hg_set_type type)
{
	return type == HG_SET_U32 || type == HG_SET_U64 || type == HG_SET_UID ||
	       type == HG_SET_GID;
}

/* A number in [min, max] (min excluded if min_open), all of v used. */
static int
parse_num(const struct hg_setting *s, const char *v, double *out)
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
	if (is_integer(s->type) &&
	    (strpbrk(v, ".eExXpP") != NULL || d != (double)(int64_t)d))
		return -1;
	*out = d;
	return 0;
}

static int
parse_range(const struct hg_setting *s, const char *v, uint32_t *lo, uint32_t *hi)
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
choices_of(const struct hg_setting *s)
{
	return s->type == HG_SET_BOOL ? on_off : s->choices;
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

/* A user or group given by name: the daemon resolves it, so that a config
 * file and every client say "www-data" alike. Numbers are numbers. */
static int
parse_owner(const struct hg_setting *s, const char *v, void *p)
{
	const struct passwd *pw;
	const struct group *gr;
	double d;

	if (s->type == HG_SET_GID && strcmp(v, "none") == 0) {
		*(int64_t *)p = -1;
		return 0;
	}
	if (isdigit((unsigned char)*v) || *v == '-') {
		if (parse_num(s, v, &d) < 0)
			return -1;
		if (s->type == HG_SET_UID)
			*(uint32_t *)p = (uint32_t)d;
		else
			*(int64_t *)p = (int64_t)d;
		return 0;
	}
	if (s->type == HG_SET_UID) {
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

static int
parse_text(const struct hg_setting *s, const char *v, char *p)
{
	uint32_t ip, prefix;

	if (strlen(v) >= s->size)
		return -1;
	if (s->type == HG_SET_CIDR && hg_parse_cidr(v, &ip, &prefix) < 0)
		return -1;
	strcpy(p, v);
	return 0;
}

/* Parses v for setting s into the value at p. */
static int
parse_into(const struct hg_setting *s, const char *v, void *p)
{
	double d;
	int i;

	switch (s->type) {
	case HG_SET_BOOL:
	case HG_SET_ENUM:
		if ((i = parse_choice(choices_of(s), v)) < 0)
			return -1;
		*(int *)p = i;
		return 0;
	case HG_SET_RANGE:
		return parse_range(s, v, (uint32_t *)p, (uint32_t *)p + 1);
	case HG_SET_UID:
	case HG_SET_GID:
		return parse_owner(s, v, p);
	case HG_SET_STR:
	case HG_SET_CIDR:
		return parse_text(s, v, p);
	default:
		break;
	}
	if (parse_num(s, v, &d) < 0)
		return -1;
	if (s->type == HG_SET_DOUBLE)
		*(double *)p = d;
	else if (s->type == HG_SET_HUNDREDTHS)
		*(uint32_t *)p = (uint32_t)(d * 100 + 0.5);
	else if (s->type == HG_SET_U32)
		*(uint32_t *)p = (uint32_t)d;
	else
		*(uint64_t *)p = (uint64_t)d;
	return 0;
}

static size_t
value_size(const struct hg_setting *s)
{
	switch (s->type) {
	case HG_SET_DOUBLE: return sizeof(double);
	case HG_SET_U32:
	case HG_SET_HUNDREDTHS:
	case HG_SET_UID: return sizeof(uint32_t);
	case HG_SET_RANGE: return 2 * sizeof(uint32_t);
	case HG_SET_BOOL:
	case HG_SET_ENUM: return sizeof(int);
	case HG_SET_STR:
	case HG_SET_CIDR: return s->size;
	default: return sizeof(uint64_t);
	}
}

void
hg_setting_bounds(const struct hg_setting *s, char *out, size_t n)
{
	size_t k = 0;
	int i;

	switch (s->type) {
	case HG_SET_BOOL:
	case HG_SET_ENUM:
		out[0] = '\0';
		for (i = 0; choices_of(s)[i] != NULL && k < n; i++)
			k += (size_t)snprintf(out + k, n - k, "%s%s", i ? "|" : "",
					      choices_of(s)[i]);
		return;
	case HG_SET_RANGE:
		snprintf(out, n, "PORT or LO-HI within %.0f-%.0f, or none", s->min, s->max);
		return;
	case HG_SET_UID:
		snprintf(out, n, "a user name or [0, %.0f]", s->max);
		return;
	case HG_SET_GID:
		snprintf(out, n, "a group name, [0, %.0f] or none", s->max);
		return;
	case HG_SET_STR:
		snprintf(out, n, "at most %zu characters", s->size - 1);
		return;
	case HG_SET_CIDR:
		snprintf(out, n, "IPv4ADDR/PREFIX with prefix 16..30");
		return;
	default:
		snprintf(out, n, "%c%.15g, %.15g]", s->min_open ? '(' : '[',
			 s->min, s->max);
	}
}

void
hg_settings_fixed(const struct hg_settings *t, const struct hg_setting *s,
		  char *err, size_t errlen)
{
	snprintf(err, errlen, "%s %s", s->name, t->fixed);
}

int
hg_settings_set(const struct hg_settings *t, void *obj, const char *key,
		const char *value, int running, unsigned *changed, char *err,
		size_t errlen)
{
	const struct hg_setting *s = hg_settings_find(t, key);
	uint8_t *p = (uint8_t *)obj, old[HG_SETTING_VALUE_MAX];
	char b[96];

	if (s == NULL) {
		snprintf(err, errlen, "%s '%.40s'%s", t->unknown, key, t->unknown_hint);
		return -ENOENT;
	}
	if (running && !s->live) {
		hg_settings_fixed(t, s, err, errlen);
		return -EPERM;
	}
	memcpy(old, p + s->off, value_size(s));
	if (parse_into(s, value, p + s->off) < 0) {
		hg_setting_bounds(s, b, sizeof(b));
		snprintf(err, errlen, "%s must be %s, not '%.32s'", key, b, value);
		return -EINVAL;
	}
	if (changed != NULL && memcmp(old, p + s->off, value_size(s)) != 0)
		*changed |= s->publish;
	return 0;
}

void
hg_settings_defaults(const struct hg_settings *t, void *obj, size_t size)
{
	char err[160];
	size_t i;

	memset(obj, 0, size);
	for (i = 0; i < t->n; i++)
		if (t->row[i].def != NULL)
			hg_settings_set(t, obj, t->row[i].name, t->row[i].def, 0,
					NULL, err, sizeof(err));
}

int
hg_setting_same(const struct hg_setting *s, const void *a, const void *b)
{
	const uint8_t *x = (const uint8_t *)a + s->off, *y = (const uint8_t *)b + s->off;

	if (s->type == HG_SET_STR || s->type == HG_SET_CIDR)
		return strncmp((const char *)x, (const char *)y, s->size) == 0;
	return memcmp(x, y, value_size(s)) == 0;
}

unsigned
hg_settings_diff(const struct hg_settings *t, const void *a, const void *b,
		 const struct hg_setting **fixed)
{
	unsigned bits = 0;
	size_t i;

	if (fixed != NULL)
		*fixed = NULL;
	for (i = 0; i < t->n; i++) {
		if (hg_setting_same(&t->row[i], a, b))
			continue;
		bits |= t->row[i].publish;
		if (!t->row[i].live && fixed != NULL && *fixed == NULL)
			*fixed = &t->row[i];
	}
	return bits;
}

int
hg_setting_numeric(const struct hg_setting *s, const char *value)
{
	switch (s->type) {
	case HG_SET_BOOL:
	case HG_SET_ENUM:
	case HG_SET_RANGE:
	case HG_SET_STR:
	case HG_SET_CIDR:
		return 0;
	case HG_SET_GID:
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
hg_setting_format(const struct hg_setting *s, const void *obj, char *out, size_t n)
{
	const uint8_t *p = (const uint8_t *)obj + s->off;
	const uint32_t *r = (const uint32_t *)p;

	switch (s->type) {
	case HG_SET_DOUBLE:
		format_double(*(const double *)p, out, n);
		break;
	case HG_SET_HUNDREDTHS:
		format_double(*(const uint32_t *)p / 100.0, out, n);
		break;
	case HG_SET_U32:
	case HG_SET_UID:
		snprintf(out, n, "%" PRIu32, *(const uint32_t *)p);
		break;
	case HG_SET_U64:
		snprintf(out, n, "%" PRIu64, *(const uint64_t *)p);
		break;
	case HG_SET_GID:
		if (*(const int64_t *)p < 0)
			snprintf(out, n, "none");
		else
			snprintf(out, n, "%" PRId64, *(const int64_t *)p);
		break;
	case HG_SET_BOOL:
	case HG_SET_ENUM:
		snprintf(out, n, "%s", choices_of(s)[*(const int *)p]);
		break;
	case HG_SET_RANGE:
		if (r[1] == 0)
			snprintf(out, n, "none");
		else
			snprintf(out, n, "%" PRIu32 "-%" PRIu32, r[0], r[1]);
		break;
	case HG_SET_STR:
	case HG_SET_CIDR:
		snprintf(out, n, "%.*s", (int)s->size, (const char *)p);
		break;
	}
}

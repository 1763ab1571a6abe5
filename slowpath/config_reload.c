/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_file.h"
#include "config_reload.h"
#include "log.h"

/* The file's tenants against the registry: what each line becomes. */
struct plan {
	const struct hg_conf_file *f;
	const char *path;
	struct hg_tenant_cfg *cfg;	/* per tenant line: its settings */
	int *slot;			/* ... the running tenant, or -1: new */
	uint8_t named[HG_MAX_TENANTS];	/* per slot: the file names it */
	uint16_t *port_line;		/* per port: 1 + the line's index */
};

static void
say(struct hg_reload_report *rep, const char *fmt, ...)
{
	char buf[256], **grown;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	HG_LOG(INFO, "config reload: %s", buf);
	if (rep->n == rep->cap) {
		grown = realloc(rep->line, (rep->cap ? 2 * rep->cap : 16) *
				sizeof(*grown));
		if (grown == NULL)
			return;
		rep->line = grown;
		rep->cap = rep->cap ? 2 * rep->cap : 16;
	}
	if ((rep->line[rep->n] = strdup(buf)) != NULL)
		rep->n++;
}

void
hg_reload_report_free(struct hg_reload_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n; i++)
		free(rep->line[i]);
	free(rep->line);
	memset(rep, 0, sizeof(*rep));
}

/* Two lines of the file may not declare one name or share a port. */
static int
check_unique(struct plan *p, size_t i, char *err, size_t errlen)
{
	const struct hg_conf_tenant *t = &p->f->ten[i];
	const struct hg_tenant_cfg *c = &p->cfg[i];
	uint32_t port;
	size_t j;

	for (j = 0; j < i; j++)
		if (strcmp(p->f->ten[j].name, t->name) == 0) {
			snprintf(err, errlen, "%s:%d: tenant %s is declared on line "
				 "%d too", p->path, t->line, t->name,
				 p->f->ten[j].line);
			return -EEXIST;
		}
	for (port = c->port_lo; c->port_hi != 0 && port <= c->port_hi; port++) {
		if (p->port_line[port] != 0) {
			j = p->port_line[port] - 1u;
			snprintf(err, errlen, "%s:%d: port %u is tenant %s's "
				 "(line %d)", p->path, t->line, port,
				 p->f->ten[j].name, p->f->ten[j].line);
			return -EADDRINUSE;
		}
		p->port_line[port] = (uint16_t)(i + 1);
	}
	return 0;
}

/* A tenant the file no longer declares is removed: is it? */
static int
leaving(const struct hg_registry *reg, const struct plan *p, unsigned s)
{
	return reg->t[s].used && !reg->t[s].releasing && reg->t[s].from_file &&
	       !p->named[s];
}

struct leaving_arg {
	const struct hg_registry *reg;
	const struct plan *p;
};

static int
spare_leaving(const void *arg, unsigned t)
{
	const struct leaving_arg *a = arg;

	return leaving(a->reg, a->p, t);
}

/* A new tenant's ports must be free, or a leaving tenant's. */
static int
check_ports(const struct hg_registry *reg, const struct plan *p, size_t i,
	    char *err, size_t errlen)
{
	const struct hg_tenant_cfg *c = &p->cfg[i];
	struct leaving_arg a = { reg, p };
	uint32_t port;
	int owner;

	port = hg_ports_taken(reg, c->port_lo, c->port_hi, spare_leaving, &a, &owner);
	if (port == 0)
		return 0;
	snprintf(err, errlen, "%s:%d: port %u belongs to tenant '%s'", p->path,
		 p->f->ten[i].line, port, reg->t[owner].name);
	return -EADDRINUSE;
}

/* One tenant line: a valid name, settings the table takes (the defaults,
 * then its pairs), and for a running tenant no change of a setting that
 * is fixed when it is added. */
static int
check_line(struct hg_registry *reg, struct plan *p, size_t i, char *err,
	   size_t errlen)
{
	const struct hg_conf_tenant *t = &p->f->ten[i];
	const struct hg_setting *fixed;
	char e[HG_ERR_LEN];
	int rc;

	if ((rc = hg_tenant_name_check(t->name, e)) == 0) {
		hg_tenant_cfg_defaults(&p->cfg[i], hg_cfg.cap);
		rc = hg_tenant_cfg_apply(&p->cfg[i], t->kv, t->n, 1, e, sizeof(e));
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s:%d: %s", p->path, t->line, e);
		return rc;
	}
	if ((rc = check_unique(p, i, err, errlen)) < 0)
		return rc;
	p->slot[i] = hg_tenant_find(reg, t->name);
	if (p->slot[i] < 0)
		return 0;
	p->named[p->slot[i]] = 1;
	hg_settings_diff(hg_tenant_settings(), &reg->t[p->slot[i]].cfg, &p->cfg[i],
			 &fixed);
	if (fixed != NULL) {
		hg_settings_fixed(hg_tenant_settings(), fixed, e, sizeof(e));
		snprintf(err, errlen, "%s:%d: tenant %s: %s (or leave it out of "
			 "the file and reload)", p->path, t->line, t->name, e);
		return -EPERM;
	}
	return 0;
}

/* Everything the commit will do must be possible before it starts. */
static int
check_plan(struct hg_registry *reg, struct plan *p, char *err, size_t errlen)
{
	unsigned s, apps;
	size_t i;
	int rc;

	for (i = 0; i < p->f->n_ten; i++)
		if ((rc = check_line(reg, p, i, err, errlen)) < 0)
			return rc;
	for (i = 0; i < p->f->n_ten; i++)
		if (p->slot[i] < 0 && (rc = check_ports(reg, p, i, err, errlen)) < 0)
			return rc;
	for (s = 0; s < HG_MAX_TENANTS; s++) {
		if (!leaving(reg, p, s) || (apps = hg_tenant_apps(&reg->t[s])) == 0)
			continue;
		snprintf(err, errlen, "%s: tenant %s is no longer in the file but "
			 "has %u attached app%s; stop %s first", p->path,
			 reg->t[s].name, apps, apps == 1 ? "" : "s",
			 apps == 1 ? "it" : "them");
		return -EBUSY;
	}
	return 0;
}

static void
say_changes(struct hg_reload_report *rep, const char *name,
	    const struct hg_tenant_cfg *a, const struct hg_tenant_cfg *b)
{
	const struct hg_settings *t = hg_tenant_settings();
	char va[96], vb[96];
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (hg_setting_same(&t->row[i], a, b))
			continue;
		hg_setting_format(&t->row[i], a, va, sizeof(va));
		hg_setting_format(&t->row[i], b, vb, sizeof(vb));
		say(rep, "tenant %s: %s %s -> %s", name, t->row[i].name, va, vb);
	}
}

/* Removes, then adds (a leaving tenant's ports may be reused), then
 * changes. Only a failure the checks cannot foresee (memory, a core
 * behind on its commands) stops it half-way; err then says so. */
static int
commit(struct hg_registry *reg, struct plan *p, struct hg_reload_report *rep,
       char *err, size_t errlen)
{
	char e[HG_ERR_LEN], name[HG_NAME_MAX];
	unsigned s;
	size_t i;
	int rc = 0, slot;

	for (s = 0; rc == 0 && s < HG_MAX_TENANTS; s++) {
		if (!leaving(reg, p, s))
			continue;
		snprintf(name, sizeof(name), "%s", reg->t[s].name);
		if ((rc = hg_tenant_del(reg, name, e)) == 0)
			say(rep, "tenant %s removed", name);
	}
	for (i = 0; rc == 0 && i < p->f->n_ten; i++) {
		if (p->slot[i] >= 0)
			continue;
		if ((rc = hg_tenant_add(reg, p->f->ten[i].name, &p->cfg[i], e)) < 0)
			break;
		slot = hg_tenant_find(reg, p->f->ten[i].name);
		reg->t[slot].from_file = 1;
		say(rep, "tenant %s added", p->f->ten[i].name);
	}
	for (i = 0; rc == 0 && i < p->f->n_ten; i++) {
		if ((slot = p->slot[i]) < 0)
			continue;
		reg->t[slot].from_file = 1;
		say_changes(rep, reg->t[slot].name, &reg->t[slot].cfg, &p->cfg[i]);
		rc = hg_tenant_update(reg, slot, &p->cfg[i], e);
	}
	if (rc < 0)
		snprintf(err, errlen, "%s: stopped half-way (%zu change%s made): %s",
			 p->path, rep->n, rep->n == 1 ? "" : "s", e);
	return rc;
}

static void
say_setting(void *arg, const char *key, const char *before, const char *after)
{
	say(arg, "%s %s -> %s", key, before, after);
}

static int
plan_alloc(struct plan *p, const struct hg_conf_file *f, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->path = path;
	p->cfg = calloc(f->n_ten ? f->n_ten : 1, sizeof(*p->cfg));
	p->slot = calloc(f->n_ten ? f->n_ten : 1, sizeof(*p->slot));
	p->port_line = calloc(65536, sizeof(*p->port_line));
	return p->cfg && p->slot && p->port_line ? 0 : -ENOMEM;
}

static void
plan_free(struct plan *p)
{
	free(p->cfg);
	free(p->slot);
	free(p->port_line);
}

/* The daemon's settings first (a tenant's default cap is the daemon's),
 * then the tenants; the settings go back if a tenant line is wrong. */
static int
reload_file(struct hg_registry *reg, const struct hg_conf_file *f,
	    const char *path, struct hg_reload_report *rep, char *err,
	    size_t errlen)
{
	struct hg_config old = hg_cfg;
	static struct plan p;
	int rc;

	pthread_mutex_lock(&reg->lock);
	rc = hg_config_apply_file(f, path, 1, err, errlen);
	pthread_mutex_unlock(&reg->lock);
	if (rc < 0)
		return rc;
	if ((rc = plan_alloc(&p, f, path)) < 0)
		snprintf(err, errlen, "%s: out of memory", path);
	else if ((rc = check_plan(reg, &p, err, errlen)) == 0)
		rc = commit(reg, &p, rep, err, errlen);
	plan_free(&p);
	if (rc < 0 && rep->n == 0) {
		pthread_mutex_lock(&reg->lock);
		hg_cfg = old;
		pthread_mutex_unlock(&reg->lock);
		return rc;
	}
	hg_config_changes(&old, say_setting, rep);
	hg_config_changed();
	return rc;
}

int
hg_config_reload(struct hg_registry *reg, struct hg_reload_report *rep,
		 char *err, size_t errlen)
{
	char path[sizeof(hg_cfg.config)];
	struct hg_conf_file f;
	int rc;

	if (hg_cfg.config[0] == '\0') {
		snprintf(err, errlen, "no config file to reload (start hourglassd "
			 "with --config FILE)");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s", hg_cfg.config);
	rc = hg_conf_read(path, &f, err, errlen);
	if (rc == 0)
		rc = reload_file(reg, &f, path, rep, err, errlen);
	hg_conf_file_free(&f);
	if (rc < 0)
		HG_LOG(ERR, "config reload: %s", err);
	return rc;
}

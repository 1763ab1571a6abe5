/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Commands are registered in one table with the body they accept, the
 * connection state they need and whether an app may send them, and every
 * failure travels back the same way: a non-zero errno status and a
 * one-line reason.
 *
 * Two listeners (design.md §11): the operator socket (mode 0600) takes every
 * command; the app socket (mode 0666) only what an app needs. Every
 * client is untrusted, so each connection's memory and each read event's
 * work are bounded: at most max-conn-out reply bytes are queued before
 * the daemon stops reading that connection, at most HG_CONN_BATCH
 * requests run per read event, and each listener holds a bounded number
 * of connections. On the app socket, which any local user may open, one
 * uid holds at most max-app-conns-per-uid of them and a connection that
 * does not attach is closed after attach-timeout-ms. All connections'
 * requests and replies together are held to max-conns-buffered: past it,
 * a connection that holds bytes is not read until they fall (one that
 * holds none is still served, so the bound cannot lock anybody out), and
 * the freed memory is handed back to the system (malloc_trim).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "arena.h"
#include "config.h"
#include "config_reload.h"
#include "ctl.h"
#include "ctl_frame.h"
#include "log.h"
#include "stats.h"
#include "uid_conns.h"
#include "unix_listen.h"

#define HG_CONN_BATCH     32	/* requests per read event */
#define HG_CONN_READ      65536	/* bytes per read */
#define HG_CONN_READ_TIGHT 4096	/* ... once max-conns-buffered is reached */
#define HG_TRIM_FROM      (4u << 20) /* a trim pays once this much was held */
#define HG_TRIM_DELAY_MS  200	/* a burst of closes makes one trim */
#define HG_ACCEPT_PAUSE_MS 100	/* after running out of descriptors */

enum role { ROLE_OPERATOR, ROLE_APP };

/* Why a connection is not read: its own replies are max-conn-out behind
 * (resumed as it reads them), or all connections hold max-conns-buffered
 * and this one holds some of it (resumed once the total falls). */
enum pause { READING, PAUSE_OWN, PAUSE_TOTAL };

struct hg_listener {
	struct hg_ctl *ctl;
	enum role role;
	int fd;
	char path[108];
	struct event *ev;
};

struct hg_conn {
	struct hg_ctl *ctl;
	enum role role;
	int fd;
	struct event *ev_read, *ev_write;
	struct evbuffer *in, *out;
	int pass_fd;		/* fd to send with the frame at pass_at */
	size_t pass_at;
	enum pause paused;
	struct event *ev_idle;	/* app socket: closes it unless it attaches */
	struct hg_peer peer;
	int slot, app;		/* attached app, or -1 */
	struct hg_conn *next;
};

struct hg_ctl {
	struct event_base *base;
	struct hg_registry *reg;
	struct hg_listener lis[2];	/* by role */
	struct event *ev_resume;	/* accepting again after EMFILE */
	int spare_fd;			/* given up to shed a connection at EMFILE */
	struct hg_conn *conns;
	struct hg_uid_conns uids;	/* app connections per uid */
	uint32_t paused_total;		/* connections in PAUSE_TOTAL */
	uint64_t held_high;		/* most bytes held since the last trim */
	struct event *ev_trim;
};

struct call {
	struct hg_conn *conn;
	const Hg__Request *req;
	Hg__Response *rsp;
	struct hg_arena *arena;
	char err[HG_ERR_LEN];
	int pass_fd;
};

enum need { ANY, ATTACHED, NOT_ATTACHED };

struct command {
	Hg__Request__BodyCase body;
	const char *name;
	enum need need;
	int app;		/* allowed on the app socket */
	int (*fn)(struct call *c);
};

#define ERR(c, ...) snprintf((c)->err, sizeof((c)->err), __VA_ARGS__)

/* The request's KEY=VALUE pairs as the table's input, in the arena. */
static struct hg_kv *
pairs(struct call *c, Hg__KeyValue **m, size_t n)
{
	struct hg_kv *kv = hg_arena_alloc(c->arena, (n ? n : 1) * sizeof(*kv));
	size_t i;

	for (i = 0; kv != NULL && i < n; i++)
		kv[i] = (struct hg_kv){ m[i]->key, m[i]->value };
	return kv;
}

/* A live change is logged as it was asked: "tenant gold: weight=3 cap=9000". */
static void
log_set(const Hg__TenantChange *m)
{
	char line[512];
	size_t i, off = 0;

	line[0] = '\0';
	for (i = 0; i < m->n_settings && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %s=%s",
					m->settings[i]->key, m->settings[i]->value);
	HG_LOG(INFO, "tenant %s set:%s", m->name, line);
}

/* tenant add and tenant set: the same pairs, for a new tenant or a
 * running one. */
static int
cmd_tenant_change(struct call *c)
{
	int add = c->req->body_case == HG__REQUEST__BODY_TENANT_ADD;
	const Hg__TenantChange *m = add ? c->req->tenant_add : c->req->tenant_set;
	struct hg_kv *kv = pairs(c, m->settings, m->n_settings);
	int rc;

	if (kv == NULL)
		return -ENOMEM;
	if (add)
		return hg_tenant_add_kv(c->conn->ctl->reg, m->name, kv,
					m->n_settings, c->err);
	rc = hg_tenant_set_kv(c->conn->ctl->reg, m->name, kv, m->n_settings,
			      c->err);
	if (rc == 0)
		log_set(m);
	return rc;
}

static int
cmd_tenant_get(struct call *c)
{
	const Hg__TenantGet *m = c->req->tenant_get;
	int slot = -1;

	if (m->name != NULL && m->name[0] != '\0' &&
	    (slot = hg_tenant_find(c->conn->ctl->reg, m->name)) < 0) {
		ERR(c, "unknown tenant '%s'", m->name);
		return -ENOENT;
	}
	if (m->key != NULL && hg_tenant_setting_find(m->key) == NULL) {
		ERR(c, "no tenant setting '%.40s' (hgctl tenant set NAME --help "
		    "lists them)", m->key);
		return -ENOENT;
	}
	c->rsp->tenant_settings = hg_tenant_settings_collect(c->conn->ctl->reg,
							     slot, m->key, c->arena);
	c->rsp->body_case = HG__RESPONSE__BODY_TENANT_SETTINGS;
	return c->rsp->tenant_settings ? 0 : -ENOMEM;
}

static int
cmd_config_reload(struct call *c)
{
	Hg__ReloadReport *r = hg_arena_alloc(c->arena, sizeof(*r));
	struct hg_reload_report rep = { 0 };
	size_t i;
	int rc;

	if (r == NULL)
		return -ENOMEM;
	hg__reload_report__init(r);
	rc = hg_config_reload(c->conn->ctl->reg, &rep, c->err, sizeof(c->err));
	if (rc == 0 && rep.n > 0) {
		r->changes = hg_arena_alloc(c->arena, rep.n * sizeof(char *));
		for (i = 0; r->changes != NULL && i < rep.n; i++)
			if ((r->changes[r->n_changes] =
				     hg_arena_strdup(c->arena, rep.line[i])) != NULL)
				r->n_changes++;
	}
	hg_reload_report_free(&rep);
	if (rc < 0)
		return rc;
	c->rsp->reload = r;
	c->rsp->body_case = HG__RESPONSE__BODY_RELOAD;
	return 0;
}

static int
cmd_tenant_del(struct call *c)
{
	return hg_tenant_del(c->conn->ctl->reg, c->req->tenant_del->name, c->err);
}

static int
cmd_tenant_list(struct call *c)
{
	c->rsp->tenants = hg_tenants_collect(c->conn->ctl->reg, c->arena);
	c->rsp->body_case = HG__RESPONSE__BODY_TENANTS;
	return c->rsp->tenants ? 0 : -ENOMEM;
}

static int
cmd_stats(struct call *c)
{
	const char *name = c->req->stats->tenant;
	int slot = -1;

	if (name != NULL && name[0] != '\0') {
		slot = hg_tenant_find(c->conn->ctl->reg, name);
		if (slot < 0) {
			ERR(c, "unknown tenant '%s'", name);
			return -ENOENT;
		}
	}
	c->rsp->stats = hg_stats_collect(c->conn->ctl->reg, slot, c->arena);
	c->rsp->body_case = HG__RESPONSE__BODY_STATS;
	return c->rsp->stats ? 0 : -ENOMEM;
}

struct config_out {
	struct hg_arena *a;
	Hg__Config *cfg;
	const char *only;
};

static void
add_entry(void *arg, const char *key, const char *value, int live,
	  const char *help)
{
	struct config_out *o = arg;
	Hg__ConfigEntry *e;

	if (o->only != NULL && strcmp(o->only, key) != 0)
		return;
	e = hg_arena_alloc(o->a, sizeof(*e));
	if (e == NULL)
		return;
	hg__config_entry__init(e);
	e->key = hg_arena_strdup(o->a, key);
	e->value = hg_arena_strdup(o->a, value);
	e->help = hg_arena_strdup(o->a, help);
	e->live = live;
	if (e->key && e->value && e->help)
		o->cfg->entries[o->cfg->n_entries++] = e;
}

static int
cmd_config_get(struct call *c)
{
	const char *key = c->req->config_get->key;
	struct config_out o = { .a = c->arena };
	char v[256];

	if (key != NULL && key[0] != '\0') {
		if (hg_config_get(key, v, sizeof(v)) < 0) {
			ERR(c, "unknown setting '%s'", key);
			return -ENOENT;
		}
		o.only = key;
	}
	o.cfg = hg_arena_alloc(c->arena, sizeof(*o.cfg));
	if (o.cfg == NULL)
		return -ENOMEM;
	hg__config__init(o.cfg);
	o.cfg->entries = hg_arena_alloc(c->arena, 64 * sizeof(void *));
	if (o.cfg->entries == NULL)
		return -ENOMEM;
	hg_config_foreach(add_entry, &o);
	c->rsp->config = o.cfg;
	c->rsp->body_case = HG__RESPONSE__BODY_CONFIG;
	return 0;
}

static int
cmd_config_set(struct call *c)
{
	struct hg_registry *reg = c->conn->ctl->reg;
	int rc;

	pthread_mutex_lock(&reg->lock);
	rc = hg_config_set(c->req->config_set->key, c->req->config_set->value, 1,
			   c->err, sizeof(c->err));
	pthread_mutex_unlock(&reg->lock);
	if (rc == 0)
		HG_LOG(INFO, "config %s = %s", c->req->config_set->key,
		       c->req->config_set->value);
	return rc;
}

static int
cmd_attach(struct call *c)
{
	struct hg_registry *reg = c->conn->ctl->reg;
	Hg__AttachReply *r;
	int rc, slot, app;

	rc = hg_app_attach(reg, c->req->attach->tenant, &c->conn->peer, &slot, &app,
			   c->err);
	if (rc < 0)
		return rc;
	r = hg_arena_alloc(c->arena, sizeof(*r));
	if (r == NULL) {
		hg_app_detach(reg, slot, app);
		return -ENOMEM;
	}
	hg__attach_reply__init(r);
	r->tenant_id = slot;
	r->region_size = reg->t[slot].region.size;
	r->app = (uint32_t)app;
	c->conn->slot = slot;
	c->conn->app = app;
	if (c->conn->ev_idle != NULL)
		evtimer_del(c->conn->ev_idle);
	c->pass_fd = reg->t[slot].region.fd;
	c->rsp->attach = r;
	c->rsp->body_case = HG__RESPONSE__BODY_ATTACH;
	return 0;
}

static int
cmd_ctx_open(struct call *c)
{
	Hg__CtxOpenReply *r = hg_arena_alloc(c->arena, sizeof(*r));
	uint32_t ctx;
	int rc;

	if (r == NULL)
		return -ENOMEM;
	rc = hg_app_ctx_open(c->conn->ctl->reg, c->conn->slot, c->conn->app, &ctx,
			     &c->pass_fd, c->err);
	if (rc < 0)
		return rc;
	hg__ctx_open_reply__init(r);
	r->ctx = ctx;
	c->rsp->ctx_open = r;
	c->rsp->body_case = HG__RESPONSE__BODY_CTX_OPEN;
	return 0;
}

/* The eventfd an app's idle workers ring when they ask to park
 * (core_alloc.c): one per tenant, so a ring says whose to look at. */
static int
cmd_park_bell(struct call *c)
{
	int fd = c->conn->ctl->reg->t[c->conn->slot].park_bell;

	if (fd < 0) {
		ERR(c, "tenant has no park bell");
		return -EIO;
	}
	c->pass_fd = fd;
	return 0;
}

static int
cmd_bind(struct call *c)
{
	return hg_app_bind(c->conn->ctl->reg, c->conn->slot, c->conn->app,
			   c->req->bind->port, c->err);
}

/* An app can change nothing about any tenant, not even its own: it may
 * attach (as an owner), open contexts and bind its tenant's ports. Even
 * reading (tenant list, stats) is the operator's: it would show every
 * tenant's names, ports and load to any local user. */
static const struct command commands[] = {
	{ HG__REQUEST__BODY_TENANT_ADD, "tenant add", ANY, 0, cmd_tenant_change },
	{ HG__REQUEST__BODY_TENANT_SET, "tenant set", ANY, 0, cmd_tenant_change },
	{ HG__REQUEST__BODY_TENANT_DEL, "tenant del", ANY, 0, cmd_tenant_del },
	{ HG__REQUEST__BODY_TENANT_LIST, "tenant list", ANY, 0, cmd_tenant_list },
	{ HG__REQUEST__BODY_TENANT_GET, "tenant get", ANY, 0, cmd_tenant_get },
	{ HG__REQUEST__BODY_STATS, "stats", ANY, 0, cmd_stats },
	{ HG__REQUEST__BODY_CONFIG_GET, "config get", ANY, 0, cmd_config_get },
	{ HG__REQUEST__BODY_CONFIG_SET, "config set", ANY, 0, cmd_config_set },
	{ HG__REQUEST__BODY_CONFIG_RELOAD, "config reload", ANY, 0,
	  cmd_config_reload },
	{ HG__REQUEST__BODY_ATTACH, "attach", NOT_ATTACHED, 1, cmd_attach },
	{ HG__REQUEST__BODY_CTX_OPEN, "ctx open", ATTACHED, 1, cmd_ctx_open },
	{ HG__REQUEST__BODY_BIND, "bind", ATTACHED, 1, cmd_bind },
	{ HG__REQUEST__BODY_PARK_BELL, "park bell", ATTACHED, 1, cmd_park_bell },
};

static int
dispatch(struct call *c)
{
	size_t i;

	for (i = 0; i < RTE_DIM(commands); i++) {
		if (commands[i].body != c->req->body_case)
			continue;
		if (c->conn->role == ROLE_APP && !commands[i].app) {
			c->conn->ctl->reg->ctl.commands_refused++;
			ERR(c, "%s: not allowed on the app socket (operators use "
			    "the control socket)", commands[i].name);
			return -EPERM;
		}
		if (commands[i].need == ATTACHED && c->conn->app < 0) {
			ERR(c, "%s: attach to a tenant first", commands[i].name);
			return -ENOTCONN;
		}
		if (commands[i].need == NOT_ATTACHED && c->conn->app >= 0) {
			ERR(c, "%s: this connection is already attached",
			    commands[i].name);
			return -EISCONN;
		}
		return commands[i].fn(c);
	}
	ERR(c, "unknown request");
	return -EOPNOTSUPP;
}

/* ---- connection I/O ---- */

static void conn_close(struct hg_conn *cn);

/* Writes queued output; the frame at pass_at carries pass_fd. libevent
 * cannot send descriptors, hence sendmsg here. */
static int
conn_flush(struct hg_conn *cn)
{
	while (evbuffer_get_length(cn->out) > 0) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} cm;
		size_t lim = evbuffer_get_length(cn->out);
		struct msghdr mh = { 0 };
		struct iovec iov;
		int with_fd = cn->pass_fd >= 0 && cn->pass_at == 0;
		ssize_t n;

		if (cn->pass_fd >= 0 && cn->pass_at > 0 && cn->pass_at < lim)
			lim = cn->pass_at;
		lim = lim > 65536 ? 65536 : lim;
		iov.iov_base = evbuffer_pullup(cn->out, (ssize_t)lim);
		iov.iov_len = lim;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if (with_fd) {
			memset(&cm, 0, sizeof(cm));
			mh.msg_control = cm.b;
			mh.msg_controllen = sizeof(cm.b);
			cm.h.cmsg_level = SOL_SOCKET;
			cm.h.cmsg_type = SCM_RIGHTS;
			cm.h.cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(&cm.h), &cn->pass_fd, sizeof(int));
		}
		n = sendmsg(cn->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				event_add(cn->ev_write, NULL);
				return 0;
			}
			return -1;
		}
		if (with_fd)
			cn->pass_fd = -1;
		else if (cn->pass_fd >= 0)
			cn->pass_at -= (size_t)n;
		evbuffer_drain(cn->out, (size_t)n);
	}
	event_del(cn->ev_write);
	return 0;
}

static void
reply(struct hg_conn *cn, struct call *c)
{
	Hg__Response e = HG__RESPONSE__INIT;
	uint8_t *buf = NULL;
	size_t n = 0;

	/* One descriptor in flight per connection (conn_flush): a client that
	 * pipelines a second before reading the first reply is told so. */
	if (c->pass_fd >= 0 && cn->pass_fd >= 0) {
		e.id = c->rsp->id;
		e.status = EBUSY;
		e.error = "a descriptor is still in flight: read the last reply first";
		c->pass_fd = -1;
		n = hg_frame_response(&e, &buf);
	} else {
		n = hg_frame_response(c->rsp, &buf);
	}
	if (n == 0) {
		/* too big or no memory: say so instead of going silent */
		e.id = c->rsp->id;
		e.status = EMSGSIZE;
		e.error = "reply too large";
		n = hg_frame_response(&e, &buf);
		c->pass_fd = -1;
		if (n == 0)
			return;
	}
	if (c->pass_fd >= 0) {
		cn->pass_fd = c->pass_fd;
		cn->pass_at = evbuffer_get_length(cn->out);
	}
	evbuffer_add(cn->out, buf, n);
	free(buf);
}

static void
handle(struct hg_conn *cn, const uint8_t *data, size_t len)
{
	Hg__Request *req = hg__request__unpack(NULL, len, data);
	Hg__Response rsp = HG__RESPONSE__INIT;
	struct hg_arena arena = { 0 };
	struct call c = { .conn = cn, .req = req, .rsp = &rsp, .arena = &arena,
			  .pass_fd = -1 };
	int rc;

	if (req == NULL) {
		ERR(&c, "malformed request");
		rc = -EBADMSG;
	} else {
		rsp.id = req->id;
		rc = dispatch(&c);
	}
	rsp.status = -rc;
	if (rc < 0) {
		if (c.err[0] == '\0')
			ERR(&c, "%s", strerror(-rc));
		rsp.error = c.err;
		rsp.body_case = HG__RESPONSE__BODY__NOT_SET;
		c.pass_fd = -1;
	}
	reply(cn, &c);
	hg_arena_free(&arena);
	if (req != NULL)
		hg__request__free_unpacked(req, NULL);
}

static uint64_t
out_cap(void)
{
	return hg_cfg.max_conn_out;
}

static size_t
held_in(const struct hg_conn *cn)
{
	return evbuffer_get_length(cn->in);
}

static size_t
held_out(const struct hg_conn *cn)
{
	return evbuffer_get_length(cn->out);
}

static int
all_held(const struct hg_ctl *ctl)
{
	return ctl->reg->ctl.buffered >= hg_cfg.max_conns_buffered;
}

/* Another reply may be queued: under the connection's own cap, and, once
 * all connections hold max-conns-buffered, only to one holding no reply
 * (so the total overshoots by at most one reply per connection). */
static int
may_answer(const struct hg_conn *cn)
{
	return held_out(cn) < out_cap() && (!all_held(cn->ctl) || held_out(cn) == 0);
}

/* More requests may be read: once all connections hold the bound, only
 * by one that holds nothing (and then at most HG_CONN_READ_TIGHT). */
static int
may_read(const struct hg_conn *cn)
{
	return !all_held(cn->ctl) || (held_in(cn) == 0 && held_out(cn) == 0);
}

/* Starts or stops reading a connection, and says why it stopped. */
static void
set_pause(struct hg_conn *cn, enum pause why)
{
	struct hg_ctl *ctl = cn->ctl;

	if (cn->paused == why)
		return;
	if (cn->paused == PAUSE_TOTAL)
		ctl->paused_total--;
	if (why == PAUSE_TOTAL)
		ctl->paused_total++;
	if (cn->paused == READING) {
		ctl->reg->ctl.reads_paused++;
		event_del(cn->ev_read);
	} else if (why == READING) {
		event_add(cn->ev_read, NULL);
		event_active(cn->ev_read, EV_READ, 0);	/* requests buffered */
	}
	cn->paused = why;
}

static void
resume_total(struct hg_ctl *ctl)
{
	struct hg_conn *cn;

	for (cn = ctl->conns; cn != NULL && ctl->paused_total > 0; cn = cn->next)
		if (cn->paused == PAUSE_TOTAL)
			set_pause(cn, READING);
}

static void
on_trim(evutil_socket_t fd, short what, void *arg)
{
	struct hg_ctl *ctl = arg;

	(void)fd;
	(void)what;
	malloc_trim(0);
	ctl->held_high = ctl->reg->ctl.buffered;
}

/* Every byte into or out of a connection's buffers: the total that
 * max-conns-buffered bounds. Readers held back by it resume at 3/4 of
 * the bound; once most of what was held is gone, the memory goes back
 * to the system (freed buffers otherwise stay in malloc's free lists:
 * 1,000 closed connections left 720 MB). */
static void
on_held(struct evbuffer *b, const struct evbuffer_cb_info *i, void *arg)
{
	struct hg_ctl *ctl = arg;
	struct hg_ctl_counters *k = &ctl->reg->ctl;
	struct timeval tv = { 0, HG_TRIM_DELAY_MS * 1000 };

	(void)b;
	k->buffered = k->buffered + i->n_added - i->n_deleted;
	if (k->buffered > k->buffered_peak)
		k->buffered_peak = k->buffered;
	if (k->buffered > ctl->held_high)
		ctl->held_high = k->buffered;
	if (i->n_deleted == 0)
		return;
	if (ctl->paused_total > 0 && k->buffered < hg_cfg.max_conns_buffered / 4 * 3)
		resume_total(ctl);
	if (ctl->held_high >= HG_TRIM_FROM && k->buffered < ctl->held_high / 8 &&
	    !evtimer_pending(ctl->ev_trim, NULL))
		evtimer_add(ctl->ev_trim, &tv);
}

/* Handles up to HG_CONN_BATCH complete frames while replies may be
 * queued (may_answer); the rest waits for the next turn of the event
 * loop, so one client's pipeline cannot hold the slow path. A client
 * that does not read its replies stops being read: its requests wait in
 * its socket (then in its own send buffer), not in our memory. -1
 * closes the connection. */
static int
process_input(struct hg_conn *cn)
{
	uint8_t prefix[4];
	unsigned done = 0;
	int more = 0;
	int64_t len;

	while (held_in(cn) >= 4) {
		if (done == HG_CONN_BATCH || !may_answer(cn)) {
			more = 1;
			break;
		}
		evbuffer_copyout(cn->in, prefix, 4);
		len = hg_frame_len(prefix);
		if (len < 0) {
			HG_LOG(WARNING, "control: bad frame length from pid %d",
			       (int)cn->peer.pid);
			return -1;
		}
		if (held_in(cn) < (size_t)len + 4)
			break;
		handle(cn, evbuffer_pullup(cn->in, len + 4) + 4, (size_t)len);
		evbuffer_drain(cn->in, (size_t)len + 4);
		done++;
	}
	if (conn_flush(cn) < 0)
		return -1;
	if (held_out(cn) >= out_cap())
		set_pause(cn, PAUSE_OWN);
	else if (!may_answer(cn) || (!more && !may_read(cn)))
		set_pause(cn, PAUSE_TOTAL);
	else if (more)
		event_active(cn->ev_read, EV_READ, 0);	/* more may be waiting */
	return 0;
}

/* Reads only while less than one whole frame is buffered: a client that
 * sends faster than we answer waits in its socket. */
static void
on_read(evutil_socket_t fd, short what, void *arg)
{
	struct hg_conn *cn = arg;
	int n;

	(void)what;
	if (cn->paused != READING)
		return;		/* an activation from before it paused */
	if (held_in(cn) < HG_CTL_MAX_FRAME + 4 && may_read(cn)) {
		n = evbuffer_read(cn->in, fd, all_held(cn->ctl) ? HG_CONN_READ_TIGHT
								 : HG_CONN_READ);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			conn_close(cn);
			return;
		}
	}
	if (process_input(cn) < 0)
		conn_close(cn);
}

static void
on_write(evutil_socket_t fd, short what, void *arg)
{
	struct hg_conn *cn = arg;

	(void)fd;
	(void)what;
	if (conn_flush(cn) < 0) {
		conn_close(cn);
		return;
	}
	if ((cn->paused == PAUSE_OWN && held_out(cn) < out_cap() / 2) ||
	    (cn->paused == PAUSE_TOTAL && held_out(cn) == 0))
		set_pause(cn, READING);
}

/* An app connection that has not attached in attach-timeout-ms holds a
 * share of the app socket for nothing. */
static void
on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct hg_conn *cn = arg;

	(void)fd;
	(void)what;
	if (cn->app >= 0)
		return;
	cn->ctl->reg->ctl.idle_closed++;
	HG_LOG(DEBUG, "control: app connection of pid %d closed: not attached "
	       "in %lu ms", (int)cn->peer.pid, (unsigned long)hg_cfg.attach_timeout_ms);
	conn_close(cn);
}

static void
conn_close(struct hg_conn *cn)
{
	struct hg_conn **pp;

	for (pp = &cn->ctl->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == cn) {
			*pp = cn->next;
			break;
		}
	cn->ctl->reg->ctl.conns[cn->role]--;
	if (cn->role == ROLE_APP)
		hg_uid_conns_put(&cn->ctl->uids, cn->peer.uid);
	if (cn->paused == PAUSE_TOTAL)
		cn->ctl->paused_total--;
	if (cn->app >= 0)
		hg_app_detach(cn->ctl->reg, cn->slot, cn->app);
	if (cn->ev_read)
		event_free(cn->ev_read);
	if (cn->ev_write)
		event_free(cn->ev_write);
	if (cn->ev_idle)
		event_free(cn->ev_idle);
	/* drained, not just freed: on_held takes what it held off the total */
	if (cn->in) {
		evbuffer_drain(cn->in, held_in(cn));
		evbuffer_free(cn->in);
	}
	if (cn->out) {
		evbuffer_drain(cn->out, held_out(cn));
		evbuffer_free(cn->out);
	}
	close(cn->fd);
	free(cn);
}

/* Tells a client in one frame why its connection is refused, then hangs
 * up; the reply (id 0) is answered whatever the client asks. Best effort:
 * the socket is new and its buffer empty. */
static void
refuse(int fd, const char *why)
{
	Hg__Response e = HG__RESPONSE__INIT;
	uint8_t *buf = NULL;
	size_t n;

	e.status = EBUSY;
	e.error = (char *)why;
	n = hg_frame_response(&e, &buf);
	if (n > 0 && send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		HG_LOG(DEBUG, "control: refusal not sent: %s", strerror(errno));
	free(buf);
	close(fd);
}

struct hg_conn *
hg_ctl_conn_new(struct hg_ctl *ctl, int fd, int app_socket,
		const struct hg_peer *peer)
{
	struct hg_conn *cn = calloc(1, sizeof(*cn));
	struct timeval idle = { hg_cfg.attach_timeout_ms / 1000,
				hg_cfg.attach_timeout_ms % 1000 * 1000 };

	if (cn == NULL || (app_socket && hg_uid_conns_take(&ctl->uids, peer->uid) < 0)) {
		free(cn);
		close(fd);
		return NULL;
	}
	cn->ctl = ctl;
	cn->role = app_socket ? ROLE_APP : ROLE_OPERATOR;
	cn->fd = fd;
	cn->slot = cn->app = -1;
	cn->pass_fd = -1;
	cn->peer = *peer;
	cn->in = evbuffer_new();
	cn->out = evbuffer_new();
	cn->ev_read = event_new(ctl->base, fd, EV_READ | EV_PERSIST, on_read, cn);
	cn->ev_write = event_new(ctl->base, fd, EV_WRITE | EV_PERSIST, on_write, cn);
	if (app_socket)
		cn->ev_idle = evtimer_new(ctl->base, on_idle, cn);
	cn->next = ctl->conns;
	ctl->conns = cn;
	ctl->reg->ctl.conns[cn->role]++;
	if (!cn->in || !cn->out || !cn->ev_read || !cn->ev_write ||
	    (app_socket && cn->ev_idle == NULL) ||
	    !evbuffer_add_cb(cn->in, on_held, ctl) ||
	    !evbuffer_add_cb(cn->out, on_held, ctl)) {
		conn_close(cn);
		return NULL;
	}
	event_add(cn->ev_read, NULL);
	if (app_socket)
		evtimer_add(cn->ev_idle, &idle);
	return cn;
}

int
hg_ctl_conn_input(struct hg_conn *cn, const uint8_t *data, size_t len)
{
	if (evbuffer_add(cn->in, data, len) < 0 || process_input(cn) < 0) {
		conn_close(cn);
		return -1;
	}
	return 0;
}

void
hg_ctl_conn_close(struct hg_conn *cn)
{
	conn_close(cn);
}

static void
set_accepting(struct hg_ctl *ctl, int on)
{
	unsigned r;

	for (r = 0; r < 2; r++)
		if (ctl->lis[r].ev != NULL) {
			if (on)
				event_add(ctl->lis[r].ev, NULL);
			else
				event_del(ctl->lis[r].ev);
		}
}

static void
on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	set_accepting(arg, 1);
}

/* Out of descriptors: the pending connection keeps the listener readable,
 * and a level-triggered loop would spin on it at full CPU. The spare
 * descriptor is given up to take that connection and hang it up (the
 * client sees EOF, not a hang), and accepting pauses for a moment. */
static void
accept_failed(struct hg_ctl *ctl, int lfd)
{
	struct timeval tv = { 0, HG_ACCEPT_PAUSE_MS * 1000 };
	int fd;

	ctl->reg->ctl.accept_errors++;
	if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS &&
	    errno != ENOMEM)
		return;
	HG_LOG(WARNING, "control: cannot accept: %s", strerror(errno));
	if (ctl->spare_fd >= 0) {
		close(ctl->spare_fd);
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		ctl->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	set_accepting(ctl, 0);
	event_add(ctl->ev_resume, &tv);
}

/* Is peer over its share of the app socket (design.md §11)? Root and the
 * owners of tenants may hold max-app-conns-per-uid each, up to all of
 * max-app-conns. A uid that owns no tenant can attach nowhere: it may hold
 * max-app-conns-per-guest, enough to be told so, and never the last
 * app-conns-reserve; before, four local users holding 256 each filled the
 * socket and refused root's attach. Counted, and why written, if so. */
static int
app_share_refused(struct hg_ctl *ctl, const struct hg_peer *peer, char *why,
		  size_t len)
{
	int owner = hg_peer_owns_a_tenant(ctl->reg, peer);
	uint64_t share = owner ? hg_cfg.max_app_conns_per_uid
			       : hg_cfg.max_app_conns_per_guest;
	long uid = peer->uid == (uid_t)-1 ? -1L : (long)peer->uid;

	if (hg_uid_conns_of(&ctl->uids, peer->uid) >= share) {
		ctl->reg->ctl.uid_refused++;
		snprintf(why, len, "too many app connections for uid %ld (max %lu%s)",
			 uid, (unsigned long)share, owner ? "" : ": it owns no tenant");
		return 1;
	}
	if (!owner && ctl->reg->ctl.conns[ROLE_APP] + hg_cfg.app_conns_reserve >=
		      hg_cfg.max_app_conns) {
		ctl->reg->ctl.conns_refused++;
		snprintf(why, len, "too many app connections (the last %lu of %lu "
			 "are for root and tenant owners)",
			 (unsigned long)hg_cfg.app_conns_reserve,
			 (unsigned long)hg_cfg.max_app_conns);
		return 1;
	}
	return 0;
}

static void
on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct hg_listener *l = arg;
	struct hg_ctl *ctl = l->ctl;
	uint64_t max = l->role == ROLE_APP ? hg_cfg.max_app_conns
					   : hg_cfg.max_ctl_conns;
	struct hg_peer peer = { 0 };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	char why[96];
	int fd;

	(void)what;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			accept_failed(ctl, lfd);
		return;
	}
	if (ctl->reg->ctl.conns[l->role] >= max) {
		ctl->reg->ctl.conns_refused++;
		snprintf(why, sizeof(why), "too many %s connections (max %lu)",
			 l->role == ROLE_APP ? "app" : "operator", (unsigned long)max);
		refuse(fd, why);
		return;
	}
	/* without credentials nobody is anybody's owner: uid -1 */
	peer.uid = (uid_t)-1;
	peer.gid = (gid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
		peer.pid = cred.pid;
		peer.uid = cred.uid;
		peer.gid = cred.gid;
	}
	if (l->role == ROLE_APP && app_share_refused(ctl, &peer, why, sizeof(why))) {
		refuse(fd, why);
		return;
	}
	hg_ctl_conn_new(ctl, fd, l->role == ROLE_APP, &peer);
}

/* The flag that names a listener, for its errors. */
static const char *
flag_of(enum role role)
{
	return role == ROLE_APP ? "--app-ctl" : "--ctl";
}

static int
listen_on(struct hg_ctl *ctl, enum role role, const char *path, mode_t mode)
{
	struct hg_listener *l = &ctl->lis[role];

	l->ctl = ctl;
	l->role = role;
	l->fd = hg_unix_listen(flag_of(role), path, SOCK_STREAM, mode);
	if (l->fd < 0)
		return -1;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->ev = event_new(ctl->base, l->fd, EV_READ | EV_PERSIST, on_accept, l);
	return l->ev != NULL && event_add(l->ev, NULL) == 0 ? 0 : -1;
}

struct hg_ctl *
hg_ctl_open(struct event_base *base, struct hg_registry *reg, const char *path,
	    const char *app_path)
{
	struct hg_ctl *ctl = calloc(1, sizeof(*ctl));

	if (ctl == NULL)
		return NULL;
	ctl->base = base;
	ctl->reg = reg;
	ctl->lis[0].fd = ctl->lis[1].fd = -1;
	ctl->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ctl->ev_resume = evtimer_new(base, on_resume, ctl);
	ctl->ev_trim = evtimer_new(base, on_trim, ctl);
	if (ctl->ev_resume == NULL || ctl->ev_trim == NULL ||
	    listen_on(ctl, ROLE_OPERATOR, path, 0600) < 0 ||
	    (app_path != NULL && listen_on(ctl, ROLE_APP, app_path, 0666) < 0)) {
		hg_ctl_close(ctl);
		return NULL;
	}
	return ctl;
}

void
hg_ctl_close(struct hg_ctl *ctl)
{
	unsigned r;

	if (ctl == NULL)
		return;
	while (ctl->conns != NULL)
		conn_close(ctl->conns);
	for (r = 0; r < 2; r++) {
		struct hg_listener *l = &ctl->lis[r];

		if (l->ev != NULL)
			event_free(l->ev);
		if (l->fd >= 0) {
			close(l->fd);
			hg_unix_unlink(l->path);
		}
	}
	if (ctl->ev_resume != NULL)
		event_free(ctl->ev_resume);
	if (ctl->ev_trim != NULL)
		event_free(ctl->ev_trim);
	if (ctl->spare_fd >= 0)
		close(ctl->spare_fd);
	free(ctl);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Core allocation: the slow path's half of parking (core_alloc.h). Each
 * context's state (active, asked, parked) lives here, in daemon memory;
 * the region's park word is only a worker's request. A parked context
 * leaves its app's RX route, so new requests go to the workers that run;
 * the route never empties (the app's last context stays in it parked,
 * and a delivery rings it awake), and a context the fast path still
 * delivers to is armed on its doorbell: no request is lost to parking.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "../common/hg_util.h"
#include "core_alloc.h"
#include "publish.h"
#include "credit_pool.h"
#include "log.h"
#include "registry.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define BELLS_MAX 64	/* park bells collected per call */

int
hg_core_init(struct hg_registry *reg)
{
	reg->park_ep = epoll_create1(EPOLL_CLOEXEC);
	return reg->park_ep < 0 ? -errno : 0;
}

void
hg_core_fini(struct hg_registry *reg)
{
	if (reg->park_ep >= 0)
		close(reg->park_ep);
	reg->park_ep = -1;
}

int
hg_core_bell_open(struct hg_registry *reg, int slot)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)slot };
	int rc;

	t->park_bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->park_bell < 0)
		return -errno;
	if (epoll_ctl(reg->park_ep, EPOLL_CTL_ADD, t->park_bell, &ev) < 0) {
		rc = -errno;
		close(t->park_bell);
		t->park_bell = -1;
		return rc;
	}
	return 0;
}

/* Removed from the set by hand: the apps hold copies of the descriptor,
 * and epoll forgets a file only when every copy is closed. */
void
hg_core_bell_close(struct hg_registry *reg, int slot)
{
	struct hg_tenant_sp *t = &reg->t[slot];

	if (t->park_bell < 0)
		return;
	epoll_ctl(reg->park_ep, EPOLL_CTL_DEL, t->park_bell, NULL);
	close(t->park_bell);
	t->park_bell = -1;
}

void
hg_core_touch(struct hg_registry *reg, int slot)
{
	hg_tset_add(&reg->core_watch, (unsigned)slot);
	hg_tset_add(&reg->core_rang, (unsigned)slot);
}

void
hg_core_bells(struct hg_registry *reg)
{
	struct epoll_event ev[BELLS_MAX];
	uint64_t v;
	int n, i;

	n = epoll_wait(reg->park_ep, ev, BELLS_MAX, 0);
	for (i = 0; i < n; i++) {
		uint32_t slot = ev[i].data.u32;

		if (slot >= HG_MAX_TENANTS || !reg->t[slot].used ||
		    reg->t[slot].park_bell < 0)
			continue;
		if (read(reg->t[slot].park_bell, &v, sizeof(v)) < 0 && errno != EAGAIN)
			continue;
		hg_core_touch(reg, (int)slot);
	}
}

/* ---- RX steering: the route holds the app's running contexts ---- */

static void
route_del(struct hg_app_route *r, uint32_t ctx)
{
	uint32_t n = r->n_ctx, i;

	if (n <= 1)
		return;
	for (i = 0; i < n; i++) {
		if (r->ctx[i] != ctx)
			continue;
		r->ctx[i] = r->ctx[n - 1];
		r->n_ctx = n - 1;
		return;
	}
}

static void
route_add(struct hg_app_route *r, uint32_t ctx)
{
	uint32_t n = r->n_ctx, i;

	for (i = 0; i < n; i++)
		if (r->ctx[i] == ctx)
			return;
	if (n >= HG_MAX_CTX)
		return;
	r->ctx[n] = (uint8_t)ctx;
	r->n_ctx = n + 1;
}

/* Takes the context out of its app's route (on 0) or puts it back, in a
 * new view of the tenant. A core that still holds the old view until its
 * next pass may pick it once more: an open context of the app either
 * way. 0, or -ENOMEM with the route as it was. */
static int
steer_to(struct hg_registry *reg, int slot, uint32_t ctx, int on)
{
	struct hg_ctx_map *m = &reg->t[slot].map;
	struct hg_app_route *r = &m->route[m->ctx_app[ctx] % HG_MAX_APPS], was = *r;
	int rc;

	(on ? route_add : route_del)(r, ctx);
	if ((rc = hg_publish_view(reg, slot)) < 0)
		*r = was;
	return rc;
}

/* ---- one context's allocation ---- */

static int
ctx_live(const struct hg_registry *reg, int slot, uint32_t ctx)
{
	const struct hg_tenant_sp *t = &reg->t[slot];

	return t->ctx_used[ctx] && !t->app[t->map.ctx_app[ctx] % HG_MAX_APPS].reclaiming;
}

uint32_t
hg_core_active(const struct hg_registry *reg, int slot)
{
	uint32_t ctx, n = 0;

	for (ctx = 0; ctx < HG_MAX_CTX; ctx++)
		n += ctx_live(reg, slot, ctx) && !reg->t[slot].core.parked[ctx];
	return n;
}

void
hg_core_publish_running(struct hg_registry *reg, int slot)
{
	hg_publish_running(reg, slot, hg_core_active(reg, slot));
}

/* Parking called off or over: the credits it took go back. */
static void
give_back(struct hg_registry *reg, int slot, uint32_t ctx)
{
	struct hg_core_state *cs = &reg->t[slot].core;
	double back = hg_cs_busy(&cs->w[ctx]);

	if (back > 0)
		hg_credit_adjust(reg, slot, back);
	cs->asked[ctx] = 0;
}

static void
park(struct hg_registry *reg, int slot, uint32_t ctx)
{
	struct hg_core_state *cs = &reg->t[slot].core;
	struct hg_tenant *tn = &reg->dp->tenant[slot];

	if (steer_to(reg, slot, ctx, 0) < 0)
		return;		/* out of memory: it keeps running */
	cs->parked[ctx] = 1;
	cs->n_parked++;
	cs->parks++;
	hg_core_publish_running(reg, slot);
	__atomic_store_n(&tn->ctx_shm[ctx].park_ok, cs->asked[ctx], __ATOMIC_RELEASE);
	HG_LOG(DEBUG, "tenant %s: context %u parked (%u parked)", reg->t[slot].name,
	       ctx, cs->n_parked);
}

/* Rings a worker asleep on its doorbell: a parked one, or one still
 * allocated whose request was refused or not yet granted. It wakes and
 * steals. */
static void
ring(struct hg_registry *reg, int slot, uint32_t ctx)
{
	int fd = reg->dp->tenant[slot].bell[ctx];
	uint64_t one = 1;

	if (fd >= 0 && (write(fd, &one, sizeof(one)) == sizeof(one) || errno == EAGAIN))
		reg->t[slot].core.wakes_delay++;
}

/* The context runs again: back in steering, its credits back in the
 * pool; by_daemon: the slow path wakes it (its doorbell), else it woke
 * on its own. */
static void
unpark(struct hg_registry *reg, int slot, uint32_t ctx, int by_daemon)
{
	struct hg_core_state *cs = &reg->t[slot].core;
	struct hg_tenant *tn = &reg->dp->tenant[slot];

	cs->parked[ctx] = 0;
	cs->n_parked--;
	hg_core_publish_running(reg, slot);
	give_back(reg, slot, ctx);
	if (steer_to(reg, slot, ctx, 1) < 0)
		HG_LOG(ERR, "tenant %s: out of memory to steer to context %u again",
		       reg->t[slot].name, ctx);
	__atomic_store_n(&tn->ctx_shm[ctx].park_ok, 0, __ATOMIC_RELEASE);
	HG_LOG(DEBUG, "tenant %s: context %u runs again (%s; %u parked)",
	       reg->t[slot].name, ctx, by_daemon ? "woken on queueing delay" :
	       "woke by itself", cs->n_parked);
	if (!by_daemon) {
		cs->wakes_self++;
		return;
	}
	ring(reg, slot, ctx);
}

/* What Algorithm 1 sees of the tenant now. */
static struct hg_cs_view
view(struct hg_registry *reg, int slot, uint32_t ctx, uint64_t now)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	struct hg_cs_view v = { .now_ns = now / reg->tsc_us * 1000u + 1,
				.workers = hg_core_active(reg, slot),
				.overloaded = t->core.overloaded };
	uint32_t c;

	if (t->cfg.credit.rpc_hi != 0)
		v.sessions = hg_credit_sessions(reg, slot, &v.drained, &v.issued);
	for (c = 0; c < HG_MAX_CTX; c++)
		v.other_parking |= c != ctx && t->core.w[c].parking;
	return v;
}

/* A standing request: returns 1 while the worker stays allocated (in
 * steering, asleep on its doorbell: CoreSync's polling, on a shared CPU)
 * and the decision waits. The library polled for poll-us before it
 * asked, so Algorithm 1's own polling period is zero here. */
static int
decide(struct hg_registry *reg, int slot, uint32_t ctx, uint64_t now)
{
	struct hg_tenant_sp *t = &reg->t[slot];
	const struct hg_cs_params p = { .r = t->cfg.core.r, .poll_ns = 0 };
	struct hg_cs_view v;
	double revoke;

	if (t->cfg.core.policy == HG_CORE_STATIC)
		return 0;		/* never parks: the request is ignored */
	/* The last worker running stays: asleep on its doorbell and still
	 * steered to, it wakes at the next delivery. Parked, that request
	 * would wait for the delay check here, up to a 1 ms tick while the
	 * fast path idles (a victim alone at 10k req/s had a p99 of 3.5-20
	 * ms, p50 50 us); Shenango's and CoreSync's schedulers check every
	 * few microseconds on a core of their own, this one cannot. */
	if (hg_core_active(reg, slot) <= 1) {
		t->core.kept[ctx] = 1;
		return 0;
	}
	if (t->cfg.core.policy == HG_CORE_SHENANGO) {
		park(reg, slot, ctx);	/* it has blocked already */
		return 0;
	}
	v = view(reg, slot, ctx, now);
	switch (hg_cs_idle(&t->core.w[ctx], &p, &v, &revoke)) {
	case HG_CS_REVOKE:
		t->core.revoked += revoke;
		t->core.revocations++;
		hg_credit_adjust(reg, slot, -revoke);
		return 1;
	case HG_CS_PARK:
		park(reg, slot, ctx);
		return 0;
	default:
		return 1;
	}
}

/* One context at a pass: its worker woke, called parking off, asked
 * anew, or still waits. Returns 1 while a decision waits. */
static int
ctx_tick(struct hg_registry *reg, int slot, uint32_t ctx, uint64_t now)
{
	struct hg_core_state *cs = &reg->t[slot].core;
	uint32_t ask = LOAD(reg->dp->tenant[slot].ctx_shm[ctx].park);

	if (cs->parked[ctx]) {
		if (ask == cs->asked[ctx])
			return 0;
		unpark(reg, slot, ctx, 0);	/* back by itself */
	}
	if (ask == 0) {
		if (cs->asked[ctx] != 0 || cs->w[ctx].parking)
			give_back(reg, slot, ctx);	/* work came first */
		cs->kept[ctx] = 0;
		return 0;
	}
	if (cs->kept[ctx] && ask == cs->asked[ctx])
		return 0;			/* refused: it stays running */
	cs->asked[ctx] = ask;
	cs->kept[ctx] = 0;
	return decide(reg, slot, ctx, now);
}

/* Shenango's and CoreSync's wake-up: the tenant's oldest waiting request
 * is older than core-delay-us: one worker per pass, an allocated one
 * asleep first (nothing to reallocate), else a parked one. */
static void
wake_on_delay(struct hg_registry *reg, int slot, uint64_t now)
{
	const struct hg_tenant_sp *t = &reg->t[slot];
	/* a tenant with credits has its D_m measured on every pass (the
	 * credit tick): no second walk of its rings */
	uint64_t delay = t->cfg.credit.rpc_hi != 0 ? t->dm_tsc
						    : hg_credit_delay(reg, slot, now);
	uint32_t ctx, sleeping = 0, allocated = HG_MAX_CTX, parked = HG_MAX_CTX;

	/* one walk: how many sleep, the first allocated sleeper, the first
	 * parked one */
	for (ctx = 0; ctx < HG_MAX_CTX; ctx++) {
		if (!ctx_live(reg, slot, ctx))
			continue;
		sleeping += t->core.asked[ctx] != 0;
		if (t->core.parked[ctx] && parked == HG_MAX_CTX)
			parked = ctx;
		else if (!t->core.parked[ctx] && t->core.asked[ctx] != 0 &&
			 allocated == HG_MAX_CTX)
			allocated = ctx;
	}
	if (!hg_cs_wake(delay * 1000u / reg->tsc_us, t->cfg.core.delay_us * 1000ull,
			sleeping))
		return;
	if (allocated < HG_MAX_CTX)
		ring(reg, slot, allocated);
	else if (parked < HG_MAX_CTX)
		unpark(reg, slot, parked, 1);
}

/* A tenant made static runs every worker: the parked ones are woken. */
static void
wake_all(struct hg_registry *reg, int slot)
{
	uint32_t ctx;

	for (ctx = 0; ctx < HG_MAX_CTX; ctx++)
		if (ctx_live(reg, slot, ctx) && reg->t[slot].core.parked[ctx])
			unpark(reg, slot, ctx, 1);
		else if (ctx_live(reg, slot, ctx) && reg->t[slot].core.asked[ctx])
			ring(reg, slot, ctx);
}

static int
tenant_tick(struct hg_registry *reg, int slot, uint64_t now)
{
	uint32_t ctx;
	int waiting = 0;

	for (ctx = 0; ctx < HG_MAX_CTX; ctx++)
		if (ctx_live(reg, slot, ctx))
			waiting |= ctx_tick(reg, slot, ctx, now);
	if (reg->t[slot].cfg.core.policy == HG_CORE_STATIC)
		wake_all(reg, slot);
	else if (waiting || reg->t[slot].core.n_parked > 0)
		wake_on_delay(reg, slot, now);
	return waiting;
}

/* Walks the tenants whose bell rang, and those with parked or parking
 * workers while they have traffic (awake): a parked tenant with nothing
 * to do costs nothing per pass. */
int
hg_core_tick(struct hg_registry *reg, uint64_t now)
{
	int i, waiting = 0, w;

	HG_TSET_FOREACH(i, &reg->core_watch) {
		struct hg_tenant_sp *t = &reg->t[i];

		if (!t->used || t->releasing) {
			hg_tset_del(&reg->core_watch, (unsigned)i);
			hg_tset_del(&reg->core_rang, (unsigned)i);
			continue;
		}
		if (!hg_tset_has(&reg->core_rang, (unsigned)i) &&
		    !hg_tset_has(&reg->awake, (unsigned)i))
			continue;
		hg_tset_del(&reg->core_rang, (unsigned)i);
		w = tenant_tick(reg, i, now);
		waiting |= w;
		if (!w && t->core.n_parked == 0)
			hg_tset_del(&reg->core_watch, (unsigned)i);
		else if (w)
			hg_tset_add(&reg->core_rang, (unsigned)i);
	}
	return waiting;
}

void
hg_core_forget(struct hg_registry *reg, int slot, uint32_t ctx)
{
	struct hg_core_state *cs = &reg->t[slot].core;

	if (cs->parked[ctx]) {
		cs->parked[ctx] = 0;
		cs->n_parked--;
	}
	cs->kept[ctx] = 0;
	give_back(reg, slot, ctx);
}

/* ---- The tenant's processes' times on their CPUs ---- */

/* utime + stime of pid from /proc (fields 14 and 15, after the command
 * name's closing parenthesis); 0 if it is gone. */
static uint64_t
proc_cpu_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &ut, &st) != 2 || hz <= 0)
		return 0;
	return (ut + st) * (1000000000ull / (unsigned long long)hz);
}

/* The threads of one app read for its wait: an app decides how many
 * threads it has, and the slow path is everyone's, so a stats request
 * reads a bounded number of files (the first threads are the workers of
 * most apps). */
#define HG_WAIT_TASKS 64

/* How long pid's threads (at most HG_WAIT_TASKS) waited runnable for a
 * CPU, in all; 0 if it is gone. */
static uint64_t
proc_wait_ns(pid_t pid)
{
	char path[64], stat[300];
	struct dirent *e;
	uint64_t sum = 0;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while (n < HG_WAIT_TASKS && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.') {
			snprintf(stat, sizeof(stat), "%s/schedstat", e->d_name);
			sum += hg_run_delay_ns(dirfd(d), stat);
			n++;
		}
	closedir(d);
	return sum;
}

/* Adds app a's time v (its reading now) to the tenant's sum. */
static uint64_t
app_time_add(struct hg_app_time *t, unsigned a, uint64_t v)
{
	if (v > t->app_ns[a])
		t->app_ns[a] = v;
	return t->app_ns[a];
}

/* The tenant's sum now, and its rate over wall time (ns) since the
 * previous sample at least 100 ms before. */
static double
app_time_rate(struct hg_app_time *t, uint64_t sum, uint64_t now)
{
	if (t->seen_at == 0 || now - t->seen_at >= 100000000u) {
		if (t->seen_at != 0 && sum >= t->seen_ns)
			t->rate = (double)(sum - t->seen_ns) / (double)(now - t->seen_at);
		t->seen_ns = sum;
		t->seen_at = now;
	}
	return t->rate;
}

void
hg_core_app_times(struct hg_registry *reg, int slot, struct hg_app_times *out)
{
	struct hg_core_state *cs = &reg->t[slot].core;
	uint64_t now = rte_rdtsc() / reg->tsc_us * 1000u;
	unsigned a;

	out->cpu_ns = cs->cpu.gone_ns;
	out->wait_ns = cs->wait.gone_ns;
	for (a = 0; a < HG_MAX_APPS; a++) {
		const struct hg_app_sp *ap = &reg->t[slot].app[a];

		if (!ap->used || ap->reclaiming)
			continue;
		out->cpu_ns += app_time_add(&cs->cpu, a, proc_cpu_ns(ap->pid));
		out->wait_ns += app_time_add(&cs->wait, a, proc_wait_ns(ap->pid));
	}
	out->cpu_util = app_time_rate(&cs->cpu, out->cpu_ns, now);
	out->wait_util = app_time_rate(&cs->wait, out->wait_ns, now);
}

/* An app's time moves to what the tenant's apps that left had. */
static void
app_time_gone(struct hg_app_time *t, unsigned a, uint64_t v)
{
	t->gone_ns += app_time_add(t, a, v);
	t->app_ns[a] = 0;
}

/* The process may be gone already: then what was last read counts. */
void
hg_core_app_gone(struct hg_registry *reg, int slot, int app)
{
	struct hg_core_state *cs = &reg->t[slot].core;
	pid_t pid = reg->t[slot].app[app].pid;

	app_time_gone(&cs->cpu, (unsigned)app, proc_cpu_ns(pid));
	app_time_gone(&cs->wait, (unsigned)app, proc_wait_ns(pid));
}

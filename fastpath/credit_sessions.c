/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RPC ports in the fast path (design.md §6, §8): sessions and their credit
 * windows, early rejects at RX, grants piggybacked on responses at SCHED,
 * and explicit credit updates for idle sessions when they are needed.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "../proto/hg_rpc.h"
#include "credit_rules.h"
#include "dp.h"
#include "neigh.h"
#include "xmit.h"

struct hg_sessions *
hg_sessions_create(const char *name, uint32_t size, int socket)
{
	struct hg_sessions *ss;
	size_t bytes = sizeof(*ss) + (size_t)size * (sizeof(uint32_t) + sizeof(struct hg_session));

	ss = rte_zmalloc_socket("hg_sessions", bytes, RTE_CACHE_LINE_SIZE, socket);
	if (ss == NULL)
		return NULL;
	ss->size = size;
	ss->s = (struct hg_session *)(ss + 1);
	ss->live = (uint32_t *)(ss->s + size);
	/* the extendable bucket table: a cuckoo hash alone refuses keys
	 * before it is full, and a refusal then would be one tenant's
	 * sessions crowding out another's reserved share */
	ss->h = rte_hash_create(&(struct rte_hash_parameters){
		.name = name, .entries = size, .key_len = sizeof(struct hg_sess_key),
		.socket_id = socket, .extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE });
	if (ss->h == NULL) {
		rte_free(ss);
		return NULL;
	}
	return ss;
}

int
hg_rpc_is_port(const struct hg_tenant_view *v, uint16_t port_net)
{
	uint16_t p = rte_be_to_cpu_16(port_net);

	return v->rpc_hi != 0 && p >= v->rpc_lo && p <= v->rpc_hi;
}

static struct hg_session *
lookup(struct hg_sessions *ss, int t, uint32_t ip, uint16_t port, uint32_t id)
{
	struct hg_sess_key k = { .ip = ip, .id = id, .port = port,
				 .tenant = (uint16_t)t };
	int32_t pos = rte_hash_lookup(ss->h, &k);

	return pos >= 0 ? &ss->s[pos] : NULL;
}

/* issued is this core's to write and the slow path's to read (its pool's
 * cover, credit_pool.c): one writer, stored whole. */
static inline void
issued_add(struct hg_sessions *ss, int t, int64_t d)
{
	__atomic_store_n(&ss->issued[t], ss->issued[t] + d, __ATOMIC_RELAXED);
}

/* A new session starts with one credit: the request that created it. */
static struct hg_session *
create(struct hg_sessions *ss, int t, uint32_t ip, uint16_t port, uint32_t id,
       uint16_t local_port)
{
	struct hg_sess_key k = { .ip = ip, .id = id, .port = port,
				 .tenant = (uint16_t)t };
	int32_t pos = rte_hash_add_key(ss->h, &k);
	struct hg_session *s;

	if (pos < 0)
		return NULL;
	if ((uint32_t)pos >= ss->size) {	/* beyond our table: undo */
		rte_hash_del_key(ss->h, &k);
		return NULL;
	}
	s = &ss->s[pos];
	*s = (struct hg_session){ .ip = ip, .id = id, .port = port,
				  .local_port = local_port, .window = 1,
				  .tenant = (uint16_t)t, .used = 1,
				  .live_idx = ss->n_live };
	ss->live[ss->n_live++] = (uint32_t)pos;
	issued_add(ss, t, 1);
	ss->count[t]++;
	return s;
}

static void
set_window(struct hg_sessions *ss, struct hg_session *s, uint32_t w)
{
	if (s->window == 0 && w > 0)
		ss->drained[s->tenant]--;
	else if (s->window > 0 && w == 0)
		ss->drained[s->tenant]++;
	issued_add(ss, s->tenant, (int64_t)w - s->window);
	s->window = (uint16_t)w;
}

/* Tells the session's client window w, in a message that answers
 * `answered` of its requests: the window, and how far past it requests it
 * sent before hearing may still come (hg_credit_bound). */
static void
tell(struct hg_sessions *ss, struct hg_session *s, uint32_t w, uint32_t answered)
{
	uint32_t bound = hg_credit_bound((uint32_t)s->window + s->grace, w, answered);

	set_window(ss, s, w);
	s->grace = (uint16_t)(bound - w);
}

/* The tenant's pool as this core's share, and whether it is overloaded. */
static int64_t
pool_share(const struct hg_dp *dp, int t)
{
	uint64_t pool = __atomic_load_n(&dp->tenant_live[t].pool, __ATOMIC_RELAXED);
	uint64_t share = pool / dp->n_cores;

	return share ? (int64_t)share : 1;
}

static int
overloaded(const struct hg_dp *dp, int t)
{
	return __atomic_load_n(&dp->tenant_live[t].dm_tsc, __ATOMIC_RELAXED) >
	       hg_view(dp, (unsigned)t)->dt_tsc;
}

/* Is tenant t below its budget-mark here, on a saturated core with
 * protection on? Then an answer hands its session no credit and takes
 * one back, as when the pool is all issued: the slow path's cut of the
 * pool (credit_pool.c) comes one update later, and on a shared queue the
 * tenant's datagrams were shed at RX in between (bench/feedback). The
 * bank is this core's: the answer is.
 *
 * On an RX queue it shares, its bank must also cover every credit its
 * sessions hold here (each may bring a request, at its measured cost):
 * there RX sheds a request the tenant cannot fund, and the session that
 * sent it under a credit waits out a timeout. On a queue of its own RX
 * leaves such a request in the link and nothing is lost. bench/feedback,
 * one shared queue, budget-mark 0: the adversary lost 200-500 requests
 * in 3 s and served 1-17k req/s of its 90k budget's worth. */
static int
budget_out(const struct hg_dp *dp, struct hg_fp_core *c, int t)
{
	const struct hg_tenant_view *v = hg_view(dp, (unsigned)t);
	int64_t left;

	if (v->budget_mark < 0 || !hg_protecting(dp) || !hg_core_saturated(c, c->now))
		return 0;
	left = hg_topup_left(dp, c, (unsigned)t);
	return left * HG_MARK_ONE < (int64_t)v->budget_mark * (int64_t)hg_tenant_cap(dp, (unsigned)t, v) ||
	       left < hg_credit_cover(dp, c, (unsigned)t, v->rxq);
}

/* Would a request of tenant t wait past D_drop (Breakwater's AQM)? */
static int
past_drop(const struct hg_dp *dp, int t)
{
	return __atomic_load_n(&dp->tenant_live[t].dm_tsc, __ATOMIC_RELAXED) >
	       hg_view(dp, (unsigned)t)->ddrop_tsc;
}

/* The session of a request, created only once the request is admissible:
 * a tenant past D_drop or at its session quota on this core turns new
 * sessions away (counted) instead of letting one client fill the table
 * that every tenant's sessions share. */
static struct hg_session *
session_of(struct hg_dp *dp, struct hg_fp_core *c, int t,
	   const struct hg_parsed *p, uint32_t id)
{
	struct hg_sessions *ss = c->sess;
	struct hg_session *s = lookup(ss, t, p->src_ip, p->src_port, id);

	if (s != NULL)
		return s;
	if (past_drop(dp, t)) {
		c->t[t].drops[HG_TDROP_OVERLOAD]++;
		return NULL;
	}
	if (ss->count[t] >= hg_view(dp, (unsigned)t)->sess_quota ||
	    (s = create(ss, t, p->src_ip, p->src_port, id, p->dst_port)) == NULL) {
		c->t[t].drops[HG_TDROP_NO_SESSION]++;
		return NULL;
	}
	return s;
}

enum hg_rpc_verdict
hg_rpc_admit(struct hg_dp *dp, struct hg_fp_core *c, int t, uint8_t *f,
	     struct hg_parsed *p, uint32_t *reply_len, struct hg_session **sp)
{
	struct hg_fp_tenant *ft = &c->t[t];
	struct hg_sessions *ss = c->sess;
	struct hg_rpc_hdr h;
	struct hg_session *s;

	*sp = NULL;
	if (p->payload_len < HG_RPC_HDR_LEN) {
		ft->drops[HG_TDROP_BAD_RPC]++;
		return HG_RPC_DROP;
	}
	memcpy(&h, f + p->payload_off, sizeof(h));
	if (h.magic != RTE_BE16(HG_RPC_MAGIC) || h.version != HG_RPC_VERSION ||
	    !(h.flags & HG_RPC_REQUEST)) {
		ft->drops[HG_TDROP_BAD_RPC]++;
		return HG_RPC_DROP;
	}
	s = session_of(dp, c, t, p, rte_be_to_cpu_32(h.session));
	if (s != NULL) {
		s->last_tsc = rte_rdtsc();
		s->demand = rte_be_to_cpu_16(h.credits);
		if (past_drop(dp, t)) {
			/* AQM: it would wait past D_drop; the client hears
			 * credits 0 at once instead */
			ft->drops[HG_TDROP_OVERLOAD]++;
			tell(ss, s, 0, 1);
		} else if (s->outstanding >= (uint32_t)s->window + s->grace) {
			/* the reject says credits 0, so the session holds 0
			 * here too: a window the client no longer believes in
			 * would stay counted as issued and never be used */
			ft->drops[HG_TDROP_NO_CREDIT]++;
			tell(ss, s, 0, 1);
		} else {
			s->outstanding++;
			*sp = s;
			return HG_RPC_ADMIT;
		}
	}
	*reply_len = hg_build_rpc_reject(f, p, &dp->mac, dp->ip, c->ip_id++);
	return HG_RPC_REPLY;
}

void
hg_rpc_cancel(struct hg_session *s)
{
	if (s->outstanding > 0)
		s->outstanding--;
}

void
hg_rpc_response(struct hg_dp *dp, struct hg_fp_core *c, int t, uint8_t *payload,
		uint16_t len, uint32_t peer_ip, uint16_t peer_port)
{
	struct hg_rpc_hdr *h = (struct hg_rpc_hdr *)payload;
	struct hg_sessions *ss = c->sess;
	struct hg_session *s;
	uint32_t w = 1;

	if (len < HG_RPC_HDR_LEN || h->magic != RTE_BE16(HG_RPC_MAGIC))
		return;		/* not an RPC reply: sent as the app wrote it */
	s = lookup(ss, t, peer_ip, peer_port, rte_be_to_cpu_32(h->session));
	if (s != NULL) {
		int out = budget_out(dp, c, t);

		if (s->outstanding > 0)
			s->outstanding--;
		s->last_tsc = rte_rdtsc();
		w = hg_credit_grant(s->window, s->demand, out ? 0 : pool_share(dp, t),
				    ss->issued[t], ss->count[t],
				    overloaded(dp, t) || ss->drained[t] > 0);
		c->t[t].budget_answers += (uint64_t)out;
		tell(ss, s, w, 1);
	}
	h->flags = HG_RPC_RESPONSE;
	h->credits = rte_cpu_to_be_16((uint16_t)w);
	c->t[t].credits_granted += w;
}

/* An explicit credit update to an idle session: its window is now
 * credits. Staged for the pass's one send (xmit.h) like every frame the
 * core sends, and billed at SCHED. */
static int
send_update(struct hg_dp *dp, struct hg_fp_core *c, const struct hg_session *s,
	    uint16_t credits)
{
	struct hg_udp_flow fl = { .src_ip = dp->ip, .dst_ip = s->ip,
				  .src_port = s->local_port, .dst_port = s->port };
	struct rte_mbuf *m;

	if (hg_neigh_lookup(dp, s->ip, &fl.dst_mac) < 0 ||
	    (m = rte_pktmbuf_alloc(c->pool)) == NULL)
		return -1;
	rte_ether_addr_copy(&dp->mac, &fl.src_mac);
	fl.ip_id = c->ip_id++;
	m->data_len = m->pkt_len = hg_build_rpc_credit(rte_pktmbuf_mtod(m, uint8_t *),
						       &fl, s->id, credits);
	hg_fp_xmit(dp, c, &m, 1, s->tenant, HG_PT_SCHED, 0);
	c->t[s->tenant].credit_updates++;
	c->t[s->tenant].credits_granted += credits;
	return 0;
}

static void
expire(struct hg_sessions *ss, uint32_t pos)
{
	struct hg_session *s = &ss->s[pos];
	struct hg_sess_key k = { .ip = s->ip, .id = s->id, .port = s->port,
				 .tenant = s->tenant };
	uint32_t last = ss->live[--ss->n_live];

	set_window(ss, s, 0);
	ss->drained[s->tenant]--;
	ss->count[s->tenant]--;
	s->used = 0;
	rte_hash_del_key(ss->h, &k);
	ss->live[s->live_idx] = last;
	ss->s[last].live_idx = s->live_idx;
}

enum { SCAN_NONE, SCAN_SENT, SCAN_GRANTED };

/* One session's turn in the scan; says whether it sent a message and
 * whether that handed a drained session a credit back. */
static int
scan_one(struct hg_dp *dp, struct hg_fp_core *c, uint32_t pos, uint64_t now,
	 uint64_t idle)
{
	struct hg_sessions *ss = c->sess;
	struct hg_session *s = &ss->s[pos];
	int t = s->tenant, sent = 0;
	const struct hg_tenant_view *v = hg_view(dp, (unsigned)t);
	int64_t share;

	if (v->state == HG_TENANT_ACTIVE && ss->count[t] > v->sess_quota) {
		/* a share lowered live (max-sessions): the slow path promised
		 * the rest to another tenant, so the sessions past it go, busy
		 * or not, and their clients start over like new ones; before,
		 * a client that sent once a second kept its slot for ever */
		sent = send_update(dp, c, s, 1) == 0;
		expire(ss, pos);
		c->t[t].sessions_trimmed++;
		return sent ? SCAN_SENT : SCAN_NONE;
	}
	if (s->outstanding > 0) {
		if (now - s->last_tsc <= idle * HG_SESSION_STUCK)
			return SCAN_NONE;
		/* the app will not answer: the client, whose window is full of
		 * requests that went nowhere, is told to start over */
		sent = send_update(dp, c, s, 1) == 0;
		expire(ss, pos);
		return sent ? SCAN_SENT : SCAN_NONE;
	}
	if (v->state != HG_TENANT_ACTIVE) {
		expire(ss, pos);
		return SCAN_NONE;
	}
	if (now - s->last_tsc > idle) {
		/* a drained session may be waiting for us rather than idle (a
		 * client at zero cannot even say it has demand): it is told it
		 * starts over with the one credit of a new session, or it
		 * could wait forever */
		if (s->window == 0)
			sent = send_update(dp, c, s, 1) == 0;
		expire(ss, pos);
		return sent ? SCAN_SENT : SCAN_NONE;
	}
	share = pool_share(dp, t);
	if (s->window > 0 && ss->issued[t] > share) {
		tell(ss, s, s->window - 1u, 0);
		return send_update(dp, c, s, s->window) == 0 ? SCAN_SENT : SCAN_NONE;
	}
	/* past D_drop, RX turns every request away as overload whatever
	 * the window: a credit now would only bring the next reject, at
	 * once, as fast as the client can answer (a KV client's twenty
	 * retries were spent in a millisecond while the slow path that
	 * measures D_m waited for a CPU). Its queue is still past D_drop,
	 * so waiting for the measure to fall cannot let it run dry. */
	if (s->window == 0 && ss->issued[t] < share && !past_drop(dp, t)) {
		tell(ss, s, 1, 0);
		send_update(dp, c, s, s->window);
		return SCAN_GRANTED;
	}
	return SCAN_NONE;
}

/* Looks at a few sessions per control step: expires idle ones, revokes
 * credits held by idle sessions while more is issued than the pool holds,
 * and gives a drained session one credit back while the pool has room (at
 * zero it cannot even say it has demand) and the tenant is not past
 * D_drop. Otherwise the pool decides: it has already shrunk for the
 * delay, and waiting for D_m to fall below D_t as well would let the
 * queue run dry before any credit went out again.
 * Explicit messages go only where a response cannot carry the news.
 * Returns the messages sent. */
unsigned
hg_rpc_scan(struct hg_dp *dp, struct hg_fp_core *c)
{
	struct hg_sessions *ss = c->sess;
	uint64_t now, idle;
	uint32_t n = RTE_MIN(HG_SCAN_PER_PASS, ss->n_live), start = ss->scan, i;
	unsigned sent = 0;
	int r;

	/* every pass calls this: with no session, not even the clock (perf
	 * on a core polling a memif port found 10% of its time here) */
	if (n == 0)
		return 0;
	HG_ASSERT_CORE(c);	/* the session table is the core's own */
	now = rte_rdtsc();
	idle = rte_get_tsc_hz() * HG_SESSION_IDLE;
	ss->scan = start + n;
	for (i = 0; i < n && ss->n_live > 0; i++) {
		uint32_t idx = (start + i) % ss->n_live;

		r = scan_one(dp, c, ss->live[idx], now, idle);
		sent += r != SCAN_NONE;
		/* round robin over the sessions handed a credit back: the next
		 * step starts after the last of them, not where this one
		 * started, or the first few drained sessions would always win */
		if (r == SCAN_GRANTED)
			ss->scan = idx + 1;
	}
	return sent;
}

/* On RELEASE: every session of the tenant goes, so that a tenant later
 * added in the same slot starts with none. Bounded by the table size and
 * done once per deleted tenant. */
void
hg_rpc_forget_tenant(struct hg_fp_core *c, int t)
{
	struct hg_sessions *ss = c->sess;
	uint32_t k;

	/* backwards: expire() moves the last entry into the freed place,
	 * and that one has been looked at already */
	for (k = ss->n_live; k-- > 0;)
		if (ss->s[ss->live[k]].tenant == t)
			expire(ss, ss->live[k]);
	__atomic_store_n(&ss->issued[t], 0, __ATOMIC_RELAXED);
	ss->count[t] = ss->drained[t] = 0;
}

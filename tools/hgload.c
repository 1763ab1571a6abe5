/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload: open-loop Poisson load over plain Linux UDP sockets.
 *
 * A sender thread emits requests at exponentially distributed intervals,
 * whether or not replies come back; a receiver thread matches replies by
 * the sequence number in the synthetic-work header (proto/hg_wire.h), or
 * the RPC header's request id, and records latency against the send time
 * kept on this side. The kv workload sends hg-kv's requests (proto/hg_kv.h). Many flows are
 * many sockets, each with its own source port.
 *
 * --blast makes a load a flood instead: the same datagram from each flow,
 * sent in bursts as fast as the link takes them, counted but not timed,
 * from a sender at SCHED_IDLE (bench/isolation's saturating neighbour:
 * it takes only a CPU that nothing else wants). Over memif its frames are
 * prebuilt; over sockets it uses sendmmsg and recvmmsg, or, with --replay,
 * has the kernel put a prebuilt frame on the link at --rate frames a
 * second (hgload_xdp.h), as a NIC's DMA would: a flood that costs its
 * sender's CPU the link's work only.
 *
 * One hgload can run several loads at once ("--and" between their
 * options), each with its own sender thread and report, one receiver
 * thread for all: over memif (--memif) they share hgload's one port, as
 * a victim's and an adversary's clients share a NIC (bench/isolation).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "hg_kv.h"
#include "hg_rpc.h"
#include "hg_wire.h"
#include "hgload_memif.h"
#include "hgload_xdp.h"
#include "rx_map.h"
#include "../common/hg_util.h"
#include "../proto/hg_xdp_bounce.h"
#include "../proto/hg_xdp_replay.h"

#define MAX_FLOWS    1024
#define MAX_LOADS    4
_Static_assert(MAX_LOADS <= HGR_LOADS, "an entry of the link replay's map per load");
_Static_assert(MAX_LOADS <= HGB_LOADS, "an entry of the link bounce's map per load");
#define MAX_REQUESTS 20000000ull
#define MAX_TYPES    HG_WORK_MAX_TYPES

enum { R_UNSENT, R_SENT, R_DONE, R_REJECTED, R_QUEUED, R_SHED };

#define FLOW_QUEUE 4096u	/* requests a session holds back without credit */

struct req {
	uint64_t gen_ns;	/* arrival (Poisson) time */
	uint64_t tx_ns;		/* when it went out */
	uint32_t lat_ns;	/* reply - tx */
	uint32_t e2e_ns;	/* reply - arrival */
	uint32_t svc_ns;	/* service time asked for (exp: drawn) */
	uint8_t type;
	_Atomic uint8_t state;
};

/* A session's credit state. The receiver updates window and outstanding;
 * the queue is filled by the sender and drained by whichever thread finds
 * credit for it (the sender on an arrival, the receiver on a grant), under
 * the lock: so neither has to poll for credit. */
struct flow {
	_Atomic int window;
	_Atomic int outstanding;
	pthread_mutex_t lock;
	uint64_t answered;	/* responses this session got (receiver only) */
	uint32_t qh, qt;
	uint64_t q[FLOW_QUEUE];
};

struct rtype {
	char name[24];
	uint32_t service_ns;	/* 0: unknown (no slowdown) */
	double pct;
	int op;			/* kv: enum hg_kv_op, the RPC type */
	int exp;		/* service times exponential, service_ns the mean */
};

struct load {
	struct sockaddr_in target;
	char target_str[64];
	double rate, duration;
	unsigned flows, size;
	long timeout_ms;
	unsigned long seed;
	uint32_t sess_base;	/* this run's session ids: sess_base ^ flow */
	int json;
	int rpc, credits;	/* RPC header; obey credits */
	int kv;			/* hg-kv requests (proto/hg_kv.h) */
	uint64_t kv_keys;	/* keys 0..kv_keys-1, as hg-kv loads them */
	unsigned scan_count;
	_Atomic uint64_t kv_errors;	/* answers whose status is not OK */
	double slo_us;
	struct flow *fl;
	_Atomic uint64_t rejected, credit_msgs;
	uint64_t shed;		/* dropped at the client: session queue full */
	char workload[256];
	struct rtype type[MAX_TYPES];
	unsigned n_types;
	int fd[MAX_FLOWS];
	struct req *req;
	uint64_t n_req;
	_Atomic uint64_t sent;
	_Atomic int sending;
	_Atomic uint64_t send_errors;
	uint64_t invalid;
	uint64_t t_start, t_end;
	uint64_t behind;	/* arrivals due before the end, never sent */
	char memif[108];	/* --memif: the daemon's memif socket, or none */
	const char *rx_map;	/* --rx-map: its rings (rx_map.h), or NULL */
	const char *peer_mac;	/* --peer-mac: no ARP (testpmd), or NULL */
	unsigned ring_log2;	/* --memif-ring: slots per ring, log2; 0: 10 */
	uint32_t src_ip;	/* --source: our address on the memif link */
	unsigned flow0;		/* memif: our flows' first in the port's */
	int rt;			/* --rt: the sender runs SCHED_FIFO */
	int blast;		/* --blast: a flood, counted, not timed */
	int replay;		/* --replay: ... put on the link by XDP */
	int bounce;		/* --bounce: ... its answers turned by the link */
	uint64_t turned;	/* ... answers the link turned (its count) */
	unsigned index;		/* its place among the loads (--and) */
	_Atomic uint64_t blast_got;	/* ... answers it had */
	uint64_t blast_refused;	/* ... bursts the link did not take whole;
				 * --replay: times it fell behind its pace */
	double blast_cpu;	/* ... its sender's CPU time over wall time */
	uint64_t sender_wait_ns;	/* its sender thread's wait for a CPU */
	uint64_t receiver_wait_ns;	/* the process's receiver's (every load's) */
	pthread_t tid;
};

#define die(...) hg_die(2, "hgload", "", __VA_ARGS__)

/* CLOCK_MONOTONIC, over sockets and memif alike (a vDSO read: no system
 * call). */
static uint64_t (*clock_ns)(void) = hg_now_ns;

static inline uint64_t
now_ns(void)
{
	return clock_ns();
}

/* How long the calling thread has waited, runnable, for a CPU (ns). A
 * client that shares its CPU with a flood's sender waits there, whatever
 * server it talks to: the report says how long. */
static uint64_t
thread_wait_ns(void)
{
	return hg_run_delay_ns(AT_FDCWD, "/proc/thread-self/schedstat");
}

/* ---- workload ---- */

static void
add_type(struct load *l, const char *name, uint32_t ns, double pct)
{
	struct rtype *t;

	if (l->n_types == MAX_TYPES)
		die("at most %u request types", MAX_TYPES);
	t = &l->type[l->n_types++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->service_ns = ns;
	t->pct = pct;
}

static uint32_t
parse_ns(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || *end || errno || v > 1000000000ul)
		die("service time '%s' must be 0..1000000000 ns", s);
	return (uint32_t)v;
}

/* kv:get=99.5,scan=0.5: hg-kv operations (proto/hg_kv.h) and their
 * shares; OP=PCT@NS gives the operation's service time for slowdowns
 * (bench/kv measures it unloaded). The type's index is not the RPC type:
 * op is. */
static void
parse_kv(struct load *l, const char *spec)
{
	static const char *const ops[HG_KV_OPS] = { "get", "put", "delete", "scan" };
	char buf[256], *save = NULL, *item;
	int op;

	l->kv = l->rpc = 1;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char name[16], pct[16], ns[16] = "0", extra;

		if (sscanf(item, "%15[^=]=%15[^@]@%15[^@]%c", name, pct, ns, &extra) < 2)
			die("kv entry '%s' is not OP=PCT[@NS]", item);
		for (op = 0; op < HG_KV_OPS && strcmp(ops[op], name) != 0; op++)
			;
		if (op == HG_KV_OPS)
			die("kv operation '%s' is not get|put|delete|scan", name);
		add_type(l, name, parse_ns(ns), atof(pct));
		l->type[l->n_types - 1].op = op;
	}
}

/* Synergy Table II workloads, fixed:NS, exp:NS or mix:NAME:NS:PCT,... */
static void
parse_workload(struct load *l, const char *spec)
{
	double total = 0;
	unsigned i;

	snprintf(l->workload, sizeof(l->workload), "%s", spec);
	if (strcmp(spec, "high") == 0) {
		add_type(l, "short", 1000, 50);
		add_type(l, "long", 100000, 50);
	} else if (strcmp(spec, "extreme") == 0) {
		add_type(l, "short", 500, 99.5);
		add_type(l, "long", 500000, 0.5);
	} else if (strcmp(spec, "zippydb") == 0) {
		add_type(l, "short1", 500, 78);
		add_type(l, "short2", 2500, 19);
		add_type(l, "long", 500000, 3);
	} else if (strncmp(spec, "fixed:", 6) == 0) {
		add_type(l, "fixed", parse_ns(spec + 6), 100);
	} else if (strncmp(spec, "exp:", 4) == 0) {
		/* CoreSync's synthetic workload: exponential, mean NS */
		add_type(l, "exp", parse_ns(spec + 4), 100);
		l->type[0].exp = 1;
	} else if (strncmp(spec, "kv:", 3) == 0) {
		parse_kv(l, spec + 3);
	} else if (strncmp(spec, "mix:", 4) == 0) {
		char buf[256], *save = NULL, *item;

		snprintf(buf, sizeof(buf), "%s", spec + 4);
		for (item = strtok_r(buf, ",", &save); item;
		     item = strtok_r(NULL, ",", &save)) {
			char name[24], ns[16], pct[16], extra;

			if (sscanf(item, "%23[^:]:%15[^:]:%15[^:]%c", name, ns, pct,
				   &extra) != 3)
				die("mix entry '%s' is not NAME:NS:PCT", item);
			add_type(l, name, parse_ns(ns), atof(pct));
		}
	} else {
		die("unknown workload '%s' (fixed:NS|exp:NS|high|extreme|zippydb|"
		    "mix:NAME:NS:PCT,...|kv:OP=PCT[@NS],...)", spec);
	}
	for (i = 0; i < l->n_types; i++) {
		if (!(l->type[i].pct > 0))
			die("workload '%s': percentages must be > 0", spec);
		total += l->type[i].pct;
	}
	if (fabs(total - 100.0) > 0.01)
		die("workload '%s': percentages add up to %g, not 100", spec, total);
}

static unsigned
pick_type(const struct load *l, double u)
{
	double acc = 0;
	unsigned i;

	for (i = 0; i + 1 < l->n_types; i++) {
		acc += l->type[i].pct / 100.0;
		if (u < acc)
			return i;
	}
	return l->n_types - 1;
}

/* ---- sockets ---- */

static void
open_flows(struct load *l)
{
	unsigned i;
	int buf = 1 << 20;

	for (i = 0; i < l->flows; i++) {
		l->fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (l->fd[i] < 0)
			die("socket: %s", strerror(errno));
		setsockopt(l->fd[i], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
		/* connect: the kernel picks a distinct source port per flow and
		 * drops datagrams from anyone but the target */
		if (connect(l->fd[i], (struct sockaddr *)&l->target,
			    sizeof(l->target)) < 0)
			die("connect %s: %s", l->target_str, strerror(errno));
	}
}

/* Kernel sockets, or hgload's own memif port to the daemon (--memif):
 * the frames then come from --source (default 198.18.0.2), flow f of
 * load k from port HGL_MEMIF_PORT0 + flow0 + f: the loads' flows one
 * after the other. Every load names the same daemon (one port, one peer). */
static void
open_transport(struct load *ls, unsigned n)
{
	struct hgl_memif_cfg c = { .socket = ls[0].memif,
				   .dst_ip = ls[0].target.sin_addr.s_addr };
	char err[256];
	unsigned k;

	for (k = 0; k < n && !ls[0].memif[0]; k++)
		open_flows(&ls[k]);
	for (k = 0; k < n; k++)
		if (ls[k].bounce) {
			static const uint8_t zeros[HG_MAX_PAYLOAD];
			struct hgl_bounce b = { .fd = ls[k].fd[0], .target = &ls[k].target,
						.payload = zeros, .len = ls[k].size };

			if (hgl_bounce_open(&b, err, sizeof(err)) < 0)
				die("%s", err);
			break;
		}
	for (k = 0; k < n; k++)
		if (ls[k].replay) {
			if (hgl_xdp_open(err, sizeof(err)) < 0)
				die("%s", err);
			break;
		}
	if (!ls[0].memif[0])
		return;
	for (k = 0; k < n; k++) {
		if (ls[k].target.sin_addr.s_addr != c.dst_ip)
			die("over memif every load's --target has the same address");
		ls[k].flow0 = c.flows;
		c.flows += ls[k].flows;
		if (ls[k].blast && c.n_blast < 4) {
			c.blast[c.n_blast].flow0 = ls[k].flow0;
			c.blast[c.n_blast++].dport = ls[k].target.sin_port;
		} else if (!ls[k].blast && c.n_timed < 4) {
			c.timed[c.n_timed].flow0 = ls[k].flow0;
			c.timed[c.n_timed].flows = ls[k].flows;
			c.timed[c.n_timed++].dport = ls[k].target.sin_port;
		}
	}
	c.src_ip = ls[0].src_ip ? ls[0].src_ip : htonl(0xC6120002u);	/* 198.18.0.2 */
	/* a SCHED_FIFO receiver (--rt) that polled an empty ring would keep
	 * CPU 0 from everything else on it: it naps at once instead, and
	 * never long (its replies are timed); a normal one polls 20 us and
	 * naps up to 1 ms when quiet */
	c.rx_spin_ns = 20000u;
	c.rx_nap_max_ns = 1000000u;
	for (k = 0; k < n; k++) {
		if (ls[k].rt)
			c.rx_spin_ns = 0, c.rx_nap_max_ns = 10000u, c.rx_yield = 1;
	}
	c.peer_mac = ls[0].peer_mac;
	c.ring_log2 = ls[0].ring_log2;
	if (ls[0].rx_map != NULL) {
		static struct hg_rx_map map;	/* 64 KB: not on the stack */

		if (hg_rx_map_load(&map, ls[0].rx_map, err, sizeof(err)) < 0)
			die("--rx-map: %s", err);
		c.map = &map;
	}
	if (hgl_memif_open(&c, err, sizeof(err)) < 0)
		die("%s", err);
	clock_ns = hgl_memif_now_ns;
}

/* Sends one datagram of flow f; 0, or -1 if it did not leave. Over memif
 * it joins the thread's batch, and what a full batch could not send is
 * counted apart (those requests count as lost). */
static int
transmit(struct load *l, unsigned f, const uint8_t *payload, size_t len)
{
	int r;

	if (!l->memif[0])
		return (int)send(l->fd[f], payload, len, 0) < 0 ? -1 : 0;
	r = hgl_memif_send(l->flow0 + f, l->target.sin_port, payload, len);
	if (r > 0)
		atomic_fetch_add(&l->send_errors, (uint64_t)r);
	return r < 0 ? -1 : 0;
}

/* ---- sender ---- */

static uint32_t
session_id(const struct load *l, unsigned f)
{
	return l->sess_base ^ f;
}

/* The key a kv request names: spread over the keys by the sequence
 * number (any thread may send a request: no shared generator). */
static uint64_t
kv_key(const struct load *l, uint64_t seq)
{
	uint64_t z = seq + l->seed * 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (z ^ (z >> 31)) % (l->kv_keys ? l->kv_keys : 1);
}

/* An hg-kv request body for op after the RPC header; returns its size.
 * Keys are hg-kv's (20 digits); a PUT writes the value hg-kv loads. */
static size_t
kv_body(const struct load *l, uint64_t seq, int op, uint8_t *p)
{
	char key[21];
	struct hg_kv_req h = { htons(20), 0, 0, 0 };
	size_t len = sizeof(h) + 20, i;

	snprintf(key, sizeof(key), "%020llu", (unsigned long long)kv_key(l, seq));
	if (op == HG_KV_PUT)
		h.val_len = htons(40);
	if (op == HG_KV_SCAN)
		h.count = htons((uint16_t)l->scan_count);
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), key, 20);
	for (i = 0; op == HG_KV_PUT && i < 40; i++)
		p[len++] = (uint8_t)key[i % 20];
	return len;
}

static void
send_req(struct load *l, uint64_t seq, unsigned f, uint8_t *payload)
{
	struct req *r = &l->req[seq];
	struct hg_work_hdr *h = (void *)(payload + (l->rpc ? HG_RPC_HDR_LEN : 0));
	struct flow *fl = &l->fl[f];

	size_t len = l->size;

	r->tx_ns = now_ns();
	if (l->kv)
		len = HG_RPC_HDR_LEN + kv_body(l, seq, l->type[r->type].op,
					       payload + HG_RPC_HDR_LEN);
	else
		*h = (struct hg_work_hdr){
			.magic = htonl(HG_WORK_MAGIC), .version = HG_WORK_VERSION,
			.type = r->type, .service_ns = htonl(r->svc_ns),
			.seq = htobe64(seq), .tx_ns = htobe64(r->tx_ns),
		};
	if (l->rpc) {
		uint32_t queued = fl->qt - fl->qh;

		*(struct hg_rpc_hdr *)payload = (struct hg_rpc_hdr){
			.magic = htons(HG_RPC_MAGIC), .version = HG_RPC_VERSION,
			.flags = HG_RPC_REQUEST,
			.type = l->kv ? (uint8_t)l->type[r->type].op : r->type,
			.credits = htons((uint16_t)(queued > 65535 ? 65535 : queued)),
			.session = htonl(session_id(l, f)), .req_id = htobe64(seq),
			.ts = htobe64(r->tx_ns),
		};
	}
	/* published before sending: the reply may beat send()'s return */
	atomic_store_explicit(&r->state, R_SENT, memory_order_release);
	atomic_fetch_add(&fl->outstanding, 1);
	if (transmit(l, f, payload, len) < 0) {
		uint8_t expect = R_SENT;

		if (atomic_compare_exchange_strong(&r->state, &expect, R_UNSENT)) {
			atomic_fetch_sub(&fl->outstanding, 1);
			l->send_errors++;
		}
	}
}

/* Sends what a session's window allows from its queue (flow lock held). */
static void
drain(struct load *l, unsigned f, uint8_t *payload)
{
	struct flow *fl = &l->fl[f];

	while (fl->qh != fl->qt &&
	       atomic_load(&fl->outstanding) < atomic_load(&fl->window)) {
		uint64_t seq = fl->q[fl->qh++ % FLOW_QUEUE];

		send_req(l, seq, f, payload);
	}
}

/* After a session's replies: what its new window lets out of its queue. */
static void
drain_locked(struct load *l, unsigned f, uint8_t *payload)
{
	struct flow *fl = &l->fl[f];

	pthread_mutex_lock(&fl->lock);
	drain(l, f, payload);
	pthread_mutex_unlock(&fl->lock);
}

/* Waits until t by sleeping (1 µs timer slack), never by spinning: the
 * client shares its CPU with what it measures, and a spinning client
 * takes that CPU in bursts. An arrival is late by the wake-up latency,
 * which the latency measured from the send does not include. */
static void
wait_until(uint64_t t)
{
	uint64_t now = now_ns();

	while (now + 2000 < t) {
		uint64_t nap = t - now;
		struct timespec ts = { (time_t)(nap / 1000000000u),
				       (long)(nap % 1000000000u) };

		nanosleep(&ts, NULL);
		now = now_ns();
	}
}

static void
arrive(struct load *l, uint64_t seq, uint8_t *payload)
{
	unsigned f = (unsigned)(seq % l->flows);
	struct flow *fl = &l->fl[f];
	struct req *r = &l->req[seq];

	r->gen_ns = now_ns();
	if (!l->credits) {
		send_req(l, seq, f, payload);
		return;
	}
	pthread_mutex_lock(&fl->lock);
	if (fl->qt - fl->qh == FLOW_QUEUE) {
		atomic_store(&r->state, R_SHED);
		l->shed++;
	} else {
		atomic_store(&r->state, R_QUEUED);
		fl->q[fl->qt++ % FLOW_QUEUE] = seq;
		drain(l, f, payload);
	}
	pthread_mutex_unlock(&fl->lock);
}

/* A request's service time: its type's, or drawn around it (exp:NS). */
static uint32_t
service_of(const struct rtype *t, unsigned short *xs)
{
	double v;

	if (!t->exp)
		return t->service_ns;
	v = -log(1.0 - erand48(xs)) * t->service_ns;
	return v < 1e9 ? (uint32_t)v : 1000000000u;
}

/* Over memif, what the thread batched goes out before it sleeps: a
 * request waits in the batch only while the others due with it are made. */
static void
flush(struct load *l)
{
	if (l->memif[0])
		atomic_fetch_add(&l->send_errors, hgl_memif_flush());
}

/* --rt: SCHED_FIFO for the calling thread (the victim's client in
 * bench/isolation), so that CPU 0's other threads do not delay it. */
static void
realtime(void)
{
	struct sched_param sp = { .sched_priority = 50 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		die("--rt: cannot run SCHED_FIFO (not root?)");
}

/* --blast: the sender takes only what nobody else on its CPU wants */
static void
idle_priority(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
		die("--blast: cannot run SCHED_IDLE");
}

/* A replay (--blast over memif) costs its CPU a refill and a nap every
 * few tens of microseconds, nothing per frame: it runs SCHED_FIFO, above
 * --rt's, so that nothing on its CPU starves the flood it is measured
 * under, as nothing holds up a NIC's DMA; 5-15% of that CPU. Below --rt's,
 * the receiver (SCHED_FIFO with --rt, busy with the flood's answers)
 * held it off long enough that the ring ran dry in some rounds: the
 * daemon took half the frames, and the victim's p99 sat at ~2 ms in both
 * modes (bench/isolation, shared queue, 64 B). Without the right to, it
 * runs as it was started. */
static void
replay_priority(void)
{
	struct sched_param sp = { .sched_priority = 60 };

	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

#define BLAST_BURST 32u

/* One sendmmsg of BLAST_BURST datagrams on flow f's socket; returns how
 * many the kernel took. */
static unsigned
blast_socket(struct load *l, unsigned f, struct mmsghdr *mm)
{
	int n = sendmmsg(l->fd[f], mm, BLAST_BURST, 0);

	if (n < (int)BLAST_BURST)
		l->blast_refused++;
	return n > 0 ? (unsigned)n : 0;
}

/* --replay: readies the load's replay on the link. Its thread runs at
 * nice 0: the kernel's work for its frames is a share of its CPU (~20% at
 * 0.5 M frames of 1,400 B a second into an AF_XDP socket on a veth); at
 * SCHED_IDLE the apps beside it would starve the flood, at SCHED_FIFO it
 * would hold them off for a run at a time. */
static void
link_replay_prepare(struct load *l, struct hgl_xdp_replay *r, const uint8_t *payload,
		    uint64_t *sent)
{
	char err[256];

	*r = (struct hgl_xdp_replay){ .k = l->index, .fd = l->fd, .flows = l->flows,
				      .target = &l->target, .payload = payload,
				      .len = l->size, .rate = l->rate };
	if (hgl_xdp_prepare(r, sent, err, sizeof(err)) < 0)
		die("%s", err);
}

/* --bounce: the link's program (hgload_xdp.h, attached before the loads
 * started) turns the target's answers around from now on. Its thread
 * runs as started: it only tops up. */
static void
bounce_prepare(struct load *l)
{
	struct hgl_bounce b = { .k = l->index, .target = &l->target };
	char err[256];

	if (hgl_bounce_start(&b, err, sizeof(err)) < 0)
		die("%s", err);
}

/* ... and tops up at the load's rate until end: each millisecond what
 * is due, in bursts over the flows in turn (at most 10 ms' worth after a
 * late wake-up: the link does not keep what a sender owed); then the
 * turning stops and its count is the load's. */
static void
bounce_top_up(struct load *l, struct mmsghdr *mm, uint64_t end, uint64_t *sent)
{
	double owed = 0, cap = l->rate / 100 > BLAST_BURST ? l->rate / 100 : BLAST_BURST;
	uint64_t t, last = now_ns();
	unsigned f = 0, k;
	char err[256];
	int n;

	while ((t = now_ns()) < end) {
		owed += (double)(t - last) * l->rate / 1e9;
		owed = owed > cap ? cap : owed;
		last = t;
		for (; owed >= 1; owed -= k, f = (f + 1) % l->flows) {
			k = owed >= BLAST_BURST ? BLAST_BURST : (unsigned)owed;
			n = sendmmsg(l->fd[f], mm, k, 0);
			*sent += n > 0 ? (unsigned)n : 0;
			l->blast_refused += n < (int)k;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	if (hgl_bounce_stop(l->index, &l->turned, err, sizeof(err)) < 0)
		die("%s", err);
}

/* The flood: until the duration is over, bursts from the flows in turn.
 * l->sent counts what left; nothing is timed, so no request is kept. */
static void
blast(struct load *l, uint8_t *payload)
{
	struct hg_work_hdr h = { .magic = htonl(HG_WORK_MAGIC) };
	struct mmsghdr mm[BLAST_BURST];
	struct iovec iov = { payload, l->size };
	struct hgl_xdp_replay r;
	char err[256];
	uint64_t end, sent = 0;
	unsigned i, f = 0;

	struct timespec cpu0, cpu1;

	memcpy(payload, &h, sizeof(h));
	if (l->memif[0])
		replay_priority();
	else if (!l->replay && !l->bounce)
		idle_priority();
	if (l->replay)
		link_replay_prepare(l, &r, payload, &sent);
	if (l->bounce)
		bounce_prepare(l);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	l->t_start = now_ns();
	end = l->t_start + (uint64_t)(l->duration * 1e9);
	if (l->replay) {
		if (hgl_xdp_run(&r, end, &sent, &l->blast_refused, err, sizeof(err)) < 0)
			die("%s", err);
	} else if (l->memif[0]) {
		struct hgl_blast b = { .flow0 = l->flow0, .flows = l->flows,
				       .dport = l->target.sin_port, .payload = payload,
				       .len = l->size, .end_ns = end,
				       .answers = &l->blast_got };

		sent = hgl_memif_blast(&b, &l->blast_refused);
	} else if (l->bounce) {
		memset(mm, 0, sizeof(mm));
		for (i = 0; i < BLAST_BURST; i++)
			mm[i].msg_hdr = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1 };
		bounce_top_up(l, mm, end, &sent);
	} else {
		memset(mm, 0, sizeof(mm));
		for (i = 0; i < BLAST_BURST; i++)
			mm[i].msg_hdr = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1 };
		for (i = 0; now_ns() < end; i++, f = (f + 1) % l->flows)
			sent += blast_socket(l, f, mm);
	}
	atomic_store(&l->sent, sent);
	l->t_end = now_ns();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
	l->blast_cpu = ((double)(cpu1.tv_sec - cpu0.tv_sec) * 1e9 +
			(double)(cpu1.tv_nsec - cpu0.tv_nsec)) /
		       (double)(l->t_end > l->t_start ? l->t_end - l->t_start : 1);
}

static void *
sender(void *arg)
{
	struct load *l = arg;
	uint8_t payload[HG_MAX_PAYLOAD] = { 0 };
	unsigned short xs[3] = { (unsigned short)l->seed,
				 (unsigned short)(l->seed >> 16), 0x330e };
	uint64_t seq, next, end, waited = thread_wait_ns();

	if (l->memif[0] && hgl_memif_thread() < 0)
		die("no memory for the sender's mbufs");
	if (l->blast) {
		blast(l, payload);
		l->sender_wait_ns = thread_wait_ns() - waited;
		atomic_store(&l->sending, 0);
		return NULL;
	}
	if (l->rt)
		realtime();
	next = now_ns();
	l->t_start = next;
	end = next + (uint64_t)(l->duration * 1e9);
	for (seq = 0; seq < l->n_req; seq++) {
		next += (uint64_t)(-log(1.0 - erand48(xs)) / l->rate * 1e9);
		if (next >= end)
			break;
		/* a sender that cannot keep up stops at the end all the same
		 * (a run lasts --duration), and says how far behind it was */
		if (now_ns() >= end) {
			for (; next < end && seq < l->n_req; seq++)
				next += (uint64_t)(-log(1.0 - erand48(xs)) / l->rate * 1e9);
			l->behind = seq - atomic_load(&l->sent);
			break;
		}
		/* the batch goes out before a real sleep (wait_until naps only
		 * 2 µs or more ahead), not before every arrival a µs apart */
		if (next > now_ns() + 2000) {
			flush(l);
			wait_until(next);
		}
		l->req[seq].type = (uint8_t)pick_type(l, erand48(xs));
		l->req[seq].svc_ns = service_of(&l->type[l->req[seq].type], xs);
		atomic_store_explicit(&l->sent, seq + 1, memory_order_release);
		arrive(l, seq, payload);
	}
	flush(l);
	l->t_end = now_ns();
	/* the receiver sends what the windows let through while the last
	 * replies come back */
	if (l->credits)
		wait_until(l->t_end + (uint64_t)l->timeout_ms * 500000u);
	l->sender_wait_ns = thread_wait_ns() - waited;
	atomic_store(&l->sending, 0);
	return NULL;
}

/* ---- receiver ---- */

/* An answered request's times, from the send and from its arrival
 * (clamped to 4.29 s, the most a sample holds). */
static uint32_t
since(uint64_t now, uint64_t t)
{
	return now - t > UINT32_MAX ? UINT32_MAX : (uint32_t)(now - t);
}

static void
timed(struct req *r, uint64_t now)
{
	r->lat_ns = since(now, r->tx_ns);
	r->e2e_ns = since(now, r->gen_ns);
}

static void
take_rpc(struct load *l, const uint8_t *buf, ssize_t n, uint64_t now)
{
	const struct hg_rpc_hdr *h = (const void *)buf;
	unsigned f = ntohl(h->session) ^ l->sess_base;
	uint64_t seq = be64toh(h->req_id);
	struct flow *fl;
	uint8_t expect = R_SENT;

	if (n < (ssize_t)HG_RPC_HDR_LEN || ntohs(h->magic) != HG_RPC_MAGIC) {
		l->invalid++;
		return;
	}
	if (h->flags & HG_RPC_CREDIT) {
		/* one to a session of an earlier run on this address (the
		 * daemon keeps it until it idles out) changes nothing here */
		if (f < l->flows)
			atomic_store(&l->fl[f].window, ntohs(h->credits));
		atomic_fetch_add(&l->credit_msgs, 1);
		return;
	}
	if (f >= l->flows) {
		l->invalid++;
		return;
	}
	fl = &l->fl[f];
	atomic_store(&fl->window, ntohs(h->credits));
	if (seq >= atomic_load_explicit(&l->sent, memory_order_acquire)) {
		l->invalid++;
		return;
	}
	if (h->flags & HG_RPC_REJECT) {
		if (atomic_compare_exchange_strong(&l->req[seq].state, &expect,
						   R_REJECTED)) {
			atomic_fetch_sub(&fl->outstanding, 1);
			atomic_fetch_add(&l->rejected, 1);
		}
		return;
	}
	if (!atomic_compare_exchange_strong(&l->req[seq].state, &expect, R_DONE)) {
		l->invalid++;
		return;
	}
	/* hg-kv answers carry a status: not OK is counted (a GET of a key
	 * a DELETE took, an error) */
	if (l->kv && (n < (ssize_t)(HG_RPC_HDR_LEN + sizeof(struct hg_kv_reply)) ||
		      buf[HG_RPC_HDR_LEN] != HG_KV_OK))
		atomic_fetch_add(&l->kv_errors, 1);
	fl->answered++;
	atomic_fetch_sub(&fl->outstanding, 1);
	timed(&l->req[seq], now);
}

static void
take_reply(struct load *l, const uint8_t *buf, ssize_t n, uint64_t now)
{
	const struct hg_work_hdr *h = (const void *)buf;
	uint64_t seq;
	struct req *r;
	uint8_t expect = R_SENT;

	if (l->rpc) {
		take_rpc(l, buf, n, now);
		return;
	}
	if (n < (ssize_t)sizeof(*h) || ntohl(h->magic) != HG_WORK_MAGIC) {
		l->invalid++;
		return;
	}
	seq = be64toh(h->seq);
	if (seq >= atomic_load_explicit(&l->sent, memory_order_acquire)) {
		l->invalid++;
		return;
	}
	r = &l->req[seq];
	if (!atomic_compare_exchange_strong(&r->state, &expect, R_DONE)) {
		l->invalid++;	/* a duplicate, or never sent */
		return;
	}
	atomic_fetch_sub(&l->fl[seq % l->flows].outstanding, 1);
	timed(r, now);
}

/* A load as the receiver sees it: the datagrams it took, when it stops
 * waiting for stragglers, a scratch payload for the credit drains its
 * replies trigger. */
struct rx {
	struct load *l;
	uint64_t done, deadline;
	uint8_t payload[HG_MAX_PAYLOAD];
};

/* Every load's: the receiver serves them all (over sockets, through one
 * epoll set of all their flows' sockets). */
struct rxset {
	struct rx x[MAX_LOADS];
	unsigned n;
	int ep;
};

/* One datagram of flow f: its request's answer, then what the session's
 * new window lets out of its queue. */
static void
took(struct rx *x, unsigned f, const uint8_t *p, size_t n)
{
	if (x->l->blast) {
		atomic_fetch_add_explicit(&x->l->blast_got, 1, memory_order_relaxed);
		return;
	}
	x->done++;
	take_reply(x->l, p, (ssize_t)n, now_ns());
	if (x->l->credits)
		drain_locked(x->l, f, x->payload);
}

/* A datagram to the memif port's flow f: the load that flow belongs to
 * takes it if it came from that load's target port. */
static void
took_frame(void *arg, unsigned f, uint16_t sport, const uint8_t *p, size_t n)
{
	struct rxset *rs = arg;
	unsigned k;

	for (k = 0; k < rs->n; k++) {
		struct rx *x = &rs->x[k];

		if (f - x->l->flow0 >= x->l->flows)
			continue;
		if (sport == x->l->target.sin_port) {
			took(x, f - x->l->flow0, p, n);
		} else {
			x->done++;
			x->l->invalid++;
		}
		return;
	}
}

/* A blast's answers on flow f's socket, counted, in batches: only how
 * many came back matters. Bounded: a socket that never runs dry is
 * left for the next epoll round after 64 batches. */
static void
blast_recv(struct load *l, unsigned f)
{
	static uint8_t sink[BLAST_BURST][64];
	struct mmsghdr mm[BLAST_BURST];
	struct iovec iov[BLAST_BURST];
	unsigned i, rounds;
	int n;

	for (i = 0; i < BLAST_BURST; i++) {
		iov[i] = (struct iovec){ sink[i], sizeof(sink[i]) };
		mm[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	for (rounds = 0; rounds < 64; rounds++) {
		n = recvmmsg(l->fd[f], mm, BLAST_BURST, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		atomic_fetch_add_explicit(&l->blast_got, (uint64_t)n, memory_order_relaxed);
	}
}

/* Receives for up to 10 ms. */
static void
receive_some(struct rxset *rs)
{
	struct epoll_event ev[64];
	uint8_t buf[2048];
	int n, k;

	if (rs->ep < 0) {
		hgl_memif_poll(10000000u, took_frame, rs);
		return;
	}
	n = epoll_wait(rs->ep, ev, 64, 10);
	for (k = 0; k < n; k++) {
		struct rx *x = &rs->x[ev[k].data.u64 >> 32];
		unsigned f = (unsigned)ev[k].data.u64;
		ssize_t r;

		if (x->l->blast) {
			blast_recv(x->l, f);
			continue;
		}
		while ((r = recv(x->l->fd[f], buf, sizeof(buf), 0)) > 0) {
			take_reply(x->l, buf, r, now_ns());
			x->done++;
		}
		if (x->l->credits)
			drain_locked(x->l, f, x->payload);
	}
}

/* A load is done once its sender is and every request it sent has an
 * answer, or its timeout passed since. */
static int
finished(struct rx *x)
{
	struct load *l = x->l;

	if (atomic_load(&l->sending))
		return 0;
	if (x->deadline == 0)
		x->deadline = now_ns() + (uint64_t)l->timeout_ms * 1000000u;
	if (l->blast)		/* its answers are counted until the timeout */
		return now_ns() >= x->deadline;
	return now_ns() >= x->deadline ||
	       x->done - l->invalid - atomic_load(&l->credit_msgs) >=
		       atomic_load(&l->sent) - atomic_load(&l->send_errors) - l->shed;
}

static void
receive(struct load *ls, unsigned n)
{
	static struct rxset rs;
	unsigned k, i, busy, blasts = 0;

	rs.n = n;
	rs.ep = ls[0].memif[0] ? -1 : epoll_create1(EPOLL_CLOEXEC);
	for (k = 0; k < n; k++) {
		rs.x[k].l = &ls[k];
		if (ls[k].memif[0] && hgl_memif_thread() < 0)
			die("no memory for the receiver's mbufs");
		for (i = 0; rs.ep >= 0 && i < ls[k].flows; i++) {
			struct epoll_event e = { .events = EPOLLIN,
						 .data.u64 = (uint64_t)k << 32 | i };

			epoll_ctl(rs.ep, EPOLL_CTL_ADD, ls[k].fd[i], &e);
		}
		/* a victim's replies are timestamped here: as urgent as its sender */
		if (ls[k].rt)
			realtime();
		blasts += ls[k].blast;
	}
	/* a flood's answers are only counted: its receiver, like its
	 * senders, takes only what nobody else on the CPU wants (polling the
	 * answers to a saturating flood, it would otherwise take as much of
	 * the apps' CPU as the flood itself) */
	if (blasts == n)
		idle_priority();
	do {
		receive_some(&rs);
		for (k = 0, busy = 0; k < n; k++)
			busy += !finished(&rs.x[k]);
	} while (busy);
	if (rs.ep >= 0)
		close(rs.ep);
}

/* ---- results ---- */

struct summary {
	uint64_t sent, received, rejected, unsent, good;
	double p50, p99, p999, mean, max;	/* µs */
	double slow999;				/* < 0: undefined */
	double wait_p99;	/* µs a received request sat in the client's queue */
};

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
pct_u32(const uint32_t *v, size_t n, double p)
{
	return n ? v[(size_t)fmin((double)n - 1, ceil(p * (double)n) - 1)] / 1e3 : 0;
}

/* The p99 of the time received requests waited in the client's queue for
 * credit (0 without --credits); tmp holds one double per request. */
static double
wait_p99(const struct load *l, int type, double *tmp)
{
	uint64_t i, n = atomic_load(&l->sent), k = 0;

	for (i = 0; i < n; i++) {
		const struct req *r = &l->req[i];

		if ((type < 0 || r->type == type) && atomic_load(&r->state) == R_DONE)
			tmp[k++] = r->e2e_ns > r->lat_ns ? (r->e2e_ns - r->lat_ns) / 1e3 : 0;
	}
	qsort(tmp, k, sizeof(*tmp), cmp_double);
	return k ? tmp[(size_t)fmin((double)k - 1, ceil(0.99 * k) - 1)] : 0;
}

/* Exact percentiles from every sample: the sample count is bounded by
 * rate x duration, and this is off the measured path. */
static void
summarize(const struct load *l, int type, struct summary *s, uint32_t *lat,
	  double *slow)
{
	uint64_t i, n = atomic_load(&l->sent), k = 0, m = 0;
	double sum = 0;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		const struct req *r = &l->req[i];
		uint8_t st = atomic_load(&r->state);

		if (type >= 0 && r->type != type)
			continue;
		if (st == R_UNSENT || st == R_QUEUED || st == R_SHED) {
			s->unsent += st != R_UNSENT || l->credits;
			continue;
		}
		s->sent++;
		s->rejected += st == R_REJECTED;
		if (st != R_DONE)
			continue;
		/* the SLO is the server's: from send to reply, as Breakwater
		 * and CoreSync measure; waiting for credit is the client's
		 * own queue and is reported apart (wait_p99) */
		s->good += l->slo_us <= 0 || r->lat_ns <= l->slo_us * 1000;
		lat[k++] = r->lat_ns;
		sum += r->lat_ns;
		if (l->type[r->type].service_ns > 0)
			slow[m++] = (double)r->lat_ns / l->type[r->type].service_ns;
	}
	s->received = k;
	qsort(lat, k, sizeof(*lat), cmp_u32);
	qsort(slow, m, sizeof(*slow), cmp_double);
	s->p50 = pct_u32(lat, k, 0.50);
	s->p99 = pct_u32(lat, k, 0.99);
	s->p999 = pct_u32(lat, k, 0.999);
	s->mean = k ? sum / (double)k / 1e3 : 0;
	s->max = k ? lat[k - 1] / 1e3 : 0;
	s->slow999 = m ? slow[(size_t)fmin((double)m - 1, ceil(0.999 * m) - 1)] : -1;
	s->wait_p99 = wait_p99(l, type, slow);
}

static json_t *
summary_json(const struct summary *s, double secs)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:{s:f, s:f, s:f, s:f, s:f}, s:{s:o}, s:{s:f}}",
		"sent", (json_int_t)s->sent, "received", (json_int_t)s->received,
		"rejected", (json_int_t)s->rejected,
		"not_sent", (json_int_t)s->unsent,
		"lost", (json_int_t)(s->sent - s->received - s->rejected),
		"throughput_rps", secs > 0 ? s->received / secs : 0.0,
		"goodput_rps", secs > 0 ? s->good / secs : 0.0,
		"latency_us", "p50", s->p50, "p99", s->p99, "p999", s->p999,
		"mean", s->mean, "max", s->max,
		"slowdown", "p999", s->slow999 < 0 ? json_null() : json_real(s->slow999),
		"client_wait_us", "p99", s->wait_p99);
}

static void
print_row(const char *name, const struct summary *s, double secs)
{
	char slow[16] = "-";

	if (s->slow999 >= 0)
		snprintf(slow, sizeof(slow), "%.1f", s->slow999);
	printf("%-10s %10lu %10lu %8lu %11.0f %9.1f %9.1f %9.1f %9s\n", name,
	       (unsigned long)s->sent, (unsigned long)s->received,
	       (unsigned long)(s->sent - s->received - s->rejected),
	       secs > 0 ? s->received / secs : 0.0, s->p50, s->p99, s->p999, slow);
}

/* The fewest and the most answers any one RPC session got: how evenly
 * credits went round. */
static json_t *
flows_answered_json(const struct load *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned f;

	for (f = 0; f < l->flows; f++) {
		lo = l->fl[f].answered < lo ? l->fl[f].answered : lo;
		hi = l->fl[f].answered > hi ? l->fl[f].answered : hi;
	}
	return json_pack("{s:I, s:I}", "min", (json_int_t)lo, "max", (json_int_t)hi);
}

/* The load's threads' waits for a CPU (thread_wait_ns), in seconds: its
 * sender's, and the receiver's, which every load of the process shares. */
static void
waits_json(json_t *j, const struct load *l)
{
	json_object_set_new(j, "sender_wait_s", json_real((double)l->sender_wait_ns / 1e9));
	json_object_set_new(j, "receiver_wait_s",
			    json_real((double)l->receiver_wait_ns / 1e9));
}

#define NAPI_HINT "if the link is a veth, its other end takes frames an XDP program " \
	"transmits only with one attached or GRO on (ethtool -K DEV gro on)"

/* A blast's report: what it offered and what came back; the latency
 * fields are there (zero) so that readers of one load read the other. */
static void
report_blast(const struct load *l, json_t *many)
{
	double secs = (double)(l->t_end - l->t_start) / 1e9;
	uint64_t sent = atomic_load(&l->sent);
	/* a bounce's answers are the ones the link turned: the sockets see
	 * only those that came after it stopped */
	uint64_t got = l->bounce ? l->turned : atomic_load(&l->blast_got);
	json_t *j;
	char *out;

	/* a veth drops, unseen by any counter, every frame its peer's XDP
	 * program transmits unless it has NAPI: an XDP program of its own, or
	 * GRO (the kernel's own stack behind it); a bounce then turns each
	 * top-up's answer once, and no more */
	if (l->replay && sent > 1 && got == 0)
		fprintf(stderr, "hgload %s: --replay: not one answer; %s\n", l->target_str,
			NAPI_HINT);
	if (l->bounce && sent > 100 && got < 2 * sent)
		fprintf(stderr, "hgload %s: --bounce: %lu requests turned for %lu sent: they "
			"do not come round; %s\n", l->target_str, (unsigned long)got,
			(unsigned long)sent, NAPI_HINT);
	if (!l->json) {
		printf("hgload %s: %s for %.1f s, %u flows, %u B: sent %lu (%.0f/s), "
		       "answered %lu (%.0f/s), bursts refused %lu, sender CPU %.1f%%\n",
		       l->target_str, l->bounce ? "bounce" : "blast", secs, l->flows, l->size,
		       (unsigned long)sent,
		       secs > 0 ? sent / secs : 0.0, (unsigned long)got,
		       secs > 0 ? got / secs : 0.0, (unsigned long)l->blast_refused,
		       100 * l->blast_cpu);
		return;
	}
	j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:i, s:i, s:I, "
		      "s:f, s:{s:f, s:f, s:f, s:f, s:f}}",
		      "mode", l->bounce ? "bounce" : "blast", "target", l->target_str,
		      "sent", (json_int_t)sent, "received", (json_int_t)got,
		      "lost", (json_int_t)(sent > got ? sent - got : 0),
		      "send_errors", (json_int_t)0, "rejected", (json_int_t)0,
		      "throughput_rps", secs > 0 ? got / secs : 0.0,
		      "offered_rps", secs > 0 ? sent / secs : 0.0,
		      "elapsed_s", secs, "flows", (int)l->flows, "size", (int)l->size,
		      "bursts_refused", (json_int_t)l->blast_refused,
		      "sender_cpu", l->blast_cpu,
		      "latency_us", "p50", 0.0, "p99", 0.0, "p999", 0.0, "mean", 0.0,
		      "max", 0.0);
	waits_json(j, l);
	if (many) {
		json_array_append_new(many, j);
		return;
	}
	out = json_dumps(j, JSON_INDENT(2));
	puts(out);
	free(out);
	json_decref(j);
}

/* The load's report: a table, or its JSON object, printed, or appended
 * to many (several loads: one array). */
static void
report(const struct load *l, json_t *many)
{
	uint64_t n = atomic_load(&l->sent);
	uint32_t *lat = malloc((n + 1) * sizeof(*lat));
	double *slow = malloc((n + 1) * sizeof(*slow));
	double secs = (double)(l->t_end - l->t_start) / 1e9;
	struct summary all, s;
	unsigned t;

	if (lat == NULL || slow == NULL)
		die("out of memory");
	summarize(l, -1, &all, lat, slow);
	if (l->json) {
		json_t *types = json_array(), *j, *meta;
		char *out;

		for (t = 0; t < l->n_types; t++) {
			summarize(l, (int)t, &s, lat, slow);
			j = summary_json(&s, secs);
			json_object_set_new(j, "name", json_string(l->type[t].name));
			json_object_set_new(j, "service_ns",
					    json_integer(l->type[t].service_ns));
			json_array_append_new(types, j);
		}
		j = summary_json(&all, secs);
		meta = json_pack("{s:s, s:o, s:I, s:I, s:s, s:f, s:f, s:i, s:i, "
				 "s:s, s:I, s:I, s:f, s:I, s:o, s:o}",
			"mode", l->credits ? "credits" : l->rpc ? "rpc" : "raw",
			"slo_us", l->slo_us > 0 ? json_real(l->slo_us) : json_null(),
			"credit_updates", (json_int_t)atomic_load(&l->credit_msgs),
			"shed", (json_int_t)l->shed,
			"target", l->target_str, "rate", l->rate,
			"duration_s", l->duration, "flows", (int)l->flows,
			"size", (int)l->size, "workload", l->workload,
			"send_errors", (json_int_t)atomic_load(&l->send_errors),
			"invalid", (json_int_t)l->invalid, "elapsed_s", secs,
			"sender_behind", (json_int_t)l->behind,
			"types", types, "flow_answered", flows_answered_json(l));
		waits_json(j, l);
		json_object_update(j, meta);
		if (l->kv)
			json_object_set_new(j, "kv_errors",
					    json_integer((json_int_t)atomic_load(&l->kv_errors)));
		json_decref(meta);
		if (many) {
			json_array_append_new(many, j);
		} else {
			out = json_dumps(j, JSON_INDENT(2));
			puts(out);
			free(out);
			json_decref(j);
		}
	} else {
		printf("hgload %s: %.0f rps offered for %.1f s, %u flows, %u B, %s\n",
		       l->target_str, l->rate, l->duration, l->flows, l->size,
		       l->workload);
		printf("%-10s %10s %10s %8s %11s %9s %9s %9s %9s\n", "type", "sent",
		       "received", "lost", "rps", "p50 us", "p99 us", "p99.9 us",
		       "slow99.9");
		for (t = 0; l->n_types > 1 && t < l->n_types; t++) {
			summarize(l, (int)t, &s, lat, slow);
			print_row(l->type[t].name, &s, secs);
		}
		print_row("all", &all, secs);
		if (l->rpc)
			printf("rejected %lu, not sent (no credit) %lu, credit updates "
			       "%lu, goodput %.0f rps%s\n", (unsigned long)all.rejected,
			       (unsigned long)all.unsent,
			       (unsigned long)atomic_load(&l->credit_msgs),
			       secs > 0 ? all.good / secs : 0.0,
			       l->slo_us > 0 ? " within the SLO" : "");
		if (l->kv)
			printf("kv answers not OK %lu\n",
			       (unsigned long)atomic_load(&l->kv_errors));
		if (atomic_load(&l->send_errors) || l->invalid)
			printf("send errors %lu, invalid replies %lu\n",
			       (unsigned long)atomic_load(&l->send_errors),
			       (unsigned long)l->invalid);
	}
	free(lat);
	free(slow);
}

/* ---- arguments ---- */

static void
usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: hgload --target IP:PORT --rate RPS --duration S [--flows N]\n"
		"              [--size BYTES] [--workload fixed:NS|exp:NS|high|extreme|"
		"zippydb|mix:NAME:NS:PCT,...]\n"
		"              [--timeout-ms MS] [--seed N] [--json]\n"
		"              [--rpc | --credits] [--slo-us US]\n"
		"              kv:OP=PCT[@NS],... (hg-kv: get|put|delete|scan, RPC)"
		" [--kv-keys N] [--scan-count N]\n"
		"              [--memif SOCKET [--source IP]]  (frames over a memif"
		" port of its own, not the kernel)\n"
		"              [--rx-map FILE]  (memif: the daemon's rings, from"
		" hgctl tenant list --json)\n"
		"              [--peer-mac MAC]  (memif: a peer that does not answer"
		" ARP, e.g. testpmd)\n"
		"              [--memif-ring LOG2]  (memif: 2^LOG2 slots per ring,"
		" default 10)\n"
		"              [--rt]  (the sender runs SCHED_FIFO)\n"
		"              [--blast]  (a flood: bursts as fast as the link takes"
		" them, from a SCHED_IDLE\n"
		"               sender, counted, not timed; --rate is not used; over"
		" memif a replay:\n"
		"               frames built once, the ring refilled by moving its"
		" head)\n"
		"              [--replay]  (a --blast over sockets that the kernel puts"
		" on the link from one\n"
		"               prebuilt frame by XDP test runs, at --rate frames/s;"
		" root, in a netns)\n"
		"              [--bounce]  (echo throughput over sockets: an XDP program"
		" on this end of the\n"
		"               link sends every answer back as a request; --rate"
		" tops up what was lost;\n"
		"               counted, not timed; root)\n"
		"              [--and OPTIONS...]  (another load at once: its own"
		" options, the first's --memif;\n"
		"               with --json, an array of reports in order)\n");
	exit(code);
}

static double
num(const char *flag, const char *v, double lo, double hi)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || !(d >= lo && d <= hi))
		die("%s must be a number in [%g, %g], not '%s'", flag, lo, hi, v);
	return d;
}

static void
parse_target(struct load *l, const char *v)
{
	char ip[48];
	unsigned port;
	char extra;

	if (sscanf(v, "%47[^:]:%u%c", ip, &port, &extra) != 2 || port == 0 ||
	    port > 65535 || inet_pton(AF_INET, ip, &l->target.sin_addr) != 1)
		die("--target must be IPv4:PORT, not '%s'", v);
	l->target.sin_family = AF_INET;
	l->target.sin_port = htons((uint16_t)port);
	snprintf(l->target_str, sizeof(l->target_str), "%s", v);
}

static void
parse_args(struct load *l, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "target", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "flows", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "workload", required_argument, NULL, 'w' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "rpc", no_argument, NULL, 'p' },
		{ "credits", no_argument, NULL, 'c' },
		{ "slo-us", required_argument, NULL, 'o' },
		{ "kv-keys", required_argument, NULL, 'K' },
		{ "scan-count", required_argument, NULL, 'C' },
		{ "memif", required_argument, NULL, 'M' },
		{ "source", required_argument, NULL, 'I' },
		{ "rx-map", required_argument, NULL, 'X' },
		{ "peer-mac", required_argument, NULL, 'P' },
		{ "memif-ring", required_argument, NULL, 'G' },
		{ "rt", no_argument, NULL, 'R' },
		{ "blast", no_argument, NULL, 'B' },
		{ "replay", no_argument, NULL, 'Y' },
		{ "bounce", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *workload = "fixed:0";
	int c;

	l->flows = 1;
	l->size = 64;
	l->kv_keys = 1000000;
	l->scan_count = 100;
	l->timeout_ms = 1000;
	l->seed = 1;
	optind = 0;	/* GNU getopt: start afresh (one parse per load) */
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't': parse_target(l, optarg); break;
		case 'r': l->rate = num("--rate", optarg, 1, 1e8); break;
		case 'd': l->duration = num("--duration", optarg, 0.001, 3600); break;
		case 'f': l->flows = (unsigned)num("--flows", optarg, 1, MAX_FLOWS); break;
		case 's': l->size = (unsigned)num("--size", optarg,
						  sizeof(struct hg_work_hdr),
						  HG_MAX_PAYLOAD); break;
		case 'w': workload = optarg; break;
		case 'T': l->timeout_ms = (long)num("--timeout-ms", optarg, 0, 60000); break;
		case 'S': l->seed = (unsigned long)num("--seed", optarg, 0, 4e9); break;
		case 'j': l->json = 1; break;
		case 'p': l->rpc = 1; break;
		case 'c': l->rpc = l->credits = 1; break;
		case 'o': l->slo_us = num("--slo-us", optarg, 1, 1e8); break;
		case 'K': l->kv_keys = (uint64_t)num("--kv-keys", optarg, 1, 1e12); break;
		case 'C': l->scan_count = (unsigned)num("--scan-count", optarg, 1,
							HG_KV_SCAN_MAX); break;
		case 'M': if (strlen(optarg) >= sizeof(l->memif))
				  die("--memif path too long");
			  snprintf(l->memif, sizeof(l->memif), "%s", optarg);
			  break;
		case 'I': if (inet_pton(AF_INET, optarg, &l->src_ip) != 1)
				  die("--source '%s' is not an IPv4 address", optarg);
			  break;
		case 'X': l->rx_map = optarg; break;
		case 'P': l->peer_mac = optarg; break;
		case 'G': l->ring_log2 = (unsigned)num("--memif-ring", optarg, 4, 14); break;
		case 'R': l->rt = 1; break;
		case 'B': l->blast = 1; break;
		case 'Y': l->replay = l->blast = 1; break;
		case 'U': l->bounce = l->blast = 1; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (l->replay && (l->memif[0] || l->rate < 2))
		die("--replay: over kernel sockets, with --rate FRAMES_PER_S (over "
		    "memif every --blast is a replay)");
	if (l->bounce && (l->memif[0] || l->replay || l->rate < 1))
		die("--bounce: over kernel sockets, not with --replay, with --rate "
		    "REQUESTS_PER_S (the top-up's)");
	if (l->blast && l->rate == 0)
		l->rate = 1;	/* not used: the flood is as fast as the link */
	if (l->target_str[0] == '\0' || l->rate == 0 || l->duration == 0)
		usage(2);
	if (l->blast && (l->rpc || l->rt))
		die("--blast is a raw flood: not with --rpc, --credits or --rt");
	if (l->blast && l->flows > HGL_BLAST_FLOWS)
		die("--blast takes at most %u flows", HGL_BLAST_FLOWS);
	parse_workload(l, workload);
	if (l->rpc && !l->kv && l->size < HG_RPC_HDR_LEN + sizeof(struct hg_work_hdr))
		die("--size must be at least %zu with --rpc or --credits",
		    HG_RPC_HDR_LEN + sizeof(struct hg_work_hdr));
}

/* Each load's options, "--and" between two: parsed one by one, the
 * --memif, --source and --json of the first applying to all. */
static unsigned
parse_loads(struct load *ls, int argc, char **argv)
{
	unsigned n = 0;
	int start = 0, i;

	for (i = 1; i <= argc; i++) {
		if (i < argc && strcmp(argv[i], "--and") != 0)
			continue;
		if (n == MAX_LOADS)
			die("at most %d loads", MAX_LOADS);
		/* argv[start] stands in for the program name */
		parse_args(&ls[n], i - start, argv + start);
		ls[n].index = n;
		if (n > 0) {
			if (ls[n].memif[0] || ls[n].src_ip || ls[n].ring_log2)
				die("--memif, --memif-ring and --source go with the first load");
			memcpy(ls[n].memif, ls[0].memif, sizeof(ls[0].memif));
			ls[n].json = ls[0].json;
			ls[n].seed += n << 8;	/* distinct sessions and draws */
		}
		n++;
		start = i;
	}
	return n;
}

static void
prepare(struct load *l)
{
	l->n_req = (uint64_t)ceil(l->rate * l->duration * 1.2) + 16;
	if (l->n_req > MAX_REQUESTS)
		die("rate x duration is too many requests (max %llu)", MAX_REQUESTS);
	l->req = calloc(l->n_req, sizeof(*l->req));
	l->fl = calloc(l->flows, sizeof(*l->fl));
	if (l->req == NULL || l->fl == NULL)
		die("out of memory");
	/* Fresh session ids for every run, whatever --seed says: a daemon
	 * keeps a session a while after its client left, and a new run
	 * that reused the ids would inherit its requests still out (their
	 * credits) and be turned away for them. */
	if (getrandom(&l->sess_base, sizeof(l->sess_base), 0) != sizeof(l->sess_base))
		die("getrandom: %s", strerror(errno));
	l->sess_base = (l->sess_base | 0x10000u) & ~0xffffu;
	for (unsigned f = 0; f < l->flows; f++) {
		atomic_store(&l->fl[f].window, 1);	/* a new session's credit */
		pthread_mutex_init(&l->fl[f].lock, NULL);
	}
}

int
main(int argc, char **argv)
{
	static struct load ls[MAX_LOADS];
	json_t *many = NULL;
	uint64_t waited;
	unsigned n, k;

	hg_tool_version(argc, argv, "hgload");
	n = parse_loads(ls, argc, argv);
	prctl(PR_SET_TIMERSLACK, 1000UL);
	for (k = 0; k < n; k++)
		prepare(&ls[k]);
	open_transport(ls, n);
	for (k = 0; k < n; k++) {
		atomic_store(&ls[k].sending, 1);
		if (pthread_create(&ls[k].tid, NULL, sender, &ls[k]) != 0)
			die("cannot start a sender thread");
	}
	waited = thread_wait_ns();
	receive(ls, n);
	waited = thread_wait_ns() - waited;
	for (k = 0; k < n; k++) {
		pthread_join(ls[k].tid, NULL);
		ls[k].receiver_wait_ns = waited;
	}
	if (n > 1 && ls[0].json)
		many = json_array();
	for (k = 0; k < n; k++) {
		if (ls[k].blast)
			report_blast(&ls[k], many);
		else
			report(&ls[k], many);
	}
	if (many) {
		char *out = json_dumps(many, JSON_INDENT(2));

		puts(out);
		free(out);
		json_decref(many);
	}
	if (ls[0].memif[0])
		hgl_memif_close();
	hgl_xdp_close();
	return 0;
}

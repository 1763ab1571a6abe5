/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The memif server (memif_server.h). Everything a peer says is checked
 * before the fast path sees it: message order, ring and region indices,
 * every ring inside its region, every region a sealed memfd at least as
 * large as the peer claims (a peer that could shrink its file would make
 * the daemon's next read of it a SIGBUS). One peer holds the link; others
 * are told "already connected". A handshake that stalls is dropped after
 * HG_MIF_HANDSHAKE_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <rte_common.h>
#include <rte_rcu_qsbr.h>

#include "../fastpath/dp.h"
#include "../fastpath/memif.h"
#include "log.h"
#include "memif_server.h"
#include "unix_listen.h"

#define HG_MIF_PENDING      8u		/* handshakes at once */
#define HG_MIF_HANDSHAKE_MS 5000u
#define HG_MIF_RETIRING     8u		/* departed peers not yet unmapped */
#define HG_MIF_REAP_MS      1u
#define HG_MIF_REGION_MAX   (1ull << 32)	/* bytes per region */
/* the most of a peer's allocated pages mapped at its handshake: ~60 ms of
 * the slow path here (256 MB), so that a peer cannot stall it for long */
#define HG_MIF_MAP_AHEAD    (256ull << 20)

enum peer_state { FREE, HELLO_SENT, INITED, CONNECTED };

/* A ring the peer announced, as it said it. */
struct ring_req {
	uint8_t given, log2;
	uint16_t region;
	uint32_t offset;
	int efd;
};

/* One control connection. */
struct peer {
	struct hg_memif_server *s;
	enum peer_state state;
	int fd;
	struct event *ev, *timeout;
	uint32_t n_regions;
	int region_fd[HG_MIF_REGIONS];
	uint64_t region_size[HG_MIF_REGIONS];
	struct ring_req rx[HG_MIF_RX_RINGS], tx[HG_MIF_TX_RINGS];
	char name[HG_MEMIF_NAME_SZ + 1];
	struct hg_mif_conn *conn;	/* published while CONNECTED */
};

struct retired {
	struct hg_mif_conn *conn;
	uint64_t token;			/* rte_rcu_qsbr_start's */
};

struct hg_memif_server {
	struct hg_dp *dp;
	struct hg_mif *mif;
	struct event_base *base;
	char path[108];
	int lfd;
	struct event *lev, *reaper;
	uint32_t n_rx, n_tx;		/* rings offered each way */
	struct peer peer[HG_MIF_PENDING];
	struct peer *owner;		/* the connected one, or NULL */
	struct retired retiring[HG_MIF_RETIRING];
	uint32_t n_retiring;
	uint64_t connects, refused, kicks_gone;
	char refusal[HG_MEMIF_REASON_SZ + 1];
};

int
hg_memif_parse_mode(const char *text)
{
	char *end;
	unsigned long m = strtoul(text, &end, 8);

	return text[0] != '\0' && *end == '\0' && m <= 0777 ? (int)m : -1;
}

/* ---- messages ---- */

static int
send_msg(struct peer *p, const struct hg_memif_msg *m)
{
	return send(p->fd, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT) ==
	       (ssize_t)sizeof(*m) ? 0 : -1;
}

static void
send_type(struct peer *p, uint16_t type)
{
	struct hg_memif_msg m = { .type = type };

	send_msg(p, &m);
}

static void
send_hello(struct peer *p)
{
	struct hg_memif_msg m = { .type = HG_MEMIF_MSG_HELLO };

	snprintf((char *)m.hello.name, sizeof(m.hello.name), "hourglassd");
	m.hello.min_version = m.hello.max_version = HG_MEMIF_VERSION;
	m.hello.max_region = HG_MIF_REGIONS - 1;
	m.hello.max_c2s_ring = (uint16_t)(p->s->n_rx - 1);
	m.hello.max_s2c_ring = (uint16_t)(p->s->n_tx - 1);
	m.hello.max_log2_ring_size = HG_MEMIF_LOG2_RING_MAX;
	send_msg(p, &m);
}

/* ---- a connection's memory ---- */

static void
conn_free(struct hg_mif_conn *cn)
{
	uint32_t i;

	for (i = 0; i < cn->n_regions; i++)
		munmap(cn->region[i].base, cn->region[i].size);
	for (i = 0; i < cn->n_rx; i++)
		if (cn->rx[i].efd >= 0)
			close(cn->rx[i].efd);
	for (i = 0; i < cn->n_tx; i++)
		if (cn->tx[i].efd >= 0)
			close(cn->tx[i].efd);
	free(cn);
}

static uint64_t
conn_kicks(const struct hg_mif_conn *cn)
{
	uint64_t k = 0;
	uint32_t i;

	for (i = 0; i < cn->n_tx; i++)
		k += __atomic_load_n(&cn->tx[i].kicks, __ATOMIC_RELAXED);
	return k;
}

/* Frees the departed peers' memory once no core can still hold it. */
static void
reap(struct hg_memif_server *s)
{
	uint32_t i = 0;

	while (i < s->n_retiring) {
		if (rte_rcu_qsbr_check(s->dp->qs, s->retiring[i].token, false) != 1) {
			i++;
			continue;
		}
		s->kicks_gone += conn_kicks(s->retiring[i].conn);
		conn_free(s->retiring[i].conn);
		s->retiring[i] = s->retiring[--s->n_retiring];
	}
	if (s->n_retiring > 0) {
		struct timeval tv = { 0, HG_MIF_REAP_MS * 1000 };

		evtimer_add(s->reaper, &tv);
	}
}

static void
on_reap(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	reap(arg);
}

/* The fast path stops using the peer's rings now; their memory goes once
 * every core has been through a pass since. */
static void
unpublish(struct hg_memif_server *s, struct peer *p)
{
	if (p->conn == NULL)
		return;
	__atomic_store_n(&s->mif->conn, NULL, __ATOMIC_RELEASE);
	RTE_VERIFY(s->n_retiring < HG_MIF_RETIRING);
	s->retiring[s->n_retiring++] = (struct retired){
		.conn = p->conn, .token = rte_rcu_qsbr_start(s->dp->qs) };
	p->conn = NULL;
	reap(s);
}

static void
peer_close(struct peer *p)
{
	struct hg_memif_server *s = p->s;
	uint32_t i;

	if (p->state == FREE)
		return;
	if (s->owner == p) {
		unpublish(s, p);
		s->owner = NULL;
		HG_LOG(INFO, "memif peer '%s' left", p->name);
	}
	for (i = 0; i < p->n_regions; i++)
		if (p->region_fd[i] >= 0)
			close(p->region_fd[i]);
	for (i = 0; i < HG_MIF_RX_RINGS; i++)
		if (p->rx[i].given && p->rx[i].efd >= 0)
			close(p->rx[i].efd);
	for (i = 0; i < HG_MIF_TX_RINGS; i++)
		if (p->tx[i].given && p->tx[i].efd >= 0)
			close(p->tx[i].efd);
	event_free(p->ev);
	event_free(p->timeout);
	close(p->fd);
	memset(p, 0, sizeof(*p));
	p->state = FREE;
}

/* Tells the peer why and hangs up; counted, and kept for stats. */
static void
refuse(struct peer *p, const char *why)
{
	struct hg_memif_msg m = { .type = HG_MEMIF_MSG_DISCONNECT };

	snprintf((char *)m.disconnect.string, sizeof(m.disconnect.string), "%s", why);
	send_msg(p, &m);
	p->s->refused++;
	snprintf(p->s->refusal, sizeof(p->s->refusal), "%s", why);
	HG_LOG(WARNING, "memif peer '%s' refused: %s", p->name, why);
	peer_close(p);
}

/* ---- the handshake ---- */

static const char *
on_init(struct peer *p, const struct hg_memif_init *in)
{
	struct hg_memif_server *s = p->s;

	memcpy(p->name, in->name, HG_MEMIF_NAME_SZ);
	p->name[HG_MEMIF_NAME_SZ] = '\0';
	if (in->version != HG_MEMIF_VERSION)
		return "Incompatible memif version";
	if (in->id != 0)
		return "ID not found";
	if (in->mode != HG_MEMIF_MODE_ETHERNET)
		return "Only ethernet mode supported";
	if (s->owner != NULL)
		return "Already connected";
	if (s->n_retiring == HG_MIF_RETIRING)
		return "The last peers are still being released: retry";
	s->owner = p;
	p->state = INITED;
	return NULL;
}

static const char *
on_add_region(struct peer *p, const struct hg_memif_add_region *ar, int *fd)
{
	if (*fd < 0)
		return "Missing region fd";
	if (ar->index != p->n_regions || ar->index >= HG_MIF_REGIONS)
		return "Invalid region index";
	if (ar->size == 0 || ar->size > HG_MIF_REGION_MAX)
		return "Invalid region size";
	p->region_fd[p->n_regions] = *fd;
	p->region_size[p->n_regions++] = ar->size;
	*fd = -1;
	return NULL;
}

static const char *
on_add_ring(struct peer *p, const struct hg_memif_add_ring *ar, int *fd)
{
	int c2s = (ar->flags & HG_MEMIF_RING_C2S) != 0;
	uint32_t max = c2s ? p->s->n_rx : p->s->n_tx;
	struct ring_req *r = c2s ? &p->rx[ar->index % HG_MIF_RX_RINGS] :
				   &p->tx[ar->index % HG_MIF_TX_RINGS];

	if (*fd < 0)
		return "Missing interrupt fd";
	if (ar->index >= max)
		return "Invalid ring index";
	if (r->given)
		return "Ring given twice";
	if (ar->log2_ring_size > HG_MEMIF_LOG2_RING_MAX)
		return "Ring too large";
	*r = (struct ring_req){ .given = 1, .log2 = ar->log2_ring_size,
				.region = ar->region, .offset = ar->offset, .efd = *fd };
	*fd = -1;
	return NULL;
}

/* MADV_POPULATE_WRITE on len bytes at at, within what is *left of the
 * peer's allowance (HG_MIF_MAP_AHEAD). */
static void
populate(uint8_t *at, uint64_t len, uint64_t *left)
{
	len = RTE_MIN(len, *left);
	*left -= len;
	if (len > 0)
		(void)madvise(at, len, MADV_POPULATE_WRITE);
}

/* Maps into the daemon's page tables, now, every page of a peer's region
 * that the peer has already allocated (mincore says which), so that the
 * fast path takes no page fault on them: each is a kernel entry of a few
 * microseconds in the middle of a burst, and a fresh peer's buffers cost
 * the core ~1,000 of them a second of traffic (perf -e page-faults on the
 * fast path's thread). Only those pages: populating a hole would allocate
 * it, billed to the daemon for as long as the peer keeps its memfd open;
 * and at most *left bytes of them, the peer's share of the slow path.
 * Best effort: a kernel without MADV_POPULATE_WRITE (5.14) leaves the
 * faults to the fast path, as before. */
static void
map_resident(uint8_t *base, uint64_t size, uint64_t *left)
{
	enum { CHUNK = 4096 };		/* pages looked at per mincore() */
	const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned char vec[CHUNK];
	uint64_t off, i, n, run = UINT64_MAX;

	for (off = 0; off < size && *left > 0; off += n * pg) {
		n = RTE_MIN((size - off + pg - 1) / pg, (uint64_t)CHUNK);
		if (mincore(base + off, n * pg, vec) < 0)
			return;
		for (i = 0; i < n; i++) {
			if ((vec[i] & 1) && run == UINT64_MAX)
				run = off + i * pg;
			else if (!(vec[i] & 1) && run != UINT64_MAX) {
				populate(base + run, off + i * pg - run, left);
				run = UINT64_MAX;
			}
		}
	}
	if (run != UINT64_MAX)
		populate(base + run, RTE_MIN(off, size) - run, left);
}

/* Maps region i after checking the file cannot shrink under us. */
static const char *
map_region(struct peer *p, struct hg_mif_conn *cn, uint32_t i, uint64_t *map_left)
{
	int fd = p->region_fd[i], seals = fcntl(fd, F_GET_SEALS);
	struct stat st;
	void *base;

	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return "Region is not a memfd sealed against shrinking";
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < p->region_size[i])
		return "Region is smaller than announced";
	base = mmap(NULL, p->region_size[i], PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return "Region cannot be mapped";
	map_resident(base, p->region_size[i], map_left);
	cn->region[i] = (struct hg_mif_region){ .base = base, .size = p->region_size[i] };
	cn->n_regions = i + 1;
	return NULL;
}

/* Rings 0..n-1 one way, each inside its region; its place fixed now. */
static const char *
take_rings(struct hg_mif_conn *cn, struct ring_req *req, uint32_t max,
	   struct hg_mif_ring *out, uint32_t *n, int c2s)
{
	uint32_t i;

	for (*n = 0; *n < max && req[*n].given; (*n)++)
		;
	for (i = *n; i < max; i++)
		if (req[i].given)
			return "Rings must be numbered from 0";
	for (i = 0; i < *n; i++) {
		const struct ring_req *r = &req[i];
		struct hg_memif_ring *ring;

		if (r->region >= cn->n_regions || r->offset % 16 != 0 ||
		    (uint64_t)r->offset + hg_memif_ring_bytes(r->log2) >
			    cn->region[r->region].size)
			return "Ring outside its region";
		ring = (struct hg_memif_ring *)(cn->region[r->region].base + r->offset);
		if (__atomic_load_n(&ring->cookie, __ATOMIC_RELAXED) != HG_MEMIF_COOKIE)
			return "Wrong ring cookie";
		/* as every memif server does: the rings start empty, and
		 * the daemon polls the ones it receives on */
		__atomic_store_n(&ring->head, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ring->tail, 0, __ATOMIC_RELAXED);
		if (c2s)
			__atomic_store_n(&ring->flags, HG_MEMIF_RING_FLAG_MASK_INT,
					 __ATOMIC_RELAXED);
		out[i] = (struct hg_mif_ring){ .ring = ring,
			.mask = (uint16_t)((1u << r->log2) - 1), .efd = r->efd };
	}
	return NULL;
}

static const char *
on_connect(struct peer *p)
{
	struct hg_memif_server *s = p->s;
	struct hg_mif_conn *cn;
	const char *why = NULL;
	uint64_t map_left = HG_MIF_MAP_AHEAD;
	uint32_t i;

	if (p->n_regions == 0)
		return "No region";
	cn = calloc(1, sizeof(*cn));
	if (cn == NULL)
		return "Out of memory";
	for (i = 0; i < p->n_regions && why == NULL; i++)
		why = map_region(p, cn, i, &map_left);
	if (why == NULL)
		why = take_rings(cn, p->rx, s->n_rx, cn->rx, &cn->n_rx, 1);
	if (why == NULL)
		why = take_rings(cn, p->tx, s->n_tx, cn->tx, &cn->n_tx, 0);
	if (why != NULL) {
		cn->n_rx = cn->n_tx = 0;	/* the peer's fds are closed with it */
		conn_free(cn);
		return why;
	}
	/* the eventfds are the connection's now */
	for (i = 0; i < cn->n_rx; i++)
		p->rx[i].given = 0;
	for (i = 0; i < cn->n_tx; i++)
		p->tx[i].given = 0;
	p->conn = cn;
	p->state = CONNECTED;
	s->connects++;
	__atomic_store_n(&s->mif->conn, cn, __ATOMIC_RELEASE);
	evtimer_del(p->timeout);
	HG_LOG(INFO, "memif peer '%s' connected: %u ring%s to us, %u back, "
	       "%u slots", p->name, cn->n_rx, cn->n_rx == 1 ? "" : "s", cn->n_tx,
	       cn->n_rx > 0 ? cn->rx[0].mask + 1u : 0u);
	if (cn->n_rx < s->n_rx)
		HG_LOG(WARNING, "memif peer '%s' gave %u of %u RX rings: queues "
		       "%u..%u are not polled", p->name, cn->n_rx, s->n_rx, cn->n_rx,
		       s->n_rx - 1);
	return NULL;
}

/* One message in the order the protocol allows; NULL or why not. */
static const char *
on_msg(struct peer *p, const struct hg_memif_msg *m, int *fd)
{
	const char *why;

	switch (p->state == CONNECTED && m->type != HG_MEMIF_MSG_DISCONNECT ?
		HG_MEMIF_MSG_NONE : m->type) {
	case HG_MEMIF_MSG_INIT:
		if (p->state != HELLO_SENT)
			return "Unexpected message";
		why = on_init(p, &m->init);
		break;
	case HG_MEMIF_MSG_ADD_REGION:
		if (p->state != INITED)
			return "Unexpected message";
		why = on_add_region(p, &m->add_region, fd);
		break;
	case HG_MEMIF_MSG_ADD_RING:
		if (p->state != INITED)
			return "Unexpected message";
		why = on_add_ring(p, &m->add_ring, fd);
		break;
	case HG_MEMIF_MSG_CONNECT:
		if (p->state != INITED)
			return "Unexpected message";
		memcpy(p->name, m->connect.if_name, HG_MEMIF_NAME_SZ);
		if ((why = on_connect(p)) == NULL)
			send_type(p, HG_MEMIF_MSG_CONNECTED);
		return why;
	case HG_MEMIF_MSG_DISCONNECT:
		return "";
	case HG_MEMIF_MSG_ACK:
		return NULL;
	default:
		return "Unexpected message";
	}
	if (why == NULL)
		send_type(p, HG_MEMIF_MSG_ACK);
	return why;
}

/* Receives one message and the descriptors that came with it; keeps at
 * most one and closes the others. */
static ssize_t
recv_msg(int sock, struct hg_memif_msg *m, int *fd)
{
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	size_t k, nfd;
	int got;

	*fd = -1;
	if (n < 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			memcpy(&got, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -2;
	return n;
}

static void
on_peer(evutil_socket_t sock, short what, void *arg)
{
	struct peer *p = arg;
	struct hg_memif_msg m;
	const char *why;
	ssize_t n;
	int fd;

	(void)what;
	memset(&m, 0, sizeof(m));
	n = recv_msg(sock, &m, &fd);
	if (n < 0 && n != -2 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 0 || (n < 0 && n != -2)) {
		peer_close(p);		/* gone */
		return;
	}
	why = n != (ssize_t)sizeof(m) ? "Invalid message size" : on_msg(p, &m, &fd);
	if (fd >= 0)
		close(fd);		/* one nobody took */
	if (why != NULL && why[0] == '\0')
		peer_close(p);		/* it said goodbye */
	else if (why != NULL)
		refuse(p, why);
}

static void
on_handshake_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	refuse(arg, "Handshake took too long");
}

static void
on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct hg_memif_server *s = arg;
	struct timeval tv = { HG_MIF_HANDSHAKE_MS / 1000, 0 };
	struct peer *p = NULL;
	uint32_t i;
	int fd;

	(void)what;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < HG_MIF_PENDING && p == NULL; i++)
		if (s->peer[i].state == FREE)
			p = &s->peer[i];
	if (p == NULL) {
		close(fd);		/* the handshakes under way are enough */
		s->refused++;
		return;
	}
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->fd = fd;
	p->ev = event_new(s->base, fd, EV_READ | EV_PERSIST, on_peer, p);
	p->timeout = evtimer_new(s->base, on_handshake_timeout, p);
	if (p->ev == NULL || p->timeout == NULL) {
		if (p->ev != NULL)
			event_free(p->ev);
		if (p->timeout != NULL)
			event_free(p->timeout);
		close(fd);
		p->state = FREE;
		return;
	}
	p->state = HELLO_SENT;
	event_add(p->ev, NULL);
	evtimer_add(p->timeout, &tv);
	send_hello(p);
}

struct hg_memif_server *
hg_memif_open(struct event_base *base, struct hg_dp *dp, const char *path,
	      unsigned mode)
{
	struct hg_memif_server *s = calloc(1, sizeof(*s));

	RTE_VERIFY(dp->mif != NULL && dp->qs != NULL);
	if (s == NULL)
		return NULL;
	s->dp = dp;
	s->mif = dp->mif;
	s->base = base;
	s->n_rx = dp->n_cores * dp->rxq_per_core;
	s->n_tx = dp->n_cores * dp->txq_per_core;
	RTE_VERIFY(s->n_rx <= HG_MIF_RX_RINGS && s->n_tx <= HG_MIF_TX_RINGS);
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->lfd = hg_unix_listen("--memif", path, SOCK_SEQPACKET, mode);
	s->reaper = evtimer_new(base, on_reap, s);
	if (s->lfd >= 0)
		s->lev = event_new(base, s->lfd, EV_READ | EV_PERSIST, on_accept, s);
	if (s->lev == NULL || s->reaper == NULL || event_add(s->lev, NULL) < 0) {
		hg_memif_close(s);
		return NULL;
	}
	HG_LOG(INFO, "memif: listening on %s%s for a peer with up to %u rings "
	       "to us and %u back", path, path[0] == '@' ? " (abstract: any local "
	       "process may connect)" : "", s->n_rx, s->n_tx);
	return s;
}

void
hg_memif_close(struct hg_memif_server *s)
{
	uint32_t i;

	if (s == NULL)
		return;
	for (i = 0; i < HG_MIF_PENDING; i++)
		peer_close(&s->peer[i]);
	/* the cores have stopped: nothing can hold a departed peer's rings */
	for (i = 0; i < s->n_retiring; i++)
		conn_free(s->retiring[i].conn);
	if (s->lev != NULL)
		event_free(s->lev);
	if (s->reaper != NULL)
		event_free(s->reaper);
	if (s->lfd >= 0) {
		close(s->lfd);
		hg_unix_unlink(s->path);
	}
	free(s);
}

void
hg_memif_get_status(const struct hg_memif_server *s, struct hg_memif_status *st)
{
	const struct peer *o = s->owner;

	memset(st, 0, sizeof(*st));
	st->connects = s->connects;
	st->refused = s->refused;
	st->kicks = s->kicks_gone;
	snprintf(st->refusal, sizeof(st->refusal), "%s", s->refusal);
	if (o == NULL || o->conn == NULL)
		return;
	st->connected = 1;
	st->rx_rings = o->conn->n_rx;
	st->tx_rings = o->conn->n_tx;
	st->ring_slots = o->conn->n_rx > 0 ? o->conn->rx[0].mask + 1u :
			 o->conn->n_tx > 0 ? o->conn->tx[0].mask + 1u : 0;
	st->kicks += conn_kicks(o->conn);
	snprintf(st->peer, sizeof(st->peer), "%s", o->name);
}

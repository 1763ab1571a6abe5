/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The memif client (memif_client.h): the handshake on a SOCK_SEQPACKET
 * socket, one region, and the rings. Written by hand because no library
 * in Debian offers a memif client without DPDK's mbufs in the way (see
 * the header); it is small, and the protocol is proto/memif.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "memif_client.h"

#define HANDSHAKE_MS 5000

static int
fail(char *err, size_t n, const char *fmt, const char *what)
{
	snprintf(err, n, fmt, what);
	return -1;
}

static int
send_msg(struct hg_mc *mc, const struct hg_memif_msg *m, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (void *)m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		mh.msg_control = ctl;
		mh.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(mc->sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -1;
}

/* The next message, which must be of type want; a DISCONNECT's reason
 * goes to err. */
static int
expect(struct hg_mc *mc, uint16_t want, struct hg_memif_msg *m, char *err, size_t n)
{
	ssize_t got = recv(mc->sock, m, sizeof(*m), 0);

	if (got != (ssize_t)sizeof(*m))
		return fail(err, n, "the memif server hung up%s",
			    got < 0 ? " (or did not answer in time)" : "");
	if (m->type == HG_MEMIF_MSG_DISCONNECT) {
		m->disconnect.string[HG_MEMIF_REASON_SZ - 1] = '\0';
		return fail(err, n, "the memif server refused: %s",
			    (const char *)m->disconnect.string);
	}
	if (m->type != want)
		return fail(err, n, "the memif server said something unexpected%s", "");
	return 0;
}

static int
ask(struct hg_mc *mc, const struct hg_memif_msg *m, int fd, uint16_t want,
    char *err, size_t n)
{
	struct hg_memif_msg r;

	if (send_msg(mc, m, fd) < 0)
		return fail(err, n, "cannot talk to the memif server: %s", strerror(errno));
	return expect(mc, want, &r, err, n);
}

static int
dial(struct hg_mc *mc, const char *path, char *err, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { HANDSHAKE_MS / 1000, 0 };
	size_t len = strlen(path);
	int abstract = path[0] == '@', tries;

	if (len >= sizeof(sa.sun_path))
		return fail(err, n, "memif socket path too long: %s", path);
	memcpy(sa.sun_path, path, len);
	if (abstract)
		sa.sun_path[0] = '\0';
	mc->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (mc->sock < 0 ||
	    setsockopt(mc->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return fail(err, n, "no socket: %s", strerror(errno));
	/* a server that is starting has no socket yet: as DPDK's client,
	 * try again for a while */
	for (tries = 0; tries < HANDSHAKE_MS / 50; tries++) {
		if (connect(mc->sock, (struct sockaddr *)&sa,
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
					!abstract)) == 0)
			return 0;
		if (errno != ENOENT && errno != ECONNREFUSED)
			break;
		usleep(50000);
	}
	return fail(err, n, "cannot connect to memif socket %s", path);
}

/* Ring i (C2S first, then S2C): 2^log2 slots, or the most a ring may
 * have for the rings in mc->deep and mc->deep_s2c. */
static unsigned
log2_of(const struct hg_mc *mc, unsigned i)
{
	uint64_t deep = i < mc->n_c2s ? mc->deep : mc->deep_s2c;
	unsigned k = i < mc->n_c2s ? i : i - mc->n_c2s;

	return deep >> k & 1 ? HG_MEMIF_LOG2_RING_MAX : mc->log2;
}

static struct hg_mc_ring *
ring_at(struct hg_mc *mc, unsigned i)
{
	return i < mc->n_c2s ? &mc->c2s[i] : &mc->s2c[i - mc->n_c2s];
}

/* Does slot s of q point at its own buffer (hg_mc_ring.own)? */
static inline int
own_is(const struct hg_mc_ring *q, unsigned s)
{
	return (int)(q->own[s / 64] >> (s % 64) & 1);
}

/* Marks slot s of q as pointing at its own buffer (on) or not. */
static inline void
own_mark(struct hg_mc_ring *q, unsigned s, int on)
{
	if (own_is(q, s) == on)
		return;
	q->own[s / 64] ^= 1ull << (s % 64);
	q->n_own = on ? q->n_own + 1 : q->n_own - 1;
}

/* The rings one after the other, then each one's buffers, then the
 * caller's bytes. */
static int
make_region(struct hg_mc *mc, size_t extra, char *err, size_t n)
{
	unsigned rings = mc->n_c2s + mc->n_s2c, i, k;
	uint64_t at = 0, bufs;
	int fd;

	for (i = 0; i < rings; i++)
		at += hg_memif_ring_bytes(log2_of(mc, i));
	bufs = at;
	for (i = 0; i < rings; i++)
		at += ((uint64_t)mc->bsize) << log2_of(mc, i);
	mc->size = at + extra;
	mc->extra = (uint32_t)at;
	if (mc->size > UINT32_MAX)
		return fail(err, n, "memif region too large%s", "");
	fd = memfd_create("hgload-memif", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)mc->size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return fail(err, n, "cannot make the memif region: %s", strerror(errno));
	mc->fds[mc->n_fds++] = fd;
	mc->base = mmap(NULL, mc->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mc->base == MAP_FAILED) {
		mc->base = NULL;
		return fail(err, n, "cannot map the memif region: %s", strerror(errno));
	}
	/* every page allocated now, as a NIC's buffers are pinned before it
	 * runs: the daemon maps a peer's allocated pages at the handshake
	 * (slowpath/memif_server.c), and a page allocated later would be a
	 * page fault on its fast path, in the middle of the measured run.
	 * Without MADV_POPULATE_WRITE (before Linux 5.14) they come as used. */
	(void)madvise(mc->base, mc->size, MADV_POPULATE_WRITE);
	for (i = 0, at = 0; i < rings; i++) {
		struct hg_mc_ring *q = ring_at(mc, i);
		unsigned l2 = log2_of(mc, i);

		q->r = (struct hg_memif_ring *)(mc->base + at);
		q->r->cookie = HG_MEMIF_COOKIE;
		q->mask = (uint16_t)((1u << l2) - 1);
		q->buf0 = (uint32_t)bufs;
		for (k = 0; k <= q->mask; k++) {
			q->r->desc[k] = (struct hg_memif_desc){
				.length = mc->bsize, .offset = q->buf0 + k * mc->bsize };
			/* a C2S slot starts at its own buffer: a replay
			 * points it at its frames on its first lap */
			if (i < mc->n_c2s)
				own_mark(q, k, 1);
		}
		at += hg_memif_ring_bytes(l2);
		bufs += ((uint64_t)mc->bsize) << l2;
	}
	return 0;
}

static int
add_ring(struct hg_mc *mc, unsigned i, int c2s, char *err, size_t n)
{
	const struct hg_mc_ring *q = c2s ? &mc->c2s[i] : &mc->s2c[i];
	struct hg_memif_msg m = { .type = HG_MEMIF_MSG_ADD_RING };
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (efd < 0)
		return fail(err, n, "no eventfd: %s", strerror(errno));
	mc->fds[mc->n_fds++] = efd;
	(c2s ? &mc->c2s[i] : &mc->s2c[i])->efd = efd;
	m.add_ring = (struct hg_memif_add_ring){
		.flags = c2s ? HG_MEMIF_RING_C2S : 0, .index = (uint16_t)i, .region = 0,
		.offset = (uint32_t)((uint8_t *)q->r - mc->base),
		.log2_ring_size = (uint8_t)__builtin_ctz(q->mask + 1u) };
	return ask(mc, &m, efd, HG_MEMIF_MSG_ACK, err, n);
}

/* HELLO's limits against what we want. */
static int
check_hello(struct hg_mc *mc, const struct hg_memif_hello *h, char *err, size_t n)
{
	char why[160];

	memcpy(mc->server, h->name, HG_MEMIF_NAME_SZ);
	mc->server[HG_MEMIF_NAME_SZ] = '\0';
	if (h->min_version > HG_MEMIF_VERSION || h->max_version < HG_MEMIF_VERSION)
		return fail(err, n, "the memif server speaks another version%s", "");
	/* rings back: one per ring towards it where the server sends on that
	 * many (hourglassd sends each RX queue's answers on its own), else as
	 * many as it takes */
	if (mc->n_s2c > h->max_s2c_ring + 1u)
		mc->n_s2c = h->max_s2c_ring + 1u;
	if (mc->n_c2s > h->max_c2s_ring + 1u ||
	    mc->log2 > h->max_log2_ring_size ||
	    ((mc->deep | mc->deep_s2c) && h->max_log2_ring_size < HG_MEMIF_LOG2_RING_MAX)) {
		snprintf(why, sizeof(why), "the memif server takes %u rings towards it, "
			 "%u back, of 2^%u slots at most", h->max_c2s_ring + 1u,
			 h->max_s2c_ring + 1u, (unsigned)h->max_log2_ring_size);
		return fail(err, n, "%s", why);
	}
	return 0;
}

int
hg_mc_connect(struct hg_mc *mc, const char *path, unsigned n_c2s, unsigned n_s2c,
	      unsigned log2, uint64_t deep, uint64_t deep_s2c, unsigned bsize, size_t extra, char *err,
	      size_t n)
{
	struct hg_memif_msg m;
	unsigned i;

	memset(mc, 0, sizeof(*mc));
	mc->sock = -1;
	mc->n_c2s = n_c2s;
	mc->n_s2c = n_s2c;
	mc->log2 = log2;
	mc->deep = deep;
	mc->deep_s2c = deep_s2c;
	mc->bsize = bsize;
	if (n_c2s == 0 || n_s2c == 0 || n_c2s > HG_MC_RINGS || n_s2c > HG_MC_RINGS ||
	    log2 < 1 || log2 > HG_MEMIF_LOG2_RING_MAX)
		return fail(err, n, "memif: no such ring geometry%s", "");
	if (dial(mc, path, err, n) < 0 || expect(mc, HG_MEMIF_MSG_HELLO, &m, err, n) < 0 ||
	    check_hello(mc, &m.hello, err, n) < 0 || make_region(mc, extra, err, n) < 0)
		return -1;
	m = (struct hg_memif_msg){ .type = HG_MEMIF_MSG_INIT };
	m.init.version = HG_MEMIF_VERSION;
	snprintf((char *)m.init.name, sizeof(m.init.name), "hgload");
	if (ask(mc, &m, -1, HG_MEMIF_MSG_ACK, err, n) < 0)
		return -1;
	m = (struct hg_memif_msg){ .type = HG_MEMIF_MSG_ADD_REGION };
	m.add_region.size = mc->size;
	if (ask(mc, &m, mc->fds[0], HG_MEMIF_MSG_ACK, err, n) < 0)
		return -1;
	for (i = 0; i < n_c2s; i++)
		if (add_ring(mc, i, 1, err, n) < 0)
			return -1;
	for (i = 0; i < mc->n_s2c; i++)
		if (add_ring(mc, i, 0, err, n) < 0)
			return -1;
	m = (struct hg_memif_msg){ .type = HG_MEMIF_MSG_CONNECT };
	snprintf((char *)m.connect.if_name, sizeof(m.connect.if_name), "hgload0");
	if (ask(mc, &m, -1, HG_MEMIF_MSG_CONNECTED, err, n) < 0)
		return -1;
	/* the server zeroed every head and tail on CONNECT: from here on
	 * they are ours. We poll what we receive on (no eventfd writes),
	 * and every receive buffer is the server's to fill. */
	for (i = 0; i < mc->n_s2c; i++) {
		struct hg_mc_ring *q = &mc->s2c[i];

		__atomic_store_n(&q->r->flags, HG_MEMIF_RING_FLAG_MASK_INT, __ATOMIC_RELAXED);
		q->head = (uint16_t)(q->mask + 1u);
		__atomic_store_n(&q->r->head, q->head, __ATOMIC_RELEASE);
	}
	return 0;
}

void
hg_mc_close(struct hg_mc *mc)
{
	unsigned i;

	if (mc->sock >= 0)
		close(mc->sock);
	if (mc->base != NULL)
		munmap(mc->base, mc->size);
	for (i = 0; i < mc->n_fds; i++)
		close(mc->fds[i]);
	memset(mc, 0, sizeof(*mc));
	mc->sock = -1;
}

void
hg_mc_publish(struct hg_mc *mc, unsigned i, const uint16_t *len, unsigned n)
{
	struct hg_mc_ring *q = &mc->c2s[i];
	unsigned k;

	for (k = 0; k < n; k++) {
		uint16_t s = (uint16_t)(q->head + k) & q->mask;

		/* the slot's own buffer: a replay may have pointed it away */
		q->r->desc[s] = (struct hg_memif_desc){
			.length = len[k], .offset = q->buf0 + (uint32_t)s * mc->bsize };
		own_mark(q, s, 1);
	}
	q->head = (uint16_t)(q->head + n);
	__atomic_store_n(&q->r->head, q->head, __ATOMIC_RELEASE);
}

static void
point(struct hg_mc_ring *q, uint16_t slot, const uint32_t *off, const uint16_t *len,
      unsigned nf, uint32_t extra)
{
	unsigned f = slot % nf, s = slot & q->mask;

	q->r->desc[s] = (struct hg_memif_desc){ .length = len[f], .offset = extra + off[f] };
	own_mark(q, s, 0);
}

/* Points back at the replay's frames the next room slots of q that
 * another sender's frame left pointing at their own buffers: left so, the
 * replay would publish that frame again on every lap of the ring (the
 * victim's requests of bench/isolation reached the daemon ~3 times each
 * beside a flood on its ring, and came back as duplicates). Whole words
 * of slots the replay's frames still fill are skipped. */
static void
point_own(struct hg_mc_ring *q, unsigned room, const uint32_t *off, const uint16_t *len,
	  unsigned nf, uint32_t extra)
{
	unsigned k = 0;

	while (k < room && q->n_own > 0) {
		uint16_t slot = (uint16_t)(q->head + k);
		unsigned s = slot & q->mask;

		if (s % 64 == 0 && room - k >= 64 && q->own[s / 64] == 0) {
			k += 64;
			continue;
		}
		if (own_is(q, s))
			point(q, slot, off, len, nf, extra);
		k++;
	}
}

unsigned
hg_mc_replay_push(struct hg_mc *mc, unsigned i, const uint32_t *off,
		  const uint16_t *len, unsigned nf, unsigned keep, int rewrite)
{
	struct hg_mc_ring *q = &mc->c2s[i];
	unsigned room = hg_mc_room(mc, i), k;

	if (room <= keep)
		return 0;
	room -= keep;
	if (rewrite)
		for (k = 0; k < room; k++)
			point(q, (uint16_t)(q->head + k), off, len, nf, mc->extra);
	else
		point_own(q, room, off, len, nf, mc->extra);
	q->head = (uint16_t)(q->head + room);
	__atomic_store_n(&q->r->head, q->head, __ATOMIC_RELEASE);
	return room;
}

/* Slot s of S2C ring q back to the server, its buffer as it was posted. */
static inline void
repost(const struct hg_mc *mc, struct hg_mc_ring *q, uint16_t s)
{
	q->r->desc[s] = (struct hg_memif_desc){
		.length = mc->bsize, .offset = q->buf0 + (uint32_t)s * mc->bsize };
}

/* The n slots read since the last call (reposted) go back to the server. */
static inline void
rx_done(struct hg_mc_ring *q, unsigned n)
{
	q->next = (uint16_t)(q->next + n);
	q->head = (uint16_t)(q->head + n);
	__atomic_store_n(&q->r->head, q->head, __ATOMIC_RELEASE);
}

unsigned
hg_mc_rx(struct hg_mc *mc, unsigned i, unsigned max,
	 void (*fn)(void *arg, const uint8_t *f, uint32_t len), void *arg)
{
	struct hg_mc_ring *q = &mc->s2c[i];
	uint16_t tail = __atomic_load_n(&q->r->tail, __ATOMIC_ACQUIRE), s;
	unsigned got = 0;

	while ((uint16_t)(q->next + got) != tail && got < max) {
		struct hg_memif_desc d;

		s = (uint16_t)(q->next + got) & q->mask;
		memcpy(&d, &q->r->desc[s], sizeof(d));
		/* the server is trusted less than our own memory */
		if ((uint64_t)d.offset + d.length <= mc->size && d.region == 0)
			fn(arg, mc->base + d.offset, d.length);
		repost(mc, q, s);
		got++;
	}
	if (got > 0)
		rx_done(q, got);
	return got;
}

unsigned
hg_mc_rx_release(struct hg_mc *mc, unsigned i)
{
	struct hg_mc_ring *q = &mc->s2c[i];
	uint16_t tail = __atomic_load_n(&q->r->tail, __ATOMIC_ACQUIRE);
	unsigned got = (uint16_t)(tail - q->next), k;

	/* never more than the ring, whatever the server wrote */
	if (got > (unsigned)q->mask + 1u)
		got = (unsigned)q->mask + 1u;

	for (k = 0; k < got; k++)
		repost(mc, q, (uint16_t)(q->next + k) & q->mask);
	rx_done(q, got);
	return got;
}

static int
rx_pending(const struct hg_mc *mc)
{
	unsigned i;

	for (i = 0; i < mc->n_s2c; i++)
		if (!(mc->sunk >> i & 1) &&
		    __atomic_load_n(&mc->s2c[i].r->tail, __ATOMIC_ACQUIRE) != mc->s2c[i].next)
			return 1;
	return 0;
}

/* Sets the flags of the rings that wait (all but the quiet ones). */
static void
mask_rx(struct hg_mc *mc, uint16_t flags)
{
	unsigned i;

	for (i = 0; i < mc->n_s2c; i++)
		if (!(mc->quiet >> i & 1))
			__atomic_store_n(&mc->s2c[i].r->flags, flags, __ATOMIC_RELAXED);
}

void
hg_mc_set_quiet(struct hg_mc *mc, uint64_t rings)
{
	uint64_t all = mc->n_s2c >= 64 ? UINT64_MAX : (1ull << mc->n_s2c) - 1;

	mc->quiet = (rings & all) == all ? 0 : rings & all;
}

void
hg_mc_set_sunk(struct hg_mc *mc, uint64_t rings)
{
	mc->sunk = rings;
	mc->quiet |= rings;
}

int
hg_mc_rx_wait(struct hg_mc *mc, uint64_t ns)
{
	struct pollfd p[HG_MC_RINGS];
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	uint64_t v;
	unsigned i;
	int got;

	mask_rx(mc, 0);
	/* the flag's store before the tails' loads: the server stores a
	 * tail before it loads the flag (fastpath/memif.c), so one of us
	 * sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	got = rx_pending(mc);
	if (!got) {
		for (i = 0; i < mc->n_s2c; i++)
			p[i] = (struct pollfd){ .fd = mc->quiet >> i & 1 ? -1 : mc->s2c[i].efd,
						.events = POLLIN };
		if (ppoll(p, mc->n_s2c, &ts, NULL) > 0)
			for (i = 0; i < mc->n_s2c; i++)
				if (p[i].revents & POLLIN)
					(void)!read(p[i].fd, &v, sizeof(v));
		got = rx_pending(mc);
	}
	mask_rx(mc, HG_MEMIF_RING_FLAG_MASK_INT);
	return got;
}

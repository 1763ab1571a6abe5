/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target, stateful: the real command handlers behind the
 * operator socket and the app socket, driven through connections as the
 * daemon accepts them, while a hostile app writes anything anywhere in
 * its tenant's region between commands, and the slow path (timer, core
 * allocation, credit pool, stats, reclaim) and a fast-path core's TX and SCHED run over what
 * it wrote. The daemon must neither crash nor read outside a region, and
 * every input ends with every tenant deleted and every app reclaimed.
 *
 * Input: records of (op, length / 4, bytes). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "../../slowpath/arena.h"
#include "../../slowpath/config.h"
#include "../../slowpath/core_alloc.h"
#include "../../slowpath/credit_pool.h"
#include "../../slowpath/ctl.h"
#include "../../slowpath/preempt_timer.h"
#include "../../slowpath/stats.h"
#include "fuzz_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { OPERATOR, APP_ROOT, APP_USER, N_CONN };

static struct hg_registry reg;
static struct event_base *base;
static struct hg_ctl *ctl;
static struct hg_timer tm;

struct end {
	struct hg_conn *cn;
	int peer;		/* our end of the socketpair */
};

/* What `config reload` reads: a file in memory, so that libFuzzer ending
 * the process leaves nothing behind. */
static const char conf[] =
	"boost 0.8\n"
	"tenant f1 ports=7300-7309 rpc-ports=7300-7300 weight=2\n"
	"tenant f2 ports=7310-7319 steer=jsq uid=1000\n";

static void
setup(void)
{
	char path[64];
	int fd;

	if (base != NULL)
		return;
	hg_registry_init(&reg, fuzz_env());
	fd = memfd_create("hgfz.conf", 0);
	if (fd < 0 || write(fd, conf, sizeof(conf) - 1) != sizeof(conf) - 1)
		exit(1);
	snprintf(hg_cfg.config, sizeof(hg_cfg.config), "/proc/self/fd/%d", fd);
	base = event_base_new();
	snprintf(path, sizeof(path), "/tmp/hgfz%d.sock", (int)getpid());
	ctl = hg_ctl_open(base, &reg, path, NULL);
	if (base == NULL || ctl == NULL)
		exit(1);
	/* connections come from socketpairs: the listening path is not
	 * needed, and libFuzzer may end the process without a clean-up */
	unlink(path);
}

static void
open_end(struct end *e, int kind)
{
	struct hg_peer peer = { .pid = 1, .uid = kind == APP_USER ? 1000 : 0,
				.gid = kind == APP_USER ? 1000 : 0 };
	int sv[2];

	e->cn = NULL;
	e->peer = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	e->peer = sv[0];
	e->cn = hg_ctl_conn_new(ctl, sv[1], kind != OPERATOR, &peer);
}

/* Reads and drops what the daemon answered, closing any memfd it passed. */
static void
drain(struct end *e)
{
	char buf[65536], cm[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *h;

	if (e->peer < 0)
		return;
	for (;;) {
		mh.msg_control = cm;
		mh.msg_controllen = sizeof(cm);
		if (recvmsg(e->peer, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
			return;
		for (h = CMSG_FIRSTHDR(&mh); h != NULL; h = CMSG_NXTHDR(&mh, h)) {
			int fd, k, n = (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (k = 0; h->cmsg_type == SCM_RIGHTS && k < n; k++) {
				memcpy(&fd, CMSG_DATA(h) + k * sizeof(int), sizeof(fd));
				close(fd);
			}
		}
	}
}

static void
close_end(struct end *e)
{
	drain(e);
	if (e->cn != NULL)
		hg_ctl_conn_close(e->cn);
	if (e->peer >= 0)
		close(e->peer);
	e->cn = NULL;
	e->peer = -1;
}

/* The hostile app: bytes at an offset of tenant t's region, the first
 * 64 pages (header, blocks, the first rings) most of the time, written
 * through a mapping of the memfd as an app has (the daemon's own view has
 * private read-only pages an app cannot reach). */
static void
scribble(const uint8_t *b, size_t n)
{
	const struct hg_tenant_sp *t;
	uint64_t off, span;
	uint8_t *app;

	if (n < 5)
		return;
	t = &reg.t[b[0] % HG_MAX_TENANTS];
	if (!t->used || t->region.fd < 0)
		return;
	memcpy(&off, (uint8_t[8]){ b[1], b[2], b[3], b[4] & 0x7f }, 8);
	span = (b[4] & 0x80) ? t->region.size : 64u * HG_PAGE_SIZE;
	off %= span;
	n -= 5;
	if (n > t->region.size - off)
		n = t->region.size - off;
	app = mmap(NULL, t->region.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   t->region.fd, 0);
	if (app == MAP_FAILED)
		return;
	memcpy(app + off, b + 5, n);
	munmap(app, t->region.size);
}

/* One pass of everything that reads the regions. */
static void
step(void)
{
	struct hg_dp *dp = reg.dp;
	struct hg_arena a = { 0 };

	hg_timer_tick(&reg, &tm, (uint64_t)rte_rdtsc());
	hg_core_bells(&reg);
	hg_core_tick(&reg, rte_rdtsc());
	hg_credit_tick(&reg, rte_rdtsc());
	dp->core[0].now = rte_rdtsc();		/* what the core loop stamps */
	hg_fp_tx(dp, &dp->core[0]);
	hg_fp_sched(dp, &dp->core[0]);
	hg_fp_commands(&dp->core[0]);
	hg_rpc_scan(dp, &dp->core[0]);
	hg_registry_poll(&reg);
	if (hg_stats_collect(&reg, -1, &a) == NULL ||
	    hg_tenants_collect(&reg, &a) == NULL)
		__builtin_trap();
	hg_arena_free(&a);
}

/* Back to no tenants: every app detached and reclaimed, and nothing
 * held for any connection (max-conns-buffered's account balances). */
static void
reset(struct end *ends)
{
	unsigned i;

	for (i = 0; i < N_CONN; i++)
		close_end(&ends[i]);
	fuzz_del_all(&reg);
	if (reg.ctl.buffered != 0 || reg.ctl.conns[0] + reg.ctl.conns[1] != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct end ends[N_CONN];
	size_t off = 0;
	unsigned i;

	setup();
	for (i = 0; i < N_CONN; i++)
		open_end(&ends[i], (int)i);
	while (off + 2 <= size) {
		uint8_t op = data[off];
		size_t n = data[off + 1] * 4u;
		struct end *e;

		off += 2;
		if (n > size - off)
			n = size - off;
		switch (op % 5) {
		case 0: case 1: case 2:
			e = &ends[op % 5];
			if (e->cn != NULL && hg_ctl_conn_input(e->cn, data + off, n) < 0)
				e->cn = NULL;	/* the daemon hung up */
			drain(e);
			break;
		case 3:
			scribble(data + off, n);
			break;
		case 4:
			step();
			if (op & 0x80) {	/* an app dies, another comes */
				e = &ends[APP_ROOT + ((op >> 5) & 1)];
				close_end(e);
				open_end(e, (int)(e - ends));
			}
			break;
		}
		off += n;
	}
	step();
	reset(ends);
	return 0;
}

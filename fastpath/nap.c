/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "nap.h"

/* The RX queues' fds are edge-triggered, as DPDK's own epoll registers
 * them: a tap fd's readiness is its packets, which only the next burst
 * may consume, and memif's eventfd is never read. */
static int
watch(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

unsigned
hg_nap_init(struct hg_dp *dp, struct hg_fp_core *c)
{
	unsigned q, armed = 0;
	int fd;

	c->nap_ep = epoll_create1(EPOLL_CLOEXEC);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->nap_ep < 0 || c->wake_fd < 0 || watch(c->nap_ep, c->wake_fd, 0) < 0) {
		hg_nap_fini(c);
		return 0;
	}
	for (q = 0; dp->rx_intr && q < c->n_rxq; q++) {
		fd = rte_eth_dev_rx_intr_ctl_q_get_fd(c->rxq[q].port, c->rxq[q].id);
		if (fd < 0 || watch(c->nap_ep, fd, q + 1) < 0)
			break;
		armed++;
	}
	/* all of them or none: a queue left out would wait a whole nap */
	c->n_armed = armed == c->n_rxq ? armed : 0;
	return c->n_armed;
}

void
hg_nap_fini(struct hg_fp_core *c)
{
	if (c->nap_ep >= 0)
		close(c->nap_ep);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->nap_ep = c->wake_fd = -1;
	c->n_armed = 0;
}

static void
arm(struct hg_fp_core *c, int on)
{
	unsigned q;

	for (q = 0; q < c->n_armed; q++) {
		if (on)
			rte_eth_dev_rx_intr_enable(c->rxq[q].port, c->rxq[q].id);
		else
			rte_eth_dev_rx_intr_disable(c->rxq[q].port, c->rxq[q].id);
	}
}

int
hg_nap(struct hg_fp_core *c, unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000 };
	struct epoll_event ev[HG_MAX_RXQ + 1];
	uint64_t drain;
	int n, i;

	c->naps++;
	if (c->nap_ep < 0 || c->nap_sleep) {
		rte_delay_us_sleep(us);
		return 0;
	}
	arm(c, 1);
	n = epoll_pwait2(c->nap_ep, ev, HG_MAX_RXQ + 1, &ts, NULL);
	arm(c, 0);
	if (n < 0 && errno == ENOSYS) {
		/* a kernel before 5.11: sleep as without interrupts (the fds
		 * stay open: the slow path may be writing the wake-up one) */
		c->n_armed = 0;
		c->nap_sleep = 1;
		rte_delay_us_sleep(us);
		return 0;
	}
	if (n <= 0)
		return 0;
	c->nap_wakes++;
	for (i = 0; i < n; i++)
		if (ev[i].data.u64 == 0 && read(c->wake_fd, &drain, sizeof(drain)) < 0)
			break;	/* EAGAIN: another wake-up drained it */
	return 1;
}

void
hg_nap_wake(struct hg_fp_core *c)
{
	uint64_t one = 1;
	int fd = __atomic_load_n(&c->wake_fd, __ATOMIC_RELAXED);

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		return;	/* EAGAIN: the counter is full, a wake-up stands */
}

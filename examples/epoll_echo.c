/* SPDX-License-Identifier: BSD-3-Clause
 *
 * An Hourglass app in an event loop: the context's descriptor sits in the
 * app's own epoll set beside whatever else the loop serves (here, a timer
 * that prints a count each second). The loop never blocks inside the
 * library, and it learns of the daemon's death from the same descriptor:
 * hg_ctx_arm returns -ENOTCONN.
 *
 *   cc -o epoll_echo epoll_echo.c $(pkg-config --cflags --libs hgclient)
 *   ./epoll_echo TENANT PORT
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <hourglass.h>

/* Everything waiting, then arm: 1 (more came: serve again), 0 (armed:
 * the next delivery wakes the loop) or a negative errno. */
static int
serve(hg_ctx_t *ctx, uint64_t *echoed)
{
	struct hg_msg m;
	int rc;

	while ((rc = hg_recv(ctx, &m, 0)) == 1) {
		if (hg_send(ctx, &m, m.data, m.len) < 0)
			hg_msg_free(ctx, &m);
		else
			++*echoed;
	}
	return rc < 0 ? rc : hg_ctx_arm(ctx);
}

int
main(int argc, char **argv)
{
	struct itimerspec second = { { 1, 0 }, { 1, 0 } };
	struct epoll_event ev = { .events = EPOLLIN }, out[8];
	uint64_t echoed = 0, ticks;
	int ep, tfd, rc = 0, i, n;
	hg_app_t *app;
	hg_ctx_t *ctx;

	if (argc < 3) {
		fprintf(stderr, "usage: %s TENANT PORT\n", argv[0]);
		return 2;
	}
	app = hg_attach(NULL, argv[1]);
	if (app == NULL || hg_bind(app, (uint16_t)atoi(argv[2])) < 0 ||
	    (ctx = hg_ctx_open(app)) == NULL) {
		fprintf(stderr, "epoll_echo: %s\n", hg_strerror());
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ev.data.fd = hg_ctx_fd(ctx);
	if (ep < 0 || tfd < 0 || ev.data.fd < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0) {
		perror("epoll_echo");
		return 1;
	}
	ev.data.fd = tfd;
	timerfd_settime(tfd, 0, &second, NULL);
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	printf("epoll_echo: tenant %s, port %s\n", argv[1], argv[2]);
	fflush(stdout);
	for (;;) {
		while ((rc = serve(ctx, &echoed)) == 1)
			;
		if (rc < 0)
			break;
		n = epoll_wait(ep, out, 8, -1);		/* no timeout: events only */
		for (i = 0; i < n; i++) {
			if (out[i].data.fd == tfd && read(tfd, &ticks, sizeof(ticks)) > 0) {
				printf("epoll_echo: %llu echoed\n", (unsigned long long)echoed);
				fflush(stdout);
			}
		}
	}
	fprintf(stderr, "epoll_echo: %s after %llu echoed\n", hg_strerror(),
		(unsigned long long)echoed);
	hg_detach(app);
	return rc == -ENOTCONN ? 0 : 1;
}

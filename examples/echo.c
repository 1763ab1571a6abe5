/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The smallest Hourglass app: attaches to a tenant, binds one of its
 * ports and sends every datagram back to its sender, from one thread that
 * blocks in hg_recv. Build it against an installed libhgclient:
 *
 *   cc -o echo echo.c $(pkg-config --cflags --libs hgclient)
 *   ./echo TENANT PORT [SECONDS]
 *
 * $HG_CTL names the daemon's app socket if it is not the default.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hourglass.h>

int
main(int argc, char **argv)
{
	long seconds = argc > 3 ? atol(argv[3]) : 60;
	time_t end = time(NULL) + seconds;
	struct hg_msg m;
	hg_app_t *app;
	hg_ctx_t *ctx;
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s TENANT PORT [SECONDS]\n", argv[0]);
		return 2;
	}
	app = hg_attach(NULL, argv[1]);
	if (app == NULL) {
		fprintf(stderr, "echo: %s\n", hg_strerror());
		return 1;
	}
	if (hg_bind(app, (uint16_t)atoi(argv[2])) < 0 || (ctx = hg_ctx_open(app)) == NULL) {
		fprintf(stderr, "echo: %s\n", hg_strerror());
		hg_detach(app);
		return 1;
	}
	printf("echo: libhgclient %s, tenant %s, port %s\n", hg_version(), argv[1], argv[2]);
	fflush(stdout);
	while (time(NULL) < end) {
		rc = hg_recv(ctx, &m, 100000);	/* us: 100 ms, to see the clock */
		if (rc < 0)
			break;
		if (rc == 1 && hg_send(ctx, &m, m.data, m.len) < 0)
			hg_msg_free(ctx, &m);	/* queue full: drop it */
	}
	if (rc < 0)
		fprintf(stderr, "echo: %s\n", hg_strerror());
	hg_detach(app);
	return rc < 0;
}

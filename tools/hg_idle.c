/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-idle: holds many tenants attached and idle from one process, for
 * bench/scale: for each of PREFIX0 .. PREFIX<N-1> it attaches, opens one
 * context and binds port FIRST+i, then waits (at most --seconds, or until
 * SIGTERM/SIGINT) without sending or receiving. An idle tenant that has an
 * app with a context is what the fast path must not pay for: before issue
 * 9 every pass polled each such context's rings.
 *
 *   hg-idle --prefix NAME --count N --first-port P [--from K]
 *           [--seconds S] [--ctl PATH]
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hourglass.h"
#include "../common/hg_util.h"

#define HG_IDLE_MAX 8192u

/* One connection and one region mapping per tenant: take every
 * descriptor the hard limit allows. */
static void
raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int
attach_one(const char *ctl, const char *name, unsigned port, hg_app_t **out)
{
	hg_app_t *app = hg_attach(ctl, name);

	if (app == NULL || hg_ctx_open(app) == NULL ||
	    hg_bind(app, (uint16_t)port) < 0) {
		fprintf(stderr, "hg-idle: %s: %s\n", name, hg_strerror());
		if (app != NULL)
			hg_detach(app);
		return -1;
	}
	*out = app;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ctl", required_argument, NULL, 'c' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "from", required_argument, NULL, 'f' },
		{ "first-port", required_argument, NULL, 'P' },
		{ "seconds", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ctl = NULL, *prefix = NULL;
	unsigned n = 0, from = 0, port = 0, seconds = 600, i;
	static hg_app_t *apps[HG_IDLE_MAX];
	char name[64];
	time_t end;
	int c;

	hg_tool_version(argc, argv, "hg-idle");
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': ctl = optarg; break;
		case 'p': prefix = optarg; break;
		case 'n': n = (unsigned)atoi(optarg); break;
		case 'f': from = (unsigned)atoi(optarg); break;
		case 'P': port = (unsigned)atoi(optarg); break;
		case 's': seconds = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	if (prefix == NULL || n == 0 || n > HG_IDLE_MAX || port == 0 ||
	    port + n > 65536 || seconds > 3600) {
		fprintf(stderr, "usage: hg-idle --prefix NAME --count N (1..%u) "
			"--first-port P [--from K] [--seconds S <= 3600] [--ctl PATH]\n",
			HG_IDLE_MAX);
		return 2;
	}
	hg_stop_on_signals();
	raise_fd_limit();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%u", prefix, from + i);
		if (attach_one(ctl, name, port + i, &apps[i]) < 0)
			return 1;
	}
	printf("ready %u\n", n);
	fflush(stdout);
	end = time(NULL) + (time_t)seconds;
	while (!hg_stop && time(NULL) < end)
		usleep(100000);
	for (i = 0; i < n; i++)
		hg_detach(apps[i]);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-hostile: an app that does what a hostile tenant would do to its own
 * region, for the isolation tests: it attaches, opens contexts,
 * binds a port, then overwrites the first pages of its region (the header
 * page with every offset and size the daemon once wrote there, the
 * context and app blocks, the first rings' geometry and index words) with
 * a pattern, again and again for --seconds, and exits. A daemon that read
 * anything back from those pages would index outside the region.
 *
 *   hg-hostile --ctl PATH --tenant NAME --port P [--contexts N]
 *              [--pages N] [--pattern ff|rand] [--seconds S]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../libclient/client.h"

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
scribble(uint8_t *p, size_t n, int rnd, uint64_t *seed)
{
	size_t i;

	if (!rnd) {
		memset(p, 0xff, n);
		return;
	}
	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t v = xorshift(seed);

		memcpy(p + i, &v, 8);
	}
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ctl", required_argument, NULL, 'c' },
		{ "tenant", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "contexts", required_argument, NULL, 'n' },
		{ "pages", required_argument, NULL, 'P' },
		{ "pattern", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ctl = NULL, *tenant = NULL;
	unsigned port = 0, n_ctx = 2, pages = 64, seconds = 3, i;
	int c, rnd = 0;
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	time_t end;
	hg_app_t *app;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': ctl = optarg; break;
		case 't': tenant = optarg; break;
		case 'p': port = (unsigned)atoi(optarg); break;
		case 'n': n_ctx = (unsigned)atoi(optarg); break;
		case 'P': pages = (unsigned)atoi(optarg); break;
		case 'r': rnd = strcmp(optarg, "rand") == 0; break;
		case 's': seconds = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	if (tenant == NULL || seconds > 60)
		return 2;
	app = hg_attach(ctl, tenant);
	if (app == NULL) {
		fprintf(stderr, "hg-hostile: %s\n", hg_strerror());
		return 1;
	}
	for (i = 0; i < n_ctx && i < HG_MAX_CTX; i++)
		if (hg_ctx_open(app) == NULL)
			break;
	if (port != 0 && hg_bind(app, (uint16_t)port) < 0) {
		fprintf(stderr, "hg-hostile: bind: %s\n", hg_strerror());
		return 1;
	}
	if ((size_t)pages * HG_PAGE_SIZE > app->size)
		pages = (unsigned)(app->size / HG_PAGE_SIZE);
	printf("scribbling\n");
	fflush(stdout);
	end = time(NULL) + seconds;
	while (time(NULL) < end) {
		scribble(app->base, (size_t)pages * HG_PAGE_SIZE, rnd, &seed);
		usleep(1000);
	}
	printf("done\n");
	return 0;
}

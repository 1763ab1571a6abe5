/* SPDX-License-Identifier: BSD-3-Clause
 * Small helpers every binary shares (the daemon, the library, the tools):
 * the monotonic clock, the flag-only signal handler, dying with a
 * message, --version, a thread's wait for a CPU. */
#ifndef HG_COMMON_UTIL_H
#define HG_COMMON_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hourglass.h"	/* HG_VERSION only: the tools need not link it */

/* CLOCK_MONOTONIC in ns: the clock the library stamps requests with and
 * the daemon's timer reads them by. */
static inline uint64_t
hg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How long a thread waited, runnable, for a CPU (ns): run_delay, the
 * second field of its schedstat file, at path (relative to dir, or
 * AT_FDCWD); 0 if the thread is gone or the kernel keeps no schedstats.
 * The daemon reads its apps' threads, hgload its own. */
static inline uint64_t
hg_run_delay_ns(int dir, const char *path)
{
	unsigned long long run = 0, delay = 0;
	char buf[96];
	ssize_t n;
	int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%llu %llu", &run, &delay) == 2 ? delay : 0;
}

/* Set once SIGINT or SIGTERM arrived (hg_stop_on_signals): the handler
 * only sets the flag, as DPDK's l2fwd does, and each loop looks at it. */
static volatile sig_atomic_t hg_stop __attribute__((unused));

static inline void
hg_on_signal(int sig)
{
	(void)sig;
	hg_stop = 1;
}

static inline void
hg_stop_on_signals(void)
{
	signal(SIGINT, hg_on_signal);
	signal(SIGTERM, hg_on_signal);
}

/* "prog: message[suffix]" on stderr, then exit(code). */
static inline void __attribute__((noreturn, format(printf, 4, 5)))
hg_die(int code, const char *prog, const char *suffix, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", suffix);
	exit(code);
}

/* --version anywhere before a "--": "PROG (Hourglass) X.Y.Z" on stdout,
 * exit 0. Every binary calls it before its own parser, so each answers
 * the same way whatever else its command line holds. */
static inline void
hg_tool_version(int argc, char **argv, const char *prog)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("%s (Hourglass) %s\n", prog, HG_VERSION);
			exit(0);
		}
	}
}

#endif /* HG_COMMON_UTIL_H */

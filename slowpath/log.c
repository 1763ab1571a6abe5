/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* The slow path's log type, in a file of its own: every slow-path file
 * logs, and none should depend on main.c for it. */
RTE_LOG_REGISTER(hg_logtype, hourglass, INFO);

/* rte_log's stream: each line to stderr behind its local time, to the
 * millisecond (DPDK 22.11 prints none). stdio holds the stream's lock
 * around each write, so lines from several threads do not interleave. */
static ssize_t
stamp_write(void *cookie, const char *buf, size_t n)
{
	static int line_start = 1;
	size_t done = 0, len;
	const char *nl;

	(void)cookie;
	while (done < n) {
		if (line_start) {
			struct timeval tv;
			struct tm tm;
			char ts[40];

			gettimeofday(&tv, NULL);
			localtime_r(&tv.tv_sec, &tm);
			len = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
			len += (size_t)snprintf(ts + len, sizeof(ts) - len, ".%03ld ",
						(long)(tv.tv_usec / 1000));
			if (write(STDERR_FILENO, ts, len) < 0)
				return -1;
		}
		nl = memchr(buf + done, '\n', n - done);
		len = nl != NULL ? (size_t)(nl - (buf + done)) + 1 : n - done;
		if (write(STDERR_FILENO, buf + done, len) < 0)
			return -1;
		line_start = nl != NULL;
		done += len;
	}
	return (ssize_t)n;
}

void
hg_log_stamped(void)
{
	cookie_io_functions_t io = { .write = stamp_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (f == NULL)
		return;
	setvbuf(f, NULL, _IOLBF, 0);
	rte_openlog_stream(f);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * udp-echo: what a user would run instead of Hourglass, the baseline of
 * bench/versus-kernel. A plain Linux UDP echo server: one socket per
 * thread and port with SO_REUSEPORT (the kernel spreads flows over them),
 * blocking recvfrom/sendto, nothing tuned. --batch N is the tuned kind:
 * recvmmsg (blocking for the first datagram only) and one sendmmsg for
 * what it took, up to N a call, so that a loaded server pays two system
 * calls a batch instead of two a datagram. Stops by itself after
 * --seconds, or on SIGINT/SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../common/hg_util.h"

#define MAX_THREADS 16
#define MAX_PORTS   8
#define MAX_BATCH   64
#define DGRAM_MAX   2048

static unsigned long served;

struct server {
	pthread_t tid;
	int fd;
	unsigned batch;		/* 1: recvfrom/sendto; more: recvmmsg/sendmmsg */
};

static int
open_socket(struct in_addr ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = ip,
				  .sin_port = htons(port) };
	/* a bounded wait, so the thread notices the deadline */
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --batch: each call takes what is there, up to s->batch, and the
 * answers go back in one call */
static void
serve_batches(const struct server *s)
{
	static __thread char buf[MAX_BATCH][DGRAM_MAX];
	struct sockaddr_in peer[MAX_BATCH];
	struct mmsghdr mm[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	int n, sent;

	while (!hg_stop) {
		for (unsigned i = 0; i < s->batch; i++) {
			iov[i] = (struct iovec){ buf[i], DGRAM_MAX };
			mm[i].msg_hdr = (struct msghdr){ .msg_name = &peer[i],
							 .msg_namelen = sizeof(peer[i]),
							 .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		n = recvmmsg(s->fd, mm, s->batch, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;	/* timeout or signal: look at hg_stop */
		for (int i = 0; i < n; i++)
			iov[i].iov_len = mm[i].msg_len;
		sent = sendmmsg(s->fd, mm, (unsigned)n, 0);
		if (sent > 0)
			__atomic_fetch_add(&served, (unsigned long)sent, __ATOMIC_RELAXED);
	}
}

static void *
serve(void *arg)
{
	struct server *s = arg;
	char buf[DGRAM_MAX];

	if (s->batch > 1) {
		serve_batches(s);
		return NULL;
	}

	while (!hg_stop) {
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		ssize_t n = recvfrom(s->fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&peer, &len);

		if (n < 0)
			continue;	/* timeout or signal: look at hg_stop */
		if (sendto(s->fd, buf, (size_t)n, 0, (struct sockaddr *)&peer, len) == n)
			__atomic_fetch_add(&served, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: udp-echo --bind IP --port P [--port P...] [--threads N]"
		" [--seconds S] [--batch N]\n");
	exit(code);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bind", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "batch", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server srv[MAX_THREADS * MAX_PORTS];
	long ports[MAX_PORTS], threads = 1, seconds = 60, batch = 1, v;
	struct in_addr ip = { 0 };
	int n_ports = 0, n = 0, c, i, k;
	char *end;

	hg_tool_version(argc, argv, "udp-echo");
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (inet_pton(AF_INET, optarg, &ip) != 1)
				usage(2);
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 65535 || n_ports == MAX_PORTS)
				usage(2);
			ports[n_ports++] = v;
			break;
		case 'n':
			threads = strtol(optarg, &end, 10);
			if (*end || threads < 1 || threads > MAX_THREADS)
				usage(2);
			break;
		case 's':
			seconds = strtol(optarg, &end, 10);
			if (*end || seconds < 1 || seconds > 86400)
				usage(2);
			break;
		case 'B':
			batch = strtol(optarg, &end, 10);
			if (*end || batch < 1 || batch > MAX_BATCH)
				usage(2);
			break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (n_ports == 0 || ip.s_addr == 0)
		usage(2);
	hg_stop_on_signals();
	for (k = 0; k < n_ports; k++) {
		for (i = 0; i < threads; i++, n++) {
			srv[n].fd = open_socket(ip, (uint16_t)ports[k]);
			srv[n].batch = (unsigned)batch;
			if (srv[n].fd < 0) {
				fprintf(stderr, "udp-echo: port %ld: %s\n", ports[k],
					strerror(errno));
				return 1;
			}
		}
	}
	for (i = 0; i < n; i++)
		pthread_create(&srv[i].tid, NULL, serve, &srv[i]);
	printf("udp-echo: %d sockets ready\n", n);
	fflush(stdout);
	for (v = 0; v < seconds * 10 && !hg_stop; v++)
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	hg_stop = 1;
	for (i = 0; i < n; i++) {
		pthread_join(srv[i].tid, NULL);
		close(srv[i].fd);
	}
	printf("udp-echo: served %lu\n", served);
	return 0;
}

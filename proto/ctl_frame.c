/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_frame.h"

#define HG_CTL_TIMEOUT_MS 10000

static int64_t
prefix_len(const uint8_t p[4], uint32_t max)
{
	uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		     (uint32_t)p[2] << 8 | p[3];

	return (n == 0 || n > max) ? -1 : (int64_t)n;
}

int64_t
hg_frame_len(const uint8_t p[4])
{
	return prefix_len(p, HG_CTL_MAX_FRAME);
}

int64_t
hg_frame_reply_len(const uint8_t p[4])
{
	return prefix_len(p, HG_CTL_MAX_REPLY);
}

static size_t
frame(size_t n, size_t max, uint8_t **out,
      size_t (*pack)(const void *, uint8_t *), const void *msg)
{
	uint8_t *buf;

	if (n == 0 || n > max)
		return 0;
	buf = malloc(n + 4);
	if (buf == NULL)
		return 0;
	buf[0] = n >> 24;
	buf[1] = n >> 16;
	buf[2] = n >> 8;
	buf[3] = n;
	pack(msg, buf + 4);
	*out = buf;
	return n + 4;
}

static size_t
pack_req(const void *m, uint8_t *b)
{
	return hg__request__pack(m, b);
}

static size_t
pack_rsp(const void *m, uint8_t *b)
{
	return hg__response__pack(m, b);
}

size_t
hg_frame_request(const Hg__Request *req, uint8_t **out)
{
	return frame(hg__request__get_packed_size(req), HG_CTL_MAX_FRAME, out,
		     pack_req, req);
}

size_t
hg_frame_response(const Hg__Response *rsp, uint8_t **out)
{
	return frame(hg__response__get_packed_size(rsp), HG_CTL_MAX_REPLY, out,
		     pack_rsp, rsp);
}

int
hg_ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int
wait_readable(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	int r = poll(&p, 1, HG_CTL_TIMEOUT_MS);

	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0 ? 0 : -1;
}

/* Reads exactly n bytes; the first recvmsg may carry an SCM_RIGHTS fd. */
static int
read_full(int sock, uint8_t *buf, size_t n, int *fd_out)
{
	size_t got = 0;

	while (got < n) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} c;
		struct iovec iov = { buf + got, n - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = c.b,
				     .msg_controllen = sizeof(c.b) };
		struct cmsghdr *cm;
		ssize_t r;

		if (wait_readable(sock) < 0)
			return -1;
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (r <= 0) {
			if (r == 0)
				errno = ECONNRESET;
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
				if (fd_out != NULL && *fd_out < 0)
					*fd_out = fd;
				else
					close(fd);
			}
		}
		got += (size_t)r;
	}
	return 0;
}

static int
write_full(int sock, const uint8_t *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(sock, buf, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

Hg__Response *
hg_ctl_call(int sock, const Hg__Request *req, int *fd_out)
{
	Hg__Response *rsp;
	uint8_t hdr[4], *out = NULL, *in;
	size_t n = hg_frame_request(req, &out);
	int64_t len;

	if (fd_out != NULL)
		*fd_out = -1;
	if (n == 0) {
		errno = EMSGSIZE;
		return NULL;
	}
	/* a daemon that refuses the connection (too many) answers before it
	 * reads anything and closes: read its reason even if the write failed */
	if (write_full(sock, out, n) < 0 && errno != EPIPE) {
		free(out);
		return NULL;
	}
	free(out);
	if (read_full(sock, hdr, 4, fd_out) < 0)
		return NULL;
	len = hg_frame_reply_len(hdr);
	if (len < 0 || (in = malloc((size_t)len)) == NULL) {
		errno = EPROTO;
		return NULL;
	}
	if (read_full(sock, in, (size_t)len, NULL) < 0) {
		free(in);
		return NULL;
	}
	rsp = hg__response__unpack(NULL, (size_t)len, in);
	free(in);
	/* id 0 with an error: the connection was refused, whatever we asked */
	if (rsp == NULL || (rsp->id != req->id && !(rsp->id == 0 && rsp->status))) {
		if (rsp != NULL)
			hg__response__free_unpacked(rsp, NULL);
		errno = EPROTO;
		return NULL;
	}
	return rsp;
}

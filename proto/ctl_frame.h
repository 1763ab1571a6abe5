/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Length-prefixed framing of control messages (see hgctl.proto) and the
 * blocking client side of the control socket, shared by hgctl and
 * libhgclient. The daemon has its own non-blocking side on libevent.
 */
#ifndef HG_PROTO_CTL_FRAME_H
#define HG_PROTO_CTL_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "hgctl.pb-c.h"

#define HG_CTL_MAX_FRAME   (256u * 1024u)	/* a request */
/* A reply: `stats` and `tenant list` over 4,096 tenants run to a few MiB.
 * Only the daemon writes replies, so only clients read this many bytes. */
#define HG_CTL_MAX_REPLY   (16u * 1024u * 1024u)
#define HG_CTL_DEFAULT_PATH "/run/hourglass/ctl.sock"

/* Reads a request's length from a 4-byte big-endian prefix; returns -1
 * when it is zero or larger than HG_CTL_MAX_FRAME. */
int64_t hg_frame_len(const uint8_t prefix[4]);
/* The same for a reply, up to HG_CTL_MAX_REPLY. */
int64_t hg_frame_reply_len(const uint8_t prefix[4]);

/* Writes prefix + packed message into a malloc'd buffer; returns its total
 * size or 0 on failure. */
size_t hg_frame_request(const Hg__Request *req, uint8_t **out);
size_t hg_frame_response(const Hg__Response *rsp, uint8_t **out);

/* Client side: connect to the daemon's control socket. Returns fd or -errno. */
int hg_ctl_connect(const char *path);

/* Sends req and waits for the matching response. If fd_out is not NULL, a
 * descriptor passed with the response is stored there (else -1). Returns the
 * unpacked response (free with hg__response__free_unpacked) or NULL with
 * errno set. */
Hg__Response *hg_ctl_call(int sock, const Hg__Request *req, int *fd_out);

#endif /* HG_PROTO_CTL_FRAME_H */

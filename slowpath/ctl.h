/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The control socket: a Unix stream socket served from the slow path's
 * libevent loop, carrying length-prefixed protobuf-c messages.
 */
#ifndef HG_SLOWPATH_CTL_H
#define HG_SLOWPATH_CTL_H

#include <event2/event.h>

#include "tenant.h"

struct hg_ctl;

struct hg_conn;

/* Listens on path (the operator socket, mode 0600) and, unless app_path is
 * NULL, on app_path (the app socket, mode 0666); refuses to take over the
 * socket of a live daemon. */
struct hg_ctl *hg_ctl_open(struct event_base *base, struct hg_registry *reg,
			   const char *path, const char *app_path);
/* Closes every connection (detaching their apps) and removes the sockets. */
void hg_ctl_close(struct hg_ctl *ctl);

/* A connection as if accepted on one of the sockets (the fuzz targets
 * drive the real handlers through these). conn_new takes fd; input feeds
 * bytes as if read from it and returns -1 once the connection is closed. */
struct hg_conn *hg_ctl_conn_new(struct hg_ctl *ctl, int fd, int app_socket,
				const struct hg_peer *peer);
int hg_ctl_conn_input(struct hg_conn *cn, const uint8_t *data, size_t len);
void hg_ctl_conn_close(struct hg_conn *cn);

#endif /* HG_SLOWPATH_CTL_H */

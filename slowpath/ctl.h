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

/* Listens on path; refuses to take over the socket of a live daemon. */
struct hg_ctl *hg_ctl_open(struct event_base *base, struct hg_registry *reg,
			   const char *path);
/* Closes every connection (detaching their apps) and removes the socket. */
void hg_ctl_close(struct hg_ctl *ctl);

#endif /* HG_SLOWPATH_CTL_H */

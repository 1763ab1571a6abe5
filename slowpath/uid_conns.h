/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What each local user holds of the app socket (design.md §11): connections
 * open per uid, so that one user's share is bounded below the socket's
 * limit and cannot deny another user the socket.
 */
#ifndef HG_SLOWPATH_UID_CONNS_H
#define HG_SLOWPATH_UID_CONNS_H

#include <stdint.h>
#include <sys/types.h>

/* Empty: a NULL root. One node per uid that holds a connection, so the
 * table never holds more nodes than connections are open. */
struct hg_uid_conns {
	void *root;	/* tsearch(3) tree of struct uid_count */
	uint32_t uids;	/* nodes in it */
};

/* Connections uid holds now. */
uint32_t hg_uid_conns_of(const struct hg_uid_conns *t, uid_t uid);
/* One more for uid: 0, or -ENOMEM. */
int hg_uid_conns_take(struct hg_uid_conns *t, uid_t uid);
/* One fewer for uid; a uid that holds none is forgotten. */
void hg_uid_conns_put(struct hg_uid_conns *t, uid_t uid);

#endif /* HG_SLOWPATH_UID_CONNS_H */

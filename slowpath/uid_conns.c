/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Connections per uid in libc's tsearch(3) tree: counted at accept and at
 * close only (never on the fast path), at most one node per open
 * connection, O(log uids) each.
 */
#include <errno.h>
#include <search.h>
#include <stdlib.h>

#include "uid_conns.h"

struct uid_count {
	uid_t uid;
	uint32_t conns;
};

static int
cmp_uid(const void *a, const void *b)
{
	uid_t x = ((const struct uid_count *)a)->uid;
	uid_t y = ((const struct uid_count *)b)->uid;

	return x < y ? -1 : x > y;
}

static struct uid_count *
find(const struct hg_uid_conns *t, uid_t uid)
{
	struct uid_count key = { .uid = uid };
	struct uid_count **n = tfind(&key, &t->root, cmp_uid);

	return n != NULL ? *n : NULL;
}

uint32_t
hg_uid_conns_of(const struct hg_uid_conns *t, uid_t uid)
{
	struct uid_count *c = find(t, uid);

	return c != NULL ? c->conns : 0;
}

int
hg_uid_conns_take(struct hg_uid_conns *t, uid_t uid)
{
	struct uid_count *c = find(t, uid), **n;

	if (c == NULL) {
		if ((c = calloc(1, sizeof(*c))) == NULL)
			return -ENOMEM;
		c->uid = uid;
		n = tsearch(c, &t->root, cmp_uid);
		if (n == NULL) {
			free(c);
			return -ENOMEM;
		}
		t->uids++;
	}
	c->conns++;
	return 0;
}

void
hg_uid_conns_put(struct hg_uid_conns *t, uid_t uid)
{
	struct uid_count *c = find(t, uid);

	if (c == NULL || --c->conns > 0)
		return;
	tdelete(c, &t->root, cmp_uid);
	t->uids--;
	free(c);
}

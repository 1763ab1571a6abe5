/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A bump allocator for building one control response: every sub-message
 * of a reply is allocated here and all of it is freed at once after the
 * reply is packed, so handlers never free protobuf trees by hand.
 */
#ifndef HG_SLOWPATH_ARENA_H
#define HG_SLOWPATH_ARENA_H

#include <stddef.h>

struct hg_arena_chunk;

struct hg_arena {
	struct hg_arena_chunk *head;
};

/* Zeroed memory, or NULL when out of memory. */
void *hg_arena_alloc(struct hg_arena *a, size_t n);
char *hg_arena_strdup(struct hg_arena *a, const char *s);
void hg_arena_free(struct hg_arena *a);

#endif /* HG_SLOWPATH_ARENA_H */

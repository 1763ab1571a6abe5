/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define CHUNK_DATA 4096u

struct hg_arena_chunk {
	struct hg_arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void *
hg_arena_alloc(struct hg_arena *a, size_t n)
{
	struct hg_arena_chunk *c = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > CHUNK_DATA ? n : CHUNK_DATA;

		c = malloc(sizeof(*c) + cap);
		if (c == NULL)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	p = c->data + c->used;
	c->used += n;
	return memset(p, 0, n);
}

char *
hg_arena_strdup(struct hg_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = hg_arena_alloc(a, n);

	return d ? memcpy(d, s, n) : NULL;
}

void
hg_arena_free(struct hg_arena *a)
{
	while (a->head != NULL) {
		struct hg_arena_chunk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "bufpart.h"

size_t
hg_bufpart_memsize(uint32_t count)
{
	return (size_t)count * (sizeof(uint32_t) + sizeof(uint8_t));
}

void
hg_bufpart_init(struct hg_bufpart *p, uint32_t base, uint32_t count, void *mem)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->base = base;
	p->count = count;
	p->cap = count;
	p->stack = mem;
	p->owner = (uint8_t *)(p->stack + count);
	/* lowest index on top: a fresh tenant touches its first pages first */
	for (i = 0; i < count; i++) {
		p->stack[i] = base + count - 1 - i;
		p->owner[i] = HG_OWNER_DAEMON;
	}
	p->top = count;
}

uint32_t
hg_bufpart_reclaim(struct hg_bufpart *p, uint8_t owner)
{
	uint32_t i, n = 0;

	if (owner == HG_OWNER_DAEMON)
		return 0;
	for (i = 0; i < p->count; i++) {
		if (p->owner[i] == owner) {
			hg_bufpart_put(p, p->base + i);
			n++;
		}
	}
	return n;
}

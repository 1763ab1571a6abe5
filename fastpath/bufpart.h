/* SPDX-License-Identifier: BSD-3-Clause
 *
 * One fast-path core's share of a tenant's buffer pool.
 *
 * Buffer indices [base, base + count) belong to one core. The core keeps a
 * private free stack and records who holds each buffer (0 = the daemon,
 * otherwise app slot + 1), so a descriptor that hands back a buffer the app
 * does not hold, or that another core owns, is caught before it can corrupt
 * the free list. All of this lives in daemon memory, never in the region.
 *
 * Each app may hold at most cap buffers of the partition (the slow path
 * sets it from the number of apps attached): an app that lies about its
 * fill ring's indices makes the daemon hand it buffers it never takes,
 * and without a cap it would hoard the core's whole partition from its
 * sibling apps.
 */
#ifndef HG_FASTPATH_BUFPART_H
#define HG_FASTPATH_BUFPART_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/hg_shm.h"

#define HG_OWNER_DAEMON 0u	/* free, on the core's stack */
#define HG_OWNER_TXQ    0xffu	/* validated, queued for SCHED */

struct hg_bufpart {
	uint32_t base;
	uint32_t count;
	uint32_t top;		/* entries in stack */
	uint32_t *stack;	/* count entries */
	uint8_t *owner;		/* count entries */
	uint32_t cap;		/* most buffers one app may hold, atomic */
	uint32_t held[HG_MAX_APPS + 1];	/* by owner 1..HG_MAX_APPS */
};

_Static_assert(HG_MAX_APPS + 1 < HG_OWNER_TXQ, "owner byte holds app + 1");

static inline void
hg_bufpart_count(struct hg_bufpart *p, uint8_t owner, int32_t d)
{
	if (owner != HG_OWNER_DAEMON && owner <= HG_MAX_APPS)
		p->held[owner] += (uint32_t)d;
}

/* Bytes of memory hg_bufpart_init needs for count buffers. */
size_t hg_bufpart_memsize(uint32_t count);
void hg_bufpart_init(struct hg_bufpart *p, uint32_t base, uint32_t count,
		     void *mem);
/* Returns every buffer held by owner to the free stack; returns how many. */
uint32_t hg_bufpart_reclaim(struct hg_bufpart *p, uint8_t owner);

/* Takes a free buffer for owner; -ENOBUFS when none is left or the app
 * holds its cap. */
static inline int
hg_bufpart_alloc(struct hg_bufpart *p, uint8_t owner, uint32_t *buf)
{
	uint32_t b;

	if (p->top == 0 || (owner <= HG_MAX_APPS &&
			    p->held[owner] >= __atomic_load_n(&p->cap, __ATOMIC_RELAXED)))
		return -ENOBUFS;
	b = p->stack[--p->top];
	p->owner[b - p->base] = owner;
	hg_bufpart_count(p, owner, 1);
	*buf = b;
	return 0;
}

/* Is buf a buffer of this partition currently held by owner? */
static inline int
hg_bufpart_held_by(const struct hg_bufpart *p, uint32_t buf, uint8_t owner)
{
	return buf - p->base < p->count && owner != HG_OWNER_DAEMON &&
	       owner != HG_OWNER_TXQ &&
	       p->owner[buf - p->base] == owner;
}

/* Marks a buffer as queued for transmission: an app reclaim leaves it. */
static inline void
hg_bufpart_set_owner(struct hg_bufpart *p, uint32_t buf, uint8_t owner)
{
	hg_bufpart_count(p, p->owner[buf - p->base], -1);
	p->owner[buf - p->base] = owner;
	hg_bufpart_count(p, owner, 1);
}

/* Gives a buffer back to the free stack. The caller has checked it. */
static inline void
hg_bufpart_put(struct hg_bufpart *p, uint32_t buf)
{
	hg_bufpart_count(p, p->owner[buf - p->base], -1);
	p->owner[buf - p->base] = HG_OWNER_DAEMON;
	p->stack[p->top++] = buf;
}

static inline void
hg_bufpart_set_cap(struct hg_bufpart *p, uint32_t cap)
{
	__atomic_store_n(&p->cap, cap, __ATOMIC_RELAXED);
}

#endif /* HG_FASTPATH_BUFPART_H */

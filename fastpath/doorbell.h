/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Doorbells (proto/hg_shm.h): RX notes each context it delivers to during
 * a pass, and at the end of the pass (rx.c hg_fp_bells) rings those whose
 * worker armed its bell, at most once per context and pass, the cost
 * billed to the tenant. No
 * system call while nobody is armed: one fence per burst, one load per
 * context delivered to.
 */
#ifndef HG_FASTPATH_DOORBELL_H
#define HG_FASTPATH_DOORBELL_H

#include <stdint.h>
#include <unistd.h>

#include <rte_atomic.h>

#include "dp.h"

/* Remembers that the pass enqueued onto (t, ctx). A pass delivers to a
 * handful of contexts, mostly the last one again: a linear scan from the
 * newest entry is cheaper than any set. */
static inline void
hg_bell_note(struct hg_fp_core *c, unsigned t, unsigned ctx)
{
	unsigned i;

	for (i = c->n_bell; i-- > 0;)
		if (c->bell[i].tenant == t && c->bell[i].ctx == ctx)
			return;
	if (c->n_bell < HG_BELLS)
		c->bell[c->n_bell++] = (struct hg_bell){ (uint16_t)t, (uint16_t)ctx };
}

/* Has context ctx of tenant tn armed its doorbell? A look only, for
 * choosing when to ring (hg_bells_behind): it is tenant memory, and
 * the ring itself looks again after its fence (hg_bell_ring). */
static inline int
hg_bell_armed(const struct hg_tenant *tn, unsigned ctx)
{
	return __atomic_load_n(&tn->ctx_shm[ctx].armed, __ATOMIC_RELAXED) != 0;
}

/* The fast path's side of the protocol, after the enqueues: fence, then
 * look at armed. Returns 1 if it rang (made the system call, to be billed).
 * The eventfd and the context index are the daemon's own; armed is tenant
 * memory and only tested. The eventfd is non-blocking: a counter at its
 * maximum (a worker that never reads) fails the write with EAGAIN, and
 * the worker is awake anyway. */
static inline int
hg_bell_ring(const struct hg_tenant *tn, unsigned ctx)
{
	static const uint64_t one = 1;
	uint32_t *armed = &tn->ctx_shm[ctx].armed;
	int fd = tn->bell[ctx];
	ssize_t n;

	if (fd < 0 || __atomic_load_n(armed, __ATOMIC_RELAXED) == 0)
		return 0;
	__atomic_store_n(armed, 0, __ATOMIC_RELAXED);
	n = write(fd, &one, sizeof(one));
	(void)n;
	return 1;
}

/* How long after a pass that cut a burst of its tenant's own queue short
 * a worker it delivered to is told that more datagrams come
 * (hg_ctx_shm.more_until). Fed a few frames a pass by own-bytes, the
 * flood's two workers on one CPU ran dry between passes, parked and were
 * rung awake: doorbells for 5-10% of the core at 1400 B (bench/isolation).
 * Told for 20 us, they still parked for most of those (one waits behind
 * the other on their CPU); for 100 us, for none. */
#define HG_MORE_US 100u

/* Tells context ctx of tenant tn that more datagrams come before TSC
 * until: a store to tenant memory, never read back, on the line whose
 * armed flag the ring looks at anyway. */
static inline void
hg_bell_more(const struct hg_tenant *tn, unsigned ctx, uint64_t until)
{
	__atomic_store_n(&tn->ctx_shm[ctx].more_until, until, __ATOMIC_RELAXED);
}

/* Makes the burst's enqueues visible before any armed flag is read: the
 * store-load order the worker's arm-then-recheck relies on. */
static inline void
hg_bell_fence(void)
{
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif /* HG_FASTPATH_DOORBELL_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared-memory layout between hourglassd and libhgclient (design.md §7).
 *
 * One memfd region per tenant. Nothing in it is a pointer: every reference
 * is an offset from the region base or an index, and the daemon bounds-checks
 * each one it reads because the tenant can write anything here.
 *
 *   [ page 0      ] struct hg_region_hdr, with the tenant's steering
 *                   settings (struct hg_steer_shm)
 *   [ ctx blocks  ] struct hg_ctx_shm[max_ctx], then struct hg_app_shm[max_apps]
 *   [ ring slots  ] one slot per (ctx, fp core, kind), ring_stride bytes each
 *   [ wait queues ] one rte_ring of HG_WQ_SIZE struct hg_wq_entry per app slot
 *   [ buffers     ] n_bufs buffers of buf_size bytes
 *
 * Each ring slot starts with one page that holds only the first
 * HG_RING_GEOM_BYTES of a struct rte_ring (name, size, mask, capacity); the
 * producer/consumer words and the elements follow on the next page. The
 * daemon replaces its view of that first page with a private copy, so the
 * ring geometry it indexes with can never be changed by the tenant.
 */
#ifndef HG_PROTO_SHM_H
#define HG_PROTO_SHM_H

#include <stdint.h>

#define HG_SHM_MAGIC        0x48475348u	/* "HGSH" */
#define HG_SHM_VERSION      10u

#define HG_PAGE_SIZE        4096u
#define HG_MAX_FP_CORES     8u
#define HG_MAX_CTX          64u	/* contexts (worker threads) per tenant,
					 * Synergy's maximum */
#define HG_MAX_APPS         HG_MAX_CTX	/* attached processes per tenant */
#define HG_RING_SIZE        512u	/* slots per ring, power of two */
#define HG_BUF_SIZE         2048u
#define HG_N_BUFS           4096u	/* buffers per tenant, split over cores */
#define HG_FILL_TARGET      64u	/* free buffers kept on each fill ring */
#define HG_WQ_SIZE          1024u	/* preempted green threads per app */

/* One preempted request in an app's wait queue: the library's handle for
 * its green thread, and the daemon's RX timestamp of the request, so that
 * the daemon's D_m (the age of the oldest waiting request, design.md §6)
 * counts parked requests too. The daemon only reads the entry at the
 * head, indexed with HG_WQ_SIZE - 1 rather than the ring's own mask. */
struct hg_wq_entry {
	uint64_t handle;
	uint64_t rx_tsc;
};

/* Bytes of struct rte_ring before the producer head/tail (checked against
 * offsetof(struct rte_ring, prod) at build time on both sides). */
#define HG_RING_GEOM_BYTES  128u

enum hg_ring_kind {
	HG_RING_RX = 0,		/* daemon -> app, struct hg_desc */
	HG_RING_TX = 1,		/* app -> daemon, struct hg_desc */
	HG_RING_FILL = 2,	/* daemon -> app, uint32_t buffer index */
	HG_RING_KINDS
};

/* Descriptor operations on the TX ring. */
enum hg_desc_op {
	HG_OP_DATA = 0,		/* RX: a received datagram */
	HG_OP_SEND = 1,		/* TX: transmit buf[0..len) to peer */
	HG_OP_FREE = 2,		/* TX: give the buffer back, send nothing */
};

/* A (buffer, length, addressing) descriptor; 24 bytes, a multiple of 4 as
 * rte_ring's element API requires. Addresses and ports in network order. */
struct hg_desc {
	uint32_t buf;
	uint16_t len;
	uint8_t op;
	uint8_t core;
	uint32_t peer_ip;
	uint16_t peer_port;
	uint16_t local_port;
	uint64_t tsc;		/* daemon TSC at receive (queueing delay) */
};

enum hg_ctx_state {
	HG_CTX_FREE = 0,
	HG_CTX_OPEN = 1,
};

/* Per-context (per worker thread) control block. The steering fields are
 * the Synergy worker control block of design.md §5.
 *
 * The doorbell: each context has an eventfd the daemon made and passed at
 * ctx open. A worker about to block sets armed, re-checks its queues with
 * a full fence between (a request enqueued before the fence is seen by
 * the re-check), and blocks on the eventfd; the fast path, after
 * enqueueing a burst and its own full fence, clears armed and writes the
 * eventfd once for each armed context it delivered to (fastpath/doorbell.h).
 * Either the worker sees the request or the daemon sees armed: no wake-up
 * is lost. The daemon only tests armed for non-zero.
 *
 * Parking (CoreSync Algorithm 1, slowpath/core_alloc.c): a worker that
 * found no work for the tenant's poll time writes a fresh non-zero
 * sequence number into park, rings the tenant's park bell and blocks on
 * its doorbell. The daemon decides whether it leaves RX steering (then
 * it copies the number into park_ok: parked) or stays allocated, and
 * rings the doorbell to wake it. A worker back from its doorbell writes
 * park = 0. The daemon keeps each context's allocation state in its own
 * memory and reads park only as a request: a lie parks or wakes only the
 * liar's own workers. */
struct hg_ctx_shm {
	uint32_t state;		/* enum hg_ctx_state, daemon-written */
	uint32_t app;		/* owning app slot, daemon-written */
	/* steering control block, filled in by the steering work */
	uint32_t preempt;	/* daemon sets, library clears */
	uint32_t in_long;	/* library: a long request is running */
	uint64_t quantum_ns;	/* library: current quantum */
	uint64_t long_start_ns;	/* library: start of the running long request */
	uint64_t short_ema_ns;	/* library: EMA of short service time */
	uint32_t armed;		/* library sets before blocking, daemon clears */
	uint32_t park;		/* library: its park request, 0: none */
	uint32_t park_ok;	/* daemon: the request it granted (parked) */
	uint32_t pad;
	/* daemon: a TSC before which more datagrams come to this context.
	 * RX delivered to it from a burst of its tenant's own queue that
	 * own-bytes or own-burst cut short, and the rest waits in the link
	 * for the next passes; its worker polls on rather than park between
	 * them (libclient worker_park.c). A hint only: the daemon writes it
	 * and never reads it back. */
	uint64_t more_until;
};

/* Per-tenant steering settings (design.md §5), written by the daemon from
 * `hgctl tenant set`, read by the library. Factors are in hundredths. */
struct hg_steer_shm {
	uint32_t steal;			/* work stealing on */
	uint32_t wait_queue;		/* preempted requests go to the wait queue */
	uint32_t steal_threshold;	/* steal only from queues longer than this */
	uint32_t quantum_factor;	/* QUANTUM_FACTOR x 100 */
	uint32_t quantum_ns;		/* fixed quantum; 0 = adaptive (EMA) */
	uint32_t dispatch;		/* enum hg_dispatch (policy/dispatch.h) */
	uint32_t core_policy;		/* enum hg_core_policy (policy/coresync.h) */
	uint32_t poll_ns;		/* an idle worker polls this long, then
					 * asks to park */
	/* the tenant's contexts that run (not parked), at each change: the
	 * last one is never parked, so a worker that sees 1 blocks on its
	 * doorbell without asking (an ask and its bell are a system call
	 * and a slow-path wake-up on the apps' CPU, per idle period) */
	uint32_t running;
};

/* Per attached app (process), daemon-written except where noted. The wait
 * queue holds the app's own green-thread handles: the daemon never
 * dereferences them, it only reads the ring's indices. */
struct hg_app_shm {
	uint32_t check_wait_queue;	/* resume preempted requests first */
	uint32_t factor;		/* current quantum factor x 100 */
	uint64_t preemptions;		/* preempt flags the daemon has set */
	uint64_t wq_off;		/* offset of this app's wait queue ring */
	uint64_t darc_updates;		/* library: DARC reservations made */
	uint8_t pad[32];
};

/* ---- request classes ----
 *
 * Per context (worker) and request class, what the library measured
 * around the handler: requests, service time (taking the request to
 * answering or freeing it), queueing delay (the daemon's RX to the worker
 * taking it), both in TSC cycles, and histograms of service time and of
 * slowdown ((queue + service) / service, x 16). One writer (the worker),
 * no atomics; the daemon only reads them, for stats: numbers a tenant may
 * falsify about itself, and nothing else. Histogram bins: 4 per power of
 * two from 2^base (hg_hist_bin). */
#define HG_CLASSES_SHM      8u	/* = HG_CLASSES (asserted in policy/dispatch.h) */
#define HG_HIST_BINS        92u
#define HG_HIST_SVC_BASE    8u	/* service: from 256 cycles */
#define HG_HIST_SLOW_BASE   4u	/* slowdown x 16: from 1 */

struct hg_class_shm {
	uint64_t requests;
	uint64_t service_tsc;		/* sums */
	uint64_t queue_tsc;
	uint64_t pad;
	uint32_t service_hist[HG_HIST_BINS];
	uint32_t slowdown_hist[HG_HIST_BINS];
};

struct hg_class_block {
	struct hg_class_shm c[HG_CLASSES_SHM];
};

/* The bin of v: 0 below 2^base, then 4 per power of two; the last takes
 * everything above. */
static inline uint32_t
hg_hist_bin(uint64_t v, unsigned base)
{
	unsigned lg;
	uint32_t b;

	if (v < (1ull << base))
		return 0;
	lg = 63u - (unsigned)__builtin_clzll(v);
	b = (lg - base) * 4u + (uint32_t)((v >> (lg - 2)) & 3u) + 1u;
	return b < HG_HIST_BINS ? b : HG_HIST_BINS - 1;
}

/* The largest value bin b holds (a percentile reads as this bound). */
static inline uint64_t
hg_hist_high(uint32_t b, unsigned base)
{
	unsigned lg = base + (b - 1) / 4;

	if (b == 0)
		return (1ull << base) - 1;
	return (1ull << lg) + ((uint64_t)((b - 1) % 4 + 1) << (lg - 2)) - 1;
}

struct hg_region_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t dpdk_version;	/* RTE_VERSION the daemon was built with:
				 * rte_ring's layout must match */
	uint32_t pad0;
	uint64_t region_size;
	uint32_t tenant_id;
	uint32_t n_cores;	/* fast-path cores = rings per context and kind */
	uint32_t max_ctx;
	uint32_t ring_size;
	uint32_t ring_geom_bytes;
	uint32_t desc_size;
	uint32_t n_bufs;
	uint32_t buf_size;
	uint64_t ctx_off;
	uint64_t ring_off;
	uint64_t ring_stride;
	uint64_t buf_off;
	uint64_t app_off;		/* struct hg_app_shm[HG_MAX_APPS] */
	uint64_t wq_off;		/* wait queue rings */
	uint64_t wq_stride;
	uint64_t class_off;		/* struct hg_class_block per context */
	uint64_t class_stride;
	struct hg_steer_shm steer;	/* tenant settings, daemon-written */
};

_Static_assert(sizeof(struct hg_desc) == 24, "descriptor must stay 24 bytes");
_Static_assert((HG_RING_SIZE & (HG_RING_SIZE - 1)) == 0 &&
	       (HG_WQ_SIZE & (HG_WQ_SIZE - 1)) == 0,
	       "rte_ring sizes and the wait queue's index mask: powers of two");
_Static_assert(sizeof(struct hg_ctx_shm) == 64, "ctx block is one cache line");
_Static_assert(sizeof(struct hg_app_shm) == 64, "app block is one cache line");
_Static_assert(sizeof(struct hg_region_hdr) <= HG_PAGE_SIZE, "header page");
_Static_assert(sizeof(struct hg_class_shm) % 64 == 0, "a class is whole lines");
_Static_assert(HG_HIST_SVC_BASE >= 2 && HG_HIST_SLOW_BASE >= 2,
	       "a bin splits a power of two by its next two bits");

/* Offset of the struct rte_ring of (ctx, core, kind) from the region base. */
static inline uint64_t
hg_ring_offset(const struct hg_region_hdr *h, uint32_t ctx, uint32_t core,
	       uint32_t kind)
{
	uint64_t slot = ((uint64_t)ctx * h->n_cores + core) * HG_RING_KINDS + kind;

	return h->ring_off + slot * h->ring_stride + HG_PAGE_SIZE -
	       h->ring_geom_bytes;
}

#endif /* HG_PROTO_SHM_H */

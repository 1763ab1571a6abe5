/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: the memif link's bursts (fastpath/memif.c) over a
 * region the input fills, as a hostile peer would: a C2S ring at 0, an
 * S2C ring after it, buffers after both, every byte of it the input's.
 * The region is allocated at exactly the input's size, so a read or
 * write past what the peer mapped is AddressSanitizer's to see.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "../../fastpath/dp.h"
#include "../../fastpath/memif.h"
#include "fuzz_env.h"

#define LOG2 4u
#define RING (HG_MEMIF_RING_DESC + (16u << LOG2))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* RX's look at a frame in place: reads all of it (so that a frame past
 * the region shows), drops the odd-sized ones and stops the burst before
 * one of a length 2 mod 6 (left in the ring for the next burst). */
static enum hg_mif_look
peek(void *arg, const uint8_t *f, uint32_t len)
{
	uint32_t i, sum = 0;

	for (i = 0; i < len; i++)
		sum += f[i];
	*(uint32_t *)arg += sum;
	return len % 6 == 2 ? HG_MIF_STOP : len & 1 ? HG_MIF_DROP : HG_MIF_TAKE;
}

static void
tx_some(struct hg_mif *m, struct rte_mempool *pool, const uint8_t *data, size_t size)
{
	struct rte_mbuf *b[8];
	uint64_t bad = 0;
	uint16_t i, n = 0, sent;

	for (i = 0; i < 8; i++) {
		b[n] = rte_pktmbuf_alloc(pool);
		if (b[n] == NULL)
			break;
		/* lengths from the input: 1..1500 */
		if (rte_pktmbuf_append(b[n], (uint16_t)(1 + data[i % size] * 6u)) == NULL) {
			rte_pktmbuf_free(b[n]);
			break;
		}
		n++;
	}
	sent = hg_mif_tx(m, 0, b, n, &bad);
	if (sent > n)
		__builtin_trap();
	rte_pktmbuf_free_bulk(b + sent, n - sent);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hg_dp *dp = fuzz_env();
	struct rte_mempool *pool = dp->core[0].pool;
	static struct hg_mif_conn cn;
	struct hg_mif m = { .conn = &cn, .room = 2048 };
	struct rte_mbuf *pkts[HG_BATCH];
	uint64_t bad = 0;
	uint16_t n, i, round, seen;
	uint32_t sum = 0;
	unsigned avail;
	uint8_t *region;

	if (size < 2 * RING || size > (1u << 20))
		return -1;
	region = malloc(size);
	if (region == NULL)
		return -1;
	memcpy(region, data, size);
	memset(&cn, 0, sizeof(cn));
	cn.n_regions = 1;
	cn.region[0] = (struct hg_mif_region){ .base = region, .size = size };
	cn.n_rx = cn.n_tx = 1;
	cn.rx[0] = (struct hg_mif_ring){ .ring = (void *)region, .mask = (1u << LOG2) - 1,
					 .next = data[0], .efd = -1 };
	cn.tx[0] = (struct hg_mif_ring){ .ring = (void *)(region + RING),
					 .mask = (1u << LOG2) - 1, .next = data[1], .efd = -1 };
	avail = rte_mempool_avail_count(pool);
	for (round = 0; round < 3; round++) {
		uint16_t start = cn.rx[0].next;

		n = hg_mif_rx(&m, 0, pool, pkts, HG_BATCH, &bad, peek, &sum, &seen);
		if (n > seen || seen > HG_BATCH)
			__builtin_trap();
		/* what the burst took, and no more, is the peer's again; a
		 * frame it stopped before is the next burst's first */
		if ((uint16_t)(cn.rx[0].next - start) != seen ||
		    (seen > 0 && cn.rx[0].ring->tail != cn.rx[0].next))
			__builtin_trap();
		for (i = 0; i < n; i++)
			if (pkts[i]->data_len == 0 || pkts[i]->data_len > m.room)
				__builtin_trap();
		rte_pktmbuf_free_bulk(pkts, n);
		tx_some(&m, pool, data, size);
	}
	/* rings the peer never gave are never touched */
	if (hg_mif_rx(&m, 1, pool, pkts, HG_BATCH, &bad, NULL, NULL, &seen) != 0 ||
	    hg_mif_tx(&m, 1, pkts, 0, &bad) != 0)
		__builtin_trap();
	/* the bursts' unfilled mbufs are kept for the next, and given back */
	hg_mif_stash_free(&m);
	if (rte_mempool_avail_count(pool) != avail)
		__builtin_trap();
	free(region);
	return 0;
}

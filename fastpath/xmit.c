/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The NIC send: every datagram the fast path puts on the wire (SCHED's
 * batches, RX's ARP/ICMP replies and RPC rejects, credit updates) leaves
 * through hg_fp_xmit, which counts the PMD's cycles and what it refused.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dp.h"

uint64_t
hg_fp_xmit(struct hg_dp *dp, struct hg_fp_core *c, struct rte_mbuf **m,
	   unsigned n, uint64_t *drop_ctr)
{
	uint64_t t0 = rte_rdtsc();
	unsigned sent = rte_eth_tx_burst(dp->port_id, c->idx, m, n);
	uint64_t t1 = rte_rdtsc();

	c->tx_pkts += sent;
	c->pmd_cycles += t1 - t0;
	if (sent < n) {
		*drop_ctr += n - sent;
		rte_pktmbuf_free_bulk(m + sent, n - sent);
	}
	return t1 - t0;
}

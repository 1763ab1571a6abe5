/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the tools that drive memif ports (hgload --memif,
 * hg-memif-bridge) share: EAL started with arguments of the tool's own,
 * so that each keeps its command line, a port with one queue pair, and
 * how a poller that finds nothing sleeps.
 */
#ifndef HG_TOOLS_TOOL_EAL_H
#define HG_TOOLS_TOOL_EAL_H

#include <stddef.h>
#include <stdint.h>

struct rte_mempool;

/* Starts EAL with no hugepages and no shared files (--no-shconf; the
 * runtime folder is removed at exit), the given --vdev arguments, pinned to the CPUs
 * the process was started on, and DPDK's log on stderr (stdout is the
 * tool's report). 0, or -1. */
int hg_tool_eal(const char *name, const char *const *vdevs, unsigned n);
/* The --vdev of a memif client port to the daemon's socket: a path, or
 * @NAME for an abstract socket (the daemon's --memif says the same). */
void hg_tool_memif_vdev(char *out, size_t n, const char *socket);
/* Configures and starts port with nrx RX and ntx TX queues of ring
 * entries each, buffers from pool. 0, or -1. */
int hg_tool_port(uint16_t port, struct rte_mempool *pool, uint16_t ring,
		 uint16_t nrx, uint16_t ntx);
/* Sleeps 10 us << quiet, at most max_ns: a poller that found nothing
 * quiet times in a row sleeps longer each time, so that on a CPU it
 * shares it does not wake, and preempt the apps there, every few
 * microseconds. */
void hg_tool_backoff(unsigned quiet, uint64_t max_ns);

#endif /* HG_TOOLS_TOOL_EAL_H */

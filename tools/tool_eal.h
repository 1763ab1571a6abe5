/* SPDX-License-Identifier: BSD-3-Clause
 *
 * DPDK for the tools that drive memif ports (hgload --memif,
 * hg-memif-bridge): EAL started with arguments of the tool's own, so that
 * each keeps its command line, and a port with one queue pair.
 */
#ifndef HG_TOOLS_TOOL_EAL_H
#define HG_TOOLS_TOOL_EAL_H

#include <stdint.h>

struct rte_mempool;

/* Starts EAL with no hugepages, a file prefix of name + pid, the given
 * --vdev arguments, pinned to the CPUs the process was started on, and
 * DPDK's log on stderr (stdout is the tool's report). 0, or -1. */
int hg_tool_eal(const char *name, const char *const *vdevs, unsigned n);
/* Configures and starts port with one RX/TX queue pair of ring entries
 * each, buffers from pool. 0, or -1. */
int hg_tool_port(uint16_t port, struct rte_mempool *pool, uint16_t ring);

#endif /* HG_TOOLS_TOOL_EAL_H */

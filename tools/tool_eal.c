/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the memif tools share (tool_eal.h).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "../common/eal_dir.h"
#include "tool_eal.h"

#define MAX_VDEVS 4

/* EAL pinned to the CPUs we were started on (EAL would otherwise move
 * the main thread to CPU 0's lcore): "0@(a,b,...)". */
static void
lcores_arg(char *out, size_t n)
{
	cpu_set_t set;
	size_t k;
	int cpu;

	k = (size_t)snprintf(out, n, "0@(");
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (cpu = 0; cpu < CPU_SETSIZE && k < n; cpu++)
			if (CPU_ISSET(cpu, &set))
				k += (size_t)snprintf(out + k, n - k, "%d,", cpu);
	if (k > 3 && k <= n)
		out[k - 1] = ')';
	else
		snprintf(out, n, "0");
}

int
hg_tool_eal(const char *name, const char *const *vdevs, unsigned n)
{
	char prefix[48], lcores[256], vdev[MAX_VDEVS][256];
	char *argv[13 + MAX_VDEVS] = { (char *)name, "--no-huge", "-m", "256", "--no-pci",
				       "--no-shconf", "--file-prefix", prefix,
				       "--lcores", lcores, "--log-level", "*:warning" };
	int argc = 12;
	unsigned i;

	if (n > MAX_VDEVS)
		return -1;
	snprintf(prefix, sizeof(prefix), "%s%d", name, (int)getpid());
	atexit(hg_eal_dir_remove_own);
	lcores_arg(lcores, sizeof(lcores));
	for (i = 0; i < n; i++) {
		snprintf(vdev[i], sizeof(vdev[i]), "--vdev=%s", vdevs[i]);
		argv[argc++] = vdev[i];
	}
	argv[argc] = NULL;
	rte_openlog_stream(stderr);
	return rte_eal_init(argc, argv) < 0 ? -1 : 0;
}

void
hg_tool_memif_vdev(char *out, size_t n, const char *socket)
{
	int abstract = socket[0] == '@';

	snprintf(out, n, "net_memif0,role=client,socket=%s,socket-abstract=%s",
		 socket + abstract, abstract ? "yes" : "no");
}

int
hg_tool_port(uint16_t port, struct rte_mempool *pool, uint16_t ring,
	     uint16_t nrx, uint16_t ntx)
{
	struct rte_eth_conf conf = { 0 };
	int sock = (int)rte_socket_id();
	uint16_t q;

	if (rte_eth_dev_configure(port, nrx, ntx, &conf) < 0)
		return -1;
	for (q = 0; q < nrx; q++)
		if (rte_eth_rx_queue_setup(port, q, ring, sock, NULL, pool) < 0)
			return -1;
	for (q = 0; q < ntx; q++)
		if (rte_eth_tx_queue_setup(port, q, ring, sock, NULL) < 0)
			return -1;
	return rte_eth_dev_start(port) < 0 ? -1 : 0;
}

void
hg_tool_backoff(unsigned quiet, uint64_t max_ns)
{
	uint64_t ns = 10000ull << (quiet < 10 ? quiet : 10);
	struct timespec ts = { 0, (long)(ns < max_ns ? ns : max_ns) };

	nanosleep(&ts, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The Ethernet port: one RX/TX queue pair per fast-path core.
 */
#include <rte_ethdev.h>

#include "log.h"
#include "port.h"

int
hg_port_init(struct hg_dp *dp, struct rte_mempool *pool)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t port, nrx = 1024, ntx = 1024, q, nq = dp->n_cores;
	int rc;

	if (rte_eth_dev_count_avail() == 0) {
		HG_LOG(ERR, "no Ethernet port: pass --vdev=net_af_packet0,iface=IF "
		       "or --vdev=net_tap0 before --");
		return -ENODEV;
	}
	RTE_ETH_FOREACH_DEV(port)
		break;
	rc = rte_eth_dev_info_get(port, &info);
	if (rc < 0)
		return rc;
	if (nq > info.max_rx_queues || nq > info.max_tx_queues) {
		HG_LOG(ERR, "port %u (%s) has %u queue pairs, --fp-cores wants %u "
		       "(for net_af_packet add qpairs=%u)", port, info.driver_name,
		       RTE_MIN(info.max_rx_queues, info.max_tx_queues), nq, nq);
		return -EINVAL;
	}
	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	for (q = 0; rc == 0 && q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nrx, rte_eth_dev_socket_id(port),
					    NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, ntx,
						    rte_eth_dev_socket_id(port), NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc == 0)
		rc = rte_eth_macaddr_get(port, &dp->mac);
	if (rc < 0) {
		HG_LOG(ERR, "port %u setup failed: %s", port, rte_strerror(-rc));
		return rc;
	}
	dp->port_id = port;
	HG_LOG(INFO, "port %u (%s) up, %u queue pair%s, mac " RTE_ETHER_ADDR_PRT_FMT,
	       port, info.driver_name, nq, nq == 1 ? "" : "s",
	       RTE_ETHER_ADDR_BYTES(&dp->mac));
	return 0;
}

void
hg_port_fini(struct hg_dp *dp)
{
	rte_eth_dev_stop(dp->port_id);
	rte_eth_dev_close(dp->port_id);
}

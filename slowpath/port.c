/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The Ethernet port: one TX queue per fast-path core and --rx-queues RX
 * queues each. Above one, tenants get RX queues of their own where the
 * link can steer by UDP port (design.md §3): a memif peer steers itself from
 * the map `hgctl tenant list` shows, a NIC takes rte_flow rules
 * (flow_rules.c). af_packet and tap cannot: the kernel hands the daemon
 * one stream per queue pair, so their tenants share one queue per core.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "../fastpath/memif.h"
#include "config.h"
#include "flow_rules.h"
#include "log.h"
#include "memif_server.h"
#include "port.h"
#include "xdp_link.h"

#define HG_MIF_MAC "02:48:47:00:00:01"

static const char *const steer_names[] = {
	[HG_RX_SHARED] = "shared queue",
	[HG_RX_PEER] = "memif peer",
	[HG_RX_FLOW] = "rte_flow",
};

/* A net_af_xdp link with the daemon's program shares its queue, and
 * sheds in the driver too (xdp_link.h). */
const char *
hg_port_steering(const struct hg_dp *dp)
{
	if (dp->rx_steer == HG_RX_SHARED && hg_xdp_link())
		return "xdp";
	return steer_names[dp->rx_steer];
}

static enum hg_rx_steer
steer_of(const char *driver)
{
	if (strcmp(driver, "net_af_packet") == 0 || strcmp(driver, "net_tap") == 0 ||
	    strcmp(driver, "net_af_xdp") == 0)
		return HG_RX_SHARED;
	return HG_RX_FLOW;
}

/* Credit sessions live on one core (credit_sessions.h): where more than
 * one fast-path core reads a port, the NIC must hash a flow to one RX
 * queue. Asked for where the driver offers it (hardware NICs); the
 * virtual ones hash by themselves or have nothing to hash: af_packet's
 * fanout keeps a flow on one queue, memif and tap have one stream per
 * queue pair. */
static void
want_rss(const struct hg_dp *dp, const struct rte_eth_dev_info *info,
	 struct rte_eth_conf *conf)
{
	uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info->flow_type_rss_offloads;

	if (dp->n_cores < 2 || hf == 0)
		return;
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
	HG_LOG(INFO, "port %s: RSS over %u cores (hash functions 0x%" PRIx64 ")",
	       info->driver_name, dp->n_cores, hf);
}

/* The RX ring: 1,024, or the PMD's own default where it is larger. A
 * net_af_xdp queue keeps 2,048 buffers in its fill ring, and with an RX
 * ring of half that the kernel dropped frames at a full ring while half
 * its buffers sat unused: a flood sharing the queue with a victim needs
 * a stall only half as long to take the victim's datagrams with it. */
static uint16_t
rx_ring_size(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) < 0)
		return 1024;
	return RTE_MAX((uint16_t)1024, info.default_rxportconf.ring_size);
}

static int
setup_queues(uint16_t port, uint16_t nrx, uint16_t ntx, struct rte_mempool *pool,
	     const struct rte_eth_conf *conf)
{
	uint16_t rxd = rx_ring_size(port), txd = 1024, q;
	int rc, sock = rte_eth_dev_socket_id(port);

	rc = rte_eth_dev_configure(port, nrx, ntx, conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	for (q = 0; rc == 0 && q < nrx; q++)
		rc = rte_eth_rx_queue_setup(port, q, rxd, sock, NULL, pool);
	for (q = 0; rc == 0 && q < ntx; q++)
		rc = rte_eth_tx_queue_setup(port, q, txd, sock, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

/* Where the NIC refuses queue rules, one queue per core again. */
static int
probe_flow(struct hg_dp *dp, uint16_t port, struct rte_mempool *pool,
	   const struct rte_eth_conf *conf)
{
	char why[128];

	if (dp->rx_steer != HG_RX_FLOW || hg_flow_probe(dp, why, sizeof(why)) == 0)
		return 0;
	HG_LOG(WARNING, "port %u refuses rte_flow queue rules (%s): "
	       "tenants share one RX queue per core", port, why);
	hg_dp_set_rxq(dp, HG_RX_SHARED, 1);
	rte_eth_dev_stop(port);
	return setup_queues(port, (uint16_t)dp->n_cores, (uint16_t)dp->n_cores, pool,
			    conf);
}

/* The daemon's own memif link (--memif): no ethdev; the server
 * (memif_server.h) opens the socket once the slow path runs. */
static int
memif_port(struct hg_dp *dp, struct rte_mempool *pool)
{
	const char *mac = hg_cfg.mac[0] ? hg_cfg.mac : HG_MIF_MAC;
	uint32_t per_core = (uint32_t)hg_cfg.rx_queues;

	if (rte_eth_dev_count_avail() > 0) {
		HG_LOG(ERR, "--memif is the daemon's port: give no --vdev or PCI "
		       "device as well (add --no-pci)");
		return -EINVAL;
	}
	if (hg_memif_parse_mode(hg_cfg.memif_mode) < 0) {
		HG_LOG(ERR, "--memif-mode %s: not an octal file mode (e.g. 0600)",
		       hg_cfg.memif_mode);
		return -EINVAL;
	}
	if (rte_ether_unformat_addr(mac, &dp->mac) < 0) {
		HG_LOG(ERR, "--mac %s: not a MAC address", mac);
		return -EINVAL;
	}
	dp->mif = rte_zmalloc("hg_memif", sizeof(*dp->mif), RTE_CACHE_LINE_SIZE);
	if (dp->mif == NULL)
		return -ENOMEM;
	dp->mif->room = (uint16_t)(rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM);
	hg_dp_set_rxq(dp, per_core == 1 ? HG_RX_SHARED : HG_RX_PEER, per_core);
	dp->txq_per_core = hg_cfg.tx_queues ? (uint32_t)hg_cfg.tx_queues : per_core;
	HG_LOG(INFO, "port memif (%s) up, %u RX queue%s per core (%s), %u TX "
	       "ring%s per core, mac " RTE_ETHER_ADDR_PRT_FMT, hg_cfg.memif, per_core,
	       per_core == 1 ? "" : "s", hg_port_steering(dp), dp->txq_per_core,
	       dp->txq_per_core == 1 ? "" : "s", RTE_ETHER_ADDR_BYTES(&dp->mac));
	return 0;
}

/* Drivers whose queues are fixed when the device is made (qpairs=,
 * queue_count=) and each carry frames of any tenant: af_packet's fanout
 * and the NIC's hash under af_xdp spread flows over all of them, so every
 * one is read, or the flows hashed to one left out are lost. */
static int
reads_every_queue(const char *driver)
{
	return strcmp(driver, "net_af_packet") == 0 || strcmp(driver, "net_af_xdp") == 0;
}

/* The ports EAL made: one, or several net_af_xdp vdevs that are the
 * queues of one interface (a veth has no channels to give queue_count=,
 * xdp_link.h). Fills ports[], returns how many, or < 0. */
static int
collect_ports(uint16_t ports[RTE_MAX_ETHPORTS])
{
	struct rte_eth_dev_info info;
	uint16_t port;
	int n = 0;

	RTE_ETH_FOREACH_DEV(port) {
		if (rte_eth_dev_info_get(port, &info) < 0)
			return -ENODEV;
		if (n > 0 && (strcmp(info.driver_name, "net_af_xdp") != 0 ||
			      !hg_xdp_link())) {
			HG_LOG(ERR, "one Ethernet port is served; several only as "
			       "net_af_xdp vdevs of one interface (port %u is %s)",
			       port, info.driver_name);
			return -EINVAL;
		}
		ports[n++] = port;
	}
	return n;
}

/* Every queue of every port, dealt out to the cores (hg_dp_spread_rxq). */
static int
spread_ports(struct hg_dp *dp, const uint16_t *ports, int n_ports,
	     struct rte_mempool *pool, const struct rte_eth_conf *conf)
{
	struct hg_devq q[HG_MAX_FP_CORES * HG_MAX_RXQ];
	struct rte_eth_dev_info info;
	uint32_t n = 0, k;
	int i, rc;

	for (i = 0; i < n_ports; i++) {
		if ((rc = rte_eth_dev_info_get(ports[i], &info)) < 0)
			return rc;
		for (k = 0; k < info.max_rx_queues; k++) {
			if (n == dp->n_cores * HG_MAX_RXQ) {
				HG_LOG(ERR, "more than %u RX queues for %u fast-path "
				       "core%s", n, dp->n_cores, dp->n_cores == 1 ? "" : "s");
				return -EINVAL;
			}
			q[n++] = (struct hg_devq){ ports[i], (uint16_t)k };
		}
		rc = setup_queues(ports[i], info.max_rx_queues,
				  RTE_MIN(info.max_rx_queues, info.max_tx_queues), pool, conf);
		if (rc < 0) {
			HG_LOG(ERR, "port %u setup failed: %s", ports[i], rte_strerror(-rc));
			return rc;
		}
	}
	if (n < dp->n_cores) {
		HG_LOG(ERR, "%u RX queue%s for %u fast-path cores: give each core one "
		       "(qpairs=%u, queue_count=%u, or a net_af_xdp vdev per queue)",
		       n, n == 1 ? "" : "s", dp->n_cores, dp->n_cores, dp->n_cores);
		return -EINVAL;
	}
	hg_dp_spread_rxq(dp, q, n);
	return 0;
}

/* One port whose queues the daemon picks: one TX queue per core and
 * per_core RX queues each, steered where the link can (tap, NICs). */
static int
one_port(struct hg_dp *dp, uint16_t port, const struct rte_eth_dev_info *info,
	 uint32_t per_core, struct rte_mempool *pool, struct rte_eth_conf *conf)
{
	uint32_t nq = dp->n_cores, nrx;
	enum hg_rx_steer steer = steer_of(info->driver_name);
	int rc;

	hg_dp_set_rxq(dp, per_core == 1 ? HG_RX_SHARED : steer, per_core);
	nrx = nq * dp->rxq_per_core;
	if (nrx > info->max_rx_queues || nq > info->max_tx_queues) {
		HG_LOG(ERR, "port %u (%s) has %u RX and %u TX queues, --fp-cores "
		       "and --rx-queues want %u and %u", port, info->driver_name,
		       info->max_rx_queues, info->max_tx_queues, nrx, nq);
		return -EINVAL;
	}
	want_rss(dp, info, conf);
	/* --idle sleep naps on them (fastpath/nap.h) where the PMD hands
	 * out the queue's fd: net_tap. net_memif keeps its eventfds in its
	 * queues, af_packet has none; a NIC's need VFIO's MSI-X, untried. */
	dp->rx_intr = strcmp(info->driver_name, "net_tap") == 0;
	conf->intr_conf.rxq = (uint16_t)dp->rx_intr;
	rc = setup_queues(port, (uint16_t)nrx, (uint16_t)nq, pool, conf);
	if (rc == 0)
		rc = probe_flow(dp, port, pool, conf);
	if (rc < 0)
		HG_LOG(ERR, "port %u setup failed: %s", port, rte_strerror(-rc));
	return rc;
}

int
hg_port_init(struct hg_dp *dp, struct rte_mempool *pool)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t port, ports[RTE_MAX_ETHPORTS];
	uint32_t per_core;
	int rc, n_ports;

	if (hg_cfg.memif[0] != '\0')
		return memif_port(dp, pool);
	if (rte_eth_dev_count_avail() == 0) {
		HG_LOG(ERR, "no Ethernet port: pass --vdev=net_af_xdp0,iface=IF "
		       "or --vdev=net_tap0 before --, or --memif PATH after it");
		return -ENODEV;
	}
	if ((n_ports = collect_ports(ports)) < 0)
		return n_ports;
	port = dp->port_id = ports[0];
	if ((rc = rte_eth_dev_info_get(port, &info)) < 0)
		return rc;
	if (strcmp(info.driver_name, "net_memif") == 0) {
		HG_LOG(ERR, "net_memif: DPDK's memif PMD uses its peer's descriptors "
		       "unchecked (any peer could overwrite the daemon's memory): "
		       "use the daemon's own memif server, --memif PATH after --");
		return -EPERM;
	}
	per_core = (uint32_t)hg_cfg.rx_queues;
	if (per_core > 1 && steer_of(info.driver_name) == HG_RX_SHARED) {
		HG_LOG(WARNING, "%s cannot steer by UDP port: --rx-queues %u "
		       "ignored, tenants share its RX queues", info.driver_name, per_core);
		per_core = 1;
	}
	if (hg_cfg.tx_queues > 1)
		HG_LOG(WARNING, "%s: --tx-queues %lu ignored, a TX queue per core "
		       "(TX rings per tenant group are memif's, --memif)",
		       info.driver_name, (unsigned long)hg_cfg.tx_queues);
	if (reads_every_queue(info.driver_name))
		rc = spread_ports(dp, ports, n_ports, pool, &conf);
	else
		rc = one_port(dp, port, &info, per_core, pool, &conf);
	if (rc == 0)
		rc = rte_eth_macaddr_get(port, &dp->mac);
	if (rc < 0)
		return rc;
	HG_LOG(INFO, "port %u (%s%s) up, %u TX queue%s, %u RX queue%s on core 0 (%s), "
	       "RX rings of %u, mac " RTE_ETHER_ADDR_PRT_FMT, port, info.driver_name,
	       n_ports > 1 ? " and its sibling vdevs" : "", dp->n_cores,
	       dp->n_cores == 1 ? "" : "s", dp->core[0].n_rxq,
	       dp->core[0].n_rxq == 1 ? "" : "s", hg_port_steering(dp),
	       rx_ring_size(port), RTE_ETHER_ADDR_BYTES(&dp->mac));
	return 0;
}

void
hg_port_fini(struct hg_dp *dp)
{
	uint16_t port;

	if (dp->mif != NULL) {
		hg_mif_stash_free(dp->mif);
		return;
	}
	RTE_ETH_FOREACH_DEV(port) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
}

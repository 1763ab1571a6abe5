/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-memif-bridge: forwards every frame between a Linux interface
 * (net_af_packet) and a memif port (the client of a daemon's net_memif
 * socket), both ways, unchanged: a vSwitch of one cable. With it, the
 * integration tests' kernel sockets and raw frames reach a daemon whose
 * port is net_memif, so the datapath tests run over both PMDs.
 *
 * Not on any measured path: it sleeps when idle (tests share two CPUs)
 * and forwards at whatever rate that allows.
 *
 * With --rx-map (the JSON of `hgctl tenant list --json`) it opens the
 * daemon's rings and steers each datagram to its tenant's (rx_map.h), as
 * a vSwitch that knows the daemon's tenants would.
 *
 * usage: hg-memif-bridge --iface IF --memif SOCKET [--rx-map FILE]
 * Prints "ready" once the daemon has connected; SIGTERM/SIGINT stop it.
 * SIGUSR1, and the exit, print what it dropped on stderr ("dropped ..."),
 * so a test that lost datagrams can tell the bridge's losses from the
 * daemon's.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_debug.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "rx_map.h"
#include "tool_eal.h"
#include "../common/hg_util.h"

#define RING        1024u
#define MBUFS       8191u
#define BURST       32u
#define IDLE_SPIN   64u		/* empty passes before sleeping */
#define NAP_MAX_US  200u
#define WAIT_LINK_S 5

#define die(...) hg_die(2, "hg-memif-bridge", "", __VA_ARGS__)

static struct hg_rx_map map;
static volatile sig_atomic_t report;

/* What the bridge itself threw away: frames a port refused. */
static struct {
	uint64_t to_daemon, to_wire;
} refused;

/* Hands n frames to queue q of port b; what it refuses is dropped, as a
 * full switch port would. */
static void
send_to(uint16_t b, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	uint16_t sent = rte_eth_tx_burst(b, q, m, n);

	rte_pktmbuf_free_bulk(m + sent, n - sent);
	*(b == 0 ? &refused.to_wire : &refused.to_daemon) += n - sent;
}

/* One burst from the wire into the daemon's rings, each frame to the
 * ring the map gives its UDP port (runs of one ring go out together);
 * returns the frames taken. */
static unsigned
to_daemon(uint16_t wire, uint16_t mif)
{
	struct rte_mbuf *m[BURST];
	uint16_t n = rte_eth_rx_burst(wire, 0, m, BURST), i, run = 0;
	unsigned ring = 0, r;

	for (i = 0; i < n; i++) {
		r = hg_rx_map_frame(&map, rte_pktmbuf_mtod(m[i], const uint8_t *),
				    rte_pktmbuf_data_len(m[i]));
		if (i > run && r != ring) {
			send_to(mif, (uint16_t)ring, m + run, i - run);
			run = i;
		}
		ring = r;
	}
	if (n > run)
		send_to(mif, (uint16_t)ring, m + run, n - run);
	return n;
}

/* One burst from each of the daemon's TX queues onto the wire. */
static unsigned
to_wire(uint16_t mif, uint16_t wire)
{
	struct rte_mbuf *m[BURST];
	unsigned q, total = 0;
	uint16_t n;

	for (q = 0; q < map.cores; q++) {
		n = rte_eth_rx_burst(mif, (uint16_t)q, m, BURST);
		if (n > 0)
			send_to(wire, 0, m, n);
		total += n;
	}
	return total;
}

/* Sleeps longer the longer nothing came: the first frame after a quiet
 * spell waits at most NAP_MAX_US. */
static void
idle(unsigned *empty)
{
	if (++*empty < IDLE_SPIN)
		rte_pause();
	else
		hg_tool_backoff((*empty - IDLE_SPIN) / 8, NAP_MAX_US * 1000ull);
}

/* One line: what each port missed and what the bridge refused. */
static void
print_drops(uint16_t wire, uint16_t mif)
{
	struct rte_eth_stats w = { 0 }, f = { 0 };

	rte_eth_stats_get(wire, &w);
	rte_eth_stats_get(mif, &f);
	fprintf(stderr, "dropped wire_missed=%" PRIu64 " memif_missed=%" PRIu64
		" refused_to_daemon=%" PRIu64 " refused_to_wire=%" PRIu64 "\n",
		w.imissed, f.imissed, refused.to_daemon, refused.to_wire);
	fflush(stderr);
}

static void
on_usr1(int sig)
{
	(void)sig;
	report = 1;
}

static uint16_t
port_of(const char *name)
{
	uint16_t port;

	if (rte_eth_dev_get_port_by_name(name, &port) != 0)
		die("no port %s", name);
	return port;
}

static void
wait_link(uint16_t port)
{
	struct rte_eth_link link;
	int i;

	for (i = 0; i < WAIT_LINK_S * 100 && !hg_stop; i++) {
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status)
			return;
		usleep(10000);
	}
	die("no daemon connected to the memif socket within %d s", WAIT_LINK_S);
}

#define USAGE "usage: hg-memif-bridge --iface IF --memif SOCKET [--rx-map FILE]"

static void
parse_args(int argc, char **argv, const char **iface, const char **sock)
{
	static const struct option lo[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "memif", required_argument, NULL, 'm' },
		{ "rx-map", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256];
	int c;

	hg_rx_map_single(&map);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'i')
			*iface = optarg;
		else if (c == 'm')
			*sock = optarg;
		else if (c == 'r' && hg_rx_map_load(&map, optarg, err, sizeof(err)) < 0)
			die("--rx-map: %s", err);
		else if (c != 'r')
			die(USAGE);
	}
	if (*iface == NULL || *sock == NULL || optind < argc)
		die(USAGE);
}

int
main(int argc, char **argv)
{
	const char *iface = NULL, *sock = NULL;
	char v0[128], v1[200];
	const char *vdevs[] = { v0, v1 };
	struct rte_mempool *pool;
	uint16_t wire, mif;
	unsigned empty = 0;

	hg_tool_version(argc, argv, "hg-memif-bridge");
	parse_args(argc, argv, &iface, &sock);
	snprintf(v0, sizeof(v0), "net_af_packet0,iface=%s", iface);
	hg_tool_memif_vdev(v1, sizeof(v1), sock);
	hg_stop_on_signals();
	if (hg_tool_eal("hgbridge", vdevs, 2) < 0)
		die("cannot start DPDK");
	wire = port_of("net_af_packet0");
	mif = port_of("net_memif0");
	RTE_VERIFY(wire == 0);	/* send_to tells the ports apart by it */
	signal(SIGUSR1, on_usr1);
	pool = rte_pktmbuf_pool_create("bridge", MBUFS, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (pool == NULL || hg_tool_port(wire, pool, RING, 1, 1) < 0 ||
	    hg_tool_port(mif, pool, RING, (uint16_t)map.cores,
			 (uint16_t)hg_rx_map_rings(&map)) < 0)
		die("cannot start the ports");
	wait_link(mif);
	printf("ready\n");
	fflush(stdout);
	while (!hg_stop) {
		if (to_daemon(wire, mif) + to_wire(mif, wire) > 0)
			empty = 0;
		else
			idle(&empty);
		if (report) {
			report = 0;
			print_drops(wire, mif);
		}
	}
	print_drops(wire, mif);
	rte_eth_dev_stop(wire);
	rte_eth_dev_stop(mif);
	rte_eth_dev_close(wire);
	rte_eth_dev_close(mif);
	rte_eal_cleanup();
	return 0;
}

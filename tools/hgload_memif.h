/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's memif transport (issue 14): the same workloads, sessions,
 * credits and report as over kernel sockets (hgload.c), but the datagrams
 * go to the daemon as Ethernet/IPv4/UDP frames over a net_memif port of
 * hgload's own, with no kernel in the path. One port per process.
 */
#ifndef HG_TOOLS_HGLOAD_MEMIF_H
#define HG_TOOLS_HGLOAD_MEMIF_H

#include <stddef.h>
#include <stdint.h>

/* Where the frames go: addresses and ports in network order. */
struct hgl_memif_cfg {
	const char *socket;	/* the daemon's memif socket (role=server) */
	uint32_t src_ip, dst_ip;
	uint16_t dst_port;
	unsigned flows;		/* flow f sends from port HGL_MEMIF_PORT0 + f */
};

#define HGL_MEMIF_PORT0 20000u

/* Starts EAL and the memif port, waits for the daemon to connect and
 * learns its MAC (ARP). Returns 0, or -1 with the reason in err. */
int hgl_memif_open(const struct hgl_memif_cfg *c, char *err, size_t n);
/* Sends one datagram of flow f; 0, or -1 if the port's ring is full.
 * Callable from any thread. */
int hgl_memif_send(unsigned f, const void *payload, size_t len);
/* Takes what arrived (answering ARP) for at most max_ns, calling
 * took(arg, f, payload, len) for each datagram from the target to flow
 * f's port; returns how many. */
unsigned hgl_memif_poll(uint64_t max_ns,
			void (*took)(void *arg, unsigned f, const uint8_t *p, size_t n),
			void *arg);
void hgl_memif_close(void);

#endif /* HG_TOOLS_HGLOAD_MEMIF_H */

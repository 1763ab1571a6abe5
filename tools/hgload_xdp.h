/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's link replay (--replay over kernel sockets): a flood put on a
 * kernel link as a NIC's DMA puts one on a NIC's ring. The frame is built
 * once; the kernel's BPF_PROG_RUN in live-frames mode transmits copies of
 * it out of the link, each with its flow's source port (bpf/xdp_replay.c).
 * No socket, no skb and no system call per frame on the sender's side:
 * what the frames cost the sender's CPU is the link's own work (on a
 * veth, the peer's XDP program and its copy into an AF_XDP socket).
 *
 * Needs root (CAP_BPF, CAP_NET_ADMIN) and a network namespace of its own:
 * it attaches its program to that namespace's loopback while it runs
 * (bpf/xdp_replay.c says why). The flows' sockets stay open: the answers
 * come back to them.
 */
#ifndef HG_TOOLS_HGLOAD_XDP_H
#define HG_TOOLS_HGLOAD_XDP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* Loads the program and attaches it to the namespace's loopback. 0, or
 * -1 with the reason in err. */
int hgl_xdp_open(char *err, size_t n);

/* One load's replay: k (0..HGR_LOADS-1) names its entry. */
struct hgl_xdp_replay {
	unsigned k;
	const int *fd;		/* its flows' connected sockets */
	unsigned flows;		/* 1..HGR_FLOWS */
	const struct sockaddr_in *target;
	const void *payload;
	size_t len;		/* at most HG_MAX_PAYLOAD */
	double rate;		/* frames a second */
};

/* Readies r: the link and the target's MAC (ARP, for which it sends one
 * datagram from the first flow: counted in *sent), the frame, the entry.
 * 0, or -1 with the reason in err. */
int hgl_xdp_prepare(const struct hgl_xdp_replay *r, uint64_t *sent, char *err, size_t n);

/* Replays r at its rate until end_ns (hg_now_ns), from the calling
 * thread. Returns the frames it had the kernel transmit; *late: the times
 * it fell more than a millisecond behind its pace (its CPU was taken) and
 * gave up the backlog, as a link does not keep what it could not send. -1
 * with the reason in err if a run failed. */
int hgl_xdp_run(const struct hgl_xdp_replay *r, uint64_t end_ns, uint64_t *sent,
		uint64_t *late, char *err, size_t n);

/* The link bounce (--bounce over kernel sockets): echo throughput with
 * the server as the bound where the kernel refuses a replay. An XDP
 * program on this end of the link (bpf/xdp_bounce.c) sends every answer
 * from the target back to it as a new request, so that requests go round
 * between the server and the link with no sender in the loop; hgload's
 * sender only tops up what was dropped. What it turned, per second, is
 * what the server answered. Every load of an hgload may bounce, each to
 * a target of its own on the same link. Needs root (CAP_BPF,
 * CAP_NET_ADMIN); the program is attached by a link (bpf_link), which
 * goes when hgload does. */
struct hgl_bounce {
	unsigned k;		/* the load's entry, 0..HGB_LOADS-1 */
	int fd;			/* a socket connected to the target */
	const struct sockaddr_in *target;
	const void *payload;	/* a request, for the ARP query */
	size_t len;
};

/* Finds the link to b's target (ARP, for which it sends a datagram on
 * b->fd), loads the program and attaches it there, every load's entry
 * off. Once, before any load starts. 0, or -1 with the reason in err. */
int hgl_bounce_open(const struct hgl_bounce *b, char *err, size_t n);

/* Turns the answers from load b->k's target from now on (its thread).
 * 0, or -1 with the reason in err. */
int hgl_bounce_start(const struct hgl_bounce *b, char *err, size_t n);

/* Stops load k's turning (those answers pass to the sockets again) and
 * says how many it turned. 0, or -1 with the reason in err. */
int hgl_bounce_stop(unsigned k, uint64_t *turned, char *err, size_t n);

/* Detaches and unloads both programs (exit does the same). */
void hgl_xdp_close(void);

#endif /* HG_TOOLS_HGLOAD_XDP_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hgload's link replay and link bounce: hgload_xdp.h says what they are.
 * libbpf loads the programs (bpf/xdp_replay.c and bpf/xdp_bounce.c, built
 * into hgload: hgr_obj, hgb_obj). For the replay the kernel's test run
 * transmits; its pace is kept here: runs of a few hundred frames, a nap
 * between them until the next is due.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <rte_ether.h>

#include "hgload_xdp.h"
#include "udp_frame.h"
#include "hg_wire.h"
#include "../common/hg_util.h"
#include "../proto/hg_xdp_bounce.h"
#include "../proto/hg_xdp_replay.h"

extern const unsigned char hgr_obj_start[], hgr_obj_end[];
extern const unsigned char hgb_obj_start[], hgb_obj_end[];

#define FRAME_MAX (HGL_UDP_HDRS + HG_MAX_PAYLOAD)
/* a run's frames: ~1 ms of the pace, within these bounds. A run costs
 * ~13 us besides its frames (its page pool is made and unmade), a 1,400 B
 * frame ~0.5 us into an AF_XDP socket on a veth here: runs of 25 frames
 * cost the sender three times as much a frame as runs of 250. */
#define RUN_MIN 64u
#define RUN_MAX 1024u
#define RUN_NS  1000000.0
#define LATE_NS 1000000u	/* behind by more: the backlog is given up */
#define ARP_TRIES 100		/* of 10 ms */

static struct {
	struct bpf_object *obj;
	int prog_fd, conf_fd, link_fd;
	struct {
		uint8_t frame[FRAME_MAX];
		uint32_t len, ifindex;
	} load[HGR_LOADS];
} rx = { .prog_fd = -1, .conf_fd = -1, .link_fd = -1 };

/* the bounce's program, maps and attachment */
static struct {
	struct bpf_object *obj;
	int conf_fd, count_fd, link_fd;
} bn = { .conf_fd = -1, .count_fd = -1, .link_fd = -1 };

/* err: "WHO: WHAT[: strerror(e)]"; returns -1 */
static int
fail_as(char *err, size_t n, const char *who, const char *what, int e)
{
	snprintf(err, n, "%s: %s%s%s", who, what, e ? ": " : "", e ? strerror(e) : "");
	return -1;
}

static int
fail(char *err, size_t n, const char *what, int e)
{
	return fail_as(err, n, "--replay", what, e);
}

static int
bounce_fail(char *err, size_t n, const char *what, int e)
{
	return fail_as(err, n, "--bounce", what, e);
}

/* The loopback it attaches to must be a namespace's own, not the host's
 * (whose local traffic would then pass through generic XDP): the initial
 * namespace is PID 1's where that can be read, and has the inode Linux
 * gives it (PROC_NET_INIT_INO) where that is fixed (6.x). */
#define NET_INIT_INO 0xEFFFFFF9u

static int
own_netns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) != 0)
		return 1;	/* cannot tell: the attach decides */
	if (self.st_ino == NET_INIT_INO)
		return 0;
	return stat("/proc/1/ns/net", &init) != 0 || self.st_ino != init.st_ino ||
	       self.st_dev != init.st_dev;
}

/* Does the kernel refuse a live-frames test run? Some do, root or not
 * (6.18 here: EPERM). Asked with a frame of zeros, which the program
 * passes (no load is configured yet: hgr_conf's entries are all zero) and
 * the loopback's stack drops (EtherType 0), so that a kernel that refuses
 * is told before anything is attached or sent. */
static int
live_refused(void)
{
	static const uint8_t zeros[RTE_ETHER_MIN_LEN];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = zeros, .data_size_in = sizeof(zeros),
		    .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	return bpf_prog_test_run_opts(rx.prog_fd, &o) != 0;
}

/* An XDP object built into hgload, opened and loaded; NULL with the
 * reason in err, for who. */
static struct bpf_object *
load_obj(const unsigned char *start, const unsigned char *end, const char *name,
	 const char *who, char *err, size_t n)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct bpf_object *o = bpf_object__open_mem(start, (size_t)(end - start), &oo);
	int e;

	if (o == NULL) {
		fail_as(err, n, who, "cannot open its XDP program", errno);
		return NULL;
	}
	if ((e = bpf_object__load(o)) != 0) {
		fail_as(err, n, who, "cannot load its XDP program (root, or CAP_BPF?)", -e);
		bpf_object__close(o);
		return NULL;
	}
	return o;
}

int
hgl_xdp_open(char *err, size_t n)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_SKB_MODE);
	struct bpf_program *p;
	struct bpf_map *m;

	if (!own_netns())
		return fail(err, n, "run it in a network namespace of its own (it "
			    "attaches a program to the namespace's loopback)", 0);
	if ((rx.obj = load_obj(hgr_obj_start, hgr_obj_end, "hgload-replay", "--replay", err,
			       n)) == NULL)
		return -1;
	p = bpf_object__find_program_by_name(rx.obj, "hgr_replay");
	m = bpf_object__find_map_by_name(rx.obj, "hgr_conf");
	if (p == NULL || m == NULL)
		return fail(err, n, "its XDP program is not as built", ENOENT);
	rx.prog_fd = bpf_program__fd(p);
	rx.conf_fd = bpf_map__fd(m);
	if (live_refused())
		return fail(err, n, "this kernel does not let a test run transmit "
			    "(BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES refused), so "
			    "a link replay cannot run here; over memif (--memif, --blast) "
			    "a replay needs no kernel help", errno);
	rx.link_fd = bpf_link_create(rx.prog_fd, (int)if_nametoindex("lo"), BPF_XDP, &lo);
	if (rx.link_fd < 0)
		return fail(err, n, errno == EBUSY || errno == EEXIST ?
			    "the namespace's loopback has an XDP program already "
			    "(another hgload --replay? give one hgload every flood, "
			    "--and between them)" : "cannot attach to the loopback",
			    errno == EBUSY || errno == EEXIST ? 0 : errno);
	return 0;
}

/* The target's MAC and the link it is on, from the kernel's ARP table. */
static int
arp_lookup(uint32_t ip, uint8_t mac[RTE_ETHER_ADDR_LEN], char dev[IF_NAMESIZE])
{
	char line[256], addr[64], hw[64], mask[32], name[64];
	unsigned type, flags, m[RTE_ETHER_ADDR_LEN];
	struct in_addr a;
	int found = 0;
	FILE *f = fopen("/proc/net/arp", "r");

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%63s %x %x %63s %31s %63s", addr, &type, &flags, hw, mask,
			   name) != 6 || inet_pton(AF_INET, addr, &a) != 1 ||
		    a.s_addr != ip || !(flags & 0x2) || strlen(name) >= IF_NAMESIZE ||
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
			   &m[5]) != RTE_ETHER_ADDR_LEN)
			continue;
		for (unsigned i = 0; i < RTE_ETHER_ADDR_LEN; i++)
			mac[i] = (uint8_t)m[i];
		snprintf(dev, IF_NAMESIZE, "%s", name);
		found = 1;
	}
	fclose(f);
	return found;
}

/* The target's MAC and the link it is on, datagrams from fd (connected
 * to it) making the kernel ask (each counted in *sent). 0, or -1 with the
 * reason in err, for who. */
static int
resolve(int fd, const struct sockaddr_in *target, const void *payload, size_t len,
	uint64_t *sent, uint8_t mac[RTE_ETHER_ADDR_LEN], char dev[IF_NAMESIZE],
	const char *who, char *err, size_t n)
{
	int tries;

	for (tries = 0; tries < ARP_TRIES && !arp_lookup(target->sin_addr.s_addr, mac, dev);
	     tries++) {
		if (tries % 30 == 0 && send(fd, payload, len, 0) >= 0)
			(*sent)++;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (tries == ARP_TRIES)
		return fail_as(err, n, who, "the target's MAC is not in the ARP table after "
			       "1 s (it must be on a directly connected link)", 0);
	return 0;
}

int
hgl_xdp_prepare(const struct hgl_xdp_replay *r, uint64_t *sent, char *err, size_t n)
{
	struct hgr_conf c = { .flows = r->flows };
	struct sockaddr_in from;
	socklen_t sl = sizeof(from);
	struct rte_ether_addr dst, src;
	char dev[IF_NAMESIZE];
	struct ifreq ifr;

	if (rx.prog_fd < 0 || r->k >= HGR_LOADS || r->flows == 0 || r->flows > HGR_FLOWS ||
	    r->len > HG_MAX_PAYLOAD)
		return fail(err, n, "a load it cannot replay", EINVAL);
	for (unsigned f = 0; f < r->flows; f++) {
		sl = sizeof(from);
		if (getsockname(r->fd[f], (struct sockaddr *)&from, &sl) != 0)
			return fail(err, n, "getsockname", errno);
		c.sport[f] = from.sin_port;
	}
	/* the first flow's datagram makes the kernel ask for the target's MAC */
	if (resolve(r->fd[0], r->target, r->payload, r->len, sent, dst.addr_bytes, dev,
		    "--replay", err, n) < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(r->fd[0], SIOCGIFHWADDR, &ifr) != 0)
		return fail(err, n, "the link's MAC", errno);
	c.ifindex = if_nametoindex(dev);
	rx.load[r->k].ifindex = c.ifindex;
	memcpy(src.addr_bytes, ifr.ifr_hwaddr.sa_data, RTE_ETHER_ADDR_LEN);
	/* its IP id: the load's entry */
	rx.load[r->k].len = hgl_udp_frame(rx.load[r->k].frame, &dst, &src,
					  from.sin_addr.s_addr, r->target->sin_addr.s_addr,
					  from.sin_port, r->target->sin_port, (uint16_t)r->k,
					  r->payload, r->len);
	if (c.ifindex == 0 || bpf_map_update_elem(rx.conf_fd, &r->k, &c, BPF_ANY) != 0)
		return fail(err, n, "cannot configure its program", errno);
	return 0;
}

int
hgl_xdp_run(const struct hgl_xdp_replay *r, uint64_t end_ns, uint64_t *sent,
	    uint64_t *late, char *err, size_t n)
{
	struct xdp_md ctx = { .data_end = rx.load[r->k].len,
			      .ingress_ifindex = rx.load[r->k].ifindex };
	double per_run = r->rate * RUN_NS / 1e9;
	unsigned batch = per_run < RUN_MIN ? RUN_MIN : per_run > RUN_MAX ? RUN_MAX :
			 (unsigned)per_run;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = rx.load[r->k].frame,
		    .data_size_in = rx.load[r->k].len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = batch,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	uint64_t gap = (uint64_t)(batch / r->rate * 1e9), due = hg_now_ns(), t;
	struct timespec ts;

	while ((t = hg_now_ns()) < end_ns) {
		if (t < due) {
			ts.tv_sec = (time_t)(due / 1000000000u);
			ts.tv_nsec = (long)(due % 1000000000u);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			continue;
		}
		if (t - due > LATE_NS) {
			(*late)++;
			due = t;
		}
		if (bpf_prog_test_run_opts(rx.prog_fd, &o) != 0)
			return fail(err, n, "a test run of its program failed", errno);
		*sent += batch;
		due += gap;
	}
	return 0;
}

int
hgl_bounce_open(const struct hgl_bounce *b, char *err, size_t n)
{
	uint8_t mac[RTE_ETHER_ADDR_LEN];
	char dev[IF_NAMESIZE];
	struct bpf_program *p;
	struct bpf_map *conf, *count;
	uint64_t asked = 0;
	unsigned ifindex;

	/* the link first: nothing is loaded for a target it cannot reach */
	if (resolve(b->fd, b->target, b->payload, b->len, &asked, mac, dev, "--bounce", err,
		    n) < 0)
		return -1;
	if ((ifindex = if_nametoindex(dev)) == 0)
		return bounce_fail(err, n, "the link's index", errno);
	if ((bn.obj = load_obj(hgb_obj_start, hgb_obj_end, "hgload-bounce", "--bounce", err,
			       n)) == NULL)
		return -1;
	p = bpf_object__find_program_by_name(bn.obj, "hgb_bounce");
	conf = bpf_object__find_map_by_name(bn.obj, "hgb_conf");
	count = bpf_object__find_map_by_name(bn.obj, "hgb_count");
	if (p == NULL || conf == NULL || count == NULL)
		return bounce_fail(err, n, "its XDP program is not as built", ENOENT);
	bn.conf_fd = bpf_map__fd(conf);
	bn.count_fd = bpf_map__fd(count);
	/* a link, not a flag on the device: it goes when hgload does */
	bn.link_fd = bpf_link_create(bpf_program__fd(p), (int)ifindex, BPF_XDP, NULL);
	if (bn.link_fd < 0)
		return bounce_fail(err, n, errno == EBUSY || errno == EEXIST ?
				   "the link has an XDP program already" :
				   "cannot attach to the link", errno);
	return 0;
}

int
hgl_bounce_start(const struct hgl_bounce *b, char *err, size_t n)
{
	struct hgb_conf c = { .ip = b->target->sin_addr.s_addr, .port = b->target->sin_port,
			      .on = 1 };

	if (bn.conf_fd < 0 || b->k >= HGB_LOADS)
		return bounce_fail(err, n, "not open", EINVAL);
	if (bpf_map_update_elem(bn.conf_fd, &b->k, &c, BPF_ANY) != 0)
		return bounce_fail(err, n, "cannot configure its program", errno);
	return 0;
}

int
hgl_bounce_stop(unsigned k, uint64_t *turned, char *err, size_t n)
{
	struct hgb_conf off = { 0 };
	int cpus = libbpf_num_possible_cpus();
	uint64_t v[256];

	if (bn.conf_fd < 0 || k >= HGB_LOADS || cpus <= 0 ||
	    cpus > (int)(sizeof(v) / sizeof(v[0])))
		return bounce_fail(err, n, "not running", EINVAL);
	if (bpf_map_update_elem(bn.conf_fd, &k, &off, BPF_ANY) != 0 ||
	    bpf_map_lookup_elem(bn.count_fd, &k, v) != 0)
		return bounce_fail(err, n, "cannot read its program's count", errno);
	*turned = 0;
	for (int i = 0; i < cpus; i++)
		*turned += v[i];
	return 0;
}

void
hgl_xdp_close(void)
{
	if (rx.link_fd >= 0)
		close(rx.link_fd);
	bpf_object__close(rx.obj);
	rx.obj = NULL;
	rx.link_fd = rx.prog_fd = rx.conf_fd = -1;
	if (bn.link_fd >= 0)
		close(bn.link_fd);
	bpf_object__close(bn.obj);
	bn.obj = NULL;
	bn.link_fd = bn.conf_fd = bn.count_fd = -1;
}

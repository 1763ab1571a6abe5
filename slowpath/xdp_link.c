/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's XDP program on a net_af_xdp link (xdp_link.h).
 */
#include <errno.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

#include <rte_ethdev.h>

#include "../fastpath/dp.h"
#include "log.h"
#include "xdp_link.h"

/* the program's object file, built into the daemon (bpf/xdp_obj.S) */
extern const unsigned char hg_xdp_obj_start[], hg_xdp_obj_end[];

/* ASan builds (make asan): DPDK 22.11's net_af_xdp never frees the
 * bpf_object of the program it loads (libbpf) nor a umem's struct
 * (libxdp's xsk_umem__create). Those leaks are the PMD's; LeakSanitizer
 * is told so, and checks the daemon's own. */
#if defined(__SANITIZE_ADDRESS__)
#define HG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HG_ASAN 1
#endif
#endif
#ifdef HG_ASAN
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
	return "leak:libbpf.so\nleak:xsk_umem__create\n";
}
#endif

/* its function, bpf_prog_info's name: libxdp's default program's, so that
 * libxdp hands this one the sockets of the vdevs after the first
 * (bpf/xdp_shed.c); ours is told apart by its maps (find_maps) */
#define PROG_NAME "xsk_def_prog"
#define VDEV_PREFIX "net_af_xdp"

/* The program's maps (proto/hg_xdp.h), found by name; all but hg_count
 * are mmap-ed. A program with the first M_OURS of them is ours (a daemon
 * of an earlier version may have left it). */
enum { M_CONF, M_PORTS, M_SHED, M_COUNT, M_OURS, M_PASSED = M_OURS, M_TAKEN, M_SHARE,
       N_MAPS };
static const char *const map_names[N_MAPS] = {
	[M_CONF] = "hg_conf", [M_PORTS] = "hg_ports", [M_SHED] = "hg_shed",
	[M_COUNT] = "hg_count", [M_PASSED] = "hg_passed", [M_TAKEN] = "hg_taken",
	[M_SHARE] = "hg_share",
};

/* Ring shares (hg_share): frames a ring that backs up may hold of ARP,
 * ICMP and ports nobody owns, and of a tenant at least; the rest of the
 * ring's depth is split by weight among the active tenants. The depth is
 * half the RX ring: net_af_xdp (copy mode) tops its fill ring up only once
 * half of it is free, so the kernel finds the fill ring empty, and drops,
 * once about half a ring of frames waits to be read. A ring backs up once
 * it holds half its depth. */
#define SHARE_OTHER 64u
#define SHARE_MIN   32u
#define SHARE_EVERY_TICKS 10u

/* the vdevs of the interface: a device queue per RX queue of theirs */
struct xdp_vdev {
	char name[32];		/* the ethdev's name: before the first ',' */
	unsigned start_queue;
	unsigned queues;	/* queue_count= */
	char *arg;		/* the --vdev we rewrote (EAL copied it) */
};

static struct {
	int on;
	char iface[IF_NAMESIZE];
	unsigned n_vdev;
	struct xdp_vdev vdev[HG_XDP_QUEUES];
	int obj_fd;		/* memfd with the object, until the PMD loaded it */
	int veth;		/* iface is a veth: busy polling reaches nothing */
	unsigned busy_off;	/* vdevs we gave busy_budget=0 (rewrite_vdev) */
	int lock_fd;		/* abstract socket: this daemon serves iface */
	int count_fd;
	struct {
		void *p;
		size_t len;
	} map[N_MAPS];
	struct hg_xdp_conf *conf;
	uint64_t *ports, *share;
	uint32_t depth;		/* frames a ring holds before the kernel drops */
	uint32_t ticks;
	int ncpus;
} xl = { .obj_fd = -1, .lock_fd = -1, .count_fd = -1 };

int
hg_xdp_link(void)
{
	return xl.on;
}

uint32_t
hg_xdp_link_bufs(void)
{
	uint32_t n = 0;
	unsigned i;

	for (i = 0; i < xl.n_vdev; i++)
		n += xl.vdev[i].queues * XSK_RING_CONS__DEFAULT_NUM_DESCS;
	return n;
}

/* A devargs key's value ("iface=veth0,..."), copied into out; 0 if absent. */
static int
devarg(const char *args, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);
	const char *p = args;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == args || p[-1] == ',') && p[k] == '=') {
			p += k + 1;
			snprintf(out, len, "%.*s", (int)strcspn(p, ","), p);
			return 1;
		}
		p += k;
	}
	return 0;
}

/* The interface is this daemon's for its life: an abstract socket named
 * after it, which the kernel releases when the daemon dies however it
 * dies. */
static int
take_iface(const char *iface)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "hourglass-xdp:%s", iface);

	xl.lock_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (xl.lock_fd < 0)
		return -errno;
	if (bind(xl.lock_fd, (struct sockaddr *)&a,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0)
		return -errno;
	return 0;
}

/* What is attached to ifindex, if it is our program: a daemon that died
 * left it (the PMD detaches it at a clean exit), and the PMD attaches
 * only where nothing is. */
static int find_maps(int prog_fd, int fds[N_MAPS]);

static void
detach_leftover(int ifindex, const char *iface)
{
	uint32_t id = 0, k;
	int fd, fds[N_MAPS], ours;

	if (bpf_xdp_query_id(ifindex, 0, &id) < 0 || id == 0)
		return;
	if ((fd = bpf_prog_get_fd_by_id(id)) < 0)
		return;
	ours = find_maps(fd, fds) >= M_OURS;
	for (k = 0; k < N_MAPS; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	if (ours && bpf_xdp_detach(ifindex, 0, NULL) == 0)
		HG_LOG(NOTICE, "%s: detached the XDP program a daemon that "
		       "died left (id %u)", iface, id);
	close(fd);
}

static int
write_obj(void)
{
	size_t n = (size_t)(hg_xdp_obj_end - hg_xdp_obj_start), off = 0;
	ssize_t w;

	xl.obj_fd = memfd_create("hourglass-xdp.o", MFD_CLOEXEC);
	if (xl.obj_fd < 0)
		return -errno;
	while (off < n) {
		w = write(xl.obj_fd, hg_xdp_obj_start + off, n - off);
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}

/* One ethtool request (cmd: a struct whose first member is its command)
 * about iface; 0, or -1. */
static int
ethtool(const char *iface, void *cmd)
{
	struct ifreq ifr = { .ifr_data = cmd };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	rc = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* Is iface a veth? net_af_xdp asks for preferred busy polling by default
 * (busy_budget 64): every RX poll that finds its ring empty then makes a
 * recvfrom() so that the kernel polls the device's NAPI on the polling
 * core. On a NIC that is how an empty queue gets polled. A veth's XDP
 * receive queue tells its sockets no NAPI id (kernel 6.18: perf shows
 * xsk_recvmsg returning without napi_busy_loop), so there each of those
 * calls polls nothing and only costs the fast path a system call. */
static int
is_veth(const char *iface)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };

	return ethtool(iface, &di) == 0 && strcmp(di.driver, "veth") == 0;
}

/* The value of --vdev, where argv[i] holds one: "--vdev=X" or "--vdev" "X". */
static char **
vdev_value(int argc, char **argv, int i)
{
	if (strncmp(argv[i], "--vdev=", 7) == 0)
		return &argv[i];
	if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
		return &argv[i + 1];
	return NULL;
}

/* The first vdev's interface becomes the daemon's (v: that vdev, for
 * errors): no other daemon's, no program left on it, ours staged. */
static int
take_link(const char *v, const char *iface)
{
	int ifindex, rc;

	snprintf(xl.iface, sizeof(xl.iface), "%s", iface);
	if ((ifindex = (int)if_nametoindex(xl.iface)) == 0) {
		fprintf(stderr, "hourglassd: %s: no interface %s\n", v, xl.iface);
		return -1;
	}
	if ((rc = take_iface(xl.iface)) < 0) {
		fprintf(stderr, "hourglassd: %s: %s\n", xl.iface, rc == -EADDRINUSE ?
			"another hourglassd serves this interface" : strerror(-rc));
		return -1;
	}
	detach_leftover(ifindex, xl.iface);
	if ((rc = write_obj()) < 0) {
		fprintf(stderr, "hourglassd: cannot stage the XDP program: %s\n",
			strerror(-rc));
		return -1;
	}
	xl.veth = is_veth(xl.iface);
	xl.on = 1;
	return 0;
}

/* The vdev in *slot as EAL will read it: the first gets the program; on a
 * veth, every one gets busy polling off (is_veth) unless the operator
 * chose a budget. args: its devargs. */
static int
rewrite_vdev(char **slot, struct xdp_vdev *d, const char *args)
{
	char prog[40] = "", budget[8];
	const char *off = "";

	if (d == &xl.vdev[0])
		snprintf(prog, sizeof(prog), ",xdp_prog=/proc/self/fd/%d", xl.obj_fd);
	if (xl.veth && !devarg(args, "busy_budget", budget, sizeof(budget))) {
		off = ",busy_budget=0";
		xl.busy_off++;
	}
	if (prog[0] == '\0' && off[0] == '\0')
		return 0;
	if (asprintf(&d->arg, "%s%s%s", *slot, prog, off) < 0) {
		d->arg = NULL;
		return -1;
	}
	*slot = d->arg;		/* argv's until EAL has read it */
	return 0;
}

/* The first vdev takes the interface and gets the program; a later one
 * must be of the same interface (another queue of it) and gets none:
 * libxdp finds the first's on the interface (bpf/xdp_shed.c). */
static int
prepare_vdev(char **slot, int eq)
{
	char *v = *slot + (eq ? 7 : 0), q[16] = "0", n[16] = "1", iface[IF_NAMESIZE];
	const char *args = strchr(v, ',');
	struct xdp_vdev *d = &xl.vdev[xl.n_vdev];

	if (args == NULL || !devarg(args + 1, "iface", iface, sizeof(iface))) {
		fprintf(stderr, "hourglassd: %s: iface= is missing\n", v);
		return -1;
	}
	if (xl.n_vdev == HG_XDP_QUEUES || (xl.on && strcmp(iface, xl.iface) != 0)) {
		fprintf(stderr, "hourglassd: %s: one interface is served, up to %u "
			"net_af_xdp vdevs of it (one per queue)\n", v, HG_XDP_QUEUES);
		return -1;
	}
	devarg(args + 1, "start_queue", q, sizeof(q));
	devarg(args + 1, "queue_count", n, sizeof(n));
	d->start_queue = (unsigned)strtoul(q, NULL, 10);
	d->queues = RTE_MIN((unsigned)strtoul(n, NULL, 10), HG_XDP_QUEUES);
	snprintf(d->name, sizeof(d->name), "%.*s", (int)(args - v), v);
	xl.n_vdev++;
	if (!xl.on && take_link(v, iface) < 0)
		return -1;
	return rewrite_vdev(slot, d, args + 1);
}

/* The --vdev value at argv[i] if it is a net_af_xdp one: its slot in
 * argv (--vdev=X or --vdev X), *v its text. */
static char **
xdp_vdev_at(int argc, char **argv, int i, char **v)
{
	char **slot = vdev_value(argc, argv, i);

	if (slot == NULL)
		return NULL;
	*v = *slot + (slot == &argv[i] ? 7 : 0);
	return strncmp(*v, VDEV_PREFIX, strlen(VDEV_PREFIX)) == 0 ? slot : NULL;
}

/* An operator's own program (xdp_prog= on any of the vdevs) is the PMD's
 * business: no shedding in the driver, and no program of ours. */
static int
operator_prog(int argc, char **argv)
{
	char *v, prog[8];
	int i;

	for (i = 1; i < argc; i++)
		if (xdp_vdev_at(argc, argv, i, &v) != NULL && strchr(v, ',') &&
		    devarg(strchr(v, ',') + 1, "xdp_prog", prog, sizeof(prog)))
			return 1;
	return 0;
}

int
hg_xdp_prepare(int argc, char **argv)
{
	char **slot, *v;
	int i;

	if (operator_prog(argc, argv))
		return 0;
	for (i = 1; i < argc; i++)
		if ((slot = xdp_vdev_at(argc, argv, i, &v)) != NULL &&
		    prepare_vdev(slot, slot == &argv[i]) < 0)
			return -1;
	return 0;
}

static void *
map_mmap(int fd, size_t *len)
{
	struct bpf_map_info info = { 0 };
	uint32_t ilen = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen) < 0)
		return NULL;
	/* an array's elements are 8-byte aligned in its mapping */
	*len = ((size_t)info.max_entries * ((info.value_size + 7) & ~7u) +
		(size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The program's maps, by name, from the program attached to the iface:
 * fds[k] for map_names[k], -1 where it has none. Returns how many of the
 * first ones it has (N_MAPS: all), or -errno. */
static int
find_maps(int prog_fd, int fds[N_MAPS])
{
	struct bpf_prog_info info = { 0 };
	uint32_t ids[16], len = sizeof(info), i, k;

	for (k = 0; k < N_MAPS; k++)
		fds[k] = -1;
	info.nr_map_ids = 16;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) < 0)
		return -errno;
	if (strcmp(info.name, PROG_NAME) != 0)
		return -ENOENT;
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi = { 0 };
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0)
			for (k = 0; k < N_MAPS; k++)
				if (fds[k] < 0 && strcmp(mi.name, map_names[k]) == 0) {
					fds[k] = fd;
					fd = -1;
					break;
				}
		if (fd >= 0)
			close(fd);
	}
	for (k = 0; k < N_MAPS && fds[k] >= 0; k++)
		;
	return (int)k;
}

/* The device queue (the program's rx_queue_index) of queue q of a port:
 * its vdev's start_queue + q; -1 for a port that is no vdev of ours. */
static int
dev_queue(uint16_t port, uint16_t q)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	unsigned i;

	if (rte_eth_dev_get_name_by_port(port, name) < 0)
		return -1;
	for (i = 0; i < xl.n_vdev; i++)
		if (strcmp(name, xl.vdev[i].name) == 0)
			return (int)(xl.vdev[i].start_queue + q);
	return -1;
}

/* Each RX queue's device queue; the marks are indexed by it (hg_shed's
 * keys), so it must be in the program's range, and two vdevs must not
 * claim one queue. */
static int
set_dev_queues(struct hg_dp *dp)
{
	uint32_t c, q, seen = 0;
	int d;

	_Static_assert(HG_XDP_QUEUES <= 32, "seen is a 32-bit mask");
	for (c = 0; c < dp->n_cores; c++)
		for (q = 0; q < dp->core[c].n_rxq; q++) {
			struct hg_rxq *r = &dp->core[c].rxq[q];

			d = dev_queue(r->port, r->id);
			if (d < 0 || d >= (int)HG_XDP_QUEUES || (seen & (1u << d))) {
				HG_LOG(ERR, "%s: port %u queue %u: %s", xl.iface, r->port,
				       r->id, d < 0 ? "not a vdev of the interface" :
				       d >= (int)HG_XDP_QUEUES ? "beyond the XDP program's queues" :
				       "a device queue another vdev reads too (start_queue=)");
				return -EINVAL;
			}
			seen |= 1u << d;
			r->dev_queue = (uint16_t)d;
		}
	return 0;
}

/* The interface's RX queues as ethtool -l tells them (a veth's rx, a
 * NIC's combined), 0 if it cannot say. */
static unsigned
iface_queues(const char *iface)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };

	if (ethtool(iface, &ch) < 0)
		return 0;
	return RTE_MAX(ch.rx_count, ch.combined_count);
}

/* A queue of the interface that no vdev reads passes its frames to the
 * kernel's stack (the program finds no socket for it): say so once. */
static void
warn_unread(const struct hg_dp *dp)
{
	unsigned have = iface_queues(xl.iface), read = 0, c;

	for (c = 0; c < dp->n_cores; c++)
		read += dp->core[c].n_rxq;
	if (have > read)
		HG_LOG(WARNING, "%s has %u RX queues, the daemon reads %u: what the "
		       "device puts on the others goes to the kernel's stack (give "
		       "one net_af_xdp vdev per queue, start_queue=0..%u)",
		       xl.iface, have, read, have - 1);
}

/* Maps every map but hg_count; 0, or -errno. */
static int
map_all(const int fds[N_MAPS])
{
	unsigned k;

	for (k = 0; k < N_MAPS; k++)
		if (k != M_COUNT &&
		    (xl.map[k].p = map_mmap(fds[k], &xl.map[k].len)) == NULL)
			return -errno;
	xl.conf = xl.map[M_CONF].p;
	xl.ports = xl.map[M_PORTS].p;
	xl.share = xl.map[M_SHARE].p;
	return 0;
}

/* The frames one of the link's rings holds before the kernel drops
 * (SHARE_OTHER's comment): half of its RX ring. */
static uint32_t
ring_depth(const struct hg_dp *dp)
{
	const struct hg_rxq *q = &dp->core[0].rxq[0];
	struct rte_eth_rxq_info info;

	if (dp->core[0].n_rxq == 0 || rte_eth_rx_queue_info_get(q->port, q->id, &info) < 0)
		return 1024;
	return RTE_MAX(info.nb_desc / 2u, 2u * SHARE_OTHER);
}

int
hg_xdp_open(struct hg_dp *dp, uint32_t ip)
{
	int fds[N_MAPS], prog_fd, rc, ifindex;
	uint32_t id = 0, p;

	if (!xl.on)
		return 0;
	if ((rc = set_dev_queues(dp)) < 0)
		return rc;
	warn_unread(dp);
	ifindex = (int)if_nametoindex(xl.iface);
	if (bpf_xdp_query_id(ifindex, 0, &id) < 0 || id == 0 ||
	    (prog_fd = bpf_prog_get_fd_by_id(id)) < 0) {
		HG_LOG(ERR, "%s: the PMD attached no XDP program", xl.iface);
		return -ENOENT;
	}
	rc = find_maps(prog_fd, fds);
	close(prog_fd);
	if (rc != N_MAPS) {
		HG_LOG(ERR, "%s: the XDP program attached is not the daemon's", xl.iface);
		rc = -ENOENT;
		goto fail;
	}
	if ((rc = map_all(fds)) < 0) {
		HG_LOG(ERR, "%s: cannot map the XDP program's maps: %s", xl.iface,
		       strerror(-rc));
		goto fail;
	}
	xl.count_fd = fds[M_COUNT];
	fds[M_COUNT] = -1;
	xl.ncpus = libbpf_num_possible_cpus();
	xl.depth = ring_depth(dp);
	__atomic_store_n(&xl.conf->ip, ip, __ATOMIC_RELAXED);
	for (p = 0; p < HG_XDP_PORTS; p++)
		hg_xdp_port((uint16_t)p, __atomic_load_n(&dp->port_map[p], __ATOMIC_ACQUIRE));
	hg_xdp_shares(dp);
	dp->xdp.ports = xl.ports;
	dp->xdp.passed = xl.map[M_PASSED].p;
	dp->xdp.taken = xl.map[M_TAKEN].p;
	/* release: the others before it (xdp_shed.h reads them after it) */
	__atomic_store_n(&dp->xdp.shed, xl.map[M_SHED].p, __ATOMIC_RELEASE);
	HG_LOG(INFO, "%s: XDP program %u sheds in the driver (%u vdev%s), rings "
	       "shared by weight over %u frames", xl.iface, id, xl.n_vdev,
	       xl.n_vdev == 1 ? "" : "s", xl.depth);
	if (xl.busy_off > 0)
		HG_LOG(INFO, "%s: a veth: no busy polling (busy_budget=0) on %u of "
		       "%u vdevs", xl.iface, xl.busy_off, xl.n_vdev);
	rc = 0;
fail:
	for (p = 0; p < N_MAPS; p++)
		if (fds[p] >= 0)
			close(fds[p]);
	if (xl.obj_fd >= 0) {
		close(xl.obj_fd);
		xl.obj_fd = -1;
	}
	return rc;
}

uint64_t
hg_xdp_share(uint32_t depth, unsigned slot, int active, uint32_t weight, uint64_t weights)
{
	uint64_t s;

	RTE_ASSERT(slot < HG_XDP_SLOTS);
	if (slot == HG_XDP_TOTAL)
		return depth / 2;
	if (slot == HG_XDP_OTHER)
		return SHARE_OTHER;
	if (!active || weights == 0 || depth <= SHARE_OTHER)
		return SHARE_MIN;
	s = (uint64_t)(depth - SHARE_OTHER) * weight / weights;
	return RTE_MAX(s, (uint64_t)SHARE_MIN);
}

void
hg_xdp_shares(const struct hg_dp *dp)
{
	const struct hg_tenant_view *v;
	uint64_t weights = 0, s;
	unsigned t;

	if (xl.share == NULL)
		return;
	for (t = 0; t < HG_MAX_TENANTS; t++) {
		v = __atomic_load_n(&dp->view[t], __ATOMIC_ACQUIRE);
		if (v != NULL && v->state == HG_TENANT_ACTIVE)
			weights += v->weight;
	}
	for (t = 0; t < HG_XDP_SLOTS; t++) {
		v = t < HG_MAX_TENANTS ? __atomic_load_n(&dp->view[t], __ATOMIC_ACQUIRE) : NULL;
		s = hg_xdp_share(xl.depth, t, v != NULL && v->state == HG_TENANT_ACTIVE,
				 v != NULL ? v->weight : 0, weights);
		/* a store dirties the line the program reads per frame */
		if (__atomic_load_n(&xl.share[t], __ATOMIC_RELAXED) != s)
			__atomic_store_n(&xl.share[t], s, __ATOMIC_RELAXED);
	}
}

void
hg_xdp_tick(const struct hg_dp *dp)
{
	if (xl.share != NULL && ++xl.ticks % SHARE_EVERY_TICKS == 0)
		hg_xdp_shares(dp);
}

void
hg_xdp_port(uint16_t p, uint32_t entry)
{
	if (xl.ports == NULL)
		return;
	__atomic_store_n(&xl.ports[p], (uint64_t)(entry & 0xffff), __ATOMIC_RELAXED);
}

int
hg_xdp_count(unsigned t, struct hg_xdp_count *out)
{
	struct hg_xdp_count v[xl.ncpus > 0 ? xl.ncpus : 1];
	uint32_t key = t;
	int i;

	*out = (struct hg_xdp_count){ 0 };
	if (xl.count_fd < 0 || bpf_map_lookup_elem(xl.count_fd, &key, v) < 0)
		return -1;
	for (i = 0; i < xl.ncpus; i++) {
		out->passed += v[i].passed;
		out->dropped += v[i].dropped;
		out->over_share += v[i].over_share;
	}
	return 0;
}

void
hg_xdp_close(struct hg_dp *dp)
{
	unsigned k;

	__atomic_store_n(&dp->xdp.shed, NULL, __ATOMIC_RELEASE);
	dp->xdp.ports = dp->xdp.passed = NULL;
	dp->xdp.taken = NULL;
	for (k = 0; k < N_MAPS; k++)
		if (xl.map[k].p != NULL) {
			munmap(xl.map[k].p, xl.map[k].len);
			xl.map[k].p = NULL;
		}
	xl.conf = NULL;
	xl.ports = xl.share = NULL;
	if (xl.count_fd >= 0)
		close(xl.count_fd);
	xl.count_fd = -1;
	if (xl.lock_fd >= 0)
		close(xl.lock_fd);
	xl.lock_fd = -1;
	for (k = 0; k < xl.n_vdev; k++) {
		free(xl.vdev[k].arg);
		xl.vdev[k].arg = NULL;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * wake-probe: what it costs on this machine to wake a thread on another
 * CPU the way the daemon wakes an app's worker or a memif peer: an
 * eventfd write from one CPU, a thread blocked in read() on the other.
 * bench/wake_cost runs it; it prints one JSON line.
 *
 *   wake-probe --from CPU --to CPU [--count 2000] [--asleep-us 200]
 *              [--busy] [--fifo]
 *
 * Each wake-up is sent once the wakee has been blocked for --asleep-us
 * (its CPU has had that long to go idle), then timed from just before
 * the write to the wakee's first instruction after read(), by the TSC
 * (invariant and shared by both CPUs on the machines this runs on).
 * --busy keeps a normal-class thread spinning on the wakee's CPU (a
 * flood's app there); --fifo runs the wakee SCHED_FIFO, as the benches
 * run a victim's app and client. The waker also times its write(): what
 * the daemon pays per doorbell or kick.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define MAX_COUNT 100000u
#define WAKE_TIMEOUT_S 2	/* a wake-up that never comes ends the run */

static struct {
	int from, to, busy, fifo;
	unsigned count, asleep_us;
} cfg = { .from = -1, .to = -1, .count = 2000, .asleep_us = 200 };

static int efd;
static _Atomic uint64_t sent_tsc, asleep_tsc;	/* waker's send; wakee's block */
static _Atomic int stop;
static uint64_t *lat, *wcost;			/* cycles, per wake-up */

static void
die(const char *msg)
{
	fprintf(stderr, "wake-probe: %s\n", msg);
	exit(1);
}

static void
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (pthread_setaffinity_np(pthread_self(), sizeof(s), &s) != 0)
		die("cannot pin a thread (is the CPU in this process's set?)");
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* TSC ticks per microsecond, against the monotonic clock over 100 ms. */
static double
tsc_per_us(void)
{
	uint64_t t0 = now_ns(), c0 = __rdtsc();
	struct timespec ts = { 0, 100000000 };

	nanosleep(&ts, NULL);
	return (double)(__rdtsc() - c0) * 1000.0 / (double)(now_ns() - t0);
}

static void *
wakee(void *arg)
{
	unsigned i;
	uint64_t v;

	(void)arg;
	pin(cfg.to);
	if (cfg.fifo) {
		struct sched_param p = { .sched_priority = 50 };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0)
			die("SCHED_FIFO refused (root or CAP_SYS_NICE)");
	}
	for (i = 0; i < cfg.count; i++) {
		atomic_store(&asleep_tsc, __rdtsc());
		if (read(efd, &v, sizeof(v)) != sizeof(v))
			die("eventfd read failed");
		lat[i] = __rdtsc() - atomic_load(&sent_tsc);
	}
	return NULL;
}

/* The neighbour on the wakee's CPU: spins in the normal class. */
static void *
spinner(void *arg)
{
	(void)arg;
	pin(cfg.to);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		__asm__ volatile("pause");
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct(uint64_t *v, unsigned n, double p, double hz)
{
	return (double)v[(unsigned)(p * (n - 1))] / hz;
}

static void
usage(void)
{
	fprintf(stderr, "usage: wake-probe --from CPU --to CPU [--count N] "
			"[--asleep-us US] [--busy] [--fifo]\n");
	exit(2);
}

static void
parse(int argc, char **argv)
{
	static const struct option o[] = {
		{ "from", required_argument, NULL, 'f' }, { "to", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "asleep-us", required_argument, NULL, 'a' },
		{ "busy", no_argument, NULL, 'b' }, { "fifo", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "", o, NULL)) != -1) {
		switch (c) {
		case 'f': cfg.from = atoi(optarg); break;
		case 't': cfg.to = atoi(optarg); break;
		case 'n': cfg.count = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'a': cfg.asleep_us = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': cfg.busy = 1; break;
		case 'F': cfg.fifo = 1; break;
		default: usage();
		}
	}
	if (cfg.from < 0 || cfg.to < 0 || cfg.from == cfg.to || cfg.count == 0 ||
	    cfg.count > MAX_COUNT || cfg.asleep_us > 1000000u)
		usage();
}

int
main(int argc, char **argv)
{
	pthread_t w, s;
	double hz;
	unsigned i;

	parse(argc, argv);
	lat = calloc(cfg.count, sizeof(*lat));
	wcost = calloc(cfg.count, sizeof(*wcost));
	if (lat == NULL || wcost == NULL || (efd = eventfd(0, 0)) < 0)
		die(strerror(errno));
	pin(cfg.from);
	hz = tsc_per_us();
	if (cfg.busy && pthread_create(&s, NULL, spinner, NULL) != 0)
		die("cannot start the spinner");
	if (pthread_create(&w, NULL, wakee, NULL) != 0)
		die("cannot start the wakee");
	for (i = 0; i < cfg.count; i++) {
		uint64_t one = 1, need = (uint64_t)(cfg.asleep_us * hz), t0, a;
		uint64_t deadline = now_ns() + WAKE_TIMEOUT_S * 1000000000ull;

		/* the wakee blocked (asleep_tsc set after its last wake-up)
		 * and has been for asleep_us */
		while ((a = atomic_load(&asleep_tsc)) == 0 || __rdtsc() < a + need) {
			if (now_ns() > deadline)
				die("the wakee did not block in time");
			__asm__ volatile("pause");
		}
		atomic_store(&asleep_tsc, 0);
		t0 = __rdtsc();
		atomic_store(&sent_tsc, t0);
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			die("eventfd write failed");
		wcost[i] = __rdtsc() - t0;
	}
	pthread_join(w, NULL);
	atomic_store(&stop, 1);
	if (cfg.busy)
		pthread_join(s, NULL);
	qsort(lat, cfg.count, sizeof(*lat), cmp_u64);
	qsort(wcost, cfg.count, sizeof(*wcost), cmp_u64);
	printf("{\"count\": %u, \"asleep_us\": %u, \"busy\": %d, \"fifo\": %d, "
	       "\"p50_us\": %.2f, \"p90_us\": %.2f, \"p99_us\": %.2f, "
	       "\"write_p50_us\": %.2f, \"write_p50_cycles\": %.0f}\n",
	       cfg.count, cfg.asleep_us, cfg.busy, cfg.fifo, pct(lat, cfg.count, 0.5, hz),
	       pct(lat, cfg.count, 0.9, hz), pct(lat, cfg.count, 0.99, hz),
	       pct(wcost, cfg.count, 0.5, hz), pct(wcost, cfg.count, 0.5, hz) * hz);
	free(lat);
	free(wcost);
	close(efd);
	return 0;
}

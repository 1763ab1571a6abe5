/* SPDX-License-Identifier: BSD-3-Clause
 *
 * be-sqrt: the best-effort program of bench/coresync, as CoreSync's
 * evaluation uses one: it computes square roots for --seconds and says how
 * many per second it managed, which is the CPU the latency-critical app
 * left it. One thread by default; stops by itself, or on SIGINT/SIGTERM,
 * and prints one JSON line: {"sqrts_per_s": ..., "cpu_s": ..., "wall_s": ...}.
 * With --counter FILE it also keeps the running total in the file's first
 * 8 bytes (native order), so that a reader can take the rate over any
 * span, even while a busier program leaves this one no CPU at all.
 *
 *   be-sqrt [--seconds S] [--threads N] [--counter FILE]
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../common/hg_util.h"

#define MAX_THREADS 16
#define CHUNK 4096u	/* roots between two looks at the clock */

static uint64_t *counter;	/* --counter's mapping, or a private word */
static uint64_t own_counter;

struct worker {
	pthread_t tid;
	uint64_t end_ns;
	uint64_t done;
	double sink;	/* keeps the roots from being optimised away */
};

static void *
run(void *arg)
{
	struct worker *w = arg;
	double x = 1.0, acc = 0;
	unsigned i;

	while (!hg_stop && hg_now_ns() < w->end_ns) {
		for (i = 0; i < CHUNK; i++) {
			acc += sqrt(x);
			x += 1.0;
		}
		w->done += CHUNK;
		__atomic_fetch_add(counter, CHUNK, __ATOMIC_RELAXED);
	}
	w->sink = acc;
	return NULL;
}

static uint64_t *
map_counter(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	void *p;

	if (fd < 0 || ftruncate(fd, sizeof(uint64_t)) < 0)
		hg_die(1, "be-sqrt", "", "cannot make %s", path);
	p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		hg_die(1, "be-sqrt", "", "cannot map %s", path);
	return p;
}

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = { { "seconds", 1, NULL, 's' },
					    { "threads", 1, NULL, 't' },
					    { "counter", 1, NULL, 'c' },
					    { NULL, 0, NULL, 0 } };
	static struct worker w[MAX_THREADS];
	double seconds = 5, sum = 0, sink = 0;
	unsigned threads = 1, i;
	uint64_t t0;
	int c;

	hg_tool_version(argc, argv, "be-sqrt");
	counter = &own_counter;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 's')
			seconds = atof(optarg);
		else if (c == 't')
			threads = (unsigned)atoi(optarg);
		else if (c == 'c')
			counter = map_counter(optarg);
		else
			hg_die(2, "be-sqrt", "", "usage: be-sqrt [--seconds S] [--threads N] "
			       "[--counter FILE]");
	}
	if (!(seconds > 0 && seconds <= 3600) || threads < 1 || threads > MAX_THREADS)
		hg_die(2, "be-sqrt", "", "--seconds must be (0, 3600], --threads 1..%u",
		       MAX_THREADS);
	hg_stop_on_signals();
	t0 = hg_now_ns();
	for (i = 0; i < threads; i++) {
		w[i].end_ns = t0 + (uint64_t)(seconds * 1e9);
		if (pthread_create(&w[i].tid, NULL, run, &w[i]) != 0)
			hg_die(1, "be-sqrt", "", "cannot start thread %u", i);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		sum += (double)w[i].done;
		sink += w[i].sink;
	}
	seconds = (double)(hg_now_ns() - t0) / 1e9;
	printf("{\"sqrts_per_s\": %.0f, \"cpu_s\": %.3f, \"wall_s\": %.3f, \"check\": %d}\n",
	       sum / seconds, cpu_seconds(), seconds, sink > 0);
	return 0;
}

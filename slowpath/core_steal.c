/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Each fast-path core's run-queue wait, from the scheduler (core_steal.h).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "../fastpath/dp.h"
#include "core_steal.h"

enum { UNSEEN, OPEN, UNREADABLE };

static struct {
	int state;
	int fd;			/* the core's schedstat, while OPEN */
	uint64_t wait_ns;	/* its run-queue wait at the last look */
	uint64_t rest;		/* what the last conversion to TSC left over */
} steal[HG_MAX_FP_CORES];

static int
open_schedstat(int32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%" PRId32 "/schedstat", tid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The run-queue wait in schedstat ("run_ns wait_ns slices"); 0 if the
 * file does not read so. A kernel's own file, parsed by hand: two
 * numbers. */
static int
read_wait(int fd, uint64_t *wait_ns)
{
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	uint64_t run;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%" SCNu64 " %" SCNu64, &run, wait_ns) == 2;
}

/* Core c's stolen clock grows by ns of run-queue wait, in TSC cycles; the
 * slow path is its one writer. */
static void
add_stolen(struct hg_fp_core *c, uint64_t ns, uint64_t tsc_hz, uint64_t *rest)
{
	uint64_t num = ns * (tsc_hz / 1000000u) + *rest;	/* ns x MHz */

	*rest = num % 1000u;
	__atomic_store_n(&c->stolen, c->stolen + num / 1000u, __ATOMIC_RELAXED);
}

void
hg_core_steal_tick(struct hg_dp *dp, uint64_t tsc_hz)
{
	uint64_t wait;
	int32_t tid;
	unsigned i;

	for (i = 0; i < dp->n_cores && i < HG_MAX_FP_CORES; i++) {
		if (steal[i].state == UNREADABLE)
			continue;
		if (steal[i].state == UNSEEN) {
			tid = __atomic_load_n(&dp->core[i].tid, __ATOMIC_ACQUIRE);
			if (tid == 0)
				continue;	/* not running yet */
			steal[i].fd = open_schedstat(tid);
			steal[i].state = OPEN;
			if (steal[i].fd < 0 || !read_wait(steal[i].fd, &steal[i].wait_ns)) {
				if (steal[i].fd >= 0)
					close(steal[i].fd);
				steal[i].state = UNREADABLE;
			}
			continue;
		}
		if (read_wait(steal[i].fd, &wait) && wait > steal[i].wait_ns) {
			add_stolen(&dp->core[i], wait - steal[i].wait_ns, tsc_hz,
				   &steal[i].rest);
			steal[i].wait_ns = wait;
		}
	}
}

void
hg_core_steal_close(struct hg_dp *dp)
{
	unsigned i;

	for (i = 0; i < dp->n_cores && i < HG_MAX_FP_CORES; i++) {
		if (steal[i].state == OPEN)
			close(steal[i].fd);
		steal[i].state = UNSEEN;
	}
}

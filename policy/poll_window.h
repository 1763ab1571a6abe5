/* SPDX-License-Identifier: BSD-3-Clause
 *
 * How long an idle worker polls before it sleeps on its doorbell: the
 * rule a guest's halt-polling uses. The tenant's poll-us is the most a
 * worker polls; within it, each worker learns from how its idle periods
 * ended. A poll that caught the next request keeps the window; a request
 * that came after the window but within poll-us (a longer poll would
 * have caught it and saved a wake-up) doubles it; one that came after
 * poll-us (no poll would have) halves it, down to none.
 *
 * Why not always poll for poll-us: the worker shares its CPU with other
 * threads, and the scheduler lets a thread it wakes there wait until the
 * polling one gives the CPU up (a kernel client of the app on the same
 * CPU waited out the whole poll for every answer: victim alone at 5k
 * req/s, p50 46 us with 20 us polls, 30 us without). Polling pays only
 * where requests come closer together than a wake-up costs.
 */
#ifndef HG_POLICY_POLL_WINDOW_H
#define HG_POLICY_POLL_WINDOW_H

#include <stdint.h>

/* The window after an idle period of idle_ns that ended with a request,
 * polled with win (clamped to max_ns). Pure, for the tests. */
static inline uint64_t
hg_poll_window_next(uint64_t win, uint64_t idle_ns, uint64_t max_ns)
{
	const uint64_t start = max_ns / 4;	/* the first step up from none */

	if (win > max_ns)
		win = max_ns;
	if (idle_ns <= win)
		return win;		/* the poll caught it */
	if (idle_ns > max_ns)
		return win / 2 < start ? 0 : win / 2;
	win = win < start ? start : win * 2;
	return win > max_ns ? max_ns : win;
}

#endif /* HG_POLICY_POLL_WINDOW_H */

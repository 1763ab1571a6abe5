/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Green threads: a stack and a saved stack pointer. Switching saves the
 * callee-saved registers, MXCSR and the x87 control word on the outgoing
 * stack (gt_switch.S); nothing else is needed at a call boundary.
 */
#ifndef HG_LIBCLIENT_GT_H
#define HG_LIBCLIENT_GT_H

#include <stddef.h>
#include <stdint.h>

#define HG_GT_STACK (256u * 1024u)	/* per green thread, plus a guard page */

/* The request a worker (or green thread) is serving, for the EMA of short
 * service times and the long-request timer. */
struct hg_req {
	uint64_t start_ns;
	uint64_t start_tsc;	/* taken by a worker (class stats) */
	uint64_t rx_tsc;	/* the daemon's RX timestamp (its TSC) */
	uint32_t cls;		/* its class */
	int active;
	int is_long;		/* hg_feedback_start() was called */
};

struct hg_gt {
	void *sp;		/* saved stack pointer while not running */
	void *stack;		/* mmap'd, guard page at the bottom */
	size_t stack_size;
	struct hg_gt *next;	/* idle or own-wait list */
	void (*fn)(void *);
	void *arg;
	uint32_t idx, gen;	/* handle in the app's table */
	struct hg_req req;
};

void hg_gt_switch(void **save_sp, void *load_sp);
void hg_gt_trampoline(void);

/* A green thread that will run fn(arg) when first switched to; NULL when
 * out of memory. */
struct hg_gt *hg_gt_new(void (*fn)(void *), void *arg);
void hg_gt_free(struct hg_gt *gt);

#endif /* HG_LIBCLIENT_GT_H */

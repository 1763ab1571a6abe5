/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gt.h"

/* Lays out the new stack so that hg_gt_switch "returns" into the
 * trampoline with r12 = fn and r13 = arg, in the order gt_switch.S pops:
 * mxcsr/fpucw slot, r15, r14, r13, r12, rbx, rbp, return address. */
static void
prime(struct hg_gt *gt)
{
	uint64_t *sp = (uint64_t *)((uint8_t *)gt->stack + gt->stack_size);
	uint32_t mxcsr;
	uint16_t fpucw;

	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	*--sp = 0;				/* keeps the frame 16-aligned */
	*--sp = (uint64_t)(uintptr_t)hg_gt_trampoline;
	*--sp = 0;				/* rbp */
	*--sp = 0;				/* rbx */
	*--sp = (uint64_t)(uintptr_t)gt->fn;	/* r12 */
	*--sp = (uint64_t)(uintptr_t)gt->arg;	/* r13 */
	*--sp = 0;				/* r14 */
	*--sp = 0;				/* r15 */
	*--sp = (uint64_t)mxcsr | (uint64_t)fpucw << 32;
	gt->sp = sp;
}

struct hg_gt *
hg_gt_new(void (*fn)(void *), void *arg)
{
	struct hg_gt *gt = calloc(1, sizeof(*gt));
	long page = sysconf(_SC_PAGESIZE);

	if (gt == NULL)
		return NULL;
	gt->stack_size = HG_GT_STACK;
	gt->stack = mmap(NULL, gt->stack_size + (size_t)page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (gt->stack == MAP_FAILED) {
		free(gt);
		return NULL;
	}
	/* a guard page below the stack turns an overflow into a fault */
	mprotect(gt->stack, (size_t)page, PROT_NONE);
	gt->stack = (uint8_t *)gt->stack + page;
	gt->fn = fn;
	gt->arg = arg;
	prime(gt);
	return gt;
}

void
hg_gt_free(struct hg_gt *gt)
{
	long page = sysconf(_SC_PAGESIZE);

	if (gt == NULL)
		return;
	munmap((uint8_t *)gt->stack - page, gt->stack_size + (size_t)page);
	free(gt);
}

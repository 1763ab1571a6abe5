/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The green-thread context switch: callee-saved registers, the stack and
 * the floating-point control state survive any number of switches. */
#include <criterion/criterion.h>
#include <fenv.h>
#include <string.h>

#include "../../libclient/gt.h"

#define ROUNDS 100000

static void *main_sp;
static struct hg_gt *g;

/* Values kept live across the call to hg_gt_switch: at -O2 the compiler
 * keeps them in callee-saved registers (rbx, rbp, r12-r15), which is what
 * the switch must preserve. */
static uint64_t
mix_rounds(int switching)
{
	uint64_t a = 1, b = 2, c = 3, d = 5, e = 7, f = 11, i;

	for (i = 0; i < ROUNDS; i++) {
		a = a * 6364136223846793005ull + 1442695040888963407ull;
		b ^= a >> 7;
		c += b * 3;
		d = (d << 1) ^ c;
		e += d >> 3;
		f ^= e + i;
		if (switching)
			hg_gt_switch(&g->sp, main_sp);
	}
	return a ^ b ^ c ^ d ^ e ^ f;
}

static uint64_t in_thread;

static void
worker(void *arg)
{
	(void)arg;
	in_thread = mix_rounds(1);
	hg_gt_switch(&g->sp, main_sp);
	__builtin_unreachable();
}

Test(green, registers_survive_many_switches)
{
	uint64_t a = 0x1111, b = 0x2222, c = 0x3333, n = 0, expect;

	g = hg_gt_new(worker, NULL);
	cr_assert_not_null(g);
	expect = mix_rounds(0);
	/* the main side keeps its own live values across every switch too */
	while (in_thread == 0) {
		hg_gt_switch(&main_sp, g->sp);
		a += 1;
		b ^= a;
		c += b;
		n++;
	}
	cr_assert_eq(in_thread, expect);
	cr_assert_eq(n, ROUNDS + 1);
	cr_assert_eq(a, 0x1111 + n);
	cr_assert_neq(c, 0x3333);
	hg_gt_free(g);
}

static char stack_copy[4096];

static void
stack_worker(void *arg)
{
	char buf[4096];
	int i;

	(void)arg;
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (char)(i * 7);
	for (i = 0; i < 1000; i++)
		hg_gt_switch(&g->sp, main_sp);
	memcpy(stack_copy, buf, sizeof(buf));
	hg_gt_switch(&g->sp, main_sp);
	__builtin_unreachable();
}

Test(green, the_stack_is_the_threads_own)
{
	char mine[4096];
	int i;

	memset(mine, 0x5a, sizeof(mine));
	g = hg_gt_new(stack_worker, NULL);
	for (i = 0; i < 1001; i++) {
		hg_gt_switch(&main_sp, g->sp);
		memset(mine, i & 0xff, sizeof(mine));	/* scribble on our side */
	}
	for (i = 0; i < 4096; i++)
		cr_assert_eq(stack_copy[i], (char)(i * 7));
	hg_gt_free(g);
}

static int round_in_thread;

static void
fp_worker(void *arg)
{
	(void)arg;
	fesetround(FE_UPWARD);
	hg_gt_switch(&g->sp, main_sp);
	round_in_thread = fegetround();
	hg_gt_switch(&g->sp, main_sp);
	__builtin_unreachable();
}

Test(green, each_thread_keeps_its_rounding_mode)
{
	fesetround(FE_TONEAREST);
	g = hg_gt_new(fp_worker, NULL);
	hg_gt_switch(&main_sp, g->sp);
	cr_assert_eq(fegetround(), FE_TONEAREST, "the thread's mode leaked out");
	fesetround(FE_DOWNWARD);
	hg_gt_switch(&main_sp, g->sp);
	cr_assert_eq(round_in_thread, FE_UPWARD, "the thread lost its mode");
	cr_assert_eq(fegetround(), FE_DOWNWARD);
	fesetround(FE_TONEAREST);
	hg_gt_free(g);
}

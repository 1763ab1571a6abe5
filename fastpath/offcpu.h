/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Whether the fast-path thread left its CPU since it last looked, without
 * a system call. Every thread has a struct rseq that glibc registered
 * with the kernel (restartable sequences); its rseq_cs field names the
 * critical section the thread is in, and the kernel sets it to NULL when
 * it preempts the thread, or delivers it a signal, while the thread is
 * outside that section (the kernel's rseq ABI header). The core names a
 * section of no length, which no code is ever in: the field is NULL again
 * exactly when the thread was taken off its CPU (or slept) since the core
 * last named it. A load per look, and a store after a departure.
 *
 * Why: a charge the OS stretched is cut to a bound of HG_CHARGE_COSTS of
 * the tenant's datagrams (dp.h), but a preemption within that bound was
 * billed whole to whichever tenant the core was working for. Seen here,
 * such a charge pays only what its datagrams cost as measured.
 * (Counting all of the thread's time off its CPU as the OS's, so that it
 * refills no budget, was tried and dropped: hg_budget_clock.)
 *
 * Nothing else in the daemon uses rseq critical sections (DPDK 22.11 does
 * not). Where glibc did not register rseq (an old glibc, or the
 * glibc.pthread.rseq tunable off), hg_offcpu_attach says so and looks
 * always say "stayed".
 */
#ifndef HG_FASTPATH_OFFCPU_H
#define HG_FASTPATH_OFFCPU_H

#include <stdint.h>

/* The calling thread's rseq_cs word; NULL: not attached (the slow path,
 * tools, unit tests, or no rseq). */
extern _Thread_local uint64_t *hg_offcpu_word;
/* The section of no length the word names while the thread stays. */
extern const uint64_t hg_offcpu_cs_addr;

/* Attaches the calling thread: 0, or -1 if glibc registered no rseq. */
int hg_offcpu_attach(void);
/* Detaches it (the word back to NULL, as the kernel expects of a thread
 * that leaves the section for good). */
void hg_offcpu_detach(void);

/* Names the section again: from here on, a preemption clears it. */
static inline void
hg_offcpu_arm(void)
{
	if (hg_offcpu_word != NULL)
		__atomic_store_n(hg_offcpu_word, hg_offcpu_cs_addr, __ATOMIC_RELAXED);
}

/* Has the thread left its CPU since the last hg_offcpu_arm? Re-armed if
 * so: each departure is seen once. */
static inline int
hg_offcpu_left(void)
{
	if (hg_offcpu_word == NULL || __atomic_load_n(hg_offcpu_word, __ATOMIC_RELAXED) != 0)
		return 0;
	hg_offcpu_arm();
	return 1;
}

#endif /* HG_FASTPATH_OFFCPU_H */

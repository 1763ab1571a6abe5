/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fast-path thread's departures from its CPU, seen through its rseq
 * area (offcpu.h).
 */
#include <stddef.h>
#include <sys/rseq.h>

#include "offcpu.h"

_Thread_local uint64_t *hg_offcpu_word;

/* The kernel checks a section before it looks at the thread's IP: a
 * version of 0, addresses in user space, an abort address outside the
 * section and preceded by the signature glibc registered (RSEQ_SIG).
 * The section starts past the signature and has no length, so no IP is
 * ever in it and the kernel never jumps to the abort address; an invalid
 * one would have it kill the thread (SIGSEGV). Static: the kernel may read
 * it for as long as the thread lives. */
static const uint32_t offcpu_sig[2] __attribute__((aligned(8))) = { RSEQ_SIG, 0 };
static const struct rseq_cs offcpu_cs __attribute__((aligned(32))) = {
	.version = 0,
	.flags = 0,
	.start_ip = (uint64_t)(uintptr_t)&offcpu_sig[1] + sizeof(uint32_t),
	.post_commit_offset = 0,
	.abort_ip = (uint64_t)(uintptr_t)&offcpu_sig[1],
};
const uint64_t hg_offcpu_cs_addr = (uint64_t)(uintptr_t)&offcpu_cs;

int
hg_offcpu_attach(void)
{
	if (__rseq_size < offsetof(struct rseq, rseq_cs) + sizeof(uint64_t))
		return -1;
	hg_offcpu_word = (uint64_t *)(void *)((char *)__builtin_thread_pointer() +
					      __rseq_offset + offsetof(struct rseq, rseq_cs));
	hg_offcpu_arm();
	return 0;
}

void
hg_offcpu_detach(void)
{
	if (hg_offcpu_word != NULL)
		__atomic_store_n(hg_offcpu_word, 0, __ATOMIC_RELAXED);
	hg_offcpu_word = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The library's per-thread state: the error text (hg_strerror; every
 * other file reports through hg_fail) and the worker context the thread
 * runs hg_run for (set by green_threads.c, read by hg_self). Depends on
 * nothing.
 */
#include <errno.h>
#include <stdio.h>

#include "client.h"

static _Thread_local char errbuf[192];
static _Thread_local const char *errmsg = "";
static _Thread_local hg_ctx_t *worker;

/* noinline and a volatile asm: not merged with another call, even by a
 * compiler that sees this body (LTO), so each call reads the thread the
 * caller is on now (client.h). */
__attribute__((noinline)) hg_ctx_t *
hg_worker_now(void)
{
	__asm__ volatile("" ::: "memory");
	return worker;
}

__attribute__((noinline)) void
hg_worker_set(hg_ctx_t *w)
{
	__asm__ volatile("" ::: "memory");
	worker = w;
}

int
hg_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	errmsg = errbuf;
	errno = err;
	return -err;
}

int
hg_fail_fixed(int err, const char *msg)
{
	errmsg = msg;
	errno = err;
	return -err;
}

const char *
hg_strerror(void)
{
	return errmsg;
}

const char *
hg_version(void)
{
	return HG_VERSION;
}

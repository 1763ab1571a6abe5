/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: descriptors as a hostile app writes them into its TX
 * ring, checked and admitted the way TX does, against one core's buffer
 * partition shared by several apps. The partition's books must balance
 * after every descriptor: no buffer twice on the free stack, the holders'
 * counts equal to what the owner table says. */
#include <stdint.h>
#include <string.h>

#include "../../fastpath/bufpart.h"
#include "../../fastpath/desc.h"

#define BASE 512u
#define N    256u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_books(const struct hg_bufpart *p)
{
	uint32_t held[HG_MAX_APPS + 1] = { 0 }, i, free_n = 0;
	uint8_t seen[N] = { 0 };

	for (i = 0; i < p->top; i++) {
		uint32_t b = p->stack[i] - BASE;

		if (b >= N || seen[b]++ || p->owner[b] != HG_OWNER_DAEMON)
			__builtin_trap();
	}
	for (i = 0; i < N; i++) {
		if (p->owner[i] == HG_OWNER_DAEMON)
			free_n++;
		else if (p->owner[i] <= HG_MAX_APPS)
			held[p->owner[i]]++;
	}
	if (free_n != p->top || memcmp(held, p->held, sizeof(held)) != 0)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[N * 5];
	struct hg_bufpart p;
	struct hg_desc_rules r = {
		.port_lo = 7000, .port_hi = 7009, .our_ip = RTE_BE32(0xC6120001),
		.net = 0xC6120000, .netmask = 0xffffff00,
	};
	struct hg_desc d;
	uint32_t b;
	size_t off;

	hg_bufpart_init(&p, BASE, N, mem);
	hg_bufpart_set_cap(&p, N / 4);
	/* each record: one byte says which app and what the daemon does
	 * first (hand it a buffer or not), then a descriptor */
	for (off = 0; off + 1 + sizeof(d) <= size; off += 1 + sizeof(d)) {
		uint8_t ctl = data[off], app = (uint8_t)(1 + ctl % 4);

		if (ctl & 0x80)
			(void)hg_bufpart_alloc(&p, app, &b);
		memcpy(&d, data + off + 1, sizeof(d));
		r.owner = app;
		if (hg_desc_check(&d, &p, &r) != HG_DESC_OK) {
			if (hg_bufpart_held_by(&p, d.buf, app))
				hg_bufpart_put(&p, d.buf);
		} else if (d.op == HG_OP_FREE) {
			hg_bufpart_put(&p, d.buf);
		} else {
			hg_bufpart_set_owner(&p, d.buf, HG_OWNER_TXQ);
			if (ctl & 0x40)		/* SCHED sent it */
				hg_bufpart_put(&p, d.buf);
		}
		if (ctl & 0x20)			/* the app died */
			hg_bufpart_reclaim(&p, app);
		check_books(&p);
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../../fastpath/desc.h"

static struct hg_bufpart p;
static void *mem;
static uint32_t held;
static const struct hg_desc_rules rules = {
	.owner = 2, .port_lo = 7000, .port_hi = 7009,
	.our_ip = 0x010012c6u, .net = 0xc6120000u, .netmask = 0xffffff00u,
};

static void
setup(void)
{
	mem = malloc(hg_bufpart_memsize(128));
	hg_bufpart_init(&p, 0, 128, mem);
	hg_bufpart_alloc(&p, 2, &held);
}

static void
teardown(void)
{
	free(mem);
}

TestSuite(desc, .init = setup, .fini = teardown);

static struct hg_desc
good(void)
{
	return (struct hg_desc){ .buf = held, .len = 64, .op = HG_OP_SEND,
				 .peer_ip = htonl(0xc6120002u),
				 .peer_port = htons(40000),
				 .local_port = htons(7003) };
}

Test(desc, a_good_send_and_free_pass)
{
	struct hg_desc d = good();

	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_OK);
	d.op = HG_OP_FREE;
	d.len = 60000;		/* length is irrelevant for FREE */
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_OK);
}

Test(desc, bad_fields_are_named)
{
	struct hg_desc d;

	d = good(); d.op = HG_OP_DATA;
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_OP);
	d = good(); d.op = 77;
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_OP);
	d = good(); d.buf = held + 1;		/* not handed out */
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_BUF);
	d = good(); d.buf = 100000;		/* out of range */
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_BUF);
	d = good(); d.len = HG_MAX_PAYLOAD + 1;
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_LEN);
	d = good(); d.local_port = htons(6999);	/* another tenant's port */
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_PORT);
	d = good(); d.peer_ip = htonl(0x08080808u);	/* off-link */
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_PEER);
	d = good(); d.peer_ip = htonl(0xc61200ffu);	/* broadcast */
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_PEER);
	d = good(); d.peer_ip = rules.our_ip;
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_PEER);
	d = good(); d.peer_port = 0;
	cr_assert_eq(hg_desc_check(&d, &p, &rules), HG_DESC_BAD_PEER);
}

Test(desc, another_apps_buffer_is_refused)
{
	struct hg_desc d = good();
	struct hg_desc_rules other = rules;

	other.owner = 3;
	cr_assert_eq(hg_desc_check(&d, &p, &other), HG_DESC_BAD_BUF);
}

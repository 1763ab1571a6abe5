/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_frame.h"

Test(codec, frame_length_bounds)
{
	uint8_t z[4] = { 0, 0, 0, 0 }, one[4] = { 0, 0, 0, 1 },
		big[4] = { 0xff, 0xff, 0xff, 0xff }, max[4];

	max[0] = (uint8_t)(HG_CTL_MAX_FRAME >> 24);
	max[1] = (uint8_t)(HG_CTL_MAX_FRAME >> 16);
	max[2] = (uint8_t)(HG_CTL_MAX_FRAME >> 8);
	max[3] = HG_CTL_MAX_FRAME & 0xff;
	cr_assert_eq(hg_frame_len(z), -1);
	cr_assert_eq(hg_frame_len(one), 1);
	cr_assert_eq(hg_frame_len(big), -1);
	cr_assert_eq(hg_frame_len(max), HG_CTL_MAX_FRAME);
	max[3]++;
	cr_assert_eq(hg_frame_len(max), -1);
}

/* 4,096 tenants: `stats` over them all is a few MiB. A reply
 * may be that large; a request, which the daemon reads from anyone, may
 * not. */
Test(codec, replies_may_be_larger_than_requests)
{
	Hg__Response rsp = HG__RESPONSE__INIT;
	Hg__Request req = HG__REQUEST__INIT;
	Hg__TenantChange add = HG__TENANT_CHANGE__INIT;
	size_t big = 4u << 20, n;
	char *text = malloc(big + 1);
	uint8_t *buf;

	cr_assert_not_null(text);
	memset(text, 'x', big);
	text[big] = 0;
	rsp.id = 1;
	rsp.error = text;
	n = hg_frame_response(&rsp, &buf);
	cr_assert_gt(n, big);
	cr_assert_eq(hg_frame_reply_len(buf), (int64_t)n - 4);
	cr_assert_eq(hg_frame_len(buf), -1, "too large for a request");
	free(buf);
	add.name = text;
	req.body_case = HG__REQUEST__BODY_TENANT_ADD;
	req.tenant_add = &add;
	cr_assert_eq(hg_frame_request(&req, &buf), 0);
	free(text);
}

Test(codec, request_roundtrip)
{
	Hg__Request req = HG__REQUEST__INIT, *back;
	Hg__TenantChange add = HG__TENANT_CHANGE__INIT;
	Hg__KeyValue w = HG__KEY_VALUE__INIT, p = HG__KEY_VALUE__INIT;
	Hg__KeyValue *kv[] = { &w, &p };
	uint8_t *buf;
	size_t n;

	add.name = "gold";
	w.key = "weight";
	w.value = "3";
	p.key = "ports";
	p.value = "7000-7009";
	add.settings = kv;
	add.n_settings = 2;
	req.id = 42;
	req.body_case = HG__REQUEST__BODY_TENANT_ADD;
	req.tenant_add = &add;
	n = hg_frame_request(&req, &buf);
	cr_assert_gt(n, 4);
	cr_assert_eq(hg_frame_len(buf), (int64_t)n - 4);
	back = hg__request__unpack(NULL, n - 4, buf + 4);
	cr_assert_not_null(back);
	cr_assert_eq(back->id, 42);
	cr_assert_eq(back->body_case, HG__REQUEST__BODY_TENANT_ADD);
	cr_assert_str_eq(back->tenant_add->name, "gold");
	cr_assert_eq(back->tenant_add->n_settings, 2, "the pairs, in order");
	cr_assert_str_eq(back->tenant_add->settings[0]->key, "weight");
	cr_assert_str_eq(back->tenant_add->settings[0]->value, "3");
	cr_assert_str_eq(back->tenant_add->settings[1]->value, "7000-7009");
	hg__request__free_unpacked(back, NULL);
	free(buf);
}

Test(codec, response_roundtrip_with_error)
{
	Hg__Response rsp = HG__RESPONSE__INIT, *back;
	uint8_t *buf;
	size_t n;

	rsp.id = 7;
	rsp.status = 2;
	rsp.error = "unknown tenant 'x'";
	n = hg_frame_response(&rsp, &buf);
	back = hg__response__unpack(NULL, n - 4, buf + 4);
	cr_assert_not_null(back);
	cr_assert_eq(back->status, 2);
	cr_assert_str_eq(back->error, "unknown tenant 'x'");
	cr_assert_eq(back->body_case, HG__RESPONSE__BODY__NOT_SET);
	hg__response__free_unpacked(back, NULL);
	free(buf);
}

Test(codec, garbage_and_truncation_do_not_decode)
{
	Hg__Request req = HG__REQUEST__INIT;
	Hg__Attach at = HG__ATTACH__INIT;
	uint8_t junk[64], *buf;
	size_t n, cut;
	unsigned i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	cr_assert_null(hg__request__unpack(NULL, sizeof(junk), junk));
	at.tenant = "a-rather-long-tenant-name";
	req.id = 9;
	req.body_case = HG__REQUEST__BODY_ATTACH;
	req.attach = &at;
	n = hg_frame_request(&req, &buf);
	/* bytes 0-1 are the id alone, a valid message; every cut after that
	 * lands inside the attach body */
	for (cut = 3; cut < n - 4; cut++)
		cr_assert_null(hg__request__unpack(NULL, cut, buf + 4),
			       "truncated to %zu", cut);
	free(buf);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libhgclient's RPC header parsing: what it accepts and what it refuses,
 * whatever bytes a client put in the datagram. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "hg_rpc.h"
#include "hourglass.h"

static uint8_t buf[64];

static struct hg_msg
request(uint8_t flags, uint32_t len)
{
	struct hg_rpc_hdr h = {
		.magic = htons(HG_RPC_MAGIC), .version = HG_RPC_VERSION,
		.flags = flags, .type = 3, .credits = htons(9),
		.session = htonl(0x01020304), .req_id = htobe64(77),
	};

	memset(buf, 0xab, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	return (struct hg_msg){ .data = buf, .len = len };
}

Test(rpc, parses_a_request_and_points_at_its_body)
{
	struct hg_msg m = request(HG_RPC_REQUEST, 40);
	struct hg_rpc_req r;

	cr_assert_eq(hg_rpc_parse(&m, &r), 0);
	cr_assert_eq(r.type, 3);
	cr_assert_eq(r.session, 0x01020304u);
	cr_assert_eq(r.req_id, 77u);
	cr_assert_eq(r.body, buf + HG_RPC_HDR_LEN);
	cr_assert_eq(r.body_len, 8u);
}

Test(rpc, a_header_alone_has_an_empty_body)
{
	struct hg_msg m = request(HG_RPC_REQUEST, HG_RPC_HDR_LEN);
	struct hg_rpc_req r;

	cr_assert_eq(hg_rpc_parse(&m, &r), 0);
	cr_assert_eq(r.body_len, 0u);
}

Test(rpc, refuses_what_is_not_a_request)
{
	struct hg_msg m;
	struct hg_rpc_req r;

	m = request(HG_RPC_REQUEST, HG_RPC_HDR_LEN - 1);
	cr_assert_eq(hg_rpc_parse(&m, &r), -EPROTO, "shorter than the header");
	m = request(HG_RPC_RESPONSE, 40);
	cr_assert_eq(hg_rpc_parse(&m, &r), -EPROTO, "a response");
	m = request(HG_RPC_REQUEST, 40);
	buf[0] ^= 0xff;
	cr_assert_eq(hg_rpc_parse(&m, &r), -EPROTO, "bad magic");
	m = request(HG_RPC_REQUEST, 40);
	buf[2] = HG_RPC_VERSION + 1;
	cr_assert_eq(hg_rpc_parse(&m, &r), -EPROTO, "another version");
	m = (struct hg_msg){ .data = NULL, .len = 40 };
	cr_assert_eq(hg_rpc_parse(&m, &r), -EPROTO, "no data");
}

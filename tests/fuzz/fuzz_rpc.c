/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: the RPC header paths of one fast-path core — requests
 * admitted or rejected at RX (sessions, windows, quota, AQM), grants
 * written into responses at SCHED, credits returned on drops, and the
 * session scan — in any order a hostile client and app could cause. The
 * per-tenant books (sessions, drained, issued) must match the table. */
#include <string.h>

#include "../../fastpath/credit_rules.h"
#include "../../proto/hg_wire.h"
#include "fuzz_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_books(const struct hg_sessions *ss)
{
	uint32_t k, drained = 0;
	int64_t issued = 0;

	if (ss->n_live != ss->count[0] || ss->n_live > ss->size)
		__builtin_trap();
	for (k = 0; k < ss->n_live; k++) {
		const struct hg_session *s = &ss->s[ss->live[k]];

		if (!s->used || s->live_idx != k || s->window > HG_CREDIT_MAX_SESSION)
			__builtin_trap();
		drained += s->window == 0;
		issued += s->window;
	}
	if (drained != ss->drained[0] || issued != ss->issued[0])
		__builtin_trap();
}

static void
frame_in(struct hg_dp *dp, struct hg_fp_core *c, const uint8_t *b, size_t n,
	 int cancel)
{
	uint8_t f[2048];
	struct hg_parsed p;
	struct hg_session *s;
	uint32_t reply = 0;

	memcpy(f, b, n);
	if (hg_parse(f, (uint32_t)n, FUZZ_IP, &p) != HG_PKT_UDP ||
	    !hg_rpc_is_port(hg_view(dp, 0), p.dst_port))
		return;
	if (hg_rpc_admit(dp, c, 0, f, &p, &reply, &s) == HG_RPC_ADMIT && cancel)
		hg_rpc_cancel(s);
	if (reply > n && reply > 14 + 20 + 8 + 32)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct hg_tenant_view view = { .state = HG_TENANT_ACTIVE,
		.rpc_lo = 7000, .rpc_hi = 7009, .sess_quota = 64,
		.dt_tsc = 100, .ddrop_tsc = 200 };
	struct hg_dp *dp = fuzz_env();
	struct hg_fp_core *c = &dp->core[0];
	size_t off = 0;

	dp->view[0] = &view;
	dp->tenant_live[0] = (struct hg_tenant_live){ .pool = 16 };
	/* records: kind, length, bytes */
	while (off + 2 <= size) {
		uint8_t kind = data[off];
		size_t n = data[off + 1] * 8u;
		uint8_t buf[2048];

		off += 2;
		if (n > size - off)
			n = size - off;
		memcpy(buf, data + off, n);
		switch (kind & 3) {
		case 0:
			frame_in(dp, c, buf, n, kind & 4);
			break;
		case 1: {	/* an app's response to a peer it names */
			uint32_t ip = RTE_BE32(0xC6120002);
			uint16_t port = (uint16_t)(kind << 8 | n);

			if (n <= HG_MAX_PAYLOAD)
				hg_rpc_response(dp, c, 0, buf, (uint16_t)n, ip, port);
			break;
		}
		case 2:
			hg_rpc_scan(dp, c);
			break;
		case 3:		/* the slow path publishes new numbers */
			if (n >= 16) {
				memcpy(&dp->tenant_live[0].pool, buf, 8);
				memcpy(&dp->tenant_live[0].dm_tsc, buf + 8, 8);
				dp->tenant_live[0].pool %= HG_CREDIT_POOL_MAX;
			}
			break;
		}
		off += n;
		check_books(c->sess);
	}
	hg_rpc_forget_tenant(c, 0);
	if (c->sess->n_live != 0)
		__builtin_trap();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RPC sessions on one fast-path core (design.md §6). A session's datagrams
 * arrive on one core (the NIC hashes its flow there) and its responses
 * leave from the same core, so each core keeps its own table in daemon
 * memory and no session state is shared.
 */
#ifndef HG_FASTPATH_CREDIT_SESSIONS_H
#define HG_FASTPATH_CREDIT_SESSIONS_H

#include <stdint.h>

#include <rte_hash.h>

#include "parse.h"
#include "tenant_view.h"
#include "tset.h"

#define HG_SESSIONS      65536u	/* per fast-path core, by default (--sessions) */
#define HG_SESSIONS_MIN  16u
#define HG_SESSIONS_MAX  (1u << 20)
#define HG_SESSION_IDLE  1u	/* seconds without traffic before expiry */
#define HG_SESSION_STUCK 10u	/* the same with requests still out: the
				 * app will not answer them (it died, or
				 * answered without the RPC header) */
#define HG_SCAN_PER_PASS 64u	/* sessions looked at per control step */

struct hg_session {
	uint64_t last_tsc;
	uint32_t ip;		/* peer, network order */
	uint32_t id;		/* client session id, host order */
	uint16_t port;		/* peer port, network order */
	uint16_t local_port;	/* tenant port it talks to, network order */
	uint16_t window;	/* credits granted: requests it may have out */
	uint16_t grace;		/* ... and more, sent before it heard of a
				 * smaller window (hg_credit_bound) */
	uint16_t outstanding;	/* admitted, not yet answered */
	uint16_t demand;	/* queued at the client, as it last said */
	uint16_t tenant;
	uint16_t used;
	uint32_t live_idx;	/* where it sits in hg_sessions.live */
};

struct hg_sess_key {
	uint32_t ip;
	uint32_t id;
	uint16_t port;
	uint16_t tenant;
};

/* The scan walks the live list, not the table: the hash hands out slots
 * anywhere in it, and a walk over empty slots would leave returned credits
 * unused for a whole sweep and favour whichever sessions sit first.
 *
 * Every tenant with RPC ports reserves its max-sessions of each core's
 * table (the slow path refuses a tenant whose share does not fit), and the
 * hash has an extendable bucket table, so it holds every key up to its
 * size: a tenant below its share always gets a new session, however full
 * its neighbours keep theirs. */
struct hg_sessions {
	struct rte_hash *h;
	uint32_t size;				/* slots: s[] and live[] */
	uint32_t scan;				/* next live entry the scan looks at */
	uint32_t n_live;
	int64_t issued[HG_MAX_TENANTS];		/* sum of windows, per tenant */
	uint32_t count[HG_MAX_TENANTS];		/* sessions */
	uint32_t drained[HG_MAX_TENANTS];	/* ... with window 0 */
	uint32_t *live;				/* slots in use, in any order */
	struct hg_session *s;
};

/* A core's table of size slots, in DPDK memory of socket (the daemon's
 * lifetime: EAL's cleanup returns it); NULL if out of memory. name:
 * unique among hashes. */
struct hg_sessions *hg_sessions_create(const char *name, uint32_t size, int socket);

/* The cores' half of credit control, run by RX (admit), SCHED (a
 * response's grant) and the control step (the scan). dp.h includes this
 * header, so the daemon's structs are named, not included. */
struct hg_dp;
struct hg_fp_core;

enum hg_rpc_verdict { HG_RPC_ADMIT, HG_RPC_REPLY, HG_RPC_DROP };
/* Is port_net (network order) one of the tenant's RPC ports? */
int hg_rpc_is_port(const struct hg_tenant_view *v, uint16_t port_net);
/* Admits an RPC request (*s: its session) or rewrites it into a reject. */
enum hg_rpc_verdict hg_rpc_admit(struct hg_dp *dp, struct hg_fp_core *c, int t,
				 uint8_t *frame, struct hg_parsed *p,
				 uint32_t *reply_len, struct hg_session **s);
/* An admitted request was dropped after all: its credit goes back. */
void hg_rpc_cancel(struct hg_session *s);
/* Writes the session's grant into a response's RPC header (the copy in
 * the frame, never tenant memory). */
void hg_rpc_response(struct hg_dp *dp, struct hg_fp_core *c, int t,
		     uint8_t *payload, uint16_t len, uint32_t peer_ip,
		     uint16_t peer_port);
/* Expires idle sessions and hands returned credits to drained ones, at
 * most HG_SCAN_PER_PASS a call; returns the sessions looked at. */
unsigned hg_rpc_scan(struct hg_dp *dp, struct hg_fp_core *c);
/* Drops a released tenant's sessions on core c. */
void hg_rpc_forget_tenant(struct hg_fp_core *c, int t);

#endif /* HG_FASTPATH_CREDIT_SESSIONS_H */

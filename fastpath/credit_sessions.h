/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RPC sessions on one fast-path core (DESIGN §6). A session's datagrams
 * arrive on one core (the NIC hashes its flow there) and its responses
 * leave from the same core, so each core keeps its own table in daemon
 * memory and no session state is shared.
 */
#ifndef HG_FASTPATH_CREDIT_SESSIONS_H
#define HG_FASTPATH_CREDIT_SESSIONS_H

#include <stdint.h>

#include <rte_hash.h>

#include "tset.h"

#define HG_SESSIONS      16384u	/* per fast-path core */
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
 * unused for a whole sweep and favour whichever sessions sit first. */
struct hg_sessions {
	struct rte_hash *h;
	uint32_t scan;				/* next live entry the scan looks at */
	uint32_t n_live;
	int64_t issued[HG_MAX_TENANTS];		/* sum of windows, per tenant */
	uint32_t count[HG_MAX_TENANTS];		/* sessions */
	uint32_t drained[HG_MAX_TENANTS];	/* ... with window 0 */
	uint32_t live[HG_SESSIONS];		/* slots in use, in any order */
	struct hg_session s[HG_SESSIONS];
};

#endif /* HG_FASTPATH_CREDIT_SESSIONS_H */

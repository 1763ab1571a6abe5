/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Validation of descriptors an app wrote into its TX ring. The descriptor
 * has already been copied out of shared memory, so it cannot change under
 * the checks; everything in it is still untrusted.
 */
#ifndef HG_FASTPATH_DESC_H
#define HG_FASTPATH_DESC_H

#include <rte_byteorder.h>

#include "../proto/hg_shm.h"
#include "../proto/hg_wire.h"
#include "bufpart.h"

enum hg_desc_err {
	HG_DESC_OK = 0,
	HG_DESC_BAD_OP,		/* neither SEND nor FREE */
	HG_DESC_BAD_BUF,	/* not a buffer of this core the app holds */
	HG_DESC_BAD_LEN,	/* longer than a UDP payload may be */
	HG_DESC_BAD_PORT,	/* source port not owned by the tenant */
	HG_DESC_BAD_PEER,	/* destination not a unicast on-link host */
};

struct hg_desc_rules {
	uint8_t owner;		/* app slot + 1 of the ring's context */
	uint16_t port_lo, port_hi;	/* tenant's ports, host order */
	uint32_t our_ip;	/* network order */
	uint32_t net, netmask;	/* host order */
};

static inline enum hg_desc_err
hg_desc_check(const struct hg_desc *d, const struct hg_bufpart *bp,
	      const struct hg_desc_rules *r)
{
	uint32_t peer, host;
	uint16_t port;

	if (d->op != HG_OP_SEND && d->op != HG_OP_FREE)
		return HG_DESC_BAD_OP;
	if (!hg_bufpart_held_by(bp, d->buf, r->owner))
		return HG_DESC_BAD_BUF;
	if (d->op == HG_OP_FREE)
		return HG_DESC_OK;
	if (d->len > HG_MAX_PAYLOAD)
		return HG_DESC_BAD_LEN;
	port = rte_be_to_cpu_16(d->local_port);
	if (port < r->port_lo || port > r->port_hi || port == 0)
		return HG_DESC_BAD_PORT;
	peer = rte_be_to_cpu_32(d->peer_ip);
	host = peer & ~r->netmask;
	if ((peer & r->netmask) != r->net || host == 0 ||
	    host == ~r->netmask || d->peer_ip == r->our_ip ||
	    d->peer_port == 0)
		return HG_DESC_BAD_PEER;
	return HG_DESC_OK;
}

#endif /* HG_FASTPATH_DESC_H */

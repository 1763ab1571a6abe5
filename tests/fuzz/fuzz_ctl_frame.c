/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: control framing and decoding as the daemon does it for
 * every client: the length prefix, the protobuf envelope, and a packed
 * reply that must decode again. */
#include <stdlib.h>
#include <string.h>

#include "ctl_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Hg__Response rsp = HG__RESPONSE__INIT;
	Hg__Request *req, *again;
	uint8_t *out = NULL;
	int64_t len;
	size_t n;

	if (size < 4)
		return -1;
	len = hg_frame_len(data);
	if (len < 0)
		return 0;
	if ((size_t)len > size - 4)
		len = (int64_t)(size - 4);
	req = hg__request__unpack(NULL, (size_t)len, data + 4);
	if (req == NULL)
		return 0;
	/* what we decoded, we can frame again; protobuf-c accepts encodings
	 * (duplicate fields, zero field numbers) that need not survive a
	 * repack, so only the envelope's id must come back the same */
	n = hg_frame_request(req, &out);
	if (n > 0) {
		again = hg__request__unpack(NULL, n - 4, out + 4);
		if (again != NULL && again->id != req->id)
			__builtin_trap();
		if (again != NULL)
			hg__request__free_unpacked(again, NULL);
	}
	free(out);
	out = NULL;
	rsp.id = req->id;
	rsp.status = 22;
	rsp.error = "bad value";
	if (hg_frame_response(&rsp, &out) == 0)
		__builtin_trap();
	free(out);
	hg__request__free_unpacked(req, NULL);
	return 0;
}

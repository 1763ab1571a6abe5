/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: what a memif peer reads and steers by (tools/rx_map.c):
 * the daemon's RX map as JSON (the input, written to a memory file) and a
 * frame's ring (the same bytes as a frame from the wire, through the map
 * that loaded or the single-ring one), and a port's ring back. A ring is
 * always one the peer opened. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../tools/rx_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hg_rx_map map;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[256];
	int fd = memfd_create("rx_map", 0);

	if (fd < 0)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (hg_rx_map_load(&map, path, err, sizeof(err)) == 0 &&
	    (map.cores == 0 || map.per_core == 0 || map.tx_per_core == 0 ||
	     hg_rx_map_rings(&map) > HG_RX_MAP_RINGS ||
	     hg_rx_map_back_rings(&map) > HG_RX_MAP_RINGS))
		abort();
	close(fd);
	if (hg_rx_map_frame(&map, data, size) >= hg_rx_map_rings(&map))
		abort();
	/* any port's answers come back on a ring the peer opened */
	if (hg_rx_map_back(&map, (uint32_t)size,
			   (uint16_t)(size >= 2 ? data[0] << 8 | data[1] : 0)) >=
	    hg_rx_map_back_rings(&map))
		abort();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's RX map for memif peers (rx_map.h).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "rx_map.h"

void
hg_rx_map_single(struct hg_rx_map *m)
{
	memset(m, 0, sizeof(*m));
	m->cores = m->per_core = m->tx_per_core = 1;
}

/* "LO-HI", "P" or "none". */
static int
port_range(const char *s, unsigned *lo, unsigned *hi)
{
	if (strcmp(s, "none") == 0)
		return 0;
	if (sscanf(s, "%u-%u", lo, hi) == 2 || (sscanf(s, "%u", lo) == 1 && (*hi = *lo)))
		return *lo >= 1 && *lo <= *hi && *hi <= 65535 ? 1 : -1;
	return -1;
}

/* Is q an integer in [0, below)? */
static int
index_below(json_t *q, unsigned below)
{
	return json_is_integer(q) && json_integer_value(q) >= 0 &&
	       json_integer_value(q) < (json_int_t)below;
}

static int
add_tenant(struct hg_rx_map *m, json_t *t, char *err, size_t n)
{
	const char *ports = json_string_value(json_object_get(t, "ports"));
	json_t *q = json_object_get(t, "rx_queue"), *tq = json_object_get(t, "tx_queue");
	unsigned lo = 0, hi = 0, p;
	int r;

	if (tq == NULL)		/* a daemon without TX groups: its RX queue's */
		tq = q;
	r = ports ? port_range(ports, &lo, &hi) : 0;
	if (r < 0 || (r > 0 && (!index_below(q, m->per_core) ||
				 !index_below(tq, m->tx_per_core)))) {
		snprintf(err, n, "tenant %s: bad ports, rx_queue or tx_queue",
			 json_string_value(json_object_get(t, "name")));
		return -1;
	}
	for (p = lo; r > 0 && p <= hi; p++) {
		m->group[p] = (uint8_t)json_integer_value(q);
		m->tx_group[p] = (uint8_t)json_integer_value(tq);
	}
	return 0;
}

int
hg_rx_map_load(struct hg_rx_map *m, const char *path, char *err, size_t n)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je), *ts, *t;
	json_int_t cores, per, tx_per;
	size_t i;
	int rc = -1;

	hg_rx_map_single(m);
	if (root == NULL) {
		snprintf(err, n, "%s: %s (line %d)", path, je.text, je.line);
		return -1;
	}
	cores = json_integer_value(json_object_get(root, "fp_cores"));
	per = json_integer_value(json_object_get(root, "rx_queues_per_core"));
	tx_per = json_object_get(root, "tx_queues_per_core") ?
		 json_integer_value(json_object_get(root, "tx_queues_per_core")) : per;
	ts = json_object_get(root, "tenants");
	/* each bounded before the product: a hostile file's huge counts must not overflow */
	if (cores < 1 || per < 1 || tx_per < 1 || cores > HG_RX_MAP_RINGS ||
	    per > HG_RX_MAP_RINGS || tx_per > HG_RX_MAP_RINGS ||
	    cores * per > HG_RX_MAP_RINGS || cores * tx_per > HG_RX_MAP_RINGS ||
	    !json_is_array(ts)) {
		snprintf(err, n, "%s: not the output of hgctl tenant list --json", path);
		goto out;
	}
	m->cores = (unsigned)cores;
	m->per_core = (unsigned)per;
	m->tx_per_core = (unsigned)tx_per;
	json_array_foreach(ts, i, t)
		if (add_tenant(m, t, err, n) < 0)
			goto out;
	rc = 0;
out:
	json_decref(root);
	return rc;
}

unsigned
hg_rx_map_frame(const struct hg_rx_map *m, const uint8_t *f, size_t len)
{
	unsigned ihl;
	uint16_t sport, dport;

	/* Ethernet (14) + IPv4 (20..60) + UDP's two ports */
	if (len < 14 + 20 + 4 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 17)
		return 0;
	ihl = (f[14] & 0xfu) * 4u;
	if (ihl < 20 || len < 14 + ihl + 4)
		return 0;
	sport = (uint16_t)(f[14 + ihl] << 8 | f[14 + ihl + 1]);
	dport = (uint16_t)(f[14 + ihl + 2] << 8 | f[14 + ihl + 3]);
	return hg_rx_map_ring(m, sport, dport);
}

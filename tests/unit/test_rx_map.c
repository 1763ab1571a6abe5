/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../tools/rx_map.h"

static struct hg_rx_map m;

/* Loads text as a map file; returns hg_rx_map_load's result. */
static int
load(const char *text, char *err, size_t n)
{
	char path[] = "/tmp/hg_rx_map_XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	rc = hg_rx_map_load(&m, path, err, n);
	unlink(path);
	return rc;
}

Test(rx_map, reads_tenant_queues)
{
	char err[256] = "";

	cr_assert_eq(load("{\"fp_cores\": 2, \"rx_queues_per_core\": 4, \"tenants\": ["
			  "{\"name\": \"a\", \"ports\": \"7000-7001\", \"rx_queue\": 3}]}",
			  err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hg_rx_map_rings(&m), 8);
	cr_assert_eq(hg_rx_map_ring(&m, 1, 7001), 4 + 3);
	cr_assert_eq(hg_rx_map_ring(&m, 1, 7002), 4);
}

/* CI's fuzz-short found fp_cores x rx_queues_per_core overflowing: a
 * huge count must be refused, not wrapped into a small product. */
Test(rx_map, refuses_counts_whose_product_overflows)
{
	char err[256] = "";

	cr_assert_eq(load("{\"tenants\": [], \"rx_queues_per_core\": 4, "
			  "\"fp_cores\": 8888888888888888881}", err, sizeof(err)), -1);
	cr_assert_eq(load("{\"tenants\": [], \"rx_queues_per_core\": 4611686018427387904, "
			  "\"fp_cores\": 4}", err, sizeof(err)), -1);
	cr_assert(strstr(err, "not the output of hgctl tenant list") != NULL, "%s", err);
	cr_assert_eq(hg_rx_map_rings(&m), 1, "a refused map leaves one ring");
}

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

/* A tenant's answers come back on its TX group's ring, apart from its RX
 * queue's: on one shared RX queue, each tenant still gets a ring back of
 * its own. */
Test(rx_map, reads_tenant_tx_groups)
{
	char err[256] = "";

	cr_assert_eq(load("{\"fp_cores\": 2, \"rx_queues_per_core\": 1, "
			  "\"tx_queues_per_core\": 3, \"tenants\": ["
			  "{\"name\": \"a\", \"ports\": \"7000\", \"rx_queue\": 0, \"tx_queue\": 2},"
			  "{\"name\": \"b\", \"ports\": \"7100\", \"rx_queue\": 0, \"tx_queue\": 1}]}",
			  err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hg_rx_map_rings(&m), 2);
	cr_assert_eq(hg_rx_map_back_rings(&m), 6);
	cr_assert_eq(hg_rx_map_ring(&m, 1, 7000), 1);
	cr_assert_eq(hg_rx_map_back(&m, 1, 7000), 3 + 2);
	cr_assert_eq(hg_rx_map_back(&m, 0, 7100), 1);
	cr_assert_eq(hg_rx_map_back(&m, 1, 7200), 3, "a port of no tenant: group 0");
}

/* A map without TX groups (a daemon before them) has them as its RX
 * queues; a group beyond the count is refused. */
Test(rx_map, tx_groups_default_to_rx_queues_and_are_bounded)
{
	char err[256] = "";

	cr_assert_eq(load("{\"fp_cores\": 1, \"rx_queues_per_core\": 3, \"tenants\": ["
			  "{\"name\": \"a\", \"ports\": \"7000\", \"rx_queue\": 2}]}",
			  err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hg_rx_map_back_rings(&m), 3);
	cr_assert_eq(hg_rx_map_back(&m, 5, 7000), 2);
	cr_assert_eq(load("{\"fp_cores\": 1, \"rx_queues_per_core\": 1, "
			  "\"tx_queues_per_core\": 2, \"tenants\": ["
			  "{\"name\": \"a\", \"ports\": \"7000\", \"rx_queue\": 0, \"tx_queue\": 2}]}",
			  err, sizeof(err)), -1);
	cr_assert(strstr(err, "tx_queue") != NULL, "%s", err);
	cr_assert_eq(load("{\"fp_cores\": 9, \"rx_queues_per_core\": 1, "
			  "\"tx_queues_per_core\": 8, \"tenants\": []}", err, sizeof(err)), -1);
}

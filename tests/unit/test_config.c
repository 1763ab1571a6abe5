/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>

#include "../../slowpath/config.h"

static char err[256], v[256];

TestSuite(config, .init = hg_config_defaults);

Test(config, defaults_match_the_design)
{
	cr_assert_eq(hg_config_get("refill-ns", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "1000");
	hg_config_get("boost", v, sizeof(v));
	cr_assert_str_eq(v, "0.85");
	hg_config_get("cap", v, sizeof(v));
	cr_assert_str_eq(v, "15000");
	hg_config_get("protection", v, sizeof(v));
	cr_assert_str_eq(v, "on");
}

Test(config, values_are_checked_against_the_table)
{
	cr_assert_eq(hg_config_set("boost", "0.5", 1, err, sizeof(err)), 0);
	cr_assert_eq(hg_cfg.boost, 0.5);
	cr_assert_eq(hg_config_set("boost", "2", 1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "boost") != NULL);
	cr_assert_eq(hg_config_set("boost", "abc", 1, err, sizeof(err)), -EINVAL);
	cr_assert_eq(hg_config_set("refill-ns", "-5", 1, err, sizeof(err)), -EINVAL);
	cr_assert_eq(hg_config_set("refill-ns", "12x", 1, err, sizeof(err)), -EINVAL);
	cr_assert_eq(hg_config_set("idle", "sleep", 1, err, sizeof(err)), 0);
	cr_assert_eq(hg_config_set("idle", "nap", 1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "poll|yield|sleep") != NULL, "%s", err);
	cr_assert_eq(hg_config_set("protection", "off", 1, err, sizeof(err)), 0);
	hg_config_get("protection", v, sizeof(v));
	cr_assert_str_eq(v, "off");
}

Test(config, startup_settings_refuse_live_changes)
{
	cr_assert_eq(hg_config_set("fp-cores", "2", 1, err, sizeof(err)), -EPERM);
	cr_assert(strstr(err, "startup") != NULL);
	cr_assert_eq(hg_config_set("fp-cores", "2", 0, err, sizeof(err)), 0);
	cr_assert_eq(hg_config_set("nope", "1", 1, err, sizeof(err)), -ENOENT);
	cr_assert_eq(hg_config_get("nope", v, sizeof(v)), -ENOENT);
}

Test(config, cidr)
{
	uint32_t ip, prefix;

	cr_assert_eq(hg_parse_cidr("198.18.0.1/24", &ip, &prefix), 0);
	cr_assert_eq(ip, inet_addr("198.18.0.1"));
	cr_assert_eq(prefix, 24);
	cr_assert_eq(hg_parse_cidr("198.18.0.1", &ip, &prefix), -1);
	cr_assert_eq(hg_parse_cidr("198.18.0.1/8", &ip, &prefix), -1);
	cr_assert_eq(hg_parse_cidr("198.18.0.1/31", &ip, &prefix), -1);
	cr_assert_eq(hg_parse_cidr("198.18.0/24", &ip, &prefix), -1);
	cr_assert_eq(hg_parse_cidr("198.18.0.1/24x", &ip, &prefix), -1);
	cr_assert_eq(hg_config_set("ip", "10.0.0.1/33", 0, err, sizeof(err)), -EINVAL);
}

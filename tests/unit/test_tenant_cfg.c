/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The tenant settings table (slowpath/tenant_cfg.c): defaults, bounds,
 * live or not, what a change publishes, the cross-field rules, and that
 * every value reads back as itself. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "../../slowpath/tenant_cfg.h"

static char err[256];
static struct hg_tenant_cfg c;
static unsigned changed;

static void
fresh(void)
{
	hg_tenant_cfg_defaults(&c, 15000);
	changed = 0;
}

TestSuite(tenant_cfg, .init = fresh);

static int
set(const char *k, const char *v, int adding)
{
	return hg_tenant_cfg_set(&c, k, v, adding, &changed, err, sizeof(err));
}

Test(tenant_cfg, defaults_are_the_designs)
{
	cr_assert_eq(c.weight, HG_WEIGHT_ONE);
	cr_assert_eq(c.cap, 15000, "cap: the daemon's");
	cr_assert_eq(c.port_hi, 0, "no ports");
	cr_assert_eq(c.steer.jsq, 0);
	cr_assert_eq(c.steer.quantum_factor, 200, "hundredths");
	cr_assert_eq(c.steer.congested_factor, 1000);
	cr_assert_eq(c.steer.steal_threshold, 1);
	cr_assert_eq(c.steer.preempt, HG_PREEMPT_ON);
	cr_assert(c.steer.wait_queue && c.steer.steal);
	cr_assert_eq(c.credit.dt_us, 50);
	cr_assert_eq(c.credit.ddrop_us, 100);
	cr_assert_eq(c.credit.beta, 0.02);
	cr_assert_eq(c.credit.update_us, 10);
	cr_assert_eq(c.max_sessions, 2048);
	cr_assert_eq(c.uid, 0, "root only until told otherwise");
	cr_assert_eq(c.gid, -1);
	cr_assert_eq(hg_tenant_cfg_check(&c, err, sizeof(err)), 0);
}

Test(tenant_cfg, every_value_reads_back_as_itself)
{
	const struct hg_setting *t = hg_tenant_settings()->row;
	struct hg_tenant_cfg before;
	char v[96];
	size_t n = hg_tenant_settings()->n, i;

	cr_assert_gt(n, 20);
	cr_assert_eq(set("weight", "0.3", 0), 0);
	cr_assert_eq(set("ports", "7000-7009", 1), 0);
	cr_assert_eq(set("rpc-ports", "7005-7009", 0), 0);
	before = c;
	changed = 0;
	for (i = 0; i < n; i++) {
		hg_setting_format(&t[i], &c, v, sizeof(v));
		cr_assert_eq(set(t[i].name, v, 1), 0, "%s=%s: %s", t[i].name, v, err);
		cr_assert(t[i].help != NULL && t[i].publish != 0, "%s", t[i].name);
	}
	cr_assert_eq(changed, 0);
	cr_assert_eq(memcmp(&before, &c, sizeof(c)), 0);
}

Test(tenant_cfg, bounds_and_types_are_the_tables)
{
	cr_assert_eq(set("weight", "0", 0), -EINVAL);
	cr_assert(strstr(err, "weight must be [0.01, 10000]") != NULL, "%s", err);
	cr_assert_eq(set("beta", "0", 0), -EINVAL, "beta's lower end is open");
	cr_assert(strstr(err, "(0, 1]") != NULL, "%s", err);
	cr_assert_eq(set("beta", "1", 0), 0);
	cr_assert_eq(set("max-sessions", "1.5", 0), -EINVAL);
	cr_assert_eq(set("cap", "1e5", 0), -EINVAL, "integers are written out");
	cr_assert_eq(set("cap", " 100000", 0), -EINVAL);
	cr_assert_eq(set("cap", "100000", 0), 0);
	cr_assert_eq(set("max-sessions", "1048577", 0), -EINVAL, "HG_SESSIONS_MAX + 1");
	cr_assert_eq(set("preempt", "yes", 0), -EINVAL);
	cr_assert_eq(set("preempt", "off", 0), 0);
	cr_assert_eq(c.steer.preempt, 0);
	cr_assert_eq(set("steer", "jsq", 0), 0);
	cr_assert_eq(c.steer.jsq, 1);
	cr_assert_eq(set("steer", "random", 0), -EINVAL);
	cr_assert(strstr(err, "flow|jsq") != NULL, "%s", err);
	cr_assert_eq(set("preempt", "always", 0), 0);
	cr_assert_eq(c.steer.preempt, HG_PREEMPT_ALWAYS);
	cr_assert_eq(set("gid", "-2", 0), -EINVAL);
	cr_assert_eq(set("gid", "-1", 0), 0);
	cr_assert_eq(set("weight", "nan", 0), -EINVAL);
	cr_assert_eq(set("weight", "", 0), -EINVAL);
}

Test(tenant_cfg, ranges_are_lo_hi_or_none)
{
	cr_assert_eq(set("ports", "9-9", 1), 0);
	cr_assert_eq(c.port_lo, 9);
	cr_assert_eq(c.port_hi, 9);
	cr_assert_eq(set("ports", "10-5", 1), -EINVAL);
	cr_assert_eq(set("ports", "0-5", 1), -EINVAL);
	cr_assert_eq(set("ports", "5-65536", 1), -EINVAL);
	cr_assert_eq(set("ports", "5-", 1), -EINVAL);
	cr_assert_eq(set("ports", "-5", 1), -EINVAL);
	cr_assert_eq(set("ports", "5-6x", 1), -EINVAL);
	cr_assert_eq(set("rpc-ports", "none", 0), 0);
	cr_assert_eq(c.credit.rpc_hi, 0);
}

Test(tenant_cfg, only_live_settings_change_on_a_running_tenant)
{
	cr_assert_eq(set("ports", "100-200", 0), -EPERM);
	cr_assert(strstr(err, "ports") != NULL);
	cr_assert_eq(set("ports", "100-200", 1), 0);
	cr_assert_eq(set("no-such-key", "1", 1), -ENOENT);
	cr_assert(strstr(err, "no-such-key") != NULL);
}

Test(tenant_cfg, a_change_says_what_to_publish)
{
	cr_assert_eq(set("weight", "1", 0), 0);
	cr_assert_eq(changed, 0, "the same value changes nothing");
	cr_assert_eq(set("weight", "3", 0), 0);
	cr_assert_eq(changed, HG_TCFG_PUB_BUDGET);
	cr_assert_eq(set("dt-us", "60", 0), 0);
	cr_assert_eq(set("steal", "off", 0), 0);
	cr_assert_eq(changed, HG_TCFG_PUB_BUDGET | HG_TCFG_PUB_CREDIT |
			      HG_TCFG_PUB_STEER);
}

Test(tenant_cfg, rules_across_settings)
{
	cr_assert_eq(set("dt-us", "200", 0), 0);
	cr_assert_eq(hg_tenant_cfg_check(&c, err, sizeof(err)), -EINVAL,
		     "D_drop 100 < D_t 200");
	cr_assert(strstr(err, "ddrop-us") != NULL);
	cr_assert_eq(set("ddrop-us", "200", 0), 0);
	cr_assert_eq(hg_tenant_cfg_check(&c, err, sizeof(err)), 0);
	cr_assert_eq(set("rpc-ports", "7000-7000", 0), 0);
	cr_assert_eq(hg_tenant_cfg_check(&c, err, sizeof(err)), -EINVAL,
		     "RPC ports but no ports");
	cr_assert_eq(set("ports", "7001-7009", 1), 0);
	cr_assert_eq(hg_tenant_cfg_check(&c, err, sizeof(err)), -EINVAL);
	cr_assert_eq(set("ports", "7000-7009", 1), 0);
	cr_assert_eq(hg_tenant_cfg_check(&c, err, sizeof(err)), 0);
}

Test(tenant_cfg, owners_by_name_or_number)
{
	char v[32];

	cr_assert_eq(set("uid", "nobody", 0), 0);
	cr_assert_eq(c.uid, 65534);
	cr_assert_eq(set("uid", "no-such-user-here", 0), -EINVAL);
	cr_assert(strstr(err, "a user name or") != NULL, "%s", err);
	cr_assert_eq(set("gid", "root", 0), 0);
	cr_assert_eq(c.gid, 0);
	cr_assert_eq(set("gid", "none", 0), 0);
	cr_assert_eq(c.gid, -1);
	hg_setting_format(hg_tenant_setting_find("gid"), &c, v, sizeof(v));
	cr_assert_str_eq(v, "none");
	cr_assert(!hg_setting_numeric(hg_tenant_setting_find("gid"), v));
	cr_assert_eq(set("gid", "4294967295", 0), -EINVAL);
}

Test(tenant_cfg, apply_takes_every_pair_then_the_rules)
{
	const struct hg_kv ok[] = { { "ports", "7000-7009" }, { "weight", "2" },
				    { "rpc-ports", "7000-7001" } };
	const struct hg_kv bad[] = { { "weight", "4" }, { "ddrop-us", "10" } };

	cr_assert_eq(hg_tenant_cfg_apply(&c, ok, 3, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.weight, 2 * HG_WEIGHT_ONE);
	cr_assert_eq(c.credit.rpc_hi, 7001);
	cr_assert_eq(hg_tenant_cfg_apply(&c, bad, 2, 0, err, sizeof(err)), -EINVAL,
		     "D_drop 10 < D_t 50: the rules across settings run last");
	cr_assert(strstr(err, "ddrop-us") != NULL, "%s", err);
	cr_assert_eq(hg_tenant_cfg_apply(&c, ok, 1, 0, err, sizeof(err)), -EPERM, "ports are fixed");
}

Test(tenant_cfg, diff_names_what_changed_and_what_cannot)
{
	const struct hg_setting *fixed;
	struct hg_tenant_cfg b = c;

	cr_assert_eq(hg_settings_diff(hg_tenant_settings(), &c, &b, &fixed), 0);
	cr_assert_null(fixed);
	b.weight = 5 * HG_WEIGHT_ONE;
	b.credit.dt_us = 70;
	cr_assert_eq(hg_settings_diff(hg_tenant_settings(), &c, &b, &fixed),
		     HG_TCFG_PUB_BUDGET | HG_TCFG_PUB_CREDIT);
	cr_assert_null(fixed, "both are live");
	b.port_lo = b.port_hi = 9;
	hg_settings_diff(hg_tenant_settings(), &c, &b, &fixed);
	cr_assert_not_null(fixed);
	cr_assert_str_eq(fixed->name, "ports");
	cr_assert(!hg_setting_same(hg_tenant_setting_find("weight"), &c, &b));
	cr_assert(hg_setting_same(hg_tenant_setting_find("cap"), &c, &b));
}

Test(tenant_cfg, bounds_text_for_help)
{
	char b[96];

	hg_setting_bounds(hg_tenant_setting_find("preempt"), b, sizeof(b));
	cr_assert_str_eq(b, "off|on|always");
	hg_setting_bounds(hg_tenant_setting_find("beta"), b, sizeof(b));
	cr_assert_str_eq(b, "(0, 1]");
	cr_assert(hg_setting_numeric(hg_tenant_setting_find("weight"), "2"));
	cr_assert(!hg_setting_numeric(hg_tenant_setting_find("ports"), "1-2"));
}

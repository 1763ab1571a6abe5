/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../slowpath/config.h"
#include "../../slowpath/config_file.h"

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
	/* a burst is at most HG_BATCH frames: a larger own-burst means nothing */
	cr_assert_eq(hg_cfg.own_burst, 0, "a full burst by default");
	cr_assert_eq(hg_config_set("own-burst", "8", 1, err, sizeof(err)), 0);
	cr_assert_eq(hg_cfg.own_burst, 8);
	cr_assert_eq(hg_config_set("own-burst", "33", 1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "own-burst") != NULL, "%s", err);
	cr_assert_eq(hg_cfg.own_bytes, 0, "no bound in bytes by default");
	cr_assert_eq(hg_config_set("own-bytes", "11200", 1, err, sizeof(err)), 0);
	cr_assert_eq(hg_cfg.own_bytes, 11200);
	cr_assert_eq(hg_config_set("own-bytes", "1048577", 1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "own-bytes") != NULL, "%s", err);
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

/* ---- the config file (config_file.c) and applying it ---- */

static int
parse(const char *text, struct hg_conf_file *f)
{
	size_t n = strlen(text);
	char *buf = malloc(n + 1);

	memcpy(buf, text, n + 1);
	return hg_conf_parse(buf, n, f, err, sizeof(err));
}

Test(config, file_lines_are_settings_and_tenants)
{
	struct hg_conf_file f;

	cr_assert_eq(parse("# a comment\n\nboost 0.9\ncap=20000  # trailing\n"
			   "idle = sleep\ntenant gold weight=3 ports=7000-7009\n"
			   "tenant\tbronze\n", &f), 0, "%s", err);
	cr_assert_eq(f.n_set, 3);
	cr_assert_str_eq(f.set[0].key, "boost");
	cr_assert_str_eq(f.set[0].value, "0.9");
	cr_assert_eq(f.set[0].line, 3);
	cr_assert_str_eq(f.set[1].value, "20000");
	cr_assert_str_eq(f.set[2].value, "sleep");
	cr_assert_eq(f.n_ten, 2);
	cr_assert_str_eq(f.ten[0].name, "gold");
	cr_assert_eq(f.ten[0].n, 2);
	cr_assert_str_eq(f.ten[0].kv[1].key, "ports");
	cr_assert_str_eq(f.ten[0].kv[1].value, "7000-7009");
	cr_assert_eq(f.ten[0].line, 6);
	cr_assert_str_eq(f.ten[1].name, "bronze");
	cr_assert_eq(f.ten[1].n, 0);
	hg_conf_file_free(&f);
}

Test(config, a_bad_file_says_which_line)
{
	struct hg_conf_file f;

	cr_assert_eq(parse("boost 0.9\ntenant gold weight 3\n", &f), -EINVAL);
	cr_assert(strncmp(err, "2: expected KEY=VALUE, not 'weight'", 35) == 0,
		  "%s", err);
	hg_conf_file_free(&f);
	cr_assert_eq(parse("\n\ntenant\n", &f), -EINVAL);
	cr_assert(strncmp(err, "3: tenant needs a name", 22) == 0, "%s", err);
	hg_conf_file_free(&f);
	cr_assert_eq(parse("tenant a =3\n", &f), -EINVAL, "a pair needs a key");
	hg_conf_file_free(&f);
}

Test(config, file_settings_apply_all_or_nothing)
{
	struct hg_conf_file f;

	cr_assert_eq(parse("boost 0.5\nrefill-ns 2000\nidle nap\n", &f), 0);
	cr_assert_eq(hg_config_apply_file(&f, "x.conf", 1, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strncmp(err, "x.conf:3: idle must be", 22) == 0, "%s", err);
	hg_config_get("boost", v, sizeof(v));
	cr_assert_str_eq(v, "0.85", "line 1 was undone");
	hg_conf_file_free(&f);
	cr_assert_eq(parse("boost 0.5\nfp-cores 2\n", &f), 0);
	cr_assert_eq(hg_config_apply_file(&f, "x.conf", 1, err, sizeof(err)),
		     -EPERM, "a running daemon keeps its startup settings");
	cr_assert(strncmp(err, "x.conf:2: fp-cores can only be set at startup",
			  45) == 0, "%s", err);
	hg_config_get("boost", v, sizeof(v));
	cr_assert_str_eq(v, "0.85");
	cr_assert_eq(hg_config_apply_file(&f, "x.conf", 0, err, sizeof(err)), 0,
		     "at startup it may");
	hg_config_get("fp-cores", v, sizeof(v));
	cr_assert_str_eq(v, "2");
	hg_conf_file_free(&f);
}

static int n_changes;

static void
count_change(void *arg, const char *key, const char *before, const char *after)
{
	(void)arg;
	cr_assert_str_eq(key, "boost");
	cr_assert_str_eq(before, "0.85");
	cr_assert_str_eq(after, "0.5");
	n_changes++;
}

Test(config, flags_win_over_the_file)
{
	FILE *fp = fopen("/tmp/hg_test_config.conf", "w");
	char *argv[] = { "hourglassd", "--ip", "198.18.0.1/24", "--cap", "30000",
			 "--config", "/tmp/hg_test_config.conf", NULL };
	struct hg_config before;

	cr_assert_not_null(fp);
	fputs("cap 20000\nboost 0.5\ntenant t ports=1-2\n", fp);
	fclose(fp);
	cr_assert_eq(hg_config_parse_args(7, argv), 0);
	unlink("/tmp/hg_test_config.conf");
	hg_config_get("cap", v, sizeof(v));
	cr_assert_str_eq(v, "30000", "the flag's");
	hg_config_get("boost", v, sizeof(v));
	cr_assert_str_eq(v, "0.5", "the file's");
	hg_config_defaults();
	before = hg_cfg;
	hg_cfg.boost = 0.5;
	hg_config_changes(&before, count_change, NULL);
	cr_assert_eq(n_changes, 1);
}

Test(config, a_nul_byte_is_refused_with_its_line)
{
	struct hg_conf_file f;
	char *buf = malloc(16);

	memcpy(buf, "boost 1\ncap\0 5\n", 15);
	cr_assert_eq(hg_conf_parse(buf, 15, &f, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "2: a NUL byte");
	hg_conf_file_free(&f);
}

/* One engine for both tables (settings.h): an enum's refusal names every
 * choice, not the first three, and a setting that is not live is refused
 * by the same rule with the table's own reason. */
Test(config, one_engine_for_daemon_and_tenant_settings)
{
	static const char *const five[] = { "a", "b", "c", "d", "e", NULL };
	static const struct hg_setting row[] = {
		{ "mode", HG_SET_ENUM, 0, sizeof(int), 0, 0, 0, "a", 0, 1, five, "x" },
	};
	static const struct hg_settings tab = { row, 1, "unknown thing", "",
						"is fixed here" };
	int mode = 0;

	cr_assert_eq(hg_settings_set(&tab, &mode, "mode", "f", 0, NULL, err,
				     sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "mode must be a|b|c|d|e, not 'f'");
	cr_assert_eq(hg_settings_set(&tab, &mode, "mode", "e", 0, NULL, err,
				     sizeof(err)), 0);
	cr_assert_eq(mode, 4);
	cr_assert_eq(hg_settings_set(&tab, &mode, "mode", "b", 1, NULL, err,
				     sizeof(err)), -EPERM);
	cr_assert_str_eq(err, "mode is fixed here");
	cr_assert_eq(hg_settings_set(&tab, &mode, "colour", "b", 0, NULL, err,
				     sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "unknown thing 'colour'");
	cr_assert_eq(hg_config_set("fp-cores", "2", 1, err, sizeof(err)), -EPERM);
	cr_assert_str_eq(err, "fp-cores can only be set at startup; restart to change it");
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include "../../slowpath/uid_conns.h"

Test(uid_conns, counts_each_uid_apart)
{
	struct hg_uid_conns t = { 0 };
	uid_t u;

	for (u = 1000; u < 1100; u++)
		cr_assert_eq(hg_uid_conns_take(&t, u), 0);
	cr_assert_eq(hg_uid_conns_take(&t, 1042), 0);
	cr_assert_eq(hg_uid_conns_take(&t, (uid_t)-1), 0);
	cr_assert_eq(t.uids, 101);
	cr_assert_eq(hg_uid_conns_of(&t, 1042), 2);
	cr_assert_eq(hg_uid_conns_of(&t, 1043), 1);
	cr_assert_eq(hg_uid_conns_of(&t, 0), 0);
	cr_assert_eq(hg_uid_conns_of(&t, (uid_t)-1), 1);
	for (u = 1000; u < 1100; u++)
		hg_uid_conns_put(&t, u);
	cr_assert_eq(hg_uid_conns_of(&t, 1042), 1);
	hg_uid_conns_put(&t, 1042);
	hg_uid_conns_put(&t, (uid_t)-1);
	cr_assert_eq(t.uids, 0);
	cr_assert_null(t.root, "every node freed once its uid holds none");
}

Test(uid_conns, a_put_without_a_take_is_harmless)
{
	struct hg_uid_conns t = { 0 };

	hg_uid_conns_put(&t, 7);
	cr_assert_eq(hg_uid_conns_take(&t, 7), 0);
	hg_uid_conns_put(&t, 8);
	cr_assert_eq(hg_uid_conns_of(&t, 7), 1);
	hg_uid_conns_put(&t, 7);
	cr_assert_eq(t.uids, 0);
}

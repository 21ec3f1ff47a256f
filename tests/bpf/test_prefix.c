// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Source keys: which sources share a bucket, per prefix setting. */
#include <errno.h>
#include <stdio.h>
#include <criterion/criterion.h>
#include "fixture.h"
#include "loader.h"

#define BURST 3

static struct xrl_datapath dp;
static struct xrl_policy policy;

static void setup(void)
{
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 10, BURST, 0, 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(prefix, .init = setup, .fini = teardown);

/* How many of BURST + 2 packets from @src pass at the current instant. */
static uint64_t admitted(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	return fixture_run_many(&dp, &pkt, BURST + 2);
}

static void assert_passed(const char *key, uint64_t passed)
{
	struct xrl_bucket bucket;

	cr_assert_eq(fixture_bucket(&dp, key, 0, &bucket), 0,
		     "no bucket keyed %s", key);
	/* At one instant, what it took is what it admitted. */
	cr_assert_eq(fixture_packets_owed(&bucket, 10, BURST, NS_PER_S),
		     passed, "bucket %s", key);
}

Test(prefix, ipv6_sources_in_one_64_share_a_bucket)
{
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::1"), BURST);
	cr_assert_eq(admitted("fd00:0:0:1:ffff:ffff:ffff:ffff"), 0);
	cr_assert_eq(admitted("fd00:0:0:1:8000::"), 0);
	assert_passed("fd00:0:0:1::", BURST);
	cr_assert_eq(fixture_bucket(&dp, "fd00:0:0:1::1", 0,
				    &(struct xrl_bucket){ 0 }), -ENOENT);
}

Test(prefix, ipv6_sources_in_different_64s_do_not)
{
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::1"), BURST);
	cr_assert_eq(admitted("fd00:0:0:2::1"), BURST);
	cr_assert_eq(admitted("fd00:0:1:1::1"), BURST);
	cr_assert_eq(admitted("fd01:0:0:1::1"), BURST);
	assert_passed("fd00:0:0:1::", BURST);
	assert_passed("fd00:0:0:2::", BURST);
}

Test(prefix, v6_prefix_128_gives_every_address_its_own)
{
	policy.v6_prefix = 128;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::1"), BURST);
	cr_assert_eq(admitted("fd00:0:0:1::2"), BURST);
	cr_assert_eq(admitted("fd00:0:0:1::1"), 0);
	assert_passed("fd00:0:0:1::1", BURST);
	assert_passed("fd00:0:0:1::2", BURST);
}

Test(prefix, v6_prefix_48_joins_the_64s_of_a_48)
{
	policy.v6_prefix = 48;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::1"), BURST);
	cr_assert_eq(admitted("fd00:0:0:2::1"), 0);
	cr_assert_eq(admitted("fd00:0:0:ffff::1"), 0);
	cr_assert_eq(admitted("fd00:0:1::1"), BURST);
	assert_passed("fd00::", BURST);
	assert_passed("fd00:0:1::", BURST);
}

Test(prefix, v6_prefix_57_splits_inside_a_word)
{
	policy.v6_prefix = 57;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:17f::1"), BURST);
	cr_assert_eq(admitted("fd00:0:0:100::1"), 0);
	cr_assert_eq(admitted("fd00:0:0:180::1"), BURST);
	assert_passed("fd00:0:0:100::", BURST);
	assert_passed("fd00:0:0:180::", BURST);
}

Test(prefix, ipv4_sources_are_keyed_by_address_by_default)
{
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("198.18.0.1"), BURST);
	cr_assert_eq(admitted("198.18.0.2"), BURST);
	cr_assert_eq(admitted("198.18.0.1"), 0);
	assert_passed("198.18.0.1", BURST);
	assert_passed("198.18.0.2", BURST);
}

Test(prefix, v4_prefix_24_shares_a_bucket_per_24)
{
	policy.v4_prefix = 24;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("198.18.0.1"), BURST);
	cr_assert_eq(admitted("198.18.0.254"), 0);
	cr_assert_eq(admitted("198.18.1.1"), BURST);
	assert_passed("198.18.0.0", BURST);
	assert_passed("198.18.1.0", BURST);
}

Test(prefix, v4_prefix_does_not_touch_ipv6_keys_nor_the_reverse)
{
	policy.v4_prefix = 16;
	policy.v6_prefix = 128;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("198.18.0.1"), BURST);
	cr_assert_eq(admitted("198.18.200.1"), 0);
	cr_assert_eq(admitted("fd00::1"), BURST);
	cr_assert_eq(admitted("fd00::2"), BURST);
}

/* The prefix setting applies from the next packet on: the same source
 * is keyed anew, the old key's bucket is left to age out. */
Test(prefix, changing_the_prefix_rekeys_live_traffic)
{
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::1"), BURST);
	cr_assert_eq(admitted("fd00:0:0:1::2"), 0);
	policy.v6_prefix = 128;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::2"), BURST);
	policy.v6_prefix = 64;
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted("fd00:0:0:1::3"), 0);
}

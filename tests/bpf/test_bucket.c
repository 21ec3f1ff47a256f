// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Token-bucket behaviour of the data path, driven by the test clock. */
#include <criterion/criterion.h>
#include "fixture.h"

static struct xrl_datapath dp;
static struct xrl_policy policy;

static void setup(void)
{
	fixture_load(&dp, 0);
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(bucket, .init = setup, .fini = teardown);

Test(bucket, admits_exactly_burst_at_one_instant_then_one_per_interval)
{
	struct packet pkt;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 100, 50, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);

	cr_assert_eq(fixture_run_many(&dp, &pkt, 80), 50);
	/* Then one per 10 ms interval: never early, and late by at most
	 * 0.1% of the time elapsed (the representation's bound is 0.025%,
	 * include/xrl.h). */
	for (int k = 1; k <= 100; k++) {
		uint64_t ideal = NS_PER_S + k * 10000000ULL;

		xrl_datapath_set_time(&dp, ideal - 5000);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 0, "k=%d early", k);
		xrl_datapath_set_time(&dp, ideal + k * 10000000ULL / 1000);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 1, "k=%d", k);
	}
}

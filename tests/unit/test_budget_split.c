// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The split of an aggregate budget over CPUs (or a global one over
 * nodes): floors, proportions, exact sums, and the per-CPU share limits
 * that together admit the whole rate.
 */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>
#include "share.h"
#include "limit.h"
#include "policy_read.h"

static uint32_t sum(const uint32_t *w, unsigned n)
{
	uint32_t total = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		total += w[i];
	return total;
}

Test(split, proportional_with_floor)
{
	uint64_t demand[2] = { 3000, 1000 };
	uint32_t w[2] = { 0, 0 };
	/* floor 10% of an even share: 52428 each; the rest 943720 3:1 */
	cr_assert_eq(xrl_share_split(demand, 2, 10, w), 0);
	cr_assert_eq(sum(w, 2), XRL_SHARE_ONE);
	cr_assert_eq(w[0], 52428 + 707790, "busier CPU: %u", w[0]);
	cr_assert_eq(w[1], 52428 + 235930, "quieter CPU: %u", w[1]);
}

Test(split, idle_cpu_keeps_its_floor)
{
	uint64_t demand[4] = { 0, 5, 0, 0 };
	uint32_t w[4];
	unsigned i;

	cr_assert_eq(xrl_share_split(demand, 4, 10, w), 0);
	cr_assert_eq(sum(w, 4), XRL_SHARE_ONE);
	for (i = 0; i < 4; i++)
		if (i != 1)
			cr_assert_eq(w[i], XRL_SHARE_ONE / 4 / 10, "cpu %u: %u",
				     i, w[i]);
	cr_assert_eq(w[1], XRL_SHARE_ONE - 3 * (XRL_SHARE_ONE / 4 / 10));
}

Test(split, no_demand_leaves_weights)
{
	uint64_t demand[3] = { 0, 0, 0 };
	uint32_t w[3] = { 100, 900, 24 };

	cr_assert_eq(xrl_share_split(demand, 3, 10, w), 1);
	cr_assert_eq(w[0], 100);
	cr_assert_eq(w[1], 900);
	cr_assert_eq(w[2], 24);
}

Test(split, sums_exactly_for_awkward_demands)
{
	uint64_t demand[7];
	uint32_t w[7];
	unsigned n, i, round;

	for (round = 1; round < 500; round++) {
		n = 1 + round % 7;
		for (i = 0; i < n; i++)
			demand[i] = (round * 7919ULL * (i + 3)) % 1000003 +
				    (i == 0 ? UINT32_MAX * (uint64_t)round : 0);
		cr_assert_eq(xrl_share_split(demand, n, round % 101, w), 0);
		cr_assert_eq(sum(w, n), XRL_SHARE_ONE, "round %u", round);
		for (i = 0; i < n; i++)
			cr_assert_geq(w[i], 1);
	}
}

Test(split, huge_demands_do_not_overflow)
{
	uint64_t demand[2] = { UINT64_MAX / 2, UINT64_MAX / 2 };
	uint32_t w[2];

	cr_assert_eq(xrl_share_split(demand, 2, 0, w), 0);
	cr_assert_eq(w[0], XRL_SHARE_ONE / 2);
	cr_assert_eq(w[1], XRL_SHARE_ONE / 2);
}

Test(split, bad_arguments)
{
	uint64_t demand[1] = { 1 };
	uint32_t w[1];

	cr_assert_eq(xrl_share_split(demand, 0, 10, w), -EINVAL);
	cr_assert_eq(xrl_share_split(demand, 1, 101, w), -EINVAL);
}

Test(split, even)
{
	uint32_t w[3];

	xrl_share_even(3, w);
	cr_assert_eq(sum(w, 3), XRL_SHARE_ONE);
	cr_assert_eq(w[0], 349526);
	cr_assert_eq(w[2], 349525);
}

/* The documented 2%: what the floors of idle CPUs hold, on any machine. */
Test(split, floors_stay_within_two_percent_up_to_1024_cpus)
{
	static uint32_t w[1024];
	unsigned n;
	uint32_t pool;

	for (n = 1; n <= 1024; n++) {
		pool = xrl_share_floors(n, XRL_SHARE_FLOOR_PERCENT, w);
		cr_assert_eq(pool + sum(w, n), XRL_SHARE_ONE, "%u CPUs", n);
		cr_assert_leq(sum(w, n), XRL_SHARE_ONE / 50, "%u CPUs: %u", n,
			      sum(w, n));
		/* and not rounded to nothing either: at least 1.9% */
		cr_assert_geq(sum(w, n), XRL_SHARE_ONE / 1000 * 19, "%u CPUs", n);
		cr_assert_geq(w[n - 1], 1);
	}
}

/* A part of ONE (the rest is the pool's) is split by demand, exactly. */
Test(split, part_sums_to_the_part)
{
	uint64_t demand[3] = { 1, 0, 3 };
	uint32_t w[3], floor = xrl_share_floor(3, 2);

	cr_assert_eq(xrl_share_split_part(demand, 3, 2, 100000, w), 0);
	cr_assert_eq(sum(w, 3), 100000);
	cr_assert_eq(w[1], floor);
	cr_assert_gt(w[2], 2 * w[0]);
	/* Not even the floors fit: refused, weights untouched. */
	cr_assert_eq(xrl_share_split_part(demand, 3, 2, 3 * floor - 1, w),
		     -EINVAL);
	cr_assert_eq(xrl_share_split_part(demand, 3, 2, 3 * floor, w), 0);
	cr_assert_eq(w[0] + w[1] + w[2], 3 * floor);
}

/* The pool holds the budget up to its cap, never the CPUs' floors. */
Test(split, pool_weight)
{
	struct xrl_budget_limits small = { .pps = 200, .burst = 20 };
	struct xrl_budget_limits big = { .pps = 10000000, .burst = 1000 };
	struct xrl_budget_limits bytes = { .bps = 8000000000ULL,
					   .burst_bytes = 1 << 20 };
	uint32_t floors = 2 * xrl_share_floor(2, 2);

	cr_assert_eq(xrl_agg_pool_weight(&small, 2, 2, 100000),
		     XRL_SHARE_ONE - floors);
	/* 10 Mpps: 1% of it in the pool */
	cr_assert_eq(xrl_agg_pool_weight(&big, 2, 2, 100000),
		     XRL_SHARE_ONE / 100);
	/* 1 GB/s: 100000 full frames a second are 15% of it */
	cr_assert_eq(xrl_agg_pool_weight(&bytes, 2, 2, 100000),
		     (uint32_t)(100000ULL * 1518 * 8 * XRL_SHARE_ONE /
				8000000000ULL));
	cr_assert_eq(xrl_agg_pool_weight(&small, 2, 2, 0), 0);
}

/* Shares of one limit add up to its rate, and keep its burst as a time. */
Test(share_limit, rates_add_up)
{
	uint32_t w[2] = { XRL_SHARE_ONE / 4 * 3, XRL_SHARE_ONE / 4 };
	struct xrl_limit a, b, whole;

	cr_assert_eq(xrl_limit_compile_pps_weighted(10000, 400, w[0], &a), 0);
	cr_assert_eq(xrl_limit_compile_pps_weighted(10000, 400, w[1], &b), 0);
	cr_assert_eq(xrl_limit_compile_pps(10000, 400, &whole), 0);
	cr_assert_float_eq(xrl_limit_rate(&a), 7500.0, 7500.0 / 4096);
	cr_assert_float_eq(xrl_limit_rate(&b), 2500.0, 2500.0 / 4096);
	/* burst: 300 and 100 packets of their own intervals */
	cr_assert_eq(a.tolerance / a.interval, 300);
	cr_assert_eq(b.tolerance / b.interval, 100);
}

Test(share_limit, at_least_one_packet)
{
	struct xrl_limit l;

	cr_assert_eq(xrl_limit_compile_pps_weighted(1000, 1, 1, &l), 0);
	cr_assert_eq(l.tolerance, l.interval);
	cr_assert_eq(xrl_limit_compile_bps_weighted(8000000, 100000, 1, &l), 0);
	cr_assert_eq(l.tolerance, XRL_AGG_FLOOR_BYTES * l.interval);
}

Test(share_limit, extremes)
{
	struct xrl_limit l;

	cr_assert_eq(xrl_limit_compile_pps_weighted(XRL_RATE_MAX, XRL_BURST_MAX,
						    XRL_SHARE_ONE, &l), 0);
	cr_assert_float_eq(xrl_limit_rate(&l), 1e12, 1e12 / 4096);
	cr_assert_eq(xrl_limit_compile_pps_weighted(1, 1, 1, &l), 0);
	cr_assert_float_eq(xrl_limit_rate(&l), 1.0 / XRL_SHARE_ONE,
			   1.0 / XRL_SHARE_ONE / 4096);
	cr_assert_eq(xrl_limit_compile_pps_weighted(1, 1, 0, &l), -EINVAL);
	cr_assert_eq(xrl_limit_compile_pps_weighted(XRL_RATE_MAX + 1, 1, 1, &l),
		     -ERANGE);
}

Test(budget_limits, scale)
{
	struct xrl_budget_limits in = { .pps = 1000, .burst = 3 }, out;

	xrl_budget_limits_scale(&in, 1, 4, &out);
	cr_assert_eq(out.pps, 250);
	cr_assert_eq(out.burst, 1, "a non-zero burst stays at least 1");
	cr_assert_eq(out.bps, 0);
}

Test(config, scope_and_global_fields)
{
	const char *text =
		"redis: 127.0.0.1:6379\n"
		"sync_interval: 250ms\n"
		"rules:\n"
		"  - cidr: 198.18.0.0/24\n"
		"    pps: 1000\n"
		"    burst: 100\n"
		"    scope: aggregate\n"
		"    global: true\n";
	struct xrl_config config;
	char err[256];

	cr_assert_eq(xrl_config_load_string(text, strlen(text), "p.yaml",
					    &config, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_str_eq(config.redis, "127.0.0.1:6379");
	cr_assert_eq(config.sync_interval_ms, 250);
	cr_assert_eq(config.policy.rules[1].scope, XRL_SCOPE_AGGREGATE);
	cr_assert(config.policy.rules[1].global);
	cr_assert_eq(config.policy.rules[1].global_line, 8);
	xrl_config_free(&config);
}

static void expect_error(const char *text, const char *wanted)
{
	struct xrl_config config;
	char err[256];

	cr_assert_eq(xrl_config_load_string(text, strlen(text), "p.yaml",
					    &config, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, wanted);
}

Test(config, errors_name_the_line)
{
	expect_error("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n"
		     "    burst: 1\n    global: true\n",
		     "p.yaml:5: rules[0].global: needs scope: aggregate (true)");
	expect_error("default:\n  pps: 10\n  burst: 1\n  scope: everything\n",
		     "p.yaml:4: default.scope: unknown scope, expected source "
		     "or aggregate (everything)");
	expect_error("default:\n  pps: 10\n  burst: 1\n  global: yes\n",
		     "p.yaml:4: default.global: must be true or false (yes)");
	expect_error("redis: localhost\n",
		     "p.yaml:1: redis: must be HOST:PORT (a port from 1 to "
		     "65535) (localhost)");
	expect_error("sync_interval: 5ms\n",
		     "p.yaml:1: sync_interval: must be 10ms to 60s (\"100ms\", "
		     "\"1s\") (5ms)");
}

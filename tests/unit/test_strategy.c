// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Strategies in the policy file: token_bucket, leaky_bucket and
 * sliding_window (accepted values, one-line refusals of unknown values
 * and of keys that do not fit the strategy, round trip through the YAML
 * writer) and what they compile to: a leaky bucket is the token bucket
 * of the same parameters, a sliding window its count and sub-windows.
 * No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "limit.h"
#include "policy_read.h"
#include "policy_text.h"
#include "rule.h"
#include "units.h"

/* The compiled rule 1 of a policy of one rule. */
static struct xrl_rule compiled(const char *text)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded(text, &config);
	cr_assert_eq(config.policy.n_rules, 2);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	xrl_config_free(&config);
	return rule;
}

TestSuite(strategy_file);

Test(strategy_file, token_bucket_is_the_default_and_compiles_as_before)
{
	struct xrl_rule a = compiled("rules:\n  - {cidr: 198.18.0.0/24, "
				     "pps: 100, burst: 10}\n");
	struct xrl_rule b = compiled("rules:\n  - {cidr: 198.18.0.0/24, "
				     "strategy: token_bucket, pps: 100, "
				     "burst: 10}\n");
	struct xrl_limit want;

	cr_assert_eq(xrl_limit_compile_pps(100, 10, &want), 0);
	cr_assert(!memcmp(&a.limit[XRL_LIMIT_PACKETS], &want, sizeof(want)));
	cr_assert(!memcmp(&a, &b, sizeof(a)));
	cr_assert_eq(a.window.strategy, XRL_STRATEGY_TOKEN_BUCKET);
	cr_assert_eq(a.window.limit, 0, "a token bucket is no window");
}

Test(strategy_file, leaky_bucket_is_the_token_bucket_of_its_pace)
{
	struct xrl_rule token = compiled("rules:\n  - {cidr: 198.18.0.0/24, "
					 "pps: 10, burst: 1}\n");
	struct xrl_rule by_interval = compiled(
		"rules:\n  - {cidr: 198.18.0.0/24, strategy: leaky_bucket, "
		"interval: 100ms}\n");
	struct xrl_rule by_rate = compiled(
		"rules:\n  - {cidr: 198.18.0.0/24, strategy: leaky_bucket, "
		"pps: 10}\n");
	struct xrl_rule token5 = compiled("rules:\n  - {cidr: 198.18.0.0/24, "
					  "pps: 1k, burst: 5}\n");
	struct xrl_rule leaky5 = compiled(
		"rules:\n  - {cidr: 198.18.0.0/24, strategy: leaky_bucket, "
		"interval: 1ms, burst: 5}\n");
	size_t size = sizeof(struct xrl_limit) * XRL_LIMIT_KINDS;

	/* burst 1 unless set; the same limit, so the same admissions */
	cr_assert(!memcmp(token.limit, by_interval.limit, size));
	cr_assert(!memcmp(token.limit, by_rate.limit, size));
	cr_assert(!memcmp(token5.limit, leaky5.limit, size));
	cr_assert_eq(by_interval.window.strategy, XRL_STRATEGY_LEAKY_BUCKET);
	cr_assert_eq(by_interval.window.limit, 0);
}

Test(strategy_file, sliding_window_compiles_its_count_and_sub_windows)
{
	struct xrl_rule w = compiled(
		"rules:\n  - {cidr: 198.18.0.0/24, strategy: sliding_window, "
		"limit: 50, window: 1s}\n");
	struct xrl_limit pace;

	cr_assert_eq(w.window.strategy, XRL_STRATEGY_SLIDING_WINDOW);
	cr_assert_eq(w.window.limit, 50);
	cr_assert_eq(w.window.window_ns, 1000000000ULL);
	/* ceil(1 s / 15): fifteen of them cover the window */
	cr_assert_eq(w.window.sub_ns, 66666667ULL);
	cr_assert_geq(w.window.sub_ns * XRL_WINDOW_SUBS, w.window.window_ns);
	/* The fallback's pace: 50 a second, one at a time. */
	cr_assert_eq(xrl_limit_compile_pps(50, 1, &pace), 0);
	cr_assert(!memcmp(&w.limit[XRL_LIMIT_PACKETS], &pace, sizeof(pace)));
	cr_assert_eq(w.limit[XRL_LIMIT_BYTES].interval, 0);
}

Test(strategy_file, default_rule_takes_a_strategy)
{
	struct xrl_config config;

	policy_loaded("default: {strategy: sliding_window, limit: 10, window: 1m}\n",
	       &config);
	cr_assert_eq(config.policy.rules[0].strategy.kind,
		     XRL_STRATEGY_SLIDING_WINDOW);
	cr_assert_eq(config.policy.rules[0].strategy.window_ns,
		     60ULL * 1000000000ULL);
	xrl_config_free(&config);
}

Test(strategy_file, unknown_strategy_is_refused_never_the_default)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 5\n"
		"    strategy: token-bucket\n",
		"p.yaml:5: rules[0].strategy: unknown strategy, expected "
		"token_bucket, leaky_bucket or sliding_window (token-bucket)");
	policy_refused("default:\n  strategy: fixed_window\n",
		"p.yaml:2: default.strategy: unknown strategy, expected "
		"token_bucket, leaky_bucket or sliding_window (fixed_window)");
	policy_refused("default:\n  strategy: ''\n",
		"p.yaml:2: default.strategy: unknown strategy, expected "
		"token_bucket, leaky_bucket or sliding_window ()");
	policy_refused("default:\n  strategy: [sliding_window]\n",
		"p.yaml:2: default.strategy: must be a single value, not a "
		"list");
}

Test(strategy_file, keys_that_do_not_fit_the_strategy)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    limit: 10\n"
		"    window: 1s\n",
		"p.yaml:3: rules[0].limit: only with strategy: sliding_window "
		"(10)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 1\n"
		"    interval: 1s\n",
		"p.yaml:5: rules[0].interval: only with strategy: leaky_bucket "
		"(1s)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    limit: 10\n    window: 1s\n    pps: 10\n",
		"p.yaml:6: rules[0].pps: not with strategy: sliding_window, "
		"which takes limit and window (10)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    limit: 10\n    window: 1s\n    bps: 10M\n",
		"p.yaml:6: rules[0].bps: not with strategy: sliding_window, "
		"which takes limit and window (10M)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    limit: 10\n    window: 1s\n    interval: 1s\n",
		"p.yaml:6: rules[0].interval: not with strategy: "
		"sliding_window, which takes limit and window (1s)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: leaky_bucket\n"
		"    interval: 1ms\n    window: 1s\n",
		"p.yaml:5: rules[0].window: only with strategy: sliding_window "
		"(1s)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: leaky_bucket\n"
		"    pps: 10\n    bps: 1M\n    burst_bytes: 1k\n",
		"p.yaml:5: rules[0].bps: a leaky_bucket paces packets "
		"(interval or pps); bit rates take strategy: token_bucket (1M)");
	/* Refused whatever the action: the numbers are written back. */
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: allow\n"
		"    limit: 10\n",
		"p.yaml:4: rules[0].limit: only with strategy: sliding_window "
		"(10)");
}

Test(strategy_file, what_each_strategy_needs)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: leaky_bucket\n",
		"p.yaml:2: rules[0].interval: a leaky_bucket needs interval or "
		"pps");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: leaky_bucket\n"
		"    interval: 1ms\n    pps: 1k\n",
		"p.yaml:4: rules[0].interval: a leaky_bucket takes interval or "
		"pps, not both (1ms)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    window: 1s\n",
		"p.yaml:2: rules[0].limit: a sliding_window needs limit and "
		"window");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    limit: 5\n",
		"p.yaml:2: rules[0].window: a sliding_window needs limit and "
		"window");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    limit: 5\n    window: 1s\n    scope: aggregate\n",
		"p.yaml:6: rules[0].scope: a sliding_window counts each "
		"source; scope: aggregate is not supported (aggregate)");
}

Test(strategy_file, bad_values)
{
	policy_refused("default: {strategy: leaky_bucket, interval: 0ms}\n",
		"p.yaml:1: default.interval: must be 1ns to 1h (0ms)");
	policy_refused("default: {strategy: leaky_bucket, interval: 2h}\n",
		"p.yaml:1: default.interval: must be 1ns to 1h (2h)");
	policy_refused("default: {strategy: leaky_bucket, interval: 100}\n",
		"p.yaml:1: default.interval: not a duration such as 100ms, 2s, "
		"1m or 500us (100)");
	policy_refused("default: {strategy: leaky_bucket, interval: -1s}\n",
		"p.yaml:1: default.interval: not a duration such as 100ms, 2s, "
		"1m or 500us (-1s)");
	policy_refused("default: {strategy: leaky_bucket, interval: 99999999999999999999s}\n",
		"p.yaml:1: default.interval: must be 1ns to 1h "
		"(99999999999999999999s)");
	policy_refused("default: {strategy: sliding_window, limit: 5, window: 999us}\n",
		"p.yaml:1: default.window: must be 1ms to 1h (999us)");
	policy_refused("default: {strategy: sliding_window, limit: 5, window: 61m}\n",
		"p.yaml:1: default.window: must be 1ms to 1h (61m)");
	policy_refused("default: {strategy: sliding_window, limit: 0, window: 1s}\n",
		"p.yaml:1: default.limit: must be at least 1 (0)");
	policy_refused("default: {strategy: sliding_window, limit: 2M, window: 1s}\n",
		"p.yaml:1: default.limit: over the maximum 1000000 (2M)");
	policy_refused("default: {strategy: sliding_window, limit: 1.5, window: 1s}\n",
		"p.yaml:1: default.limit: not a whole number (1.5)");
}

Test(strategy_file, writer_round_trips_every_strategy)
{
	struct xrl_config config, again;
	char *text;
	size_t i;

	policy_loaded("default: {strategy: sliding_window, action: monitor, "
	       "limit: 1k, window: 90s}\n"
	       "rules:\n"
	       "  - {cidr: 198.18.0.0/24, strategy: leaky_bucket, "
	       "interval: 1500us, burst: 3}\n"
	       "  - {cidr: 198.18.1.0/24, strategy: leaky_bucket, pps: 7}\n"
	       "  - {cidr: 198.18.2.0/24, strategy: token_bucket, pps: 7, "
	       "burst: 2}\n"
	       "  - {cidr: 198.18.3.0/24, strategy: sliding_window, "
	       "limit: 50, window: 1500ms}\n"
	       "  - {cidr: 198.18.4.0/24, action: allow, "
	       "strategy: sliding_window}\n",
	       &config);
	text = policy_write(&config.policy);
	cr_assert_not_null(strstr(text, "interval: 1500us"), "%s", text);
	cr_assert_not_null(strstr(text, "window: 1500ms"), "%s", text);
	cr_assert_not_null(strstr(text, "window: 90s"), "%s", text);
	cr_assert_null(strstr(text, "token_bucket"), "the default is left "
		       "out: %s", text);
	policy_loaded(text, &again);
	cr_assert_eq(again.policy.n_rules, config.policy.n_rules);
	for (i = 0; i < config.policy.n_rules; i++) {
		const struct xrl_strategy_spec *a = &config.policy.rules[i].strategy;
		const struct xrl_strategy_spec *b = &again.policy.rules[i].strategy;

		cr_assert_eq(a->kind, b->kind, "rule %zu", i);
		cr_assert_eq(a->interval_ns, b->interval_ns, "rule %zu", i);
		cr_assert_eq(a->limit, b->limit, "rule %zu", i);
		cr_assert_eq(a->window_ns, b->window_ns, "rule %zu", i);
		cr_assert_eq(config.policy.rules[i].burst,
			     again.policy.rules[i].burst, "rule %zu", i);
	}
	cr_assert_eq(again.policy.rules[4].strategy.kind,
		     XRL_STRATEGY_SLIDING_WINDOW);
	free(text);
	xrl_config_free(&again);
	xrl_config_free(&config);
}

Test(strategy_file, durations_format_to_the_shortest_exact_text)
{
	static const struct { uint64_t ns; const char *text; } cases[] = {
		{ 1, "1ns" }, { 1500, "1500ns" }, { 2000, "2us" },
		{ 1000000, "1ms" }, { 1500000000ULL, "1500ms" },
		{ 90000000000ULL, "90s" }, { 3600000000000ULL, "1h" },
		{ 120000000000ULL, "2m" },
	};
	char buf[32];
	uint64_t ns;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		xrl_duration_ns_format(cases[i].ns, buf, sizeof(buf));
		cr_assert_str_eq(buf, cases[i].text);
		cr_assert_eq(xrl_duration_ns_parse(buf, UINT64_MAX, &ns), 0);
		cr_assert_eq(ns, cases[i].ns);
	}
	cr_assert_eq(xrl_duration_ns_parse("5", UINT64_MAX, &ns), -EINVAL);
	cr_assert_eq(xrl_duration_ns_parse("5 s", UINT64_MAX, &ns), -EINVAL);
	cr_assert_eq(xrl_duration_ns_parse("s", UINT64_MAX, &ns), -EINVAL);
	cr_assert_eq(xrl_duration_ns_parse("18446744073710s", UINT64_MAX, &ns), -ERANGE);
}

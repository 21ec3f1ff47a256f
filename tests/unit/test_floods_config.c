// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The spoofed-flood settings: new_sources: and unknown_sources: in the
 * policy file (accepted values, one-line errors, round trip) and what
 * they compile to for the data path (the per-CPU share of the budget and
 * its default derived from the table size). No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "limit.h"
#include "policy_read.h"
#include "policy_text.h"
#include "policy_write.h"

TestSuite(floods_config);

Test(floods_config, defaults_are_derived_budget_and_prefix_fallback)
{
	struct xrl_config config;

	policy_loaded("malformed: pass\n", &config);
	cr_assert_eq(config.policy.new_pps, 0);
	cr_assert_eq(config.policy.new_burst, 0);
	cr_assert_not(config.policy.new_sources_off);
	cr_assert_eq(config.policy.unknown, XRL_UNKNOWN_PREFIX);
	xrl_config_free(&config);
}

Test(floods_config, new_sources_map_and_off)
{
	struct xrl_config config;

	policy_loaded("new_sources: {pps: 2k, burst: 5000}\n", &config);
	cr_assert_eq(config.policy.new_pps, 2000);
	cr_assert_eq(config.policy.new_burst, 5000);
	cr_assert_not(config.policy.new_sources_off);
	xrl_config_free(&config);

	policy_loaded("new_sources:\n  burst: 10\n  pps: 1\n", &config);
	cr_assert_eq(config.policy.new_pps, 1);
	cr_assert_eq(config.policy.new_burst, 10);
	xrl_config_free(&config);

	policy_loaded("new_sources: off\n", &config);
	cr_assert(config.policy.new_sources_off);
	xrl_config_free(&config);
}

Test(floods_config, unknown_sources_each_mode)
{
	static const struct {
		const char *text;
		enum xrl_unknown_verdict verdict;
	} modes[] = {
		{ "unknown_sources: pass\n", XRL_UNKNOWN_PASS },
		{ "unknown_sources: drop\n", XRL_UNKNOWN_DROP },
		{ "unknown_sources: prefix\n", XRL_UNKNOWN_PREFIX },
	};
	struct xrl_config config;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		policy_loaded(modes[i].text, &config);
		cr_assert_eq(config.policy.unknown, modes[i].verdict, "%s",
			     modes[i].text);
		xrl_config_free(&config);
	}
}

Test(floods_config, bad_values_are_refused_with_field_and_line)
{
	policy_refused("malformed: pass\nnew_sources: {pps: 10}\n",
		"p.yaml:2: new_sources.burst: missing");
	policy_refused("new_sources:\n  burst: 10\n",
		"p.yaml:2: new_sources.pps: missing");
	policy_refused("new_sources: {pps: 0, burst: 10}\n",
		"p.yaml:1: new_sources.pps: must be at least 1 (0)");
	policy_refused("new_sources: {pps: 10, burst: 5G}\n",
		"p.yaml:1: new_sources.burst: over the maximum 4294967296 (5G)");
	policy_refused("new_sources: {pps: ten, burst: 10}\n",
		"p.yaml:1: new_sources.pps: not a number with an optional k, "
		"M or G (ten)");
	policy_refused("new_sources: {pps: 10, burst: 10, rate: 1}\n",
		"p.yaml:1: new_sources.rate: unknown key, expected one of: "
		"pps, burst");
	policy_refused("new_sources: on\n",
		"p.yaml:1: new_sources: must be off or a map of pps and burst "
		"(on)");
	policy_refused("new_sources: [1, 2]\n",
		"p.yaml:1: new_sources: must be a map, not a list");
	policy_refused("unknown_sources: maybe\n",
		"p.yaml:1: unknown_sources: must be pass, drop or prefix "
		"(maybe)");
	policy_refused("unknown_sources: {pass: 1}\n",
		"p.yaml:1: unknown_sources: must be a single value, not a map");
}

static void round_trip(const char *text)
{
	struct xrl_config config, again;
	char *written = NULL;
	size_t size = 0;
	FILE *out;

	policy_loaded(text, &config);
	out = open_memstream(&written, &size);
	cr_assert_not_null(out);
	cr_assert_eq(xrl_policy_write_yaml(out, &config.policy), 0);
	fclose(out);
	policy_loaded(written, &again);
	cr_assert_eq(again.policy.new_pps, config.policy.new_pps, "%s", written);
	cr_assert_eq(again.policy.new_burst, config.policy.new_burst);
	cr_assert_eq(again.policy.new_sources_off,
		     config.policy.new_sources_off);
	cr_assert_eq(again.policy.unknown, config.policy.unknown);
	xrl_config_free(&again);
	xrl_config_free(&config);
	free(written);
}

Test(floods_config, written_back_and_loaded_again)
{
	round_trip("new_sources: {pps: 2500, burst: 10k}\n"
		   "unknown_sources: drop\n");
	round_trip("new_sources: off\nunknown_sources: pass\n");
	round_trip("malformed: drop\n");
}

Test(floods_config, default_budget_is_a_turnover_in_five_minutes)
{
	struct xrl_policy policy;
	struct xrl_settings s;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	xrl_policy_settings(&policy, 65536, 2, &s);
	cr_assert_eq(s.new_sources_pps, 65536 / 300);
	cr_assert_eq(s.new_sources_burst, 65536 / 16);
	cr_assert_eq(s.new_sources_set, 0);
	cr_assert_eq(s.unknown_verdict, XRL_UNKNOWN_PREFIX);
	/* Each of 2 CPUs holds half of the rate and of the burst. */
	cr_assert_eq(s.new_sources.tolerance / s.new_sources.interval, 2048);
	cr_assert(fabs(xrl_limit_rate(&s.new_sources) - 218 / 2.0) < 0.05,
		  "share %f", xrl_limit_rate(&s.new_sources));

	xrl_policy_settings(&policy, 1048576, 1, &s);
	cr_assert_eq(s.new_sources_pps, 3495);
	cr_assert_eq(s.new_sources_burst, 65536);
	cr_assert_eq(s.new_sources.tolerance / s.new_sources.interval, 65536);
	xrl_policy_free(&policy);
}

Test(floods_config, configured_budget_is_split_over_cpus_or_off)
{
	struct xrl_policy policy;
	struct xrl_settings s;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	policy.new_pps = 1000;
	policy.new_burst = 10;
	policy.unknown = XRL_UNKNOWN_DROP;
	xrl_policy_settings(&policy, 65536, 4, &s);
	cr_assert_eq(s.new_sources_set, 1);
	cr_assert_eq(s.new_sources_pps, 1000);
	cr_assert_eq(s.new_sources_burst, 10);
	cr_assert_eq(s.unknown_verdict, XRL_UNKNOWN_DROP);
	cr_assert_eq(s.new_sources.tolerance / s.new_sources.interval, 2);
	cr_assert(fabs(xrl_limit_rate(&s.new_sources) - 250) < 0.1);
	/* A burst below the CPU count still gives each CPU one insert. */
	policy.new_burst = 3;
	xrl_policy_settings(&policy, 65536, 4, &s);
	cr_assert_eq(s.new_sources.tolerance / s.new_sources.interval, 1);

	policy.new_sources_off = true;
	xrl_policy_settings(&policy, 65536, 4, &s);
	cr_assert_eq(s.new_sources.interval, 0);
	cr_assert_eq(s.new_sources_set, 1);
	xrl_policy_free(&policy);
}

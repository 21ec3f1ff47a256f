// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bans in the policy file: ban:, ban_after:, ban_max: (accepted values,
 * one-line errors for every combination that cannot work, round trip)
 * and what they compile to for the data path. No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ban.h"
#include "policy_read.h"
#include "policy_text.h"
#include "policy_write.h"
#include "rule.h"
#include "units.h"

#define S	1000000000ULL

#define RULE "rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 5\n"

TestSuite(bans_config);

Test(bans_config, ban_keys_compile_into_the_rule)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded(RULE "    ban: 30s\n    ban_after: 2s\n    ban_max: 1h\n",
	       &config);
	cr_assert_eq(config.policy.rules[1].ban.ns, 30 * S);
	cr_assert_eq(config.policy.rules[1].ban.after_ns, 2 * S);
	cr_assert_eq(config.policy.rules[1].ban.max_ns, 3600 * S);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.ban.duration_ns, 30 * S);
	cr_assert_eq(rule.ban.after_ns, 2 * S);
	cr_assert_eq(rule.ban.max_ns, 3600 * S);
	xrl_config_free(&config);
}

Test(bans_config, ban_max_defaults_to_eight_bans_and_no_ban_compiles_zero)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded(RULE "    ban: 500ms\n", &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.ban.duration_ns, S / 2);
	cr_assert_eq(rule.ban.after_ns, 0);
	cr_assert_eq(rule.ban.max_ns, 4 * S);
	xrl_config_free(&config);

	policy_loaded(RULE, &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.ban.duration_ns, 0);
	cr_assert_eq(rule.ban.max_ns, 0);
	xrl_config_free(&config);
}

Test(bans_config, default_rule_may_ban)
{
	struct xrl_config config;

	policy_loaded("default:\n  pps: 10\n  burst: 5\n  ban: 7d\n", &config);
	cr_assert_eq(config.policy.rules[0].ban.ns, 7 * 86400 * S);
	xrl_config_free(&config);
}

Test(bans_config, bad_durations_refused_with_their_line)
{
	policy_refused(RULE "    ban: 30\n",
		"p.yaml:5: rules[0].ban: not a duration such as 30s, 500ms, "
		"10m, 1h or 7d (30)");
	policy_refused(RULE "    ban: -1s\n",
		"p.yaml:5: rules[0].ban: not a duration such as 30s, 500ms, "
		"10m, 1h or 7d (-1s)");
	policy_refused(RULE "    ban: 1.5s\n",
		"p.yaml:5: rules[0].ban: not a duration such as 30s, 500ms, "
		"10m, 1h or 7d (1.5s)");
	policy_refused(RULE "    ban: 31d\n",
		"p.yaml:5: rules[0].ban: over the maximum 30d (31d)");
	policy_refused(RULE "    ban: 99999999999999999999999s\n",
		"p.yaml:5: rules[0].ban: over the maximum 30d "
		"(99999999999999999999999s)");
	policy_refused(RULE "    ban: 0s\n",
		"p.yaml:5: rules[0].ban: a ban lasts at least 1ms (leave "
		"ban: out for none) (0s)");
	policy_refused(RULE "    ban: [1s]\n",
		"p.yaml:5: rules[0].ban: must be a single value, not a list");
	policy_refused(RULE "    ban: 1s\n    ban_max: 0ms\n",
		"p.yaml:6: rules[0].ban_max: at least 1ms (0ms)");
	policy_refused(RULE "    ban: 1s\n    ban_after: 2x\n",
		"p.yaml:6: rules[0].ban_after: not a duration such as 30s, "
		"500ms, 10m, 1h or 7d (2x)");
}

Test(bans_config, combinations_that_cannot_ban_refused)
{
	policy_refused(RULE "    ban: 1m\n    ban_max: 30s\n",
		"p.yaml:6: rules[0].ban_max: shorter than ban: (30s)");
	policy_refused(RULE "    ban_after: 1s\n",
		"p.yaml:5: rules[0].ban_after: needs ban: (how long a ban "
		"lasts) (1s)");
	policy_refused(RULE "    ban_max: 1h\n",
		"p.yaml:5: rules[0].ban_max: needs ban: (how long a ban "
		"lasts) (1h)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: allow\n"
		"    ban: 1m\n",
		"p.yaml:4: rules[0].ban: only a limit rule bans (this one is "
		"allow) (1m)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: deny\n"
		"    ban: 1m\n",
		"p.yaml:4: rules[0].ban: only a limit rule bans (this one is "
		"deny) (1m)");
	policy_refused(RULE "    action: monitor\n    ban: 1m\n",
		"p.yaml:6: rules[0].ban: only a limit rule bans (this one is "
		"monitor) (1m)");
	policy_refused(RULE "    scope: aggregate\n    ban: 1m\n",
		"p.yaml:6: rules[0].ban: only a rule of scope source bans (an "
		"aggregate has no source to ban) (1m)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    strategy: sliding_window\n"
		"    limit: 50\n    window: 1s\n    ban: 1m\n",
		"p.yaml:6: rules[0].ban: not with strategy: sliding_window (1m)");
}

static void round_trip(const char *text)
{
	struct xrl_config config, again;
	char *written = NULL;
	size_t size = 0, i;
	FILE *out;

	policy_loaded(text, &config);
	out = open_memstream(&written, &size);
	cr_assert_not_null(out);
	cr_assert_eq(xrl_policy_write_yaml(out, &config.policy), 0);
	fclose(out);
	policy_loaded(written, &again);
	cr_assert_eq(again.policy.n_rules, config.policy.n_rules);
	for (i = 0; i < config.policy.n_rules; i++) {
		cr_assert_eq(again.policy.rules[i].ban.ns,
			     config.policy.rules[i].ban.ns, "%s", written);
		cr_assert_eq(again.policy.rules[i].ban.after_ns,
			     config.policy.rules[i].ban.after_ns, "%s", written);
		cr_assert_eq(again.policy.rules[i].ban.max_ns,
			     config.policy.rules[i].ban.max_ns, "%s", written);
	}
	xrl_config_free(&again);
	xrl_config_free(&config);
	free(written);
}

Test(bans_config, written_back_and_loaded_again)
{
	round_trip(RULE "    ban: 30s\n    ban_after: 1500ms\n    ban_max: 2h\n");
	round_trip(RULE "    ban: 90s\n");
	round_trip("default:\n  pps: 10\n  burst: 5\n  ban: 1d\n" RULE);
	round_trip(RULE);
}

Test(bans_config, durations_format_in_the_largest_exact_unit)
{
	char text[32];
	uint64_t ns;

	xrl_duration_ns_format(90 * S, text, sizeof(text));
	cr_assert_str_eq(text, "90s");
	xrl_duration_ns_format(120 * S, text, sizeof(text));
	cr_assert_str_eq(text, "2m");
	xrl_duration_ns_format(1500000000ULL, text, sizeof(text));
	cr_assert_str_eq(text, "1500ms");
	xrl_duration_ns_format(86400 * S, text, sizeof(text));
	cr_assert_str_eq(text, "1d");
	cr_assert_eq(xrl_duration_ns_parse("1500ms", UINT64_MAX, &ns), 0);
	cr_assert_eq(ns, 1500000000ULL);
	cr_assert_eq(xrl_duration_ns_parse("2h", 3600 * S, &ns), -ERANGE);
	cr_assert_eq(xrl_duration_ns_parse("s", UINT64_MAX, &ns), -EINVAL);
	cr_assert_eq(xrl_duration_ns_parse("5 s", UINT64_MAX, &ns), -EINVAL);
}

/* The example of docs/POLICY.md, "Bans". */
/* The rule of docs/POLICY.md's examples, before its ban keys. */
#define LOGIN "rules:\n  - name: login\n    cidr: 198.18.0.0/15\n" \
	      "    pps: 20\n    burst: 40\n"

Test(bans_config, the_documented_example_loads)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded(LOGIN
	       "    ban: 1m          # banned for a minute...\n"
	       "    ban_after: 5s    # ...once over 20 pps for 5 s\n"
	       "    ban_max: 1h      # 1m, 2m, 4m, ... up to an hour\n",
	       &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.ban.duration_ns, 60 * S);
	cr_assert_eq(rule.ban.after_ns, 5 * S);
	cr_assert_eq(rule.ban.max_ns, 3600 * S);
	xrl_config_free(&config);
}

/* A rule of 198.18.0.0/16 banning for 10m, then the escalate_ keys. */
#define ESC_RULE "rules:\n  - cidr: 198.18.0.0/16\n    pps: 10\n" \
		 "    burst: 5\n    ban: 10m\n"
#define ESC_KEYS "    escalate_prefix: 24\n    escalate_after: 5\n" \
		 "    escalate_within: 10m\n    escalate_ban: 1h\n"

Test(bans_config, escalate_keys_compile_into_the_rule)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded(ESC_RULE ESC_KEYS, &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.escalate.prefix, 24);
	cr_assert_eq(rule.escalate.after, 5);
	cr_assert_eq(rule.escalate.within_ns, 600 * S);
	cr_assert_eq(rule.escalate.duration_ns, 3600 * S);
	xrl_config_free(&config);
	/* Without them, nothing: the data path's one branch says no. */
	policy_loaded(ESC_RULE, &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.escalate.after, 0);
	xrl_config_free(&config);
	round_trip(ESC_RULE ESC_KEYS);
}

/* Each as docs/POLICY.md "Escalation" shows it: one line. */
Test(bans_config, escalations_that_cannot_work_refused_in_one_line)
{
	policy_refused(ESC_RULE "    escalate_prefix: 8\n    escalate_after: 5\n"
		"    escalate_within: 10m\n    escalate_ban: 1h\n",
		"p.yaml:6: rules[0].escalate_prefix: /8 is wider than the "
		"rule's /16 (it would ban sources of other rules) (8)");
	policy_refused(ESC_RULE "    escalate_prefix: 32\n    escalate_after: 5\n"
		"    escalate_within: 10m\n    escalate_ban: 1h\n",
		"p.yaml:6: rules[0].escalate_prefix: /32 is not shorter than "
		"an IPv4 address (/32) (32)");
	policy_refused("keys: {ipv4_prefix: 24}\n" ESC_RULE ESC_KEYS,
		"p.yaml:7: rules[0].escalate_prefix: /24 is not shorter than "
		"the IPv4 source key /24 (keys.ipv4_prefix) (24)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/16\n    pps: 10\n"
		"    burst: 5\n" ESC_KEYS,
		"p.yaml:5: rules[0].escalate_prefix: needs ban: (escalation "
		"counts the rule's bans) (24)");
	policy_refused(ESC_RULE "    escalate_prefix: 24\n",
		"p.yaml:2: rules[0].escalate_after: escalation needs "
		"escalate_prefix:, escalate_after:, escalate_within: and "
		"escalate_ban:");
	policy_refused(ESC_RULE "    escalate_prefix: 24\n    escalate_after: 1\n"
		"    escalate_within: 10m\n    escalate_ban: 1h\n",
		"p.yaml:7: rules[0].escalate_after: must be 2 to 16 (1)");
	policy_refused(ESC_RULE "    escalate_prefix: 24\n    escalate_after: 17\n"
		"    escalate_within: 10m\n    escalate_ban: 1h\n",
		"p.yaml:7: rules[0].escalate_after: must be 2 to 16 (17)");
	/* The worst a file may hold: out of range, not a number. */
	policy_refused(ESC_RULE "    escalate_prefix: 99999999999999999999\n",
		"p.yaml:6: rules[0].escalate_prefix: must be 1 to 127 "
		"(99999999999999999999)");
	policy_refused(ESC_RULE "    escalate_prefix: -24\n",
		"p.yaml:6: rules[0].escalate_prefix: must be 1 to 127 (-24)");
	policy_refused(ESC_RULE "    escalate_within: 0s\n",
		"p.yaml:6: rules[0].escalate_within: at least 1ms (0s)");
	policy_refused("default:\n  pps: 10\n  burst: 5\n  ban: 1m\n"
		"  escalate_prefix: 24\n",
		"p.yaml:5: default.escalate_prefix: unknown key, expected one "
		"of: action, pps, burst, bps, burst_bytes, scope, global, "
		"strategy, interval, limit, window, ban, ban_after, ban_max, "
		"levels");
}

/* An IPv6 rule escalates to its /64 when its sources are keyed finer. */
Test(bans_config, an_ipv6_rule_escalates_within_its_family)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded("keys: {ipv6_prefix: 128}\nrules:\n  - cidr: fd00::/48\n"
		      "    pps: 10\n    burst: 5\n    ban: 1m\n"
		      "    escalate_prefix: 64\n    escalate_after: 5\n"
		      "    escalate_within: 10m\n    escalate_ban: 1h\n",
		      &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.escalate.prefix, 64);
	xrl_config_free(&config);
	policy_refused("rules:\n  - cidr: fd00::/48\n    pps: 10\n"
		"    burst: 5\n    ban: 1m\n    escalate_prefix: 64\n"
		"    escalate_after: 5\n    escalate_within: 10m\n"
		"    escalate_ban: 1h\n",
		"p.yaml:6: rules[0].escalate_prefix: /64 is not shorter than "
		"the IPv6 source key /64 (keys.ipv6_prefix) (64)");
}

Test(bans_config, the_documented_escalation_example_loads)
{
	struct xrl_config config;
	struct xrl_rule rule;

	policy_loaded(LOGIN
	       "    ban: 10m\n"
	       "    escalate_prefix: 24   # each /24 of the rule's sources...\n"
	       "    escalate_after: 5     # ...once 5 different sources of "
	       "it were banned\n"
	       "    escalate_within: 10m  # ...within 10 minutes\n"
	       "    escalate_ban: 1h      # ...is banned whole for an hour\n",
	       &config);
	cr_assert_eq(xrl_rule_compile(&config.policy.rules[1], &rule), 0);
	cr_assert_eq(rule.escalate.prefix, 24);
	cr_assert_eq(rule.escalate.after, 5);
	cr_assert_eq(rule.escalate.within_ns, 600 * S);
	cr_assert_eq(rule.escalate.duration_ns, 3600 * S);
	/* Doubling is capped by the rule's ban_max: 8 bans of 10m. */
	cr_assert_eq(rule.ban.max_ns, 4800 * S);
	xrl_config_free(&config);
}

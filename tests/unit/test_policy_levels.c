// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Levels of a rule in the policy file and as text (docs/POLICY.md
 * "Levels"): what loads, each refusal with its exact one-line error, the
 * write -> load round trip, and the level text of the control socket and
 * the CLI. No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "levels.h"
#include "policy.h"
#include "policy_read.h"
#include "policy_text.h"

static void level_is(const struct xrl_level_spec *level,
		     enum xrl_family family, unsigned prefix, uint64_t pps,
		     uint64_t burst, uint64_t bps, uint64_t burst_bytes, int line)
{
	cr_assert_eq(level->family, family);
	cr_assert_eq(level->prefix, prefix);
	cr_assert_eq(level->pps, pps);
	cr_assert_eq(level->burst, burst);
	cr_assert_eq(level->bps, bps);
	cr_assert_eq(level->burst_bytes, burst_bytes);
	cr_assert_eq(level->line, line);
}

/* docs/POLICY.md "Levels", its example as written there. */
static const char example[] =
	"keys: {ipv4_prefix: 32, ipv6_prefix: 64}\n"		/* 1 */
	"rules:\n"
	"  - name: v4\n"
	"    cidr: 198.18.0.0/15\n"
	"    pps: 100              # each address (the source key, /32)\n"
	"    burst: 100\n"
	"    levels:\n"
	"      - {prefix: 24, pps: 1k, burst: 1k}      # each /24 together\n"
	"  - name: v6\n"
	"    cidr: fd00::/8\n"					/* 10 */
	"    pps: 500              # each /64 (the source key)\n"
	"    burst: 500\n"
	"    levels:\n"
	"      - {prefix: 56, pps: 2k, burst: 2k}      # each /56 together\n"
	"      - {prefix: 48, pps: 5k, burst: 5k}      # each /48 together\n";

TestSuite(policy_levels);

Test(policy_levels, levels_load_into_the_rule_with_the_rules_family)
{
	struct xrl_config config;
	const struct xrl_rule_spec *v4, *v6;

	cr_assert_eq(policy_load(example, &config), 0, "%s", policy_err);
	cr_assert_eq(config.policy.n_rules, 3);
	cr_assert_eq(config.policy.rules[0].n_levels, 0);
	v4 = &config.policy.rules[1];
	v6 = &config.policy.rules[2];
	cr_assert_eq(v4->n_levels, 1);
	level_is(&v4->levels[0], XRL_FAMILY_IPV4, 24, 1000, 1000, 0, 0, 8);
	cr_assert_eq(v6->n_levels, 2);
	level_is(&v6->levels[0], XRL_FAMILY_IPV6, 56, 2000, 2000, 0, 0, 14);
	level_is(&v6->levels[1], XRL_FAMILY_IPV6, 48, 5000, 5000, 0, 0, 15);
	/* The rule's own limit stays its own. */
	cr_assert_eq(v6->pps, 500);
	xrl_config_free(&config);
}

Test(policy_levels, a_level_in_block_style_is_at_the_line_of_its_prefix)
{
	struct xrl_config config;

	cr_assert_eq(policy_load("rules:\n  - cidr: fd00::/8\n    pps: 5\n"
			  "    burst: 5\n    levels:\n"
			  "      - pps: 2k\n"
			  "        burst: 2k\n"
			  "        prefix: 56\n"
			  "        bps: 100M\n"
			  "        burst_bytes: 1M\n", &config), 0, "%s", policy_err);
	level_is(&config.policy.rules[1].levels[0], XRL_FAMILY_IPV6, 56, 2000,
		 2000, 100000000, 1000000, 8);
	xrl_config_free(&config);
}

Test(policy_levels, the_default_rule_says_the_family_of_each_level)
{
	struct xrl_config config;
	const struct xrl_rule_spec *dflt;

	cr_assert_eq(policy_load("default:\n"
			  "  action: monitor\n"
			  "  pps: 10\n"
			  "  burst: 10\n"
			  "  levels:\n"
			  "    - {ipv4_prefix: 24, pps: 100, burst: 100}\n"
			  "    - {ipv6_prefix: 48, bps: 1M, burst_bytes: 15k}\n"
			  "    - {ipv4_prefix: 16, pps: 1k, burst: 2k}\n",
			  &config), 0, "%s", policy_err);
	dflt = &config.policy.rules[0];
	cr_assert_eq(dflt->action, XRL_ACTION_MONITOR);
	cr_assert_eq(dflt->n_levels, 3);
	level_is(&dflt->levels[0], XRL_FAMILY_IPV4, 24, 100, 100, 0, 0, 6);
	level_is(&dflt->levels[1], XRL_FAMILY_IPV6, 48, 0, 0, 1000000, 15000,
		 7);
	level_is(&dflt->levels[2], XRL_FAMILY_IPV4, 16, 1000, 2000, 0, 0, 8);
	xrl_config_free(&config);

	policy_refused("default:\n  pps: 10\n  burst: 10\n  levels:\n"
		"    - {prefix: 24, pps: 100, burst: 100}\n",
		"p.yaml:5: default.levels[0].prefix: the default rule covers "
		"IPv4 and IPv6 sources: write ipv4_prefix: or ipv6_prefix: "
		"(24)");
	/* So does an L4 rule of every source. */
	policy_refused("rules:\n  - cidr: 0.0.0.0/0\n    proto: udp\n    pps: 10\n"
		"    burst: 10\n    levels:\n"
		"    - {prefix: 24, pps: 100, burst: 100}\n",
		"p.yaml:7: rules[0].levels[0].prefix: a rule for every source "
		"covers IPv4 and IPv6 sources: write ipv4_prefix: or "
		"ipv6_prefix: (24)");
}

Test(policy_levels, a_leaky_bucket_or_monitor_rule_may_have_levels)
{
	struct xrl_config config;

	cr_assert_eq(policy_load("rules:\n"
			  "  - cidr: 198.18.0.0/16\n    strategy: leaky_bucket\n"
			  "    interval: 10ms\n"
			  "    levels: [{prefix: 24, pps: 1k, burst: 10}]\n"
			  "  - cidr: 198.19.0.0/16\n    action: monitor\n"
			  "    pps: 1\n    burst: 1\n"
			  "    levels: [{prefix: 16, pps: 1k, burst: 10}]\n",
			  &config), 0, "%s", policy_err);
	cr_assert_eq(config.policy.rules[1].n_levels, 1);
	cr_assert_eq(config.policy.rules[2].n_levels, 1);
	/* A level as long as the rule's prefix: one bucket for the rule. */
	cr_assert_eq(config.policy.rules[2].levels[0].prefix, 16);
	xrl_config_free(&config);
}

#define RULE(body) "rules:\n  - cidr: 198.18.0.0/16\n    pps: 10\n" \
		   "    burst: 10\n" body

Test(policy_levels, a_bad_list_of_levels_is_refused)
{
	policy_refused(RULE("    levels: 24\n"),
		"p.yaml:5: rules[0].levels: must be a list, not a single value "
		"(24)");
	policy_refused(RULE("    levels: []\n"),
		"p.yaml:5: rules[0].levels: an empty list (leave levels: out "
		"for none)");
	policy_refused(RULE("    levels:\n"
		     "      - {prefix: 17, pps: 1, burst: 1}\n"
		     "      - {prefix: 18, pps: 1, burst: 1}\n"
		     "      - {prefix: 19, pps: 1, burst: 1}\n"
		     "      - {prefix: 20, pps: 1, burst: 1}\n"
		     "      - {prefix: 21, pps: 1, burst: 1}\n"),
		"p.yaml:6: rules[0].levels: 5 levels, more than the maximum 4");
	policy_refused(RULE("    levels:\n      - 24\n"),
		"p.yaml:6: rules[0].levels[0]: must be a map, not a single "
		"value (24)");
	policy_refused(RULE("    levels:\n      - {prefix: 24, pss: 1}\n"),
		"p.yaml:6: rules[0].levels[0].pss: unknown key, expected one "
		"of: prefix, ipv4_prefix, ipv6_prefix, pps, burst, bps, "
		"burst_bytes");
	policy_refused(RULE("    levels:\n      - {prefix: 24, pps: 1, pps: 2}\n"),
		"p.yaml:6: rules[0].levels[0].pps: duplicate key, first at "
		"line 6");
}

Test(policy_levels, a_level_without_one_prefix_is_refused)
{
	policy_refused(RULE("    levels:\n      - {pps: 1, burst: 1}\n"),
		"p.yaml:6: rules[0].levels[0]: a level needs prefix, "
		"ipv4_prefix or ipv6_prefix");
	policy_refused(RULE("    levels:\n"
		     "      - prefix: 24\n"
		     "        ipv4_prefix: 24\n"
		     "        pps: 1\n"),
		"p.yaml:7: rules[0].levels[0].ipv4_prefix: a level has one of "
		"prefix, ipv4_prefix or ipv6_prefix, not two (24)");
}

Test(policy_levels, bad_values_of_a_level_are_refused_at_their_line)
{
	policy_refused(RULE("    levels:\n      - {prefix: 24, pps: fast}\n"),
		"p.yaml:6: rules[0].levels[0].pps: not a number with an "
		"optional k, M or G (fast)");
	policy_refused(RULE("    levels:\n      - {prefix: 24, pps: 1, burst: 0}\n"),
		"p.yaml:6: rules[0].levels[0].burst: must be at least 1 (0)");
	policy_refused(RULE("    levels:\n      - {prefix: 24, bps: 1.5, "
		     "burst_bytes: 1}\n"),
		"p.yaml:6: rules[0].levels[0].bps: not a whole number (1.5)");
	policy_refused(RULE("    levels:\n      - {prefix: 24, pps: 1, "
		     "burst: 2000000000000}\n"),
		"p.yaml:6: rules[0].levels[0].burst: over the maximum "
		"4294967296 (2000000000000)");
	policy_refused(RULE("    levels:\n      - {prefix: 200, pps: 1, burst: 1}\n"),
		"p.yaml:6: rules[0].levels[0].prefix: must be 1 to 128 (200)");
	policy_refused(RULE("    levels:\n      - {prefix: 33, pps: 1, burst: 1}\n"),
		"p.yaml:6: rules[0].levels[0].prefix: /33 is not 1..31 for "
		"IPv4 (33)");
	policy_refused(RULE("    levels:\n"
		     "      - prefix: 24\n"
		     "        pps: 1\n"),
		"p.yaml:6: rules[0].levels[0].burst: pps needs a burst of at "
		"least 1");
	policy_refused(RULE("    levels:\n"
		     "      - prefix: 24\n"
		     "        burst: 1\n"),
		"p.yaml:6: rules[0].levels[0].pps: a level needs pps or bps");
	policy_refused(RULE("    levels:\n"
		     "      - {prefix: 24, bps: 1k}\n"),
		"p.yaml:6: rules[0].levels[0].burst_bytes: bps needs a "
		"burst_bytes of at least 1");
}

Test(policy_levels, a_level_out_of_place_is_refused)
{
	policy_refused(RULE("    levels:\n      - {ipv6_prefix: 48, pps: 1, "
		     "burst: 1}\n"),
		"p.yaml:6: rules[0].levels[0].ipv6_prefix: an IPv6 level in a "
		"rule for IPv4 sources (48)");
	policy_refused("rules:\n  - cidr: fd00::/32\n    pps: 1\n    burst: 1\n"
		"    levels:\n      - {ipv4_prefix: 24, pps: 1, burst: 1}\n",
		"p.yaml:6: rules[0].levels[0].ipv4_prefix: an IPv4 level in a "
		"rule for IPv6 sources (24)");
	policy_refused(RULE("    levels:\n      - {prefix: 8, pps: 1, burst: 1}\n"),
		"p.yaml:6: rules[0].levels[0].prefix: /8 is shorter than the "
		"rule's /16 (one bucket for the whole rule is scope: "
		"aggregate) (8)");
	policy_refused(RULE("    levels:\n"
		     "      - {prefix: 24, pps: 1, burst: 1}\n"
		     "      - {prefix: 20, pps: 1, burst: 1}\n"
		     "      - {prefix: 24, pps: 2, burst: 2}\n"),
		"p.yaml:8: rules[0].levels[2].prefix: /24 is levels[0]'s "
		"already (24)");
	policy_refused("default:\n  pps: 1\n  burst: 1\n  levels:\n"
		"    - {ipv6_prefix: 128, pps: 1, burst: 1}\n",
		"p.yaml:5: default.levels[0].ipv6_prefix: /128 is not 1..127 "
		"for IPv6 (128)");
}

Test(policy_levels, a_level_not_shorter_than_the_source_key_is_refused)
{
	policy_refused("keys: {ipv4_prefix: 24}\n"
		RULE("    levels:\n      - {prefix: 24, pps: 1, burst: 1}\n"),
		"p.yaml:7: rules[0].levels[0].prefix: /24 is not shorter than "
		"the IPv4 source key /24 (keys.ipv4_prefix) (24)");
	/* keys: after the rules judges them all the same. */
	policy_refused("default:\n  pps: 1\n  burst: 1\n  levels:\n"
		"    - {ipv4_prefix: 16, pps: 1, burst: 1}\n"
		"    - {ipv6_prefix: 56, pps: 1, burst: 1}\n"
		"keys:\n  ipv6_prefix: 48\n",
		"p.yaml:6: default.levels[1].ipv6_prefix: /56 is not shorter "
		"than the IPv6 source key /48 (keys.ipv6_prefix) (56)");
	policy_refused("rules:\n"
		"  - {cidr: 198.18.0.0/16, action: deny}\n"
		"  - cidr: fd00::/16\n    pps: 1\n    burst: 1\n"
		"    levels:\n"
		"      - {prefix: 40, pps: 1, burst: 1}\n"
		"      - {prefix: 64, pps: 1, burst: 1}\n",
		"p.yaml:8: rules[1].levels[1].prefix: /64 is not shorter than "
		"the IPv6 source key /64 (keys.ipv6_prefix) (64)");
}

#define LEVEL "    levels: [{prefix: 24, pps: 1, burst: 1}]\n"

Test(policy_levels, levels_on_a_rule_without_per_source_buckets_are_refused)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/16\n    action: allow\n" LEVEL,
		"p.yaml:4: rules[0].levels: only for limit and monitor rules, "
		"not action: allow");
	policy_refused("rules:\n  - cidr: 198.18.0.0/16\n    action: deny\n" LEVEL,
		"p.yaml:4: rules[0].levels: only for limit and monitor rules, "
		"not action: deny");
	policy_refused(RULE("    scope: aggregate\n" LEVEL),
		"p.yaml:6: rules[0].levels: only with scope: source (one "
		"budget for the whole rule has no levels)");
	policy_refused(RULE("    scope: aggregate\n    global: true\n" LEVEL),
		"p.yaml:7: rules[0].levels: only with scope: source (one "
		"budget for the whole rule has no levels)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/16\n"
		"    strategy: sliding_window\n    limit: 5\n    window: 1s\n"
		LEVEL,
		"p.yaml:6: rules[0].levels: not with strategy: sliding_window");
}

static void assert_same_rules(const struct xrl_policy *a,
			      const struct xrl_policy *b, const char *text)
{
	size_t i;
	unsigned k;

	cr_assert_eq(a->n_rules, b->n_rules);
	for (i = 0; i < a->n_rules; i++) {
		struct xrl_rule_spec x = a->rules[i], y = b->rules[i];

		x.line = y.line = 0;
		for (k = 0; k < XRL_LEVELS_MAX; k++)
			x.levels[k].line = y.levels[k].line = 0;
		cr_assert(!memcmp(&x, &y, sizeof(x)), "rule %zu (%s) differs\n"
			  "%s", i, x.name, text);
	}
}

Test(policy_levels, levels_round_trip_through_the_writer)
{
	struct xrl_config config, again;
	char *text, *text2;

	cr_assert_eq(policy_load("keys: {ipv4_prefix: 30, ipv6_prefix: 64}\n"
			  "default:\n  pps: 1\n  burst: 1\n  levels:\n"
			  "    - {ipv6_prefix: 48, pps: 5k, burst: 5k}\n"
			  "    - {ipv4_prefix: 24, bps: 1M, burst_bytes: 1500}\n"
			  "rules:\n"
			  "  - cidr: 198.18.0.0/15\n    pps: 100\n"
			  "    burst: 100\n    strategy: leaky_bucket\n"
			  "    levels:\n"
			  "      - {prefix: 24, pps: 1k, burst: 1k}\n"
			  "      - {prefix: 16, pps: 10k, burst: 20k, "
			  "bps: 1G, burst_bytes: 1234567}\n"
			  "      - {prefix: 15, pps: 2.5M, burst: 3}\n"
			  "      - {prefix: 29, bps: 7, burst_bytes: 7}\n"
			  "  - cidr: fd00::/8\n    pps: 500\n    burst: 500\n"
			  "    action: monitor\n"
			  "    levels: [{prefix: 56, pps: 2k, burst: 2k}]\n",
			  &config), 0, "%s", policy_err);
	text = policy_write(&config.policy);
	cr_assert(strstr(text, "  levels:\n"
			       "  - {ipv6_prefix: 48, pps: 5k, burst: 5k}\n"
			       "  - {ipv4_prefix: 24, bps: 1M, "
			       "burst_bytes: 1500}\n"), "%s", text);
	cr_assert(strstr(text, "- {prefix: 15, pps: 2500k, burst: 3}\n"),
		  "%s", text);
	cr_assert_eq(xrl_config_load_string(text, strlen(text), "written",
					    &again, policy_err, sizeof(policy_err)), 0,
		     "%s\n%s", policy_err, text);
	assert_same_rules(&config.policy, &again.policy, text);
	cr_assert_eq(again.policy.rules[1].n_levels, 4);
	text2 = policy_write(&again.policy);
	cr_assert_str_eq(text, text2);
	free(text);
	free(text2);
	xrl_config_free(&again);
	xrl_config_free(&config);
}

/* ---- the level text of the control socket and the CLI -------------- */

static void text_is(const char *text, enum xrl_family family,
		    const char *formatted)
{
	struct xrl_level_spec level, again;
	char buf[128];

	cr_assert_eq(xrl_level_parse(text, 0, family, &level, policy_err,
				     sizeof(policy_err)), 0, "%s: %s", text, policy_err);
	xrl_level_format(&level, family, buf, sizeof(buf));
	cr_assert_str_eq(buf, formatted);
	cr_assert_eq(xrl_level_parse(buf, 0, family, &again, policy_err,
				     sizeof(policy_err)), 0, "%s: %s", buf, policy_err);
	cr_assert(!memcmp(&level, &again, sizeof(level)), "%s", buf);
}

Test(level_text, a_level_parses_and_formats_back)
{
	struct xrl_level_spec level;

	cr_assert_eq(xrl_level_parse("24:pps=1k,burst=2k,bps=10M,"
				     "burst_bytes=1500", 3, XRL_FAMILY_IPV4,
				     &level, policy_err, sizeof(policy_err)), 0, "%s", policy_err);
	cr_assert_eq(level.family, XRL_FAMILY_IPV4);
	cr_assert_eq(level.prefix, 24);
	cr_assert_eq(level.pps, 1000);
	cr_assert_eq(level.burst, 2000);
	cr_assert_eq(level.bps, 10000000);
	cr_assert_eq(level.burst_bytes, 1500);
	text_is("24:burst=2000,pps=1000", XRL_FAMILY_IPV4,
		"24:pps=1k,burst=2k");
	text_is("48:bps=2.5M,burst_bytes=9000", XRL_FAMILY_IPV6,
		"48:bps=2500k,burst_bytes=9k");
	text_is("ipv6/56:pps=2k,burst=2k", XRL_FAMILY_ANY,
		"ipv6/56:pps=2k,burst=2k");
	text_is("ipv4/16:pps=123,burst=4", XRL_FAMILY_ANY,
		"ipv4/16:pps=123,burst=4");
	/* A family said in a rule of that family is the same level. */
	text_is("ipv4/16:pps=123,burst=4", XRL_FAMILY_IPV4,
		"16:pps=123,burst=4");
}

static void text_refused(const char *text, enum xrl_family family,
			 const char *expected)
{
	struct xrl_level_spec level;

	cr_assert_eq(xrl_level_parse(text, 1, family, &level, policy_err,
				     sizeof(policy_err)), -EINVAL, "%s", text);
	cr_assert_str_eq(policy_err, expected);
}

Test(level_text, bad_level_text_is_refused_naming_the_field)
{
	text_refused("pps=1k", XRL_FAMILY_IPV4,
		     "levels[1]: \"pps=1k\" is not PREFIX:KEY=VALUE,... (like "
		     "24:pps=1k,burst=2k)");
	text_refused("x4:pps=1", XRL_FAMILY_IPV4,
		     "levels[1].prefix: \"x4\" is not a prefix length (like "
		     "24, ipv4/24 or ipv6/48)");
	text_refused(":pps=1", XRL_FAMILY_IPV4,
		     "levels[1].prefix: \"\" is not a prefix length (like 24, "
		     "ipv4/24 or ipv6/48)");
	text_refused("1234:pps=1", XRL_FAMILY_IPV6,
		     "levels[1].prefix: \"1234\" is not a prefix length (like "
		     "24, ipv4/24 or ipv6/48)");
	text_refused("24:pps=1", XRL_FAMILY_ANY,
		     "levels[1].prefix: a rule for every source covers IPv4 and "
		     "IPv6 sources: write ipv4/24 or ipv6/24");
	text_refused("24:pps", XRL_FAMILY_IPV4,
		     "levels[1]: \"pps\" is not KEY=VALUE (pps, burst, bps, "
		     "burst_bytes)");
	text_refused("24:pps=1,", XRL_FAMILY_IPV4,
		     "levels[1]: \"\" is not KEY=VALUE (pps, burst, bps, "
		     "burst_bytes)");
	text_refused("24:rate=1", XRL_FAMILY_IPV4,
		     "levels[1]: unknown key \"rate\" (pps, burst, bps, "
		     "burst_bytes)");
	text_refused("24:pps=1,pps=2", XRL_FAMILY_IPV4,
		     "levels[1].pps: given twice");
	text_refused("24:pps=-1", XRL_FAMILY_IPV4,
		     "levels[1].pps: \"-1\" is not a quantity (like 1500, 10k, "
		     "2.5M, 1G)");
	text_refused("24:burst=1.5", XRL_FAMILY_IPV4,
		     "levels[1].burst: \"1.5\" is not a quantity (like 1500, "
		     "10k, 2.5M, 1G)");
	text_refused("24:pps=0", XRL_FAMILY_IPV4,
		     "levels[1].pps: must be at least 1");
}

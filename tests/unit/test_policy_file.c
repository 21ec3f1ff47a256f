// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The YAML policy file: every refusal with its exact one-line error (file,
 * line, field, value), the example file's values, quantities, and the
 * write -> load round trip. No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cidr.h"
#include "limit.h"
#include "policy_read.h"
#include "policy_text.h"
#include "units.h"

#define EXAMPLE "examples/policy.yaml"

/* ---- keys ----------------------------------------------------------- */

TestSuite(policy_file_keys);

Test(policy_file_keys, unknown_top_level_key)
{
	policy_refused("malformed: pass\nrule: []\n",
		"p.yaml:2: rule: unknown key, expected one of: keys, malformed, "
		"vlan_overflow, ipv4_mapped, unjudged_fragments, "
		"header_overflow, new_sources, unknown_sources, events, blocklists, "
		"interfaces, default, rules, redis, sync_interval, metrics");
}

Test(policy_file_keys, unknown_key_in_keys)
{
	policy_refused("keys:\n  ipv4_prefix: 24\n  ipv4_prefx: 24\n",
		"p.yaml:3: keys.ipv4_prefx: unknown key, expected one of: "
		"ipv4_prefix, ipv6_prefix");
}

Test(policy_file_keys, unknown_key_in_rule)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    ppss: 10\n",
		"p.yaml:3: rules[0].ppss: unknown key, expected one of: name, "
		"cidr, action, pps, burst, bps, burst_bytes, scope, global, "
		"strategy, interval, limit, window, ban, ban_after, ban_max, "
		"escalate_prefix, escalate_after, escalate_within, "
		"escalate_ban, levels, proto, sport, dport, tcp_flags");
}

Test(policy_file_keys, unknown_key_in_default)
{
	policy_refused("default:\n  action: allow\n  cidr: 198.18.0.0/24\n",
		"p.yaml:3: default.cidr: unknown key, expected one of: action, "
		"pps, burst, bps, burst_bytes, scope, global, strategy, "
		"interval, limit, window, ban, ban_after, ban_max, levels");
}

Test(policy_file_keys, unknown_key_with_control_bytes_stays_one_line)
{
	policy_refused("\"a\\nb\": 1\n",
		"p.yaml:1: a\\x0ab: unknown key, expected one of: keys, "
		"malformed, vlan_overflow, ipv4_mapped, unjudged_fragments, "
		"header_overflow, new_sources, unknown_sources, events, blocklists, "
		"interfaces, default, rules, redis, sync_interval, metrics");
}

Test(policy_file_keys, duplicate_key_in_one_map)
{
	policy_refused("malformed: pass\nmalformed: drop\n",
		"p.yaml:2: malformed: duplicate key, first at line 1");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: allow\n"
		"    action: deny\n",
		"p.yaml:4: rules[0].action: duplicate key, first at line 3");
}

Test(policy_file_keys, key_that_is_not_a_word)
{
	policy_refused("? [a, b]\n: 1\n",
		"p.yaml:1: policy: a key must be a plain word, not a list");
}

Test(policy_file_keys, prefix_lengths_out_of_range)
{
	policy_refused("keys:\n  ipv4_prefix: 33\n",
		"p.yaml:2: keys.ipv4_prefix: must be 1 to 32 (33)");
	policy_refused("keys:\n  ipv4_prefix: 0\n",
		"p.yaml:2: keys.ipv4_prefix: must be 1 to 32 (0)");
	policy_refused("keys:\n  ipv6_prefix: 129\n",
		"p.yaml:2: keys.ipv6_prefix: must be 1 to 128 (129)");
	policy_refused("keys:\n  ipv6_prefix: -64\n",
		"p.yaml:2: keys.ipv6_prefix: must be 1 to 128 (-64)");
	policy_refused("keys:\n  ipv6_prefix: 64k\n",
		"p.yaml:2: keys.ipv6_prefix: must be 1 to 128 (64k)");
}

Test(policy_file_keys, malformed_verdict)
{
	policy_refused("malformed: maybe\n",
		"p.yaml:1: malformed: must be pass or drop (maybe)");
}

Test(policy_file_keys, vlan_overflow_and_ipv4_mapped_verdicts)
{
	struct xrl_config config;

	policy_refused("vlan_overflow: allow\n",
		"p.yaml:1: vlan_overflow: must be drop or pass (allow)");
	policy_refused("malformed: pass\nipv4_mapped: ipv4\n",
		"p.yaml:2: ipv4_mapped: must be drop or ipv6 (ipv4)");
	policy_loaded("vlan_overflow: pass\nipv4_mapped: ipv6\n", &config);
	cr_assert_eq(config.policy.vlan_overflow, XRL_VLAN_OVERFLOW_PASS);
	cr_assert_eq(config.policy.ipv4_mapped, XRL_IPV4_MAPPED_IPV6);
	xrl_config_free(&config);
	policy_loaded("vlan_overflow: drop\nipv4_mapped: drop\n", &config);
	cr_assert_eq(config.policy.vlan_overflow, XRL_VLAN_OVERFLOW_DROP);
	cr_assert_eq(config.policy.ipv4_mapped, XRL_IPV4_MAPPED_DROP);
	xrl_config_free(&config);
}

Test(policy_file_keys, unjudged_fragments_and_header_overflow_verdicts)
{
	struct xrl_config config;

	policy_refused("unjudged_fragments: pass\n",
		"p.yaml:1: unjudged_fragments: must be drop or plain (pass)");
	policy_refused("malformed: pass\nheader_overflow: allow\n",
		"p.yaml:2: header_overflow: must be drop or plain (allow)");
	policy_loaded("malformed: pass\n", &config);
	cr_assert_eq(config.policy.unjudged_fragments,
		     XRL_UNJUDGED_FRAGMENTS_DROP, "the safe default");
	cr_assert_eq(config.policy.header_overflow, XRL_HEADER_OVERFLOW_DROP);
	xrl_config_free(&config);
	policy_loaded("unjudged_fragments: plain\nheader_overflow: plain\n",
		      &config);
	cr_assert_eq(config.policy.unjudged_fragments,
		     XRL_UNJUDGED_FRAGMENTS_PLAIN);
	cr_assert_eq(config.policy.header_overflow, XRL_HEADER_OVERFLOW_PLAIN);
	xrl_config_free(&config);
}

Test(policy_file_keys, interfaces)
{
	policy_refused("interfaces: eth0\n",
		"p.yaml:1: interfaces: must be a list, not a single value (eth0)");
	policy_refused("interfaces: [eth0, eth0]\n",
		"p.yaml:1: interfaces[1]: listed twice (eth0)");
	policy_refused("interfaces:\n  - eth0\n  - a/b\n",
		"p.yaml:3: interfaces[1]: not an interface name (a/b)");
	policy_refused("interfaces: [a-name-far-too-long]\n",
		"p.yaml:1: interfaces[0]: not an interface name "
		"(a-name-far-too-long)");
}

/* ---- YAML itself ---------------------------------------------------- */

TestSuite(policy_file_yaml);

Test(policy_file_yaml, empty_file)
{
	policy_refused("", "p.yaml:1: policy: the file is empty");
	policy_refused("# nothing but a comment\n\n",
		"p.yaml:1: policy: the file is empty");
}

Test(policy_file_yaml, syntax_error_at_libyamls_line)
{
	policy_refused("malformed: pass\nrules:\n  - cidr: [198.18.0.0/24\n",
		"p.yaml:4: yaml: did not find expected ',' or ']' (while "
		"parsing a flow sequence at line 3)");
	policy_refused("malformed: pass\n- rules\n",
		"p.yaml:2: yaml: did not find expected key (while parsing a "
		"block mapping at line 1)");
}

Test(policy_file_yaml, a_tab_that_indents_is_named)
{
	policy_refused("default:\n\taction: allow\n",
		"p.yaml:2: yaml: a tab at column 1; YAML indents with spaces "
		"only");
	policy_refused("default: {action: allow}\nrules:\n  - cidr: "
		"198.18.0.0/24\n  \t pps: 10\n",
		"p.yaml:4: yaml: a tab at column 3; YAML indents with spaces "
		"only");
}

Test(policy_file_yaml, control_bytes_at_their_line)
{
	policy_refused("malformed: pass\nrules: \x01\n",
		"p.yaml:2: yaml: control characters are not allowed");
}

Test(policy_file_yaml, second_document)
{
	policy_refused("malformed: pass\n---\nmalformed: drop\n",
		"p.yaml:2: policy: more than one YAML document");
}

Test(policy_file_yaml, wrong_types)
{
	policy_refused("- malformed: pass\n",
		"p.yaml:1: policy: must be a map, not a list");
	policy_refused("just words\n",
		"p.yaml:1: policy: must be a map, not a single value "
		"(just words)");
	policy_refused("rules:\n  cidr: 198.18.0.0/24\n",
		"p.yaml:2: rules: must be a list, not a map");
	policy_refused("default:\n  - action: allow\n",
		"p.yaml:2: default: must be a map, not a list");
	policy_refused("default:\n",
		"p.yaml:1: default: must be a map, not empty");
	policy_refused("keys: 32\n",
		"p.yaml:1: keys: must be a map, not a single value (32)");
	policy_refused("rules:\n  - 198.18.0.0/24\n",
		"p.yaml:2: rules[0]: must be a map, not a single value "
		"(198.18.0.0/24)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: [1, 2]\n",
		"p.yaml:3: rules[0].pps: must be a single value, not a list");
}

Test(policy_file_yaml, alias_loop_is_just_a_wrong_type)
{
	/* The alias is the list itself, which starts on line 1. */
	policy_refused("rules: &loop\n  - *loop\n",
		"p.yaml:1: rules[0]: must be a map, not a list");
}

Test(policy_file_yaml, nul_byte_in_a_value)
{
	policy_refused("rules:\n  - cidr: \"198.18.0.0/24\\0junk\"\n",
		"p.yaml:2: rules[0].cidr: contains a NUL byte "
		"(198.18.0.0/24\\x00junk)");
}

/* ---- rules ---------------------------------------------------------- */

TestSuite(policy_file_rules);

Test(policy_file_rules, cidr_missing)
{
	policy_refused("rules:\n  - name: web\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: missing (every rule but default: "
		"needs one)");
}

Test(policy_file_rules, cidr_not_an_address)
{
	policy_refused("rules:\n  - cidr: 198.18.0.300/24\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: not an IPv4 or IPv6 address or prefix "
		"(198.18.0.300/24)");
}

Test(policy_file_rules, cidr_prefix_length_out_of_range)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/33\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: prefix length out of range (0-32 for "
		"IPv4, 0-128 for IPv6) (198.18.0.0/33)");
	policy_refused("rules:\n  - cidr: fd00::/129\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: prefix length out of range (0-32 for "
		"IPv4, 0-128 for IPv6) (fd00::/129)");
}

Test(policy_file_rules, cidr_host_bits_set)
{
	policy_refused("rules:\n  - cidr: 198.18.0.1/24\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: host bits set after the prefix length "
		"(198.18.0.1/24)");
	policy_refused("rules:\n  - cidr: fd00::1/64\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: host bits set after the prefix length "
		"(fd00::1/64)");
	policy_refused("rules:\n  - cidr: 198.18.0.1/0\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: host bits set after the prefix length "
		"(198.18.0.1/0)");
}

/* An IPv4 prefix written as IPv6 would match no IPv4 source. */
Test(policy_file_rules, ipv4_mapped_or_compatible_cidr_names_the_ipv4_prefix)
{
	policy_refused("rules:\n  - cidr: ::ffff:198.18.5.0/120\n    action: allow\n",
		"p.yaml:2: rules[0].cidr: an IPv4 prefix written as IPv6, which "
		"matches no IPv4 source: write 198.18.5.0/24 "
		"(::ffff:198.18.5.0/120)");
	policy_refused("default: {action: deny}\nrules:\n"
		"  - {cidr: 198.18.0.0/15, action: allow}\n"
		"  - {cidr: '::198.18.5.1', action: deny}\n",
		"p.yaml:4: rules[1].cidr: an IPv4 prefix written as IPv6, which "
		"matches no IPv4 source: write 198.18.5.1/32 (::198.18.5.1)");
	policy_refused("rules:\n  - cidr: ::ffff:0:0/96\n    action: deny\n",
		"p.yaml:2: rules[0].cidr: an IPv4 prefix written as IPv6, which "
		"matches no IPv4 source: write 0.0.0.0/0 (::ffff:0:0/96)");
	policy_refused("rules:\n  - cidr: '::/96'\n    action: deny\n",
		"p.yaml:2: rules[0].cidr: an IPv4 prefix written as IPv6, which "
		"matches no IPv4 source: write 0.0.0.0/0 (::/96)");
}

/* :: and ::1 are IPv6 addresses; prefixes around the /96s are IPv6. */
Test(policy_file_rules, ipv6_prefixes_near_the_ipv4_ones_are_kept)
{
	static const char *const kept[] = {
		"'::/128'", "'::1'", "'::/127'", "'::/8'", "::fffe:0:0/95",
		"::fffe:0:0/96", "'::1:0:0/96'", "fd00::c612:500/120",
	};
	char text[128];
	struct xrl_config config;
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(text, sizeof(text),
			 "rules:\n  - cidr: %s\n    action: deny\n", kept[i]);
		policy_loaded(text, &config);
		cr_assert_eq(config.policy.n_rules, 2, "%s", kept[i]);
		xrl_config_free(&config);
	}
}

Test(policy_file_rules, duplicate_cidr_names_both_lines)
{
	policy_refused("rules:\n"
		"  - cidr: 198.18.0.0/24\n"
		"    action: allow\n"
		"  - name: other\n"
		"    action: deny\n"
		"    cidr: 198.18.0.0/24\n",
		"p.yaml:6: rules[1].cidr: duplicate of the rule at line 2 "
		"(198.18.0.0/24)");
	/* The same prefix spelt differently is the same prefix. */
	policy_refused("rules:\n"
		"  - {cidr: 198.18.0.1, action: allow}\n"
		"  - {cidr: 198.18.0.1/32, action: deny}\n",
		"p.yaml:3: rules[1].cidr: duplicate of the rule at line 2 "
		"(198.18.0.1/32)");
	policy_refused("rules:\n"
		"  - {cidr: 'fd00:0:0::/32', action: allow}\n"
		"  - {cidr: 'FD00::/32', action: deny}\n",
		"p.yaml:3: rules[1].cidr: duplicate of the rule at line 2 "
		"(FD00::/32)");
}

Test(policy_file_rules, every_source_belongs_to_default)
{
	policy_refused("rules:\n  - {cidr: 0.0.0.0/0, action: deny}\n",
		"p.yaml:2: rules[0].cidr: covers every source: set it as "
		"default: (0.0.0.0/0)");
	policy_refused("rules:\n  - {cidr: '::/0', action: deny}\n",
		"p.yaml:2: rules[0].cidr: covers every source: set it as "
		"default: (::/0)");
}

Test(policy_file_rules, duplicate_name)
{
	policy_refused("rules:\n"
		"  - {name: web, cidr: 198.18.0.0/24, action: allow}\n"
		"  - cidr: 198.18.1.0/24\n"
		"    name: web\n"
		"    action: allow\n",
		"p.yaml:4: rules[1].name: duplicate of the rule at line 2 (web)");
	policy_refused("rules:\n  - {name: default, cidr: 198.18.0.0/24, action: deny}\n",
		"p.yaml:2: rules[0].name: the default rule's name (default)");
	/* A name left out is the CIDR text, so it can clash too. */
	policy_refused("rules:\n"
		"  - {name: 198.18.1.0/24, cidr: 198.18.1.0/24, action: allow}\n"
		"  - {name: '198.18.1.0/24', cidr: 198.18.2.0/24, action: deny}\n",
		"p.yaml:3: rules[1].name: is the CIDR of another prefix "
		"(198.18.1.0/24)");
	policy_refused("rules:\n"
		"  - {name: 198.18.1.0/24, cidr: 198.18.1.0/24, action: allow}\n"
		"  - {cidr: 198.18.1.0/24, action: deny}\n",
		"p.yaml:3: rules[1].cidr: duplicate of the rule at line 2 "
		"(198.18.1.0/24)");
	policy_refused("rules:\n"
		"  - {name: 198.18.1.0/24, cidr: 198.18.1.0/24, action: allow}\n"
		"  - {name: web, cidr: 198.18.2.0/24, action: deny}\n"
		"  - {cidr: 198.18.3.0/24, name: web, action: deny}\n",
		"p.yaml:4: rules[2].name: duplicate of the rule at line 3 (web)");
}

Test(policy_file_rules, bad_name)
{
	policy_refused("rules:\n  - {name: '', cidr: 198.18.0.0/24, action: allow}\n",
		"p.yaml:2: rules[0].name: must be 1 to 63 characters ()");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    name: "
		"0123456789012345678901234567890123456789012345678901234567890123\n",
		"p.yaml:3: rules[0].name: must be 1 to 63 characters "
		"(012345678901234567890123456789012345678901234567...)");
	policy_refused("rules:\n  - {name: \"a\\tb\", cidr: 198.18.0.0/24, action: allow}\n",
		"p.yaml:2: rules[0].name: control characters are not allowed "
		"(a\\x09b)");
	/* Rules are found by name or CIDR: a name may not be another's CIDR. */
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: allow\n"
		"    name: 198.18.1.0/24\n",
		"p.yaml:4: rules[0].name: is the CIDR of another prefix "
		"(198.18.1.0/24)");
}

Test(policy_file_rules, name_that_is_its_own_cidr)
{
	struct xrl_config config;

	policy_loaded("rules:\n  - {name: 198.18.0.0/24, cidr: 198.18.0.0/24,"
	       " action: allow}\n", &config);
	cr_assert_str_eq(config.policy.rules[1].name, "198.18.0.0/24");
	xrl_config_free(&config);
}

Test(policy_file_rules, limits_of_allow_and_deny_rules_are_checked_too)
{
	policy_refused("rules:\n  - {cidr: 198.18.0.0/24, action: allow, pps: 2000G}\n",
		"p.yaml:2: rules[0].pps: over the maximum 1000000000000 "
		"(2000G)");
}

Test(policy_file_rules, unknown_action)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: block\n",
		"p.yaml:3: rules[0].action: unknown action, expected limit, "
		"monitor, allow or deny (block)");
	policy_refused("default:\n  action: Allow\n",
		"p.yaml:2: default.action: unknown action, expected limit, "
		"monitor, allow or deny (Allow)");
}

Test(policy_file_rules, zero_rates)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 0\n    burst: 10\n",
		"p.yaml:3: rules[0].pps: must be at least 1 (0)");
	policy_refused("default:\n  bps: 0k\n  burst_bytes: 10\n",
		"p.yaml:2: default.bps: must be at least 1 (0k)");
}

Test(policy_file_rules, overflowing_rates)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 1001G\n    burst: 1\n",
		"p.yaml:3: rules[0].pps: over the maximum 1000000000000 (1001G)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    bps: 18446744073709551616\n",
		"p.yaml:3: rules[0].bps: over the maximum 1000000000000 "
		"(18446744073709551616)");
	policy_refused("default:\n  pps: 99999999999999999999G\n",
		"p.yaml:2: default.pps: over the maximum 1000000000000 "
		"(99999999999999999999G)");
}

Test(policy_file_rules, rates_that_are_no_whole_number)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 1.5\n    burst: 2\n",
		"p.yaml:3: rules[0].pps: not a whole number (1.5)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 0.0001k\n",
		"p.yaml:3: rules[0].pps: not a whole number (0.0001k)");
}

Test(policy_file_rules, rates_that_are_no_number)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: -10\n",
		"p.yaml:3: rules[0].pps: not a number with an optional k, M or "
		"G (-10)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10 k\n",
		"p.yaml:3: rules[0].pps: not a number with an optional k, M or "
		"G (10 k)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 1e3\n",
		"p.yaml:3: rules[0].pps: not a number with an optional k, M or "
		"G (1e3)");
}

Test(policy_file_rules, zero_burst)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 0\n",
		"p.yaml:4: rules[0].burst: must be at least 1 (0)");
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    bps: 1M\n"
		"    burst_bytes: 0\n",
		"p.yaml:4: rules[0].burst_bytes: must be at least 1 (0)");
}

Test(policy_file_rules, burst_over_the_maximum)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 5G\n",
		"p.yaml:4: rules[0].burst: over the maximum 4294967296 (5G)");
}

Test(policy_file_rules, limit_rule_without_a_limit)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    action: limit\n",
		"p.yaml:2: rules[0].pps: a limit rule needs pps or bps");
	policy_refused("rules:\n  - name: watch\n    cidr: fd00::/16\n"
		"    action: monitor\n",
		"p.yaml:2: rules[0].pps: a monitor rule needs pps or bps");
	policy_refused("default:\n  action: limit\n",
		"p.yaml:2: default.pps: a limit rule needs pps or bps");
}

Test(policy_file_rules, pps_without_burst)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10k\n",
		"p.yaml:2: rules[0].burst: pps needs a burst of at least 1");
}

Test(policy_file_rules, bps_without_burst_bytes)
{
	policy_refused("rules:\n  - cidr: 198.18.0.0/24\n    pps: 10k\n    burst: 1\n"
		"    bps: 1M\n",
		"p.yaml:2: rules[0].burst_bytes: bps needs a burst_bytes of at "
		"least 1");
}

Test(policy_file_rules, error_in_a_later_rule_names_its_index)
{
	policy_refused("rules:\n"
		"  - {cidr: 198.18.0.0/24, action: allow}\n"
		"  - {cidr: 198.18.1.0/24, action: allow}\n"
		"  - {cidr: 198.18.2.0/24, action: allw}\n",
		"p.yaml:4: rules[2].action: unknown action, expected limit, "
		"monitor, allow or deny (allw)");
}

static char *many_rules(size_t n)
{
	char *text = malloc(16 + n * 6), *p = text;
	size_t i;

	cr_assert_not_null(text);
	p += sprintf(p, "rules:\n");
	for (i = 0; i < n; i++)
		p += sprintf(p, "- {}\n");
	return text;
}

Test(policy_file_rules, more_rules_than_the_maximum)
{
	char *text = many_rules(XRL_MAX_RULES);

	policy_refused(text, "p.yaml:2: rules: 1048576 rules, more than the maximum "
		"1048575");
	free(text);
	/* At the maximum the count passes and the rules are judged. */
	text = many_rules(XRL_MAX_RULES - 1);
	policy_refused(text, "p.yaml:2: rules[0].cidr: missing (every rule but "
		"default: needs one)");
	free(text);
}

/* ---- files ---------------------------------------------------------- */

TestSuite(policy_file_files);

Test(policy_file_files, missing_file)
{
	struct xrl_config config;

	cr_assert_eq(xrl_config_load_file("/nonexistent/policy.yaml", &config,
					  policy_err, sizeof(policy_err)), -ENOENT);
	cr_assert_str_eq(policy_err, "/nonexistent/policy.yaml: cannot read: No such "
			 "file or directory");
}

Test(policy_file_files, directory)
{
	struct xrl_config config;

	cr_assert_eq(xrl_config_load_file("examples", &config, policy_err,
					  sizeof(policy_err)), -EISDIR);
	cr_assert_str_eq(policy_err, "examples: cannot read: Is a directory");
}

Test(policy_file_files, unreadable_file)
{
	char path[] = "/tmp/xrl-policy-XXXXXX";
	struct xrl_config config;
	char expected[128];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	chmod(path, 0);
	/* root reads anything: prove the refusal through another uid. */
	if (geteuid() == 0)
		cr_assert_eq(seteuid(65534), 0);
	cr_assert_eq(xrl_config_load_file(path, &config, policy_err, sizeof(policy_err)),
		     -EACCES);
	snprintf(expected, sizeof(expected),
		 "%s: cannot read: Permission denied", path);
	cr_assert_str_eq(policy_err, expected);
	if (geteuid() != getuid())
		cr_assert_eq(seteuid(getuid()), 0);
	unlink(path);
}

Test(policy_file_files, errors_name_the_file)
{
	char path[] = "/tmp/xrl-policy-XXXXXX";
	struct xrl_config config;
	char expected[128];
	int fd = mkstemp(path);
	FILE *file = fdopen(fd, "w");

	fputs("malformed: pass\nrules:\n  - cidr: 198.18.0.0/24\n    pps: 0\n",
	      file);
	fclose(file);
	cr_assert_eq(xrl_config_load_file(path, &config, policy_err, sizeof(policy_err)),
		     -EINVAL);
	unlink(path);
	snprintf(expected, sizeof(expected),
		 "%s:4: rules[0].pps: must be at least 1 (0)", path);
	cr_assert_str_eq(policy_err, expected);
}

static void assert_rule(const struct xrl_rule_spec *rule, const char *name,
			const char *cidr, enum xrl_action action, uint64_t pps,
			uint64_t burst, uint64_t bps, uint64_t burst_bytes,
			int line)
{
	struct xrl_lpm_key key;

	cr_assert_str_eq(rule->name, name);
	cr_assert_eq(xrl_cidr_parse(cidr, &key), 0);
	cr_assert(!memcmp(&rule->prefix, &key, sizeof(key)), "%s: prefix", name);
	cr_assert_eq(rule->action, action, "%s: action", name);
	cr_assert_eq(rule->pps, pps, "%s: pps", name);
	cr_assert_eq(rule->burst, burst, "%s: burst", name);
	cr_assert_eq(rule->bps, bps, "%s: bps", name);
	cr_assert_eq(rule->burst_bytes, burst_bytes, "%s: burst_bytes", name);
	cr_assert_eq(rule->line, line, "%s: line", name);
}

Test(policy_file_files, example_loads_to_its_values)
{
	struct xrl_config config;
	struct xrl_policy *p = &config.policy;
	size_t i;

	cr_assert_eq(xrl_config_load_file(EXAMPLE, &config, policy_err, sizeof(policy_err)),
		     0, "%s", policy_err);
	cr_assert_eq(p->v4_prefix, 32);
	cr_assert_eq(p->v6_prefix, 64);
	cr_assert_eq(p->malformed, XRL_MALFORMED_PASS);
	cr_assert_eq(config.n_interfaces, 1);
	cr_assert_str_eq(config.interfaces[0], "eth0");
	cr_assert_eq(p->n_rules, 5);
	assert_rule(&p->rules[0], "default", "::/0", XRL_ACTION_LIMIT,
		    1000, 2000, 0, 0, 15);
	assert_rule(&p->rules[1], "web-clients", "198.18.0.0/24",
		    XRL_ACTION_LIMIT, 10000, 20000, 100000000, 1000000, 21);
	assert_rule(&p->rules[2], "monitoring", "fd00:1::/48",
		    XRL_ACTION_ALLOW, 0, 0, 0, 0, 28);
	assert_rule(&p->rules[3], "scanners", "198.18.7.0/28",
		    XRL_ACTION_DENY, 0, 0, 0, 0, 31);
	assert_rule(&p->rules[4], "fd00:2::/64", "fd00:2::/64",
		    XRL_ACTION_MONITOR, 2500, 5000, 0, 0, 34);
	for (i = 0; i < p->n_rules; i++)
		cr_assert_eq(p->rules[i].id, i);
	xrl_config_free(&config);
	cr_assert_null(config.policy.rules);
}

Test(policy_file_files, defaults_when_keys_are_left_out)
{
	struct xrl_config config;

	policy_loaded("malformed: drop\n", &config);
	cr_assert_eq(config.policy.v4_prefix, 32);
	cr_assert_eq(config.policy.v6_prefix, 64);
	cr_assert_eq(config.policy.malformed, XRL_MALFORMED_DROP);
	cr_assert_eq(config.policy.vlan_overflow, XRL_VLAN_OVERFLOW_DROP);
	cr_assert_eq(config.policy.ipv4_mapped, XRL_IPV4_MAPPED_DROP);
	cr_assert_eq(config.n_interfaces, 0);
	cr_assert_eq(config.policy.n_rules, 1);
	cr_assert_eq(config.policy.rules[0].action, XRL_ACTION_ALLOW);
	xrl_config_free(&config);

	/* A rule's action, when left out, is limit. */
	policy_loaded("rules:\n  - {cidr: 198.18.0.0/15, pps: 1, burst: 1}\n", &config);
	cr_assert_eq(config.policy.rules[1].action, XRL_ACTION_LIMIT);
	xrl_config_free(&config);
}

/* ---- quantities ----------------------------------------------------- */

TestSuite(quantity);

static uint64_t quantity(const char *text)
{
	uint64_t value = 12345;

	cr_assert_eq(xrl_parse_quantity(text, &value), 0, "%s", text);
	return value;
}

static void bad_quantity(const char *text, int expected)
{
	uint64_t value = 12345;

	cr_assert_eq(xrl_parse_quantity(text, &value), expected, "%s", text);
	cr_assert_eq(value, 12345, "%s: written on error", text);
}

Test(quantity, plain_and_suffixed)
{
	cr_assert_eq(quantity("0"), 0);
	cr_assert_eq(quantity("1500"), 1500);
	cr_assert_eq(quantity("007"), 7);
	cr_assert_eq(quantity("10k"), 10000);
	cr_assert_eq(quantity("10K"), 10000);
	cr_assert_eq(quantity("100M"), 100000000);
	cr_assert_eq(quantity("1G"), 1000000000);
	cr_assert_eq(quantity("18446744073709551615"), UINT64_MAX);
	cr_assert_eq(quantity("18446744073G"), 18446744073000000000ULL);
}

Test(quantity, decimals_that_are_whole)
{
	cr_assert_eq(quantity("2.5M"), 2500000);
	cr_assert_eq(quantity("2.5k"), 2500);
	cr_assert_eq(quantity("0.001k"), 1);
	cr_assert_eq(quantity("1.000000001G"), 1000000001);
	cr_assert_eq(quantity("3.0"), 3);
	cr_assert_eq(quantity("1.50000000000000000000k"), 1500);
}

Test(quantity, decimals_that_are_not_whole)
{
	bad_quantity("1.5", -EDOM);
	bad_quantity("0.0001k", -EDOM);
	bad_quantity("1.0000000001G", -EDOM);
}

Test(quantity, junk)
{
	static const char *const junk[] = {
		"", "-1", "+1", " 1", "1 ", "k", "1x", "1kk", "1m", "1T",
		"0x10", "1e3", "1.", ".5", "1.k", "1,5", "1.2.3", "1 k",
	};
	size_t i;

	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		bad_quantity(junk[i], -EINVAL);
}

Test(quantity, overflow)
{
	bad_quantity("18446744073709551616", -ERANGE);
	bad_quantity("18446744074G", -ERANGE);
	bad_quantity("99999999999999999999999999999999999999999", -ERANGE);
	bad_quantity("18446744073709551.616k", -ERANGE);
}

/* ---- writing -------------------------------------------------------- */

TestSuite(policy_write);

/* Everything but the line numbers, which belong to the file. */
static void assert_same_policy(const struct xrl_policy *a,
			       const struct xrl_policy *b)
{
	size_t i;

	cr_assert_eq(a->v4_prefix, b->v4_prefix);
	cr_assert_eq(a->v6_prefix, b->v6_prefix);
	cr_assert_eq(a->malformed, b->malformed);
	cr_assert_eq(a->vlan_overflow, b->vlan_overflow);
	cr_assert_eq(a->ipv4_mapped, b->ipv4_mapped);
	cr_assert_eq(a->unjudged_fragments, b->unjudged_fragments);
	cr_assert_eq(a->header_overflow, b->header_overflow);
	cr_assert_eq(a->n_rules, b->n_rules);
	for (i = 0; i < a->n_rules; i++) {
		struct xrl_rule_spec x = a->rules[i], y = b->rules[i];
		unsigned k;

		x.line = y.line = 0;
		for (k = 0; k < XRL_LEVELS_MAX; k++)
			x.levels[k].line = y.levels[k].line = 0;
		cr_assert(!memcmp(&x, &y, sizeof(x)), "rule %zu (%s) differs", i,
			  x.name);
	}
}

static void round_trip(const struct xrl_policy *policy)
{
	struct xrl_config again, third;
	char *text = policy_write(policy), *text2;

	cr_assert_eq(xrl_config_load_string(text, strlen(text), "written",
					    &again, policy_err, sizeof(policy_err)), 0,
		     "%s\n%s", policy_err, text);
	assert_same_policy(policy, &again.policy);
	/* And writing is stable: the second text is the first. */
	text2 = policy_write(&again.policy);
	cr_assert_str_eq(text, text2);
	cr_assert_eq(xrl_config_load_string(text2, strlen(text2), "written",
					    &third, policy_err, sizeof(policy_err)), 0);
	assert_same_policy(policy, &third.policy);
	xrl_config_free(&again);
	xrl_config_free(&third);
	free(text);
	free(text2);
}

Test(policy_write, example_round_trips)
{
	struct xrl_config config;

	cr_assert_eq(xrl_config_load_file(EXAMPLE, &config, policy_err, sizeof(policy_err)),
		     0, "%s", policy_err);
	round_trip(&config.policy);
	xrl_config_free(&config);
}

Test(policy_write, awkward_names_and_numbers_round_trip)
{
	struct xrl_config config;

	policy_loaded("keys: {ipv4_prefix: 24, ipv6_prefix: 48}\n"
	       "malformed: drop\n"
	       "vlan_overflow: pass\n"
	       "ipv4_mapped: ipv6\n"
	       "unjudged_fragments: plain\n"
	       "header_overflow: plain\n"
	       "default: {action: deny}\n"
	       "rules:\n"
	       "  - {name: 'a: b # c', cidr: 198.18.0.0/16, pps: 1234567,"
	       " burst: 4294967296}\n"
	       "  - {name: '- [x]', cidr: 'fd00::1', bps: 1000000000000,"
	       " burst_bytes: 1}\n"
	       "  - {name: \"yes\", cidr: 198.18.3.3, action: monitor,"
	       " pps: 1, burst: 1, bps: 999, burst_bytes: 7}\n"
	       "  - {name: '10k', cidr: 198.19.0.0/17, action: allow}\n"
	       "  - {name: lv, cidr: 'fd00::/32', pps: 9, burst: 9, levels:"
	       " [{prefix: 40, pps: 2.5M, burst: 12345}, {prefix: 33,"
	       " pps: 1G, burst: 1, bps: 1000000000000, burst_bytes: 7}]}\n"
	       "  - {name: 'naïve ☃', cidr: 198.19.128.0/17, action: allow,"
	       " pps: 5, burst: 5}\n",
	       &config);
	cr_assert_eq(config.policy.n_rules, 7);
	cr_assert_eq(config.policy.rules[5].n_levels, 2);
	round_trip(&config.policy);
	xrl_config_free(&config);
}

Test(policy_write, policy_of_only_a_default_round_trips)
{
	struct xrl_policy policy;
	char *text;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	round_trip(&policy);
	text = policy_write(&policy);
	cr_assert_str_eq(text,
			 "keys:\n"
			 "  ipv4_prefix: 32\n"
			 "  ipv6_prefix: 64\n"
			 "malformed: pass\n"
			 "default:\n"
			 "  action: allow\n"
			 "rules: []\n");
	free(text);
	xrl_policy_free(&policy);
}

/* ---- adding a file's rules at once ---------------------------------- */

TestSuite(policy_add_many);

static struct xrl_rule_spec spec_for(const char *cidr)
{
	struct xrl_rule_spec rule = { .action = XRL_ACTION_ALLOW };

	cr_assert_eq(xrl_cidr_parse(cidr, &rule.prefix), 0);
	snprintf(rule.name, sizeof(rule.name), "%s", cidr);
	return rule;
}

Test(policy_add_many, same_rules_and_ids_as_one_by_one)
{
	static const char *const cidrs[] = {
		"198.18.0.0/24", "fd00::/8", "198.18.0.0/25", "198.19.0.1",
	};
	struct xrl_rule_spec rules[4];
	struct xrl_policy one, many;
	size_t i, clash = 99;

	cr_assert_eq(xrl_policy_init(&one), 0);
	cr_assert_eq(xrl_policy_init(&many), 0);
	/* Start from a policy with a hole in its ids, as after a delete. */
	for (i = 0; i < 2; i++) {
		rules[i] = spec_for(cidrs[i]);
		cr_assert_eq(xrl_policy_add(&one, &rules[i]), 0);
		cr_assert_eq(xrl_policy_add(&many, &rules[i]), 0);
	}
	cr_assert_eq(xrl_policy_del(&one, "198.18.0.0/24"), 0);
	cr_assert_eq(xrl_policy_del(&many, "198.18.0.0/24"), 0);
	for (i = 0; i < 4; i++)
		rules[i] = spec_for(cidrs[i]);
	for (i = 0; i < 4; i++)
		if (i != 1)
			cr_assert_eq(xrl_policy_add(&one, &rules[i]), 0);
	rules[1] = rules[2];
	rules[2] = rules[3];
	cr_assert_eq(xrl_policy_add_many(&many, rules, 3, &clash), 0);
	cr_assert_eq(one.n_rules, 5);
	cr_assert_eq(many.n_rules, one.n_rules);
	cr_assert(!memcmp(one.rules, many.rules, one.n_rules * sizeof(*one.rules)));
	xrl_policy_free(&one);
	xrl_policy_free(&many);
}

Test(policy_add_many, all_or_nothing_naming_the_first_duplicate)
{
	struct xrl_rule_spec rules[4] = {
		spec_for("198.18.0.0/24"), spec_for("fd00::/8"),
		spec_for("fd00::/8"), spec_for("198.18.0.0/24"),
	};
	struct xrl_policy policy;
	size_t clash = 99;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	cr_assert_eq(xrl_policy_add_many(&policy, rules, 4, &clash), -EEXIST);
	cr_assert_eq(clash, 2);
	cr_assert_eq(policy.n_rules, 1);
	/* Against a rule already held. */
	cr_assert_eq(xrl_policy_add(&policy, &rules[3]), 0);
	cr_assert_eq(xrl_policy_add_many(&policy, rules, 2, &clash), -EEXIST);
	cr_assert_eq(clash, 0);
	cr_assert_eq(policy.n_rules, 2);
	xrl_policy_free(&policy);
}

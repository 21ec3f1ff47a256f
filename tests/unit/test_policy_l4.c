// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * L4 keys of a rule in the policy file (docs/POLICY.md "Protocols and
 * ports"): what loads, each refusal with its exact one-line error, rules
 * of one prefix that differ in their match, and the write -> load round
 * trip. No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match.h"
#include "policy.h"
#include "policy_read.h"
#include "policy_text.h"

#define RULE(body) "rules:\n  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 10\n" body

TestSuite(policy_l4);

Test(policy_l4, proto_ports_and_syn_load_into_the_match)
{
	struct xrl_config config;
	const struct xrl_rule_match *m;

	cr_assert_eq(policy_load(RULE("    proto: tcp\n    dport: 80\n"
			       "    sport: 1024-65535\n    tcp_flags: syn\n"),
			  &config), 0, "%s", policy_err);
	cr_assert_eq(config.policy.n_rules, 2);
	m = &config.policy.rules[1].match;
	cr_assert_eq(m->proto, IPPROTO_TCP);
	cr_assert_eq(m->flags, XRL_MATCH_SYN | XRL_MATCH_SPORT | XRL_MATCH_DPORT);
	cr_assert_eq(m->dport_lo, 80);
	cr_assert_eq(m->dport_hi, 80);
	cr_assert_eq(m->sport_lo, 1024);
	cr_assert_eq(m->sport_hi, 65535);
	/* Unnamed: the CIDR and the match, so rules of one prefix differ. */
	cr_assert_str_eq(config.policy.rules[1].name,
			 "198.18.0.0/24 tcp syn sport 1024-65535 dport 80");
	xrl_config_free(&config);
}

Test(policy_l4, a_plain_and_l4_rules_share_a_prefix)
{
	struct xrl_config config;

	cr_assert_eq(policy_load("rules:\n"
			  "  - cidr: 198.18.0.0/24\n    pps: 10\n    burst: 10\n"
			  "  - cidr: 198.18.0.0/24\n    pps: 1\n    burst: 1\n"
			  "    proto: tcp\n    tcp_flags: syn\n"
			  "  - cidr: 198.18.0.0/24\n    pps: 2\n    burst: 2\n"
			  "    proto: udp\n    sport: 53\n"
			  "  - cidr: fd00::/64\n    pps: 3\n    burst: 3\n"
			  "    proto: icmpv6\n"
			  "  - cidr: 0.0.0.0/0\n    pps: 4\n    burst: 4\n"
			  "    proto: icmp\n", &config), 0, "%s", policy_err);
	cr_assert_eq(config.policy.n_rules, 6);
	cr_assert_str_eq(config.policy.rules[1].name, "198.18.0.0/24");
	cr_assert_str_eq(config.policy.rules[3].name, "198.18.0.0/24 udp sport 53");
	cr_assert_str_eq(config.policy.rules[5].name, "0.0.0.0/0 icmp");
	/* Every source but not the default rule: an id of its own. */
	cr_assert_neq(config.policy.rules[5].id, 0);
	xrl_config_free(&config);
}

Test(policy_l4, bad_values_are_refused_naming_the_field)
{
	policy_refused(RULE("    proto: sctp\n"),
		"p.yaml:5: rules[0].proto: unknown protocol, expected tcp, "
		"udp, icmp or icmpv6 (sctp)");
	policy_refused(RULE("    proto: tcp\n    dport: 65536\n"),
		"p.yaml:6: rules[0].dport: not a port 0-65535 or a range "
		"LOW-HIGH (65536)");
	policy_refused(RULE("    proto: tcp\n    dport: http\n"),
		"p.yaml:6: rules[0].dport: not a port 0-65535 or a range "
		"LOW-HIGH (http)");
	policy_refused(RULE("    proto: tcp\n    sport: \"-5\"\n"),
		"p.yaml:6: rules[0].sport: not a port 0-65535 or a range "
		"LOW-HIGH (-5)");
	policy_refused(RULE("    proto: udp\n    sport: 200-100\n"),
		"p.yaml:6: rules[0].sport: range low end above its high end "
		"(200-100)");
	policy_refused(RULE("    proto: tcp\n    tcp_flags: ack\n"),
		"p.yaml:6: rules[0].tcp_flags: unknown flags, expected syn "
		"(SYN without ACK) (ack)");
}

Test(policy_l4, combinations_that_cannot_match_are_refused)
{
	policy_refused(RULE("    proto: udp\n    tcp_flags: syn\n"),
		"p.yaml:6: rules[0].tcp_flags: needs proto: tcp, not udp (syn)");
	policy_refused(RULE("    tcp_flags: syn\n"),
		"p.yaml:5: rules[0].tcp_flags: needs proto: tcp (syn)");
	policy_refused(RULE("    dport: 80\n"),
		"p.yaml:5: rules[0].dport: needs proto: tcp or udp (80)");
	policy_refused(RULE("    proto: icmp\n    dport: 80\n"),
		"p.yaml:6: rules[0].dport: icmp has no ports (tcp or udp "
		"only) (80)");
	policy_refused(RULE("    proto: icmpv6\n"),
		"p.yaml:5: rules[0].proto: icmpv6 is IPv6's, never on an IPv4 "
		"prefix: write icmp (icmpv6)");
	policy_refused("rules:\n  - cidr: fd00::/64\n    pps: 1\n    burst: 1\n"
		"    proto: icmp\n",
		"p.yaml:5: rules[0].proto: icmp is IPv4's, never on an IPv6 "
		"prefix: write icmpv6 (icmp)");
	policy_refused("default:\n  pps: 1\n  burst: 1\n  proto: tcp\n",
		"p.yaml:4: default.proto: unknown key, expected one of: "
		"action, pps, burst, bps, burst_bytes, scope, global, strategy, "
		"interval, limit, window, ban, ban_after, ban_max, levels");
}

Test(policy_l4, two_rules_with_one_match_at_one_prefix_are_refused)
{
	policy_refused("rules:\n"
		"  - cidr: 198.18.0.0/24\n    name: a\n    proto: tcp\n"
		"    action: deny\n"
		"  - cidr: 198.18.0.0/24\n    name: b\n    proto: tcp\n"
		"    action: allow\n",
		"p.yaml:6: rules[1].cidr: duplicate of the rule at line 2 "
		"(198.18.0.0/24)");
	/* Ports written out in full are the same match as none. */
	policy_refused("rules:\n"
		"  - cidr: 198.18.0.0/24\n    name: a\n    proto: udp\n"
		"    dport: 53\n    action: deny\n"
		"  - cidr: 198.18.0.0/24\n    name: b\n    proto: udp\n"
		"    dport: 53-53\n    action: deny\n",
		"p.yaml:7: rules[1].cidr: duplicate of the rule at line 2 "
		"(198.18.0.0/24)");
}

Test(policy_l4, more_than_eight_rules_at_one_prefix_are_refused)
{
	char text[4096] = "rules:\n";
	int i;

	for (i = 0; i < XRL_MATCH_CHAIN_MAX + 1; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "  - cidr: 198.18.0.0/24\n    action: deny\n"
			 "    proto: udp\n    dport: %d\n", i);
	policy_refused(text, "p.yaml:34: rules[8].cidr: more than 8 rules at one "
		"prefix (rules that differ in proto, ports or tcp_flags) "
		"(198.18.0.0/24)");
}

Test(policy_l4, l4_keys_round_trip_through_the_writer)
{
	struct xrl_config config, again;
	char *text;
	size_t i;

	cr_assert_eq(policy_load("rules:\n"
			  "  - cidr: 198.18.0.0/24\n    pps: 1\n    burst: 1\n"
			  "    proto: tcp\n    tcp_flags: syn\n    dport: 22\n"
			  "  - cidr: 198.18.0.0/24\n    pps: 2\n    burst: 2\n"
			  "    proto: udp\n    sport: 0-1023\n"
			  "  - cidr: 198.18.0.0/24\n    pps: 3\n    burst: 3\n"
			  "  - cidr: fd00::/64\n    pps: 3\n    burst: 3\n"
			  "    proto: icmpv6\n", &config), 0, "%s", policy_err);
	text = policy_write(&config.policy);
	cr_assert_eq(xrl_config_load_string(text, strlen(text), "written",
					    &again, policy_err, sizeof(policy_err)), 0,
		     "%s\n%s", policy_err, text);
	cr_assert_eq(again.policy.n_rules, config.policy.n_rules);
	for (i = 0; i < config.policy.n_rules; i++) {
		struct xrl_rule_spec x = config.policy.rules[i];
		struct xrl_rule_spec y = again.policy.rules[i];

		x.line = y.line = 0;
		cr_assert(!memcmp(&x, &y, sizeof(x)), "rule %zu (%s) differs\n%s",
			  i, x.name, text);
	}
	cr_assert(strstr(text, "tcp_flags: syn"), "%s", text);
	cr_assert(strstr(text, "sport: 0-1023"), "%s", text);
	free(text);
	xrl_config_free(&again);
	xrl_config_free(&config);
}

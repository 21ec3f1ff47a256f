// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "cidr.h"
#include "common.h"
#include "limit.h"
#include "policy_map.h"
#include "rules.h"

#define V4_RULE_SLOTS	65536u	/* odd rules that are IPv4 /32s */

/*
 * A policy of @n_rules limit rules: the default rule, then prefixes made
 * unique by construction, alternately IPv4 /32s inside 198.18.0.0/15 and
 * IPv6 /64s inside fd00::/32 (the benchmark sources' space; past the
 * /15's 131,072 addresses the rest are IPv6), so that
 * lookups of either family walk a trie of the size asked. The rules are
 * set directly rather than by xrl_policy_add(), whose duplicate check is
 * a linear scan (quadratic for 100,000 rules).
 */
/*
 * The prefix of rule @i, written out and parsed as a policy file's would
 * be, so that it follows the library's key layout whatever it is.
 */
static int rule_prefix(size_t i, struct xrl_rule_spec *rule)
{
	__u32 k = i / 2, word;
	char text[64];

	if (i % 2 && k < V4_RULE_SLOTS) {
		/* k -> k * odd mod 2^17 is one to one. */
		word = BENCH_V4_BASE | ((k * 40503u) & 0x1ffff);
		snprintf(text, sizeof(text), "%u.%u.%u.%u/32", word >> 24,
			 (word >> 16) & 0xff, (word >> 8) & 0xff, word & 0xff);
	} else {
		/* past the /15's addresses the odd rules are IPv6 too,
		 * with numbers that the even rules never take */
		if (i % 2)
			k += 0x80000000u;
		word = k * 2654435761u;	/* one to one mod 2^32 */
		snprintf(text, sizeof(text), "%x:0:%x:%x::/64",
			 BENCH_V6_WORD0 >> 16, word >> 16, word & 0xffff);
	}
	return xrl_cidr_parse(text, &rule->prefix);
}

int bench_build_policy(struct xrl_policy *policy, size_t n_rules, bool budget)
{
	struct xrl_rule_spec *rule;
	size_t i;
	int ret;

	ret = xrl_policy_init(policy);
	if (ret)
		return ret;
	rule = realloc(policy->rules, n_rules * sizeof(*rule));
	if (!rule)
		return -ENOMEM;
	policy->rules = rule;
	policy->cap_rules = n_rules;
	policy->new_sources_off = !budget;
	policy->rules[0].action = XRL_ACTION_LIMIT;
	policy->rules[0].pps = BENCH_PPS;
	policy->rules[0].burst = BENCH_BURST;
	for (i = 1; i < n_rules; i++) {
		rule = &policy->rules[i];
		*rule = policy->rules[0];
		rule->id = i;
		snprintf(rule->name, sizeof(rule->name), "r%zu", i);
		ret = rule_prefix(i, rule);
		if (ret)
			return ret;
	}
	policy->n_rules = n_rules;
	return 0;
}

int bench_apply_rules(struct xrl_datapath *dp, size_t n_rules, bool budget)
{
	return bench_apply_rules_at(dp, n_rules, budget, false);
}

int bench_apply_rules_at(struct xrl_datapath *dp, size_t n_rules,
			 bool budget, bool admitting)
{
	struct xrl_policy policy;
	char err[256] = "";
	size_t i;
	int ret;

	ret = bench_build_policy(&policy, n_rules, budget);
	for (i = 0; !ret && admitting && i < policy.n_rules; i++) {
		policy.rules[i].pps = XRL_RATE_MAX;
		policy.rules[i].burst = XRL_BURST_MAX;
	}
	if (!ret)
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("applying %zu rules: %s %s", n_rules, strerror(-ret),
			  err);
	xrl_policy_free(&policy);
	return ret;
}


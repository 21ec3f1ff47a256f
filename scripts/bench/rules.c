// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "common.h"
#include "policy_map.h"
#include "rules.h"

/*
 * A policy of @n_rules limit rules: the default rule, then prefixes made
 * unique by construction, alternately IPv4 /32s inside 198.18.0.0/15 and
 * IPv6 /64s inside fd00::/32 (the benchmark sources' space), so that
 * lookups of either family meet a policy of the size asked; past the
 * 131,072 addresses of the /15 (policies of a million rules) the odd
 * rules are /64s inside fd00:1::/32. The rules are
 * set directly rather than by xrl_policy_add(), whose duplicate check is
 * a linear scan (quadratic for 100,000 rules).
 */
int bench_build_policy(struct xrl_policy *policy, size_t n_rules, bool budget)
{
	struct xrl_rule_spec *rule;
	__u32 k, word;
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
		k = i / 2;
		if (i % 2 && k >= BENCH_V4_RULES) {
			/* Past the /15's addresses: more /64s, apart. */
			word = k * 2654435761u;
			*(__u32 *)rule->prefix.addr =
				htobe32(BENCH_V6_WORD0 | 1);
			rule->prefix.prefixlen = 64;
			*(__u32 *)(rule->prefix.addr + 4) = htobe32(word);
			continue;
		}
		if (i % 2) {
			/* k -> k * odd mod 2^17 is one to one. */
			word = BENCH_V4_BASE | ((k * 40503u) & 0x1ffff);
			rule->prefix.addr[10] = rule->prefix.addr[11] = 0xff;
			rule->prefix.prefixlen = 128;
		} else {
			word = k * 2654435761u;	/* one to one mod 2^32 */
			*(__u32 *)rule->prefix.addr = htobe32(BENCH_V6_WORD0);
			rule->prefix.prefixlen = 64;
			*(__u32 *)(rule->prefix.addr + 4) = htobe32(word);
			continue;
		}
		*(__u32 *)(rule->prefix.addr + 12) = htobe32(word);
	}
	policy->n_rules = n_rules;
	return 0;
}

int bench_apply_rules(struct xrl_datapath *dp, size_t n_rules, bool budget)
{
	struct xrl_policy policy;
	char err[256] = "";
	int ret;

	ret = bench_build_policy(&policy, n_rules, budget);
	if (!ret)
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("applying %zu rules: %s %s", n_rules, strerror(-ret),
			  err);
	xrl_policy_free(&policy);
	return ret;
}


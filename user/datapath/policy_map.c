// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_map.c - a policy as the data path holds it: applied (its rules
 * by rulemaps.c), read back, compared with the maps in force.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "aggregate.h"
#include "datapath.h"
#include "policy.h"
#include "policy_map.h"
#include "rulemaps.h"

int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len)
{
	struct xrl_settings settings;
	__u32 zero = 0;
	int ret;

	if (policy->n_rules == 0 || policy->rules[0].prefix.prefixlen != 0) {
		snprintf(err, len, "policy has no default rule");
		return -EINVAL;
	}
	/* Shares first: an aggregate rule finds its budget from its first
	 * packet on. */
	ret = xrl_agg_write_even(dp, policy, err, len);
	if (ret)
		return ret;
	ret = xrl_rules_install(dp, policy, err, len);
	if (ret)
		return ret;
	xrl_policy_settings(policy, xrl_datapath_max_sources(dp),
			    xrl_datapath_cpus(), &settings);
	if (bpf_map_update_elem(dp->settings_fd, &zero, &settings, 0)) {
		ret = -errno;
		snprintf(err, len, "writing settings: %s", strerror(-ret));
		return ret;
	}
	xrl_agg_forget_stale(dp, policy);
	return 0;
}

/* Calls @fn for each rule in force until it fails. */
static int walk_rules_map(const struct xrl_datapath *dp,
			  int (*fn)(const struct xrl_lpm_key *prefix,
				    const struct xrl_rule *rule, void *ctx),
			  void *ctx)
{
	return xrl_rules_walk(dp, fn, ctx);
}

static int read_settings(const struct xrl_datapath *dp,
			 struct xrl_settings *settings)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(dp->settings_fd, &zero, settings))
		return -errno;
	return 0;
}

static int add_read_rule(const struct xrl_lpm_key *key,
			 const struct xrl_rule *value, void *ctx)
{
	struct xrl_policy *policy = ctx;
	struct xrl_rule_spec rule = {
		.prefix = *key,
		.action = value->action,
		.scope = value->scope < XRL_SCOPE_COUNT ? value->scope :
			 XRL_SCOPE_SOURCE,
	};
	int ret;

	if (key->prefixlen == 0) {
		policy->rules[0].action = value->action;
		policy->rules[0].id = value->id;
		return 0;
	}
	xrl_cidr_format(key, rule.name, sizeof(rule.name));
	ret = xrl_policy_add(policy, &rule);
	if (ret)
		return ret;
	policy->rules[policy->n_rules - 1].id = value->id;
	return 0;
}

int xrl_policy_read_ids(const struct xrl_datapath *dp, struct xrl_policy *out)
{
	struct xrl_settings settings;
	int ret;

	ret = xrl_policy_init(out);
	if (ret)
		return ret;
	ret = read_settings(dp, &settings);
	if (!ret)
		ret = walk_rules_map(dp, add_read_rule, out);
	if (ret) {
		xrl_policy_free(out);
		return ret;
	}
	out->v4_prefix = settings.v4_prefix;
	out->v6_prefix = settings.v6_prefix;
	out->malformed = settings.malformed_verdict;
	out->unknown = settings.unknown_verdict;
	if (settings.new_sources_set) {
		out->new_pps = settings.new_sources_pps;
		out->new_burst = settings.new_sources_burst;
		out->new_sources_off = !settings.new_sources.interval;
	}
	return 0;
}

struct match_ctx {
	const struct xrl_rule_spec **sorted;
	size_t n_rules;
	size_t n_seen;
};

/* The generations are the install's, not the policy's: not compared. */
static int match_rule(const struct xrl_lpm_key *key,
		      const struct xrl_rule *value, void *ctx)
{
	struct match_ctx *match = ctx;
	const struct xrl_rule_spec *rule;
	struct xrl_rule compiled;

	rule = xrl_policy_find_sorted(match->sorted, match->n_rules, key);
	if (!rule || xrl_rule_compile(rule, &compiled))
		return -ESTALE;
	compiled.gen = value->gen;
	compiled.since = value->since;
	if (memcmp(&compiled, value, sizeof(compiled)))
		return -ESTALE;
	match->n_seen++;
	return 0;
}

int xrl_policy_matches_map(const struct xrl_datapath *dp,
			   const struct xrl_policy *policy)
{
	struct xrl_settings in_force, wanted;
	struct match_ctx match = { .n_rules = policy->n_rules };
	int ret;

	ret = read_settings(dp, &in_force);
	if (ret)
		return ret;
	xrl_policy_settings(policy, xrl_datapath_max_sources(dp),
			    xrl_datapath_cpus(), &wanted);
	if (memcmp(&in_force, &wanted, sizeof(wanted)))
		return -ESTALE;
	match.sorted = xrl_policy_sorted(policy);
	if (!match.sorted)
		return -ENOMEM;
	ret = walk_rules_map(dp, match_rule, &match);
	free(match.sorted);
	if (!ret && match.n_seen != policy->n_rules)
		ret = -ESTALE;
	return ret;
}

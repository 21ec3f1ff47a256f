// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_running.c - what a change of the running policy needs besides
 * the policy itself: a copy to modify, rule ids carried over from the
 * policy in force, and reading the policy in force back from the maps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "datapath.h"
#include "policy.h"
#include "rulemaps.h"

int xrl_policy_copy(struct xrl_policy *dst, const struct xrl_policy *src)
{
	*dst = *src;
	dst->cap_rules = src->n_rules ? src->n_rules : 1;
	dst->rules = calloc(dst->cap_rules, sizeof(*dst->rules));
	if (!dst->rules) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->rules, src->rules, src->n_rules * sizeof(*src->rules));
	return 0;
}

static int compare_prefix(const struct xrl_lpm_key *a,
			  const struct xrl_lpm_key *b)
{
	if (a->prefixlen != b->prefixlen)
		return a->prefixlen < b->prefixlen ? -1 : 1;
	return memcmp(a->addr, b->addr, sizeof(a->addr));
}

static int compare_rule_prefix(const void *a, const void *b)
{
	const struct xrl_rule_spec *const *ra = a, *const *rb = b;

	return compare_prefix(&(*ra)->prefix, &(*rb)->prefix);
}

/* Pointers to the rules of @policy sorted by prefix, for bsearch. */
static const struct xrl_rule_spec **
sorted_rules(const struct xrl_policy *policy)
{
	const struct xrl_rule_spec **sorted;
	size_t i;

	sorted = calloc(policy->n_rules ? policy->n_rules : 1, sizeof(*sorted));
	if (!sorted)
		return NULL;
	for (i = 0; i < policy->n_rules; i++)
		sorted[i] = &policy->rules[i];
	qsort(sorted, policy->n_rules, sizeof(*sorted), compare_rule_prefix);
	return sorted;
}

static const struct xrl_rule_spec *
find_sorted(const struct xrl_rule_spec **sorted, size_t n,
	    const struct xrl_lpm_key *prefix)
{
	struct xrl_rule_spec probe = { .prefix = *prefix };
	const struct xrl_rule_spec *probe_ptr = &probe, **found;

	found = bsearch(&probe_ptr, sorted, n, sizeof(*sorted),
			compare_rule_prefix);
	return found ? *found : NULL;
}

#define ID_WORDS (XRL_MAX_RULES / 64)

static void mark_id(uint64_t *used, uint32_t id)
{
	if (id < XRL_MAX_RULES)
		used[id / 64] |= 1ULL << (id % 64);
}

static bool id_is_used(const uint64_t *used, uint32_t id)
{
	return used[id / 64] & (1ULL << (id % 64));
}

/*
 * The next id after @from that is free, wrapping to 1: new ids are taken
 * above the ones in use first, so a rule removed a change ago does not
 * hand its counters to a new one while fresh ids remain.
 */
static uint32_t take_free_id(uint64_t *used, uint32_t from)
{
	uint32_t id, n;

	for (n = 0, id = from; n < XRL_MAX_RULES; n++, id++) {
		if (id >= XRL_MAX_RULES)
			id = 1;
		if (!id_is_used(used, id)) {
			mark_id(used, id);
			return id;
		}
	}
	return XRL_MAX_RULES;
}

int xrl_policy_carry_ids(struct xrl_policy *next,
			 const struct xrl_policy *running)
{
	const struct xrl_rule_spec **sorted, *old;
	uint32_t max_id = 0, from;
	uint64_t *used;
	bool *carried;
	int ret = 0;
	size_t i;

	used = calloc(ID_WORDS, sizeof(*used));
	carried = calloc(next->n_rules ? next->n_rules : 1, sizeof(*carried));
	sorted = sorted_rules(running);
	if (!used || !carried || !sorted) {
		ret = -ENOMEM;
		goto free_all;
	}
	mark_id(used, 0);
	for (i = 0; i < running->n_rules; i++) {
		mark_id(used, running->rules[i].id);
		if (running->rules[i].id > max_id)
			max_id = running->rules[i].id;
	}
	for (i = 0; i < next->n_rules; i++) {
		if (next->rules[i].prefix.prefixlen == 0) {
			next->rules[i].id = 0;
			carried[i] = true;
			continue;
		}
		old = find_sorted(sorted, running->n_rules,
				  &next->rules[i].prefix);
		if (old && old->prefix.prefixlen != 0) {
			next->rules[i].id = old->id;
			carried[i] = true;
		}
	}
	from = max_id + 1;
	for (i = 0; i < next->n_rules; i++) {
		if (carried[i])
			continue;
		next->rules[i].id = take_free_id(used, from);
		if (next->rules[i].id >= XRL_MAX_RULES) {
			ret = -ENOSPC;
			goto free_all;
		}
		from = next->rules[i].id + 1;
	}
free_all:
	free(sorted);
	free(carried);
	free(used);
	return ret;
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

	rule = find_sorted(match->sorted, match->n_rules, key);
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
	match.sorted = sorted_rules(policy);
	if (!match.sorted)
		return -ENOMEM;
	ret = walk_rules_map(dp, match_rule, &match);
	free(match.sorted);
	if (!ret && match.n_seen != policy->n_rules)
		ret = -ESTALE;
	return ret;
}

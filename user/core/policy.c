// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cidr.h"
#include "limit.h"
#include "match.h"
#include "policy.h"
#include "rule_spec.h"

int xrl_policy_init(struct xrl_policy *policy)
{
	struct xrl_rule_spec *dflt;

	memset(policy, 0, sizeof(*policy));
	policy->v4_prefix = 32;
	policy->v6_prefix = 64;
	policy->malformed = XRL_MALFORMED_PASS;
	policy->vlan_overflow = XRL_VLAN_OVERFLOW_DROP;
	policy->ipv4_mapped = XRL_IPV4_MAPPED_DROP;
	policy->unjudged_fragments = XRL_UNJUDGED_FRAGMENTS_DROP;
	policy->header_overflow = XRL_HEADER_OVERFLOW_DROP;
	policy->event_quiet_ns = XRL_EVENT_QUIET_NS;
	policy->events_per_second = XRL_EVENTS_PER_SECOND;
	policy->cap_rules = 16;
	policy->rules = calloc(policy->cap_rules, sizeof(*policy->rules));
	if (!policy->rules)
		return -ENOMEM;
	dflt = &policy->rules[0];
	snprintf(dflt->name, sizeof(dflt->name), "%s", XRL_DEFAULT_RULE_NAME);
	dflt->action = XRL_ACTION_ALLOW;
	policy->n_rules = 1;
	return 0;
}

void xrl_policy_blocklists_applied(struct xrl_policy *policy)
{
	size_t i;

	for (i = 0; policy->blocklists_built && i < policy->n_blocklists; i++)
		if (policy->blocklist_fds[i] >= 0)
			close(policy->blocklist_fds[i]);
	policy->blocklists_built = false;
	policy->blocklists_read = false;
}

void xrl_policy_free(struct xrl_policy *policy)
{
	xrl_policy_blocklists_applied(policy);
	free(policy->rules);
	memset(policy, 0, sizeof(*policy));
}

/* A bitmap of the XRL_MAX_RULES ids. */
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

/* The first id from @from on that is not in @used, or XRL_MAX_RULES. */
static uint32_t next_clear_id(const uint64_t *used, uint32_t from)
{
	uint32_t id;

	for (id = from; id < XRL_MAX_RULES; id++)
		if (!id_is_used(used, id))
			return id;
	return XRL_MAX_RULES;
}

/* The lowest id (above the default rule's 0) no rule of @policy holds;
 * one exists since a policy has at most XRL_MAX_RULES rules. */
static uint32_t lowest_free_id(const struct xrl_policy *policy)
{
	uint64_t *used = calloc(ID_WORDS, sizeof(*used));
	uint32_t id;
	size_t i;

	if (!used)
		return policy->n_rules;
	mark_id(used, 0);
	for (i = 0; i < policy->n_rules; i++)
		mark_id(used, policy->rules[i].id);
	id = next_clear_id(used, 1);
	free(used);
	return id;
}

/* Room for @more rules past the ones held. */
static int reserve_rules(struct xrl_policy *policy, size_t more)
{
	size_t cap = policy->cap_rules ? policy->cap_rules : 16;
	struct xrl_rule_spec *grown;

	while (cap < policy->n_rules + more)
		cap *= 2;
	if (cap == policy->cap_rules)
		return 0;
	grown = reallocarray(policy->rules, cap, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	policy->rules = grown;
	policy->cap_rules = cap;
	return 0;
}

static uint32_t max_rule_id(const struct xrl_policy *policy)
{
	uint32_t max_id = 0;
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].id > max_id)
			max_id = policy->rules[i].id;
	return max_id;
}

/* Appends into reserved room, with no look for duplicates; @max_id is the
 * largest id held, kept up to date. */
static void append_rule(struct xrl_policy *policy,
			const struct xrl_rule_spec *rule, uint32_t *max_id)
{
	struct xrl_rule_spec *added = &policy->rules[policy->n_rules];

	*added = *rule;
	/* A fresh id, never one a rule of this policy holds: ids of removed
	 * rules are taken last, so their counters are not inherited. */
	added->id = policy->n_rules == 0 ? 0 :
		*max_id + 1 < XRL_MAX_RULES ? *max_id + 1 :
		lowest_free_id(policy);
	if (added->id > *max_id)
		*max_id = added->id;
	policy->n_rules++;
}

/* One rule of a policy is its prefix and its L4 match. */
static bool same_rule(const struct xrl_rule_spec *a,
		      const struct xrl_rule_spec *b)
{
	return xrl_prefix_equal(&a->prefix, &b->prefix) &&
	       !xrl_match_compare(&a->match, &b->match);
}

int xrl_policy_add(struct xrl_policy *policy, const struct xrl_rule_spec *rule)
{
	size_t i, at_prefix = 0;
	uint32_t max_id;
	int ret;

	for (i = 0; i < policy->n_rules; i++) {
		if (!xrl_prefix_equal(&policy->rules[i].prefix, &rule->prefix))
			continue;
		if (same_rule(&policy->rules[i], rule))
			return -EEXIST;
		at_prefix++;
	}
	if (at_prefix >= XRL_MATCH_CHAIN_MAX)
		return -EMLINK;
	if (policy->n_rules >= XRL_MAX_RULES)
		return -ENOSPC;
	ret = reserve_rules(policy, 1);
	if (ret)
		return ret;
	max_id = max_rule_id(policy);
	append_rule(policy, rule, &max_id);
	return 0;
}

static int compare_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

struct keyed_rule {
	const struct xrl_rule_spec *rule;
	size_t order;		/* policy rules first, then the new ones */
};

static int compare_keyed(const void *a, const void *b)
{
	const struct keyed_rule *x = a, *y = b;
	const struct xrl_lpm_key *px = &x->rule->prefix, *py = &y->rule->prefix;
	int order;

	if (px->prefixlen != py->prefixlen)
		return px->prefixlen < py->prefixlen ? -1 : 1;
	order = memcmp(px->addr, py->addr, sizeof(px->addr));
	if (!order)
		order = xrl_match_compare(&x->rule->match, &y->rule->match);
	if (order)
		return order;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The first new rule (in order) that clashes: @why -EEXIST for one an
 * earlier rule is (same prefix and match), -EMLINK for one past
 * XRL_MATCH_CHAIN_MAX rules at its prefix. */
static void note_clash(size_t order, size_t n_policy, int why, size_t *clash,
		       int *ret)
{
	if (order >= n_policy && order - n_policy < *clash) {
		*clash = order - n_policy;
		*ret = why;
	}
}

/* Sorted by prefix then match, rules sharing a prefix sit side by side,
 * identical ones next to each other. */
static int first_duplicate(const struct xrl_policy *policy,
			   const struct xrl_rule_spec *rules, size_t n,
			   size_t *clash)
{
	size_t total = policy->n_rules + n, i, run = 1, k;
	struct keyed_rule *keyed = calloc(total ? total : 1, sizeof(*keyed));
	int ret = 0;

	if (!keyed)
		return -ENOMEM;
	for (i = 0; i < total; i++) {
		keyed[i].order = i;
		keyed[i].rule = i < policy->n_rules ? &policy->rules[i] :
			&rules[i - policy->n_rules];
	}
	qsort(keyed, total, sizeof(*keyed), compare_keyed);
	*clash = n;
	for (i = 1; i <= total; i++) {
		if (i < total && xrl_prefix_equal(&keyed[i - 1].rule->prefix,
						  &keyed[i].rule->prefix)) {
			if (same_rule(keyed[i - 1].rule, keyed[i].rule))
				note_clash(keyed[i].order, policy->n_rules,
					   -EEXIST, clash, &ret);
			run++;
			continue;
		}
		/* A prefix of too many rules: the ones past the cap in
		 * order clash, the earliest of them is named. */
		if (run > XRL_MATCH_CHAIN_MAX) {
			size_t *orders = calloc(run, sizeof(*orders));

			if (!orders) {
				free(keyed);
				return -ENOMEM;
			}
			for (k = 0; k < run; k++)
				orders[k] = keyed[i - run + k].order;
			qsort(orders, run, sizeof(*orders), compare_size);
			note_clash(orders[XRL_MATCH_CHAIN_MAX], policy->n_rules,
				   -EMLINK, clash, &ret);
			free(orders);
		}
		run = 1;
	}
	free(keyed);
	return ret;
}

int xrl_policy_add_many(struct xrl_policy *policy,
			const struct xrl_rule_spec *rules, size_t n,
			size_t *clash)
{
	uint32_t max_id;
	size_t i;
	int ret;

	if (n > XRL_MAX_RULES - policy->n_rules)
		return -ENOSPC;
	ret = first_duplicate(policy, rules, n, clash);
	if (ret)
		return ret;
	ret = reserve_rules(policy, n);
	if (ret)
		return ret;
	max_id = max_rule_id(policy);
	for (i = 0; i < n; i++)
		append_rule(policy, &rules[i], &max_id);
	return 0;
}

struct xrl_rule_spec *xrl_policy_find(struct xrl_policy *policy,
				      const char *name_or_cidr)
{
	struct xrl_lpm_key key;
	bool is_cidr = xrl_cidr_parse(name_or_cidr, &key) == 0;
	size_t i;

	for (i = 0; i < policy->n_rules; i++) {
		struct xrl_rule_spec *rule = &policy->rules[i];

		/* A CIDR names its prefix's plain rule; L4 rules go by
		 * their names. */
		if (!strcmp(rule->name, name_or_cidr) ||
		    (is_cidr && xrl_prefix_equal(&rule->prefix, &key) &&
		     xrl_match_is_plain(&rule->match)))
			return rule;
	}
	return NULL;
}

struct xrl_rule_spec *xrl_policy_find_match(struct xrl_policy *policy,
					    const struct xrl_lpm_key *prefix,
					    const struct xrl_rule_match *match)
{
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (xrl_prefix_equal(&policy->rules[i].prefix, prefix) &&
		    !xrl_match_compare(&policy->rules[i].match, match))
			return &policy->rules[i];
	return NULL;
}

/* The ids of the other rules stay: their buckets and counters are keyed
 * by id, so renumbering would hand them to another rule. */
int xrl_policy_del(struct xrl_policy *policy, const char *name_or_cidr)
{
	struct xrl_rule_spec *rule = xrl_policy_find(policy, name_or_cidr);
	size_t index;

	if (!rule)
		return -ENOENT;
	index = rule - policy->rules;
	if (index == 0)
		return -EPERM;	/* the default rule can be changed, not removed */
	memmove(rule, rule + 1,
		(policy->n_rules - index - 1) * sizeof(*rule));
	policy->n_rules--;
	return 0;
}

static void prefix_mask(unsigned prefixlen, __u32 *words, unsigned n_words)
{
	unsigned i, bits;

	for (i = 0; i < n_words; i++) {
		bits = prefixlen > 32 * i ? prefixlen - 32 * i : 0;
		words[i] = bits >= 32 ? 0xffffffffu :
			   bits == 0  ? 0 : htonl(~0u << (32 - bits));
	}
}

void xrl_new_sources_budget(const struct xrl_policy *policy,
			    __u32 max_sources, uint64_t *pps, uint64_t *burst)
{
	if (policy->new_sources_off) {
		*pps = *burst = 0;
	} else if (policy->new_pps) {
		*pps = policy->new_pps;
		*burst = policy->new_burst;
	} else {
		*pps = max_sources / XRL_TURNOVER_S ?: 1;
		*burst = max_sources / XRL_BURST_DIVISOR ?: 1;
	}
}

void xrl_policy_settings(const struct xrl_policy *policy, __u32 max_sources,
			 unsigned n_cpus, struct xrl_settings *out)
{
	uint64_t pps, burst;
	size_t i;

	memset(out, 0, sizeof(*out));
	prefix_mask(policy->v4_prefix, &out->v4_mask, 1);
	prefix_mask(policy->v6_prefix, out->v6_mask, 4);
	out->malformed_verdict = policy->malformed;
	out->vlan_overflow_verdict = policy->vlan_overflow;
	out->ipv4_mapped_verdict = policy->ipv4_mapped;
	out->unjudged_fragments_verdict = policy->unjudged_fragments;
	out->header_overflow_verdict = policy->header_overflow;
	out->v4_prefix = policy->v4_prefix;
	out->v6_prefix = policy->v6_prefix;
	out->unknown_verdict = policy->unknown;
	out->manual_bans = policy->manual_bans;
	out->blocklists = policy->n_blocklists;
	for (i = 0; i < policy->n_blocklists && i < XRL_BLOCKLISTS_MAX; i++)
		out->blocklist_action[i] = policy->blocklists[i].action;
	out->new_sources_set = policy->new_sources_off || policy->new_pps;
	xrl_new_sources_budget(policy, max_sources, &pps, &burst);
	/* Checked by the parsers; a failure leaves the budget off. */
	if (pps && !xrl_limit_compile_pps_share(pps, burst, n_cpus ?: 1,
						&out->new_sources)) {
		out->new_sources_pps = pps;
		out->new_sources_burst = burst;
	}
	/* The cap's burst is one second's worth: at most the cap in any
	 * second, whatever the CPUs. */
	out->event_quiet_ns = policy->event_quiet_ns;
	if (policy->events_per_second &&
	    !xrl_limit_compile_pps_share(policy->events_per_second,
					 policy->events_per_second,
					 n_cpus ?: 1, &out->events))
		out->events_per_second = policy->events_per_second;
}

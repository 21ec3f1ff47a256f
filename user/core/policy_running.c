// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_running.c - what a change of the running policy needs besides
 * the policy itself: a copy to modify, rule ids carried over from the
 * policy in force (reading it back from the maps: datapath/policy_map.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "match.h"
#include "policy.h"
#include "policy_running.h"
#include "rule_spec.h"

int xrl_policy_copy(struct xrl_policy *dst, const struct xrl_policy *src)
{
	*dst = *src;
	/* A copy keeps the lists in force: only a file read reads them. */
	dst->blocklists_read = false;
	dst->blocklists_built = false;
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

/* A rule is its prefix and its L4 match. */
static int compare_rule_prefix(const void *a, const void *b)
{
	const struct xrl_rule_spec *const *ra = a, *const *rb = b;

	return compare_prefix(&(*ra)->prefix, &(*rb)->prefix) ?:
	       xrl_match_compare(&(*ra)->match, &(*rb)->match);
}

/* The default rule (id 0): every source, no L4 match. */
static bool is_default(const struct xrl_rule_spec *rule)
{
	return rule->prefix.prefixlen == 0 && xrl_match_is_plain(&rule->match);
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
	    const struct xrl_lpm_key *prefix, const struct xrl_rule_match *match)
{
	struct xrl_rule_spec probe = { .prefix = *prefix, .match = *match };
	const struct xrl_rule_spec *probe_ptr = &probe, **found;

	found = bsearch(&probe_ptr, sorted, n, sizeof(*sorted),
			compare_rule_prefix);
	return found ? *found : NULL;
}

#define ID_WORDS ((XRL_RULE_IDS + 63) / 64)

static void mark_id(uint64_t *used, uint32_t id)
{
	if (id < XRL_RULE_IDS)
		used[id / 64] |= 1ULL << (id % 64);
}

static bool id_is_used(const uint64_t *used, uint32_t id)
{
	return used[id / 64] & (1ULL << (id % 64));
}

/* The ids a rule may have: below the data path's id limit. */
static uint32_t id_limit(const struct xrl_id_mark *mark)
{
	if (!mark->limit || mark->limit > XRL_RULE_IDS)
		return XRL_RULE_IDS;
	return mark->limit;
}

/*
 * The next id from the mark on that is free, wrapping to 1 (and setting
 * the mark's wrapped) past the last one the data path holds: new ids are
 * taken above every id handed out before, so a rule removed a change ago
 * never hands its counters and buckets to a new one while fresh ids
 * remain. XRL_RULE_IDS when every id is taken.
 */
static uint32_t take_free_id(uint64_t *used, struct xrl_id_mark *mark)
{
	uint32_t id, n, limit = id_limit(mark);

	for (n = 0, id = mark->next_id; n < limit; n++, id++) {
		if (id >= limit || id == 0) {
			id = 1;
			mark->wrapped = true;
		}
		if (!id_is_used(used, id)) {
			mark_id(used, id);
			mark->next_id = id + 1;
			return id;
		}
	}
	return XRL_RULE_IDS;
}

int xrl_policy_assign_ids(struct xrl_policy *next,
			  const struct xrl_policy *running,
			  struct xrl_id_mark *mark, bool *fresh)
{
	const struct xrl_rule_spec **sorted, *old;
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
	for (i = 0; i < running->n_rules; i++)
		mark_id(used, running->rules[i].id);
	for (i = 0; i < next->n_rules; i++) {
		if (is_default(&next->rules[i])) {
			next->rules[i].id = 0;
			carried[i] = true;
			continue;
		}
		old = find_sorted(sorted, running->n_rules,
				  &next->rules[i].prefix, &next->rules[i].match);
		if (old && !is_default(old)) {
			next->rules[i].id = old->id;
			carried[i] = true;
		}
	}
	for (i = 0; i < next->n_rules; i++) {
		if (fresh)
			fresh[i] = !carried[i];
		if (carried[i])
			continue;
		next->rules[i].id = take_free_id(used, mark);
		if (next->rules[i].id >= XRL_RULE_IDS) {
			ret = -ENOSPC;
			goto free_all;
		}
	}
free_all:
	free(sorted);
	free(carried);
	free(used);
	return ret;
}

int xrl_policy_carry_ids(struct xrl_policy *next,
			 const struct xrl_policy *running)
{
	struct xrl_id_mark mark = { .next_id = 1 };
	size_t i;

	for (i = 0; i < running->n_rules; i++)
		if (running->rules[i].id >= mark.next_id)
			mark.next_id = running->rules[i].id + 1;
	return xrl_policy_assign_ids(next, running, &mark, NULL);
}

const struct xrl_rule_spec **xrl_policy_sorted(const struct xrl_policy *policy)
{
	return sorted_rules(policy);
}

const struct xrl_rule_spec *
xrl_policy_find_sorted(const struct xrl_rule_spec **sorted, size_t n,
		       const struct xrl_lpm_key *prefix,
		       const struct xrl_rule_match *match)
{
	return find_sorted(sorted, n, prefix, match);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * compiled.c - a policy compiled whole into the values of the data
 * path's maps (compiled.h): each rule once, its levels, the chains of
 * rules sharing a classifier key, the split markers, the meta and the
 * settings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "cidr.h"
#include "compiled.h"
#include "levels.h"
#include "match.h"
#include "rule.h"

/* Length within the family: IPv4 /n is kept as /(96 + n). */
static unsigned family_len(const struct xrl_lpm_key *prefix,
			   enum xrl_family family)
{
	return family == XRL_FAMILY_IPV4 ? prefix->prefixlen - 96 :
					   prefix->prefixlen;
}

void xrl_rule_key_mask(__u32 addr[4], enum xrl_family family, unsigned len)
{
	unsigned first = family == XRL_FAMILY_IPV4 ? 3 : 0, w, bits;

	for (w = first; w < 4; w++) {
		bits = len > 32 * (w - first) ? len - 32 * (w - first) : 0;
		if (bits < 32)
			addr[w] &= bits ? htonl(~0U << (32 - bits)) : 0;
	}
}

void xrl_rule_key_of(const struct xrl_lpm_key *prefix, struct xrl_rule_key *key)
{
	enum xrl_family family = xrl_prefix_family(prefix);

	memset(key, 0, sizeof(*key));
	key->family = family;
	if (family == XRL_FAMILY_ANY)
		return;
	key->prefixlen = family_len(prefix, family);
	memcpy(key->addr, prefix->addr, sizeof(key->addr));
	xrl_rule_key_mask(key->addr, family, key->prefixlen);
}

bool xrl_prefix_of(const struct xrl_rule_key *key, struct xrl_lpm_key *prefix)
{
	memset(prefix, 0, sizeof(*prefix));
	switch (key->family) {
	case XRL_FAMILY_ANY:
		return key->prefixlen == 0;
	case XRL_FAMILY_IPV4:
		prefix->prefixlen = 96 + key->prefixlen;
		break;
	case XRL_FAMILY_IPV6:
		prefix->prefixlen = key->prefixlen;
		break;
	default:
		return false;
	}
	memcpy(prefix->addr, key->addr, sizeof(prefix->addr));
	return true;
}

void xrl_compiled_free(struct xrl_compiled *c)
{
	free(c->ids);
	free(c->rules);
	free(c->prefixes);
	free(c->keys);
	free(c->values);
	free(c->levels_at);
	free(c->head_at);
	free(c->fingerprints);
	memset(c, 0, sizeof(*c));
}

/* Room for every entry: a rule, its levels and a split marker each,
 * and the meta. */
static int compiled_alloc(struct xrl_compiled *c,
			  const struct xrl_policy *policy)
{
	size_t i, room = 2 * policy->n_rules + 1, n = policy->n_rules;

	for (i = 0; i < n; i++)
		room += policy->rules[i].n_levels;
	memset(c, 0, sizeof(*c));
	c->ids = calloc(n ? n : 1, sizeof(*c->ids));
	c->rules = calloc(n ? n : 1, sizeof(*c->rules));
	c->prefixes = calloc(n ? n : 1, sizeof(*c->prefixes));
	c->levels_at = calloc(n ? n : 1, sizeof(*c->levels_at));
	c->head_at = malloc((n ? n : 1) * sizeof(*c->head_at));
	c->fingerprints = malloc((n ? n : 1) * sizeof(*c->fingerprints));
	c->keys = calloc(room, sizeof(*c->keys));
	c->values = calloc(room, sizeof(*c->values));
	if (!c->ids || !c->rules || !c->prefixes || !c->levels_at ||
	    !c->head_at || !c->fingerprints || !c->keys || !c->values)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		c->head_at[i] = SIZE_MAX;
	return 0;
}

/* @k (one of the rules installed, by id) is @rule: the same prefix and
 * L4 match. An id is a rule's prefix and L4 match: either changed, the
 * buckets of the id belong to another rule. */
static bool installed_as(const struct xrl_installed_rule *k,
			 const struct xrl_rule_spec *rule)
{
	return k->since && k->prefix.prefixlen == rule->prefix.prefixlen &&
	       !memcmp(k->prefix.addr, rule->prefix.addr,
		       sizeof(k->prefix.addr)) &&
	       !xrl_match_compare(&k->match, &rule->match);
}

static __u32 since_of(const struct xrl_compile_input *in,
		      const struct xrl_rule_spec *rule)
{
	if (in->in_force && rule->id < in->n_in_force) {
		if (installed_as(&in->in_force[rule->id], rule))
			return in->in_force[rule->id].since;
		if (in->in_force[rule->id].since)
			return in->gen;	/* the id is another rule's now */
	}
	if (in->before && rule->id < in->n_before &&
	    installed_as(&in->before[rule->id], rule))
		return in->before[rule->id].since;
	return in->gen;
}

/* Marks a /@len of @family in the meta's bitmaps. */
static void meta_add_length(struct xrl_policy_meta *meta,
			    enum xrl_family family, unsigned len)
{
	if (family == XRL_FAMILY_IPV4)
		meta->v4_lengths |= 1ULL << len;
	else if (family == XRL_FAMILY_IPV6)
		meta->v6_lengths[len / 64] |= 1ULL << (len % 64);
}

/*
 * A rule longer than the family's source key makes its key subnet split
 * (sources of one key may have different rules): the marker tells the
 * program so for the other rules' sources in that subnet.
 */
static void add_split_marker(struct xrl_compiled *c,
			     struct xrl_policy_meta *meta,
			     const struct xrl_rule_key *key, unsigned key_len)
{
	struct xrl_rule_key *marker = &c->keys[c->n];

	if (key->family == XRL_FAMILY_ANY || key->prefixlen <= key_len)
		return;
	*marker = *key;
	marker->family = XRL_KEY_SPLIT | key->family;
	marker->prefixlen = key_len;
	xrl_rule_key_mask(marker->addr, key->family, key_len);
	c->values[c->n].rule.gen = c->gen;
	c->n++;
	meta->long_rules |= key->family == XRL_FAMILY_IPV4 ? 1 : 2;
}

static bool same_numbers(const struct xrl_rule_spec *a,
			 const struct xrl_rule_spec *b)
{
	return a->action == b->action && a->scope == b->scope &&
	       a->pps == b->pps && a->burst == b->burst &&
	       a->bps == b->bps && a->burst_bytes == b->burst_bytes &&
	       a->strategy.kind == b->strategy.kind &&
	       a->strategy.interval_ns == b->strategy.interval_ns &&
	       a->strategy.limit == b->strategy.limit &&
	       a->strategy.window_ns == b->strategy.window_ns &&
	       a->ban.ns == b->ban.ns && a->ban.after_ns == b->ban.after_ns &&
	       a->ban.max_ns == b->ban.max_ns &&
	       !memcmp(&a->ban.escalate, &b->ban.escalate,
		       sizeof(a->ban.escalate)) && xrl_levels_equal(a, b);
}

/*
 * The rules of one classifier key, in policy order but the plain rules
 * last: a plain rule takes what none of its prefix's L4 rules take.
 * Each list is linked through the rules' indexes (NONE ends it).
 */
#define NONE	SIZE_MAX

struct key_group {
	struct xrl_rule_key key;
	size_t l4[2], plain[2];		/* first and last */
};

struct grouping {
	struct key_group *groups;	/* in order of first rule */
	size_t n_groups;
	size_t *slots;			/* open addressing: group + 1 */
	size_t mask;
	size_t *next;			/* by rule index */
};

/* The key's words mixed by multiplication (its padding is zero). */
static size_t key_hash(const struct xrl_rule_key *key)
{
	__u32 words[sizeof(*key) / sizeof(__u32)];
	__u64 h = 0;
	size_t i;

	memcpy(words, key, sizeof(words));
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		h = (h ^ words[i]) * 0x9e3779b97f4a7c15ULL;
	return h >> 20;
}

static int grouping_init(struct grouping *g, size_t n_groups, size_t n_rules)
{
	size_t slots = 16;

	while (slots < 2 * n_groups)
		slots *= 2;
	g->n_groups = 0;
	g->mask = slots - 1;
	g->groups = malloc((n_groups ? n_groups : 1) * sizeof(*g->groups));
	g->slots = calloc(slots, sizeof(*g->slots));
	g->next = malloc((n_rules ? n_rules : 1) * sizeof(*g->next));
	return g->groups && g->slots && g->next ? 0 : -ENOMEM;
}

static void grouping_free(struct grouping *g)
{
	free(g->groups);
	free(g->slots);
	free(g->next);
}

/* A new empty group of @key, which has none. */
static struct key_group *group_add(struct grouping *g,
				   const struct xrl_rule_key *key)
{
	size_t at = key_hash(key) & g->mask;
	struct key_group *group = &g->groups[g->n_groups++];

	while (g->slots[at])
		at = (at + 1) & g->mask;
	g->slots[at] = g->n_groups;
	group->key = *key;
	group->l4[0] = group->l4[1] = NONE;
	group->plain[0] = group->plain[1] = NONE;
	return group;
}

static void list_append(size_t list[2], size_t *next, size_t index)
{
	next[index] = NONE;
	if (list[1] == NONE)
		list[0] = index;
	else
		next[list[1]] = index;
	list[1] = index;
}

/* The classifier entry of the first rule of a key's chain. */
static void add_chain_head(struct xrl_compiled *c,
			   struct xrl_policy_meta *meta,
			   const struct xrl_policy *policy,
			   const struct key_group *group, size_t head)
{
	c->keys[c->n] = group->key;
	c->values[c->n].rule = c->rules[head];
	c->head_at[head] = c->n;
	meta_add_length(meta, group->key.family, group->key.prefixlen);
	c->n++;
	add_split_marker(c, meta, &group->key,
			 group->key.family == XRL_FAMILY_IPV4 ?
			 policy->v4_prefix : policy->v6_prefix);
}

/* Links the rules of @group, L4 ones then plain ones, by id. */
static size_t link_group(struct xrl_compiled *c, const struct grouping *g,
			 struct key_group *group)
{
	size_t head, i;

	if (group->l4[1] != NONE) {
		g->next[group->l4[1]] = group->plain[0];
		head = group->l4[0];
	} else {
		head = group->plain[0];
	}
	for (i = head; i != NONE; i = g->next[i])
		c->rules[i].match.next = g->next[i] == NONE ? 0 :
					 c->rules[g->next[i]].id + 1;
	return head;
}

/* The group of @key, or NULL. */
static struct key_group *group_find(const struct grouping *g,
				    const struct xrl_rule_key *key)
{
	size_t at = key_hash(key) & g->mask;
	struct key_group *group;

	while (g->slots[at]) {
		group = &g->groups[g->slots[at] - 1];
		if (!memcmp(&group->key, key, sizeof(*key)))
			return group;
		at = (at + 1) & g->mask;
	}
	return NULL;
}

/* The rules with an L4 match, grouped by key. */
static int group_l4_rules(const struct xrl_policy *policy, struct grouping *g,
			  struct xrl_policy_meta *meta)
{
	struct xrl_rule_key key;
	struct key_group *group;
	size_t i, n_l4 = 0;
	int ret;

	for (i = 0; i < policy->n_rules; i++)
		n_l4 += !xrl_match_is_plain(&policy->rules[i].match);
	ret = grouping_init(g, n_l4, policy->n_rules);
	for (i = 0; !ret && i < policy->n_rules; i++) {
		if (xrl_match_is_plain(&policy->rules[i].match))
			continue;
		xrl_rule_key_of(&policy->rules[i].prefix, &key);
		group = group_find(g, &key);
		if (!group)
			group = group_add(g, &key);
		list_append(group->l4, g->next, i);
		meta->long_rules |= XRL_META_L4;
	}
	return ret;
}

/*
 * The classifier holds the first rule of each key's chain; each rule of
 * the table names the next of its key (struct xrl_rule_match, next).
 * A plain rule is alone at its key (a policy holds a prefix and L4
 * match once) unless L4 rules share it: only those are grouped, by a
 * hash of their keys, and no rule is sorted.
 */
static int chain_rules(const struct xrl_policy *policy, struct xrl_compiled *c,
		       struct xrl_policy_meta *meta)
{
	struct key_group *group, alone;
	struct xrl_rule_key key;
	struct grouping g;
	size_t i;
	int ret;

	ret = group_l4_rules(policy, &g, meta);
	for (i = 0; !ret && i < policy->n_rules; i++) {
		if (!xrl_match_is_plain(&policy->rules[i].match))
			continue;
		xrl_rule_key_of(&policy->rules[i].prefix, &key);
		group = g.n_groups ? group_find(&g, &key) : NULL;
		if (group) {
			list_append(group->plain, g.next, i);
			continue;
		}
		alone.key = key;
		c->rules[i].match.next = 0;
		add_chain_head(c, meta, policy, &alone, i);
	}
	for (i = 0; !ret && i < g.n_groups; i++)
		add_chain_head(c, meta, policy, &g.groups[i],
			       link_group(c, &g, &g.groups[i]));
	grouping_free(&g);
	return ret;
}

/*
 * The classifier entries of @spec's levels (include/xrl.h, struct
 * xrl_rule_levels): each the rule's value with the level's limits, keyed
 * by the rule id and the level.
 */
static int add_levels(struct xrl_compiled *c, const struct xrl_rule_spec *spec,
		      const struct xrl_rule *rule)
{
	struct xrl_limits limits[XRL_LEVELS_MAX];
	struct xrl_rule_levels levels;
	struct xrl_rule *value;
	unsigned i;
	int ret;

	ret = xrl_levels_compile(spec, &levels, limits);
	for (i = 0; !ret && i < levels.count; i++) {
		c->keys[c->n].family = XRL_KEY_LEVEL;
		c->keys[c->n].prefixlen = i;
		c->keys[c->n].addr[0] = rule->id;
		value = &c->values[c->n].rule;
		value->id = rule->id;
		value->action = rule->action;
		value->scope = rule->scope;
		value->limits = limits[i];
		value->gen = rule->gen;
		value->since = rule->since;
		c->n++;
	}
	return ret;
}

/* Rule @spec into the table, after @prev (NULL for the first). */
static int compile_rule(struct xrl_compiled *c,
			const struct xrl_compile_input *in,
			const struct xrl_rule_spec *spec,
			const struct xrl_rule_spec *prev)
{
	struct xrl_rule *value = &c->rules[c->n_rules];
	int ret = 0;

	/* Rules mostly share a few sets of numbers: compiled once. */
	if (prev && same_numbers(prev, spec)) {
		*value = c->rules[c->n_rules - 1];
		value->id = spec->id;
		value->match = spec->match;
		value->match.next = 0;
	} else {
		ret = xrl_rule_compile(spec, value);
	}
	if (ret)
		return ret;
	value->gen = in->gen;
	value->since = since_of(in, spec);
	c->ids[c->n_rules] = spec->id;
	c->prefixes[c->n_rules] = spec->prefix;
	c->levels_at[c->n_rules] = c->n;
	c->n_rules++;
	if (spec->id > c->max_id)
		c->max_id = spec->id;
	return 0;
}

static int compile_rules(struct xrl_compiled *c,
			 const struct xrl_policy *policy,
			 const struct xrl_compile_input *in, char *err,
			 size_t len)
{
	const struct xrl_rule_spec *spec, *prev = NULL;
	char cidr[64];
	size_t i;
	int ret;

	for (i = 0; i < policy->n_rules; prev = spec, i++) {
		spec = &policy->rules[i];
		ret = compile_rule(c, in, spec, prev);
		if (ret) {
			xrl_cidr_format(&spec->prefix, cidr, sizeof(cidr));
			snprintf(err, len, "rule %s (%s): %s", spec->name, cidr,
				 strerror(-ret));
			return ret;
		}
		if (spec->n_levels)
			ret = add_levels(c, spec, &c->rules[i]);
		if (ret) {
			snprintf(err, len, "rule %s: levels: %s", spec->name,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* The meta, last of the classifier. */
static void add_meta(struct xrl_compiled *c, struct xrl_policy_meta *meta)
{
	/* The default rule is found without a length of its own. */
	meta->v4_lengths &= ~1ULL;
	meta->v6_lengths[0] &= ~1ULL;
	c->keys[c->n].family = XRL_KEY_META;
	c->values[c->n].meta = *meta;
	c->n++;
}

void xrl_installed_rule_set(struct xrl_installed_rule *k,
			    const struct xrl_lpm_key *prefix,
			    const struct xrl_rule *rule, __u64 fingerprint)
{
	k->prefix = *prefix;
	k->match = rule->match;
	k->since = rule->since;
	k->action = rule->action;
	k->scope = rule->scope;
	k->strategy = rule->window.strategy;
	k->sub_ns = rule->window.sub_ns;
	k->levels = rule->levels;
	k->escalate_after = rule->escalate.after;
	k->escalate_prefix = rule->escalate.prefix;
	k->fingerprint = fingerprint;
}

/* splitmix64's finaliser: every bit of @h moves every bit of the
 * result. */
static __u64 mix64(__u64 h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

__u64 xrl_rule_fingerprint(const struct xrl_rule *rule)
{
	__u64 words[sizeof(*rule) / sizeof(__u64)];
	__u64 even = 0x9e3779b97f4a7c15ULL, odd = sizeof(*rule);
	size_t i;

	_Static_assert(sizeof(*rule) % sizeof(__u64) == 0,
		       "struct xrl_rule is whole words");
	memcpy(words, rule, sizeof(words));
	/* Two lanes, even and odd words, each word mixed in by a multiply
	 * (odd constants: a bijection of the lane) and a fold of its high
	 * half, so a change of any bit of one word changes its lane; the
	 * two lanes finished by one mix each. */
	for (i = 0; i + 1 < sizeof(words) / sizeof(words[0]); i += 2) {
		even = (even ^ words[i]) * 0xff51afd7ed558ccdULL;
		even ^= even >> 32;
		odd = (odd ^ words[i + 1]) * 0xc4ceb9fe1a85ec53ULL;
		odd ^= odd >> 32;
	}
	if (i < sizeof(words) / sizeof(words[0]))
		even = mix64(even ^ words[i]);
	return mix64(even) ^ mix64(odd + 0x632be59bd9b4e019ULL);
}

/* Rule @r (of @prefix) is installed as @k in all a bucket depends on. */
static bool same_shape(const struct xrl_installed_rule *k,
		       const struct xrl_lpm_key *prefix,
		       const struct xrl_rule *r)
{
	return k->since && k->since == r->since &&
	       k->prefix.prefixlen == prefix->prefixlen &&
	       !memcmp(k->prefix.addr, prefix->addr, sizeof(prefix->addr)) &&
	       !xrl_match_compare(&k->match, &r->match) &&
	       k->match.next == r->match.next && k->action == r->action &&
	       k->scope == r->scope && k->strategy == r->window.strategy &&
	       k->sub_ns == r->window.sub_ns &&
	       !memcmp(&k->levels, &r->levels, sizeof(r->levels)) &&
	       k->escalate_after == r->escalate.after &&
	       k->escalate_prefix == r->escalate.prefix;
}

/* Whether @c has the rules in force, prefix for prefix, in another
 * shape (struct xrl_compiled, rules_gen). */
static bool reshaped(const struct xrl_compile_input *in,
		     const struct xrl_compiled *c)
{
	size_t i;

	if (!in->in_force || !in->rules_gen ||
	    c->n_rules != in->n_rules_in_force)
		return true;
	for (i = 0; i < c->n_rules; i++)
		if (c->ids[i] >= in->n_in_force ||
		    !same_shape(&in->in_force[c->ids[i]], &c->prefixes[i],
				&c->rules[i]))
			return true;
	return false;
}

/* Every rule, level and marker of @c given generation @gen. */
static void stamp_rules_gen(struct xrl_compiled *c, __u32 gen)
{
	size_t i, level;

	c->rules_gen = gen;
	for (i = 0; i < c->n_rules; i++)
		c->rules[i].gen = gen;
	for (i = 0; i < c->n; i++)
		if (c->keys[i].family != XRL_KEY_META)
			c->values[i].rule.gen = gen;
	/* A rule's fingerprint covers its levels' entries: their limits
	 * are in those alone. */
	for (i = 0; i < c->n_rules; i++) {
		c->fingerprints[i] = xrl_rule_fingerprint(&c->rules[i]);
		for (level = 0; level < c->rules[i].levels.count; level++)
			c->fingerprints[i] = mix64(c->fingerprints[i] ^
				xrl_rule_fingerprint(
					&c->values[c->levels_at[i] + level].rule));
	}
}

int xrl_policy_compile(const struct xrl_policy *policy,
		       const struct xrl_compile_input *in,
		       struct xrl_compiled *out, char *err, size_t len)
{
	struct xrl_policy_meta meta = { .gen = in->gen };
	int ret;

	ret = compiled_alloc(out, policy);
	if (ret)
		goto fail;
	out->gen = in->gen;
	ret = compile_rules(out, policy, in, err, len);
	if (ret)
		goto fail;
	ret = chain_rules(policy, out, &meta);
	if (ret)
		goto fail;
	add_meta(out, &meta);
	out->reshaped = reshaped(in, out);
	stamp_rules_gen(out, out->reshaped ? in->gen : in->rules_gen);
	xrl_policy_settings(policy, in->max_sources, in->n_cpus,
			    &out->settings);
	return 0;

fail:
	if (ret == -ENOMEM)
		snprintf(err, len, "compiling the rules: %s", strerror(-ret));
	xrl_compiled_free(out);
	return ret;
}

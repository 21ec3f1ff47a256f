// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * compiled.c - a policy compiled whole into the values of the data
 * path's maps (compiled.h): each rule once, its levels, the chains of
 * rules sharing a classifier key, the split markers, the meta and the
 * settings.
 */
#include <errno.h>
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
	c->keys = calloc(room, sizeof(*c->keys));
	c->values = calloc(room, sizeof(*c->values));
	if (!c->ids || !c->rules || !c->prefixes || !c->levels_at ||
	    !c->keys || !c->values)
		return -ENOMEM;
	return 0;
}

static __u32 since_of(const struct xrl_compile_input *in,
		      const struct xrl_rule_spec *rule)
{
	const struct xrl_installed_rule *k;

	if (!in->in_force || rule->id >= in->n_in_force)
		return in->gen;
	k = &in->in_force[rule->id];
	/* An id is a rule's prefix and L4 match: either changed, the
	 * buckets of the id belong to another rule. */
	if (!k->since || k->prefix.prefixlen != rule->prefix.prefixlen ||
	    memcmp(k->prefix.addr, rule->prefix.addr, sizeof(k->prefix.addr)) ||
	    xrl_match_compare(&k->match, &rule->match))
		return in->gen;
	return k->since;
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

/* Rules of one classifier key side by side, in policy order but a
 * plain rule last: it takes what none of its prefix's L4 rules take. */
struct chained {
	struct xrl_rule_key key;
	bool plain;
	size_t index;
};

static int compare_chained(const void *a, const void *b)
{
	const struct chained *x = a, *y = b;
	int order = memcmp(&x->key, &y->key, sizeof(x->key));

	if (order)
		return order;
	if (x->plain != y->plain)
		return x->plain ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The classifier entry of the first rule of a key's chain. */
static void add_chain_head(struct xrl_compiled *c,
			   struct xrl_policy_meta *meta,
			   const struct xrl_policy *policy,
			   const struct chained *head)
{
	c->keys[c->n] = head->key;
	c->values[c->n].rule = c->rules[head->index];
	meta_add_length(meta, head->key.family, head->key.prefixlen);
	c->n++;
	add_split_marker(c, meta, &head->key,
			 head->key.family == XRL_FAMILY_IPV4 ?
			 policy->v4_prefix : policy->v6_prefix);
}

/*
 * The classifier holds the first rule of each key's chain; each rule of
 * the table names the next of its key (struct xrl_rule_match, next).
 */
static int chain_rules(const struct xrl_policy *policy, struct xrl_compiled *c,
		       struct xrl_policy_meta *meta)
{
	struct chained *order = calloc(policy->n_rules ? policy->n_rules : 1,
				       sizeof(*order));
	size_t i, head;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < policy->n_rules; i++) {
		xrl_rule_key_of(&policy->rules[i].prefix, &order[i].key);
		order[i].plain = xrl_match_is_plain(&policy->rules[i].match);
		order[i].index = i;
		if (!order[i].plain)
			meta->long_rules |= XRL_META_L4;
	}
	qsort(order, policy->n_rules, sizeof(*order), compare_chained);
	for (i = 0, head = 0; i < policy->n_rules; i++) {
		struct xrl_rule *rule = &c->rules[order[i].index];
		bool last = i + 1 == policy->n_rules ||
			    memcmp(&order[i + 1].key, &order[i].key,
				   sizeof(order[i].key));

		rule->match.next = last ? 0 :
				   c->rules[order[i + 1].index].id + 1;
		if (!last)
			continue;
		add_chain_head(c, meta, policy, &order[head]);
		head = i + 1;
	}
	free(order);
	return 0;
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
	xrl_policy_settings(policy, in->max_sources, in->n_cpus,
			    &out->settings);
	return 0;

fail:
	if (ret == -ENOMEM)
		snprintf(err, len, "compiling the rules: %s", strerror(-ret));
	xrl_compiled_free(out);
	return ret;
}

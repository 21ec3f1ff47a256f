/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * compiled.h - a policy compiled whole into what the data path's maps
 * hold (include/xrl.h): the rule table, the classifier and the head's
 * settings, as plain arrays in the order the maps take them. Built in
 * one call, here in the core, so the data path only compares and writes
 * (rulemaps.h, policy_map.h) and a test can read every value without
 * loading BPF.
 */
#ifndef XRL_COMPILED_H
#define XRL_COMPILED_H

#include <stdbool.h>
#include <stddef.h>
#include "policy.h"
#include "xrl.h"

/*
 * What an install left under a rule id, for the next install's "since"
 * (include/xrl.h, struct xrl_rule): an id keeps its generation while it
 * names the same prefix and L4 match.
 */
struct xrl_installed_rule {
	struct xrl_lpm_key prefix;
	struct xrl_rule_match match;	/* next not kept */
	__u32 since;		/* 0: no rule holds the id */
};

/* What a compile needs besides the policy: all of it the data path's. */
struct xrl_compile_input {
	__u32 gen;		/* of this install */
	/* The rules in force, by id (NULL: none); a rule whose id is not
	 * there, or names another rule there, starts at @gen. */
	const struct xrl_installed_rule *in_force;
	size_t n_in_force;
	/* The rules in force before those (NULL: not known): a rule out of
	 * the policy in force and back in this one as it was keeps its
	 * since, as its counters are kept a swap more (rulemaps.c). */
	const struct xrl_installed_rule *before;
	size_t n_before;
	__u32 max_sources;	/* of the bucket table: the new-source budget */
	unsigned n_cpus;	/* the per-CPU budgets are split over */
};

struct xrl_compiled {
	/* The rule table, in the policy's order: rules[i] (key ids[i]) is
	 * the policy's rule i, of prefix prefixes[i]. */
	__u32 *ids;
	struct xrl_rule *rules;
	struct xrl_lpm_key *prefixes;
	size_t n_rules;
	__u32 max_id;
	/*
	 * The classifier: rule i's levels from keys[levels_at[i]] on
	 * (rules[i].levels.count of them), the first rule of each key's
	 * chain and the split markers, and the meta last.
	 */
	struct xrl_rule_key *keys;
	union xrl_classifier_value *values;
	size_t n;
	size_t *levels_at;
	/* The policy head's settings. */
	struct xrl_settings settings;
	__u32 gen;
};

/*
 * Compiles @policy (checked, ids assigned) into @out (uninitialised).
 * 0, or -errno with @err naming the rule that does not compile (nothing
 * to free then).
 */
int xrl_policy_compile(const struct xrl_policy *policy,
		       const struct xrl_compile_input *in,
		       struct xrl_compiled *out, char *err, size_t len);
void xrl_compiled_free(struct xrl_compiled *compiled);

/* The classifier key of a prefix. */
void xrl_rule_key_of(const struct xrl_lpm_key *prefix, struct xrl_rule_key *key);

/* The prefix of a classifier key; false for keys that are not rules. */
bool xrl_prefix_of(const struct xrl_rule_key *key, struct xrl_lpm_key *prefix);

/* @addr (the parser's layout) masked to @len bits of @family's address. */
void xrl_rule_key_mask(__u32 addr[4], enum xrl_family family, unsigned len);

#endif

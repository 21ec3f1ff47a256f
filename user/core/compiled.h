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
	struct xrl_rule_match match;	/* next kept: the chain's order */
	__u32 since;		/* 0: no rule holds the id */
	/* What a source's bucket depends on besides the prefix and match
	 * (xrl_rule_same_shape()): a swap that changes none of it in any
	 * rule keeps every rule's generation. */
	__u16 action, scope;
	__u32 strategy;
	__u64 sub_ns;
	struct xrl_rule_levels levels;
	__u8 escalate_after, escalate_prefix;
	/* xrl_rule_fingerprint() of the value installed: a rule whose
	 * fingerprint differs is written again. */
	__u64 fingerprint;
};

/* @k's shape fields from the compiled @rule, of @fingerprint. */
void xrl_installed_rule_set(struct xrl_installed_rule *k,
			    const struct xrl_lpm_key *prefix,
			    const struct xrl_rule *rule, __u64 fingerprint);

/*
 * A 64-bit hash of every byte of @rule (a compiled value: its padding
 * is zero): two values that differ have the same fingerprint with a
 * chance of about 2^-64, which is what a swap that writes only the rules
 * whose fingerprint changed relies on (user/datapath/rulemaps.c).
 */
__u64 xrl_rule_fingerprint(const struct xrl_rule *rule);

/* What a compile needs besides the policy: all of it the data path's. */
struct xrl_compile_input {
	__u32 gen;		/* of this install */
	/* The rules in force, by id (NULL: none); a rule whose id is not
	 * there, or names another rule there, starts at @gen. */
	const struct xrl_installed_rule *in_force;
	size_t n_in_force;
	size_t n_rules_in_force;	/* of in_force, that hold a rule */
	__u32 rules_gen;	/* the generation those rules carry */
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
	/* head_at[i]: the classifier entry of rule i when it heads its
	 * key's chain, else SIZE_MAX. */
	size_t *head_at;
	/* fingerprints[i]: xrl_rule_fingerprint() of rules[i] and of its
	 * levels' entries, mixed: what a swap compares to know which rules
	 * to write. */
	__u64 *fingerprints;
	/* The policy head's settings. */
	struct xrl_settings settings;
	__u32 gen;		/* of the head and the meta */
	/*
	 * The generation every rule, level and marker carries: @gen when
	 * the policy's shape differs from the one in force (a rule added,
	 * gone, or moved to another prefix, match, chain order, action,
	 * scope, strategy or levels: a source may belong to another rule
	 * now, so every bucket is classified again), else that of the
	 * rules in force (only numbers changed: every binding stays, and
	 * only the rules whose values changed are written).
	 */
	__u32 rules_gen;
	bool reshaped;
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

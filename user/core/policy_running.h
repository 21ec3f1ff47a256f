/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_running.h - what a change of the running policy needs besides
 * the policy itself: a copy to modify, its rules sorted for lookups, and
 * rule ids carried over from the policy in force.
 */
#ifndef XRL_POLICY_RUNNING_H
#define XRL_POLICY_RUNNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "policy.h"
#include "rule_spec.h"

/* A deep copy of @src into @dst (uninitialised). 0 or -ENOMEM. */
int xrl_policy_copy(struct xrl_policy *dst, const struct xrl_policy *src);

/* Pointers to the rules of @policy sorted by prefix (free() it), for
 * xrl_policy_find_sorted; NULL when out of memory. */
const struct xrl_rule_spec **xrl_policy_sorted(const struct xrl_policy *policy);
/* The rule of exactly @prefix and @match (its next not compared) among
 * @n sorted ones, or NULL. */
const struct xrl_rule_spec *
xrl_policy_find_sorted(const struct xrl_rule_spec **sorted, size_t n,
		       const struct xrl_lpm_key *prefix,
		       const struct xrl_rule_match *match);

/*
 * Where new rule ids come from: the lowest id never handed out (ids are
 * not reused while the data path may hold counters or buckets for them),
 * and whether the ids wrapped past the limit (twice the data path's
 * rule capacity, at most XRL_RULE_IDS) since the data path was
 * loaded (then a new id may have been used before, and its state must be
 * wiped before a rule gets it).
 */
struct xrl_id_mark {
	uint32_t next_id;	/* 1 on a fresh data path */
	uint32_t limit;		/* ids are below it; 0: XRL_RULE_IDS */
	bool wrapped;
};

/*
 * Gives every rule of @next whose prefix is in @running the id it holds
 * there (a rule is its prefix: the default rule keeps 0), so the buckets
 * and counters (keyed by rule id) stay with the rules that persist, and
 * every other rule a new id from @mark on, skipping ids either policy
 * holds; @mark moves past the ids taken. With @fresh (n_rules entries),
 * marks which rules got a new id. 0, -ENOMEM or -ENOSPC.
 */
int xrl_policy_assign_ids(struct xrl_policy *next,
			  const struct xrl_policy *running,
			  struct xrl_id_mark *mark, bool *fresh);

/* The same with new ids above the highest one of @running: for policies
 * held in memory only (a data path keeps its mark, policy_map.h). */
int xrl_policy_carry_ids(struct xrl_policy *next,
			 const struct xrl_policy *running);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * share.h - how an aggregate rule's budget is divided: into per-CPU (or
 * per-node) weights summing to XRL_SHARE_ONE, and the limits they divide.
 * Pure: the data path writes the shares (aggregate.h), the daemon's
 * engine re-splits them by demand (budget.h).
 */
#ifndef XRL_SHARE_H
#define XRL_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include "policy.h"

/*
 * Every CPU (or node) keeps at least this percent of an even share, so an
 * idle one admits its first packets at once. Demand counts arrivals, not
 * admissions, so how fast an idle CPU gets its part does not depend on
 * the floor (one sync); what an idle CPU's floor holds is unused, so the
 * floor is small: with k of n CPUs idle, at most k * 2% / n of the
 * budget goes unused (1% with one of two).
 */
#define XRL_SHARE_FLOOR_PERCENT	2

/*
 * Splits XRL_SHARE_ONE into @n weights (n <= XRL_SHARE_ONE): each at least
 * the floor (floor_percent of ONE / n, at least 1), the rest in proportion
 * to @demand, rounded by largest remainder so that they sum to ONE exactly.
 * With no demand at all @weights is left as it is and 1 is returned;
 * otherwise 0, or -EINVAL for n == 0, n > ONE or floor_percent > 100.
 */
int xrl_share_split(const uint64_t *demand, unsigned n, unsigned floor_percent,
		    uint32_t *weights);

/* @n weights as even as whole numbers go, summing to XRL_SHARE_ONE. */
void xrl_share_even(unsigned n, uint32_t *weights);

/* True for a rule that has per-CPU shares: aggregate, limit or monitor. */
bool xrl_rule_is_aggregate(const struct xrl_rule_spec *rule);

/*
 * The budget a rule's shares divide: its own limits, or for a global rule
 * the node's part of them. Both limits are scaled alike.
 */
struct xrl_budget_limits {
	uint64_t pps, burst;
	uint64_t bps, burst_bytes;
};

void xrl_budget_limits_of(const struct xrl_rule_spec *rule,
			  struct xrl_budget_limits *out);
/* @limits scaled by @num / @den (each non-zero result at least 1). */
void xrl_budget_limits_scale(const struct xrl_budget_limits *limits,
			     uint64_t num, uint64_t den,
			     struct xrl_budget_limits *out);
#endif

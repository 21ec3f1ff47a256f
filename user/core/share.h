/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * share.h - how an aggregate rule's budget is divided: into per-CPU (or
 * per-node) weights summing to XRL_SHARE_ONE, and the limits they divide.
 * Pure: the shares are compiled here, the data path writes them
 * (aggregate.h), the daemon's engine re-splits them by demand (budget.h).
 */
#ifndef XRL_SHARE_H
#define XRL_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include "rule_spec.h"

/*
 * Every CPU (or node) keeps at least this percent of an even share, so an
 * idle one admits its first packets at once. Demand counts arrivals, not
 * admissions, so how fast an idle CPU gets its part does not depend on
 * the floor (one sync); what an idle CPU's floor holds is unused, so the
 * floor is small: with k of n CPUs idle, at most k * 2% / n of the
 * budget goes unused (1% with one of two), under 2% on any machine
 * (rounded down; include/xrl.h, XRL_SHARE_ONE).
 */
#define XRL_SHARE_FLOOR_PERCENT 2

/*
 * Splits @part units of XRL_SHARE_ONE into @n weights (n <= ONE): each at
 * least the floor (floor_percent of ONE / n, rounded down, at least 1),
 * the rest in proportion to @demand, by largest remainder so that they
 * sum to @part exactly. With no demand at all @weights is left as it is
 * and 1 is returned; otherwise 0, or -EINVAL for n == 0, n > ONE,
 * floor_percent > 100 or a @part below n floors.
 */
int xrl_share_split_part(const uint64_t *demand, unsigned n,
			 unsigned floor_percent, uint32_t part,
			 uint32_t *weights);
/* The same over the whole of XRL_SHARE_ONE (nodes of a global rule). */
int xrl_share_split(const uint64_t *demand, unsigned n, unsigned floor_percent,
		    uint32_t *weights);

/* The floor of one of @n CPUs or nodes, in units of XRL_SHARE_ONE. */
uint32_t xrl_share_floor(unsigned n, unsigned floor_percent);

/* @n weights as even as whole numbers go, summing to XRL_SHARE_ONE. */
void xrl_share_even(unsigned n, uint32_t *weights);

/*
 * The split written with each policy, that holds without the daemon:
 * every one of @n CPUs its floor, and the pool the rest (returned), so
 * that the CPUs receiving traffic share the whole budget however few.
 */
uint32_t xrl_share_floors(unsigned n, unsigned floor_percent,
			  uint32_t *weights);

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

/*
 * The pool's weight under the daemon: the budget up to @pool_pps packets
 * a second (bytes: that many full-size frames), at most what the floors
 * of @n CPUs leave. Below it every CPU draws from the pool, so traffic
 * moving between CPUs loses nothing; only a budget above it is split by
 * demand, so no shared line is written faster than @pool_pps.
 */
uint32_t xrl_agg_pool_weight(const struct xrl_budget_limits *limits,
			     unsigned n, unsigned floor_percent,
			     uint64_t pool_pps);

/*
 * The shares of @limits as the data path holds them (include/xrl.h,
 * struct xrl_agg_share), one per CPU into @shares (@n entries): CPU i
 * @weights[i] of the budget (a zero weight as 1: a CPU without a share
 * would fail open), and each the pool's @pool_weight (0: no pool, its
 * limits unset). 0, or the -errno of a limit that does not compile.
 */
int xrl_agg_shares_compile(const struct xrl_budget_limits *limits,
			   const uint32_t *weights, unsigned n,
			   uint32_t pool_weight, struct xrl_agg_share *shares);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * budget.h - aggregate budgets (scope: aggregate): the per-CPU split of a
 * rule's budget, and the sync engine the daemon runs every sync_interval
 * to re-split it by demand (README "Scopes and global budgets").
 */
#ifndef XRL_BUDGET_H
#define XRL_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "policy.h"

struct xrl_datapath;
struct xrl_global;

#define XRL_SYNC_INTERVAL_MS	100
/*
 * Every CPU (or node) keeps at least this percent of an even share, so an
 * idle one admits its first packets at once. Demand counts arrivals, not
 * admissions, so how fast an idle CPU gets its part does not depend on
 * the floor (one sync); what an idle CPU's floor holds is unused, so the
 * floor is small: with k of n CPUs idle, at most k * 2% / n of the
 * budget goes unused (1% with one of two), under 2% on any machine
 * (rounded down; include/xrl.h, XRL_SHARE_ONE).
 */
#define XRL_SHARE_FLOOR_PERCENT	2

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

/* Writes rule @id's shares: @weights (one per possible CPU) and
 * @pool_weight of @limits (all summing to ONE). 0 or -errno. */
int xrl_agg_write_shares(const struct xrl_datapath *dp, uint32_t id,
			 const struct xrl_budget_limits *limits,
			 const uint32_t *weights, uint32_t pool_weight);

/*
 * With each policy (xrl_policy_apply): every aggregate rule of @policy
 * gets the split of xrl_share_floors() (before the swap). -E2BIG past
 * XRL_MAX_AGGREGATES aggregate rules; @err says so.
 */
int xrl_agg_write_even(const struct xrl_datapath *dp,
		       const struct xrl_policy *policy, char *err, size_t len);
/* After the swap: shares and state of rules no longer aggregate go. */
void xrl_agg_forget_stale(const struct xrl_datapath *dp,
			  const struct xrl_policy *policy);

/* Reads rule @id's per-CPU state into @per_cpu (xrl_datapath_cpus()
 * entries). -ENOENT before its first packet. */
int xrl_agg_read_state(const struct xrl_datapath *dp, uint32_t id,
		       struct xrl_agg_state *per_cpu);

/* ---- the sync engine ---------------------------------------------- */

struct xrl_budget_rule {
	struct xrl_rule_spec spec;
	uint32_t *weights;		/* per CPU, with @pool_weight: ONE */
	uint32_t pool_weight;		/* the pool's, shared by all CPUs */
	uint64_t *seen;			/* arrived per CPU at the last sync */
	uint64_t *demand;		/* arrived per CPU, last interval */
	bool primed;			/* @seen holds a reading */
	struct xrl_budget_limits local;	/* what the CPUs' shares divide */
	bool written;			/* shares of @weights/@local are in */
	uint64_t syncs;			/* re-splits written */
	/* global: true only */
	uint32_t node_weight;		/* this node's part, of SHARE_ONE */
	uint32_t nodes;			/* live nodes at the last exchange */
	uint64_t demand_pps;		/* this node's, last interval */
	uint64_t demand_at_ns;		/* when @demand_pps was measured */
	uint64_t arrived_total;		/* all CPUs, at that time */
};

struct xrl_budgets {
	struct xrl_datapath *dp;
	unsigned n_cpus;
	unsigned floor_percent;
	uint64_t pool_pps;		/* XRL_AGG_POOL_PPS unless a test
					 * sets it (0: all split by demand) */
	uint64_t interval_ns;
	struct xrl_budget_rule *rules;
	size_t n_rules;
	struct xrl_global *global;	/* NULL: no Redis */
	/* Held by set_policy and sync, and by the /metrics scrape thread
	 * (xrl_budgets_write_metrics); the rest runs on the daemon's one
	 * thread. */
	pthread_mutex_t lock;
};

int xrl_budgets_init(struct xrl_budgets *b, struct xrl_datapath *dp,
		     uint64_t interval_ns);
void xrl_budgets_free(struct xrl_budgets *b);

/*
 * Follows the policy just applied: rules that stay keep their split (and
 * it is written again over the apply's even one), new ones start even.
 * 0 or -ENOMEM.
 */
int xrl_budgets_set_policy(struct xrl_budgets *b,
			   const struct xrl_policy *policy, uint64_t now_ns);

/*
 * One sync: reads each CPU's demand since the last one, re-splits every
 * aggregate rule (global ones first get this node's part from Redis) and
 * writes the shares that changed. @now_ns is the caller's clock (the
 * daemon's monotonic one, a test's simulated one). 0 or -errno of the
 * first failure (the others are still synced).
 */
int xrl_budgets_sync(struct xrl_budgets *b, uint64_t now_ns);

/* CLOCK_MONOTONIC in ns: the daemon's clock for the engine. */
uint64_t xrl_monotonic_ns(void);

/* True when global budgets are degraded (Redis breaker open). */
bool xrl_budgets_degraded(const struct xrl_budgets *b);

/* For status and stats: the split of every aggregate rule, and the state
 * of Redis ("degraded", since when, why). A jansson object, or NULL. */
struct json_t;
struct json_t *xrl_budgets_json(const struct xrl_budgets *b);

/* /metrics families of the budgets (an xrl_metrics_extra_fn; @ctx is the
 * struct xrl_budgets): xdp_ratelimit_budget_degraded{rule},
 * xdp_ratelimit_budget_local_pps{rule}, xdp_ratelimit_budget_nodes{rule}. */
void xrl_budgets_write_metrics(FILE *out, void *ctx);

/* The engine's rule of that id, or NULL. */
struct xrl_budget_rule *xrl_budgets_find(struct xrl_budgets *b, uint32_t id);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * budget.h - aggregate budgets (scope: aggregate): the per-CPU split of a
 * rule's budget, and the sync engine the daemon runs every sync_interval
 * to re-split it by demand (docs/DESIGN.md "Scopes and global budgets").
 */
#ifndef XRL_BUDGET_H
#define XRL_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "aggregate.h"
#include "policy.h"
#include "share.h"

struct xrl_datapath;
struct xrl_global;

#define XRL_SYNC_INTERVAL_MS	100

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
	/* global: true only. Demand handed to Redis (global.h), and what
	 * the exchange handed back, for status and /metrics. */
	uint64_t demand_pps;		/* this node's, last interval */
	uint64_t demand_at_ns;		/* when @demand_pps was measured */
	uint64_t arrived_total;		/* all CPUs, at that time */
	uint32_t node_weight;		/* this node's part, of SHARE_ONE */
	uint32_t nodes;			/* live nodes at the last exchange */
	bool degraded;			/* its exchange failed, or another
					 * daemon writes this node's name */
	char reason[160];		/* why */
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

/* True when a global rule is degraded (its last exchange with Redis
 * failed, or another daemon uses this node's name). */
bool xrl_budgets_degraded(const struct xrl_budgets *b);
/* The same for the rule of that id. */
bool xrl_budgets_rule_degraded(const struct xrl_budgets *b, uint32_t id);

/* The same as one line for /healthz (an xrl_health_degraded_fn; @ctx is
 * the struct xrl_budgets): "global budget NAME: why[ (and N more)]", or
 * nothing in @why. Takes the lock. */
void xrl_budgets_degraded_why(void *ctx, char *why, size_t len);

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

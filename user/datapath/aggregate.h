/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * aggregate.h - the per-CPU shares and state of aggregate rules in the
 * data path's maps (design: include/xrl.h, struct xrl_agg_share).
 */
#ifndef XRL_AGGREGATE_H
#define XRL_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>
#include "policy.h"
#include "share.h"

struct xrl_datapath;

/* Writes rule @id's shares: @weights (one per possible CPU) and
 * @pool_weight of @limits (all summing to ONE). 0 or -errno. */
int xrl_agg_write_shares(const struct xrl_datapath *dp, uint32_t id,
			 const struct xrl_budget_limits *limits,
			 const uint32_t *weights, uint32_t pool_weight);

/* After the swap: shares, state and pools of rules no longer aggregate
 * go. */
void xrl_agg_forget_stale(const struct xrl_datapath *dp,
			  const struct xrl_policy *policy);

/* Reads rule @id's per-CPU state into @per_cpu (xrl_datapath_cpus()
 * entries). -ENOENT before its first packet. */
int xrl_agg_read_state(const struct xrl_datapath *dp, uint32_t id,
		       struct xrl_agg_state *per_cpu);
/*
 * A policy's shares in two halves around the swap. Staging checks the
 * count (-E2BIG past XRL_MAX_AGGREGATES) and writes an even split for the
 * rules that have no shares yet (new ids: nothing in force reads them);
 * a refused apply undoes exactly that. After the swap, finishing writes
 * the even split of the rules that stayed (existing keys: it cannot run
 * out of room) and forgets the shares and state of rules gone.
 */
struct xrl_agg_plan {
	uint32_t *weights; /* per CPU: the floors of xrl_share_floors() */
	uint32_t pool; /* the rest, the pool's weight */
	uint32_t *added; /* ids whose shares staging wrote */
	size_t n_added;
};

int xrl_agg_stage(const struct xrl_datapath *dp,
		  const struct xrl_policy *policy, struct xrl_agg_plan *plan,
		  char *err, size_t len);
void xrl_agg_undo(const struct xrl_datapath *dp, struct xrl_agg_plan *plan);
void xrl_agg_finish(const struct xrl_datapath *dp,
		    const struct xrl_policy *policy, struct xrl_agg_plan *plan);
void xrl_agg_plan_free(struct xrl_agg_plan *plan);

#endif

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

/* Writes rule @id's per-CPU shares: @weights (one per possible CPU) of
 * @limits. 0 or -errno. */
int xrl_agg_write_shares(const struct xrl_datapath *dp, uint32_t id,
			 const struct xrl_budget_limits *limits,
			 const uint32_t *weights);

/*
 * With each policy (xrl_policy_apply): every aggregate rule of @policy
 * gets an even split of its budget (before the swap). -E2BIG past
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
#endif

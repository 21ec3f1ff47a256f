// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * aggregate.c - per-CPU shares of aggregate budgets in the data path's
 * maps (design: include/xrl.h, struct xrl_agg_share).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "aggregate.h"
#include "datapath.h"

/*
 * The rule's per-CPU state, zero, unless it has one: made here rather
 * than by the program's first packet, so that the map (not
 * preallocated) never allocates in the data path.
 */
static int make_state(const struct xrl_datapath *dp, uint32_t id)
{
	struct xrl_agg_state *zeros;
	int ret = 0;

	zeros = calloc(xrl_datapath_cpus(), sizeof(*zeros));
	if (!zeros)
		return -ENOMEM;
	ret = xrl_map_update(dp->agg_state_fd, &id, zeros, BPF_NOEXIST);
	if (ret == -EEXIST)
		ret = 0;
	free(zeros);
	return ret;
}

int xrl_agg_write_shares(const struct xrl_datapath *dp, uint32_t id,
			 const struct xrl_budget_limits *limits,
			 const uint32_t *weights, uint32_t pool_weight)
{
	unsigned n = xrl_datapath_cpus();
	struct xrl_agg_share *shares;
	int ret;

	shares = calloc(n, sizeof(*shares));
	if (!shares)
		return -ENOMEM;
	ret = xrl_agg_shares_compile(limits, weights, n, pool_weight, shares);
	/* One update sets every CPU's share; the program reads its own. */
	if (!ret)
		ret = xrl_map_update(dp->agg_shares_fd, &id, shares, 0);
	free(shares);
	return ret ? ret : make_state(dp, id);
}

static bool aggregate_id(const struct xrl_policy *policy, uint32_t id)
{
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].id == id &&
		    xrl_rule_is_aggregate(&policy->rules[i]))
			return true;
	return false;
}

/* Deletes the keys of @fd that are no aggregate rule of @policy. */
static void forget_stale(int fd, const struct xrl_policy *policy)
{
	uint32_t prev, next;
	bool have_prev = false;

	while (!bpf_map_get_next_key(fd, have_prev ? &prev : NULL, &next)) {
		/* Deleted: the key after @prev is now the one after it. */
		if (!aggregate_id(policy, next) &&
		    !bpf_map_delete_elem(fd, &next))
			continue;
		prev = next;
		have_prev = true;
	}
}

void xrl_agg_forget_stale(const struct xrl_datapath *dp,
			  const struct xrl_policy *policy)
{
	forget_stale(dp->agg_shares_fd, policy);
	forget_stale(dp->agg_state_fd, policy);
	forget_stale(dp->agg_pool_fd, policy);
}

int xrl_agg_read_state(const struct xrl_datapath *dp, uint32_t id,
		       struct xrl_agg_state *per_cpu)
{
	return bpf_map_lookup_elem(dp->agg_state_fd, &id, per_cpu) ? -errno : 0;
}

/* ---- with each policy: staged before the swap, finished after ------- */

int xrl_agg_stage(const struct xrl_datapath *dp,
		  const struct xrl_policy *policy, struct xrl_agg_plan *plan,
		  char *err, size_t len)
{
	unsigned n = xrl_datapath_cpus();
	struct xrl_budget_limits limits;
	struct xrl_agg_share *probe;
	size_t i, count = 0;
	int ret = 0;

	memset(plan, 0, sizeof(*plan));
	for (i = 0; i < policy->n_rules; i++)
		count += xrl_rule_is_aggregate(&policy->rules[i]);
	if (!count)
		return 0;
	if (count > XRL_MAX_AGGREGATES) {
		snprintf(err, len,
			 "%zu aggregate rules, more than the maximum "
			 "%d",
			 count, XRL_MAX_AGGREGATES);
		return -E2BIG;
	}
	plan->weights = calloc(n, sizeof(*plan->weights));
	plan->added = calloc(count, sizeof(*plan->added));
	probe = calloc(n, sizeof(*probe));
	if (!plan->weights || !plan->added || !probe) {
		ret = -ENOMEM;
		snprintf(err, len, "aggregate shares: %s", strerror(-ret));
		goto free_probe;
	}
	/* Without the daemon: each CPU a floor, the pool the rest, so that
	 * traffic on any set of CPUs gets the whole budget. */
	plan->pool = xrl_share_floors(n, XRL_SHARE_FLOOR_PERCENT, plan->weights);
	for (i = 0; i < policy->n_rules && !ret; i++) {
		const struct xrl_rule_spec *rule = &policy->rules[i];
		__u32 id = rule->id;

		if (!xrl_rule_is_aggregate(rule))
			continue;
		/* A rule in force keeps its shares until the swap. */
		if (!bpf_map_lookup_elem(dp->agg_shares_fd, &id, probe))
			continue;
		xrl_budget_limits_of(rule, &limits);
		ret = xrl_agg_write_shares(dp, id, &limits, plan->weights,
					   plan->pool);
		if (ret)
			snprintf(err, len, "rule %s: writing its shares: %s",
				 rule->name, strerror(-ret));
		else
			plan->added[plan->n_added++] = id;
	}
	if (ret)
		xrl_agg_undo(dp, plan);
free_probe:
	free(probe);
	if (ret)
		xrl_agg_plan_free(plan);
	return ret;
}

void xrl_agg_undo(const struct xrl_datapath *dp, struct xrl_agg_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n_added; i++)
		bpf_map_delete_elem(dp->agg_shares_fd, &plan->added[i]);
	plan->n_added = 0;
}

static bool was_added(const struct xrl_agg_plan *plan, __u32 id)
{
	size_t i;

	for (i = 0; i < plan->n_added; i++)
		if (plan->added[i] == id)
			return true;
	return false;
}

void xrl_agg_finish(const struct xrl_datapath *dp,
		    const struct xrl_policy *policy, struct xrl_agg_plan *plan)
{
	struct xrl_budget_limits limits;
	size_t i;

	for (i = 0; plan->weights && i < policy->n_rules; i++) {
		const struct xrl_rule_spec *rule = &policy->rules[i];

		if (!xrl_rule_is_aggregate(rule) || was_added(plan, rule->id))
			continue;
		/* The key exists: rewriting it allocates nothing. */
		xrl_budget_limits_of(rule, &limits);
		xrl_agg_write_shares(dp, rule->id, &limits, plan->weights,
				     plan->pool);
	}
	xrl_agg_forget_stale(dp, policy);
}

void xrl_agg_plan_free(struct xrl_agg_plan *plan)
{
	free(plan->weights);
	free(plan->added);
	memset(plan, 0, sizeof(*plan));
}

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
#include "limit.h"

static int compile_share(const struct xrl_budget_limits *limits,
			 uint32_t weight, struct xrl_agg_share *share)
{
	int ret = 0;

	memset(share, 0, sizeof(*share));
	if (limits->pps)
		ret = xrl_limit_compile_pps_weighted(limits->pps, limits->burst,
				weight, &share->limit[XRL_LIMIT_PACKETS]);
	if (!ret && limits->bps)
		ret = xrl_limit_compile_bps_weighted(limits->bps,
				limits->burst_bytes, weight,
				&share->limit[XRL_LIMIT_BYTES]);
	return ret;
}

int xrl_agg_write_shares(const struct xrl_datapath *dp, uint32_t id,
			 const struct xrl_budget_limits *limits,
			 const uint32_t *weights)
{
	unsigned i, n = xrl_datapath_cpus();
	struct xrl_agg_share *shares;
	int ret = 0;

	shares = calloc(n, sizeof(*shares));
	if (!shares)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++)
		ret = compile_share(limits, weights[i], &shares[i]);
	/* One update sets every CPU's share; the program reads its own. */
	if (!ret && bpf_map_update_elem(dp->agg_shares_fd, &id, shares, 0))
		ret = -errno;
	free(shares);
	return ret;
}

int xrl_agg_write_even(const struct xrl_datapath *dp,
		       const struct xrl_policy *policy, char *err, size_t len)
{
	struct xrl_budget_limits limits;
	unsigned n = xrl_datapath_cpus();
	size_t i, count = 0;
	uint32_t *weights;
	int ret = 0;

	for (i = 0; i < policy->n_rules; i++)
		count += xrl_rule_is_aggregate(&policy->rules[i]);
	if (!count)
		return 0;
	if (count > XRL_MAX_AGGREGATES) {
		snprintf(err, len, "%zu aggregate rules, more than the maximum "
			 "%d", count, XRL_MAX_AGGREGATES);
		return -E2BIG;
	}
	weights = calloc(n, sizeof(*weights));
	if (!weights)
		return -ENOMEM;
	xrl_share_even(n, weights);
	for (i = 0; i < policy->n_rules && !ret; i++) {
		const struct xrl_rule_spec *rule = &policy->rules[i];

		if (!xrl_rule_is_aggregate(rule))
			continue;
		xrl_budget_limits_of(rule, &limits);
		ret = xrl_agg_write_shares(dp, rule->id, &limits, weights);
		if (ret)
			snprintf(err, len, "rule %s: writing its shares: %s",
				 rule->name, strerror(-ret));
	}
	free(weights);
	return ret;
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
}

int xrl_agg_read_state(const struct xrl_datapath *dp, uint32_t id,
		       struct xrl_agg_state *per_cpu)
{
	return bpf_map_lookup_elem(dp->agg_state_fd, &id, per_cpu) ? -errno : 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * share.c - dividing an aggregate budget into weights, and the weights
 * into the limits of the shares (pure).
 */
#include <errno.h>
#include <string.h>
#include "limit.h"
#include "rule_spec.h"
#include "share.h"

void xrl_share_even(unsigned n, uint32_t *weights)
{
	unsigned i;

	for (i = 0; i < n; i++)
		weights[i] = XRL_SHARE_ONE / n + (i < XRL_SHARE_ONE % n);
}

uint32_t xrl_share_floor(unsigned n, unsigned floor_percent)
{
	uint32_t floor = n ? XRL_SHARE_ONE / n * floor_percent / 100 : 0;

	return floor ? floor : 1;
}

uint32_t xrl_share_floors(unsigned n, unsigned floor_percent,
			  uint32_t *weights)
{
	uint32_t floor = xrl_share_floor(n, floor_percent);
	unsigned i;

	for (i = 0; i < n; i++)
		weights[i] = floor;
	return XRL_SHARE_ONE - floor * n;
}

int xrl_share_split_part(const uint64_t *demand, unsigned n,
			 unsigned floor_percent, uint32_t part,
			 uint32_t *weights)
{
	unsigned __int128 part_of;
	uint64_t total = 0, rest[n ? n : 1];
	uint32_t floor, spare, given = 0;
	unsigned i, best;

	if (!n || n > XRL_SHARE_ONE || floor_percent > 100)
		return -EINVAL;
	floor = xrl_share_floor(n, floor_percent);
	if (part > XRL_SHARE_ONE || part < (uint64_t)floor * n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		total += demand[i];
	if (!total)
		return 1;
	spare = part - floor * n;
	for (i = 0; i < n; i++) {
		part_of = (unsigned __int128)spare * demand[i];
		weights[i] = floor + (uint32_t)(part_of / total);
		rest[i] = (uint64_t)(part_of % total);
		given += weights[i] - floor;
	}
	/* Largest remainders get the units lost to rounding down. */
	for (; given < spare; given++) {
		best = 0;
		for (i = 1; i < n; i++)
			if (rest[i] > rest[best])
				best = i;
		weights[best]++;
		rest[best] = 0;
	}
	return 0;
}

int xrl_share_split(const uint64_t *demand, unsigned n, unsigned floor_percent,
		    uint32_t *weights)
{
	return xrl_share_split_part(demand, n, floor_percent, XRL_SHARE_ONE,
				    weights);
}

bool xrl_rule_is_aggregate(const struct xrl_rule_spec *rule)
{
	return rule->scope == XRL_SCOPE_AGGREGATE &&
	       (rule->action == XRL_ACTION_LIMIT ||
		rule->action == XRL_ACTION_MONITOR);
}

void xrl_budget_limits_of(const struct xrl_rule_spec *rule,
			  struct xrl_budget_limits *out)
{
	out->pps = rule->pps;
	out->burst = rule->burst;
	out->bps = rule->bps;
	out->burst_bytes = rule->burst_bytes;
}

static uint64_t scale(uint64_t value, uint64_t num, uint64_t den)
{
	unsigned __int128 scaled;

	if (!value)
		return 0;
	scaled = (unsigned __int128)value * num / (den ? den : 1);
	return scaled ? (uint64_t)scaled : 1;
}

void xrl_budget_limits_scale(const struct xrl_budget_limits *limits,
			     uint64_t num, uint64_t den,
			     struct xrl_budget_limits *out)
{
	out->pps = scale(limits->pps, num, den);
	out->burst = scale(limits->burst, num, den);
	out->bps = scale(limits->bps, num, den);
	out->burst_bytes = scale(limits->burst_bytes, num, den);
}

/* Weight of ONE that @rate * weight / ONE <= @cap asks for, rounded down. */
static uint64_t weight_for(uint64_t rate, uint64_t cap)
{
	if (!rate)
		return XRL_SHARE_ONE;
	return (unsigned __int128)cap * XRL_SHARE_ONE / rate;
}

uint32_t xrl_agg_pool_weight(const struct xrl_budget_limits *limits,
			     unsigned n, unsigned floor_percent,
			     uint64_t pool_pps)
{
	uint64_t most = XRL_SHARE_ONE - (uint64_t)xrl_share_floor(
				n, floor_percent) * n;
	uint64_t w = weight_for(limits->pps, pool_pps);
	uint64_t w_bytes = weight_for(limits->bps, pool_pps *
				      XRL_AGG_FLOOR_BYTES * 8);

	if (w_bytes < w)
		w = w_bytes;
	return w < most ? (uint32_t)w : (uint32_t)most;
}

/* @weight of @limits (0: none, the limits stay unset). */
static int compile_weighted(const struct xrl_budget_limits *limits,
			    uint32_t weight, struct xrl_limit *out)
{
	int ret = 0;

	memset(out, 0, XRL_LIMIT_KINDS * sizeof(*out));
	if (!weight)
		return 0;
	if (limits->pps)
		ret = xrl_limit_compile_pps_weighted(limits->pps, limits->burst,
				weight, &out[XRL_LIMIT_PACKETS]);
	if (!ret && limits->bps)
		ret = xrl_limit_compile_bps_weighted(limits->bps,
				limits->burst_bytes, weight,
				&out[XRL_LIMIT_BYTES]);
	return ret;
}

int xrl_agg_shares_compile(const struct xrl_budget_limits *limits,
			   const uint32_t *weights, unsigned n,
			   uint32_t pool_weight, struct xrl_agg_share *shares)
{
	struct xrl_limit pool[XRL_LIMIT_KINDS];
	unsigned i;
	int ret;

	memset(shares, 0, n * sizeof(*shares));
	ret = compile_weighted(limits, pool_weight, pool);
	for (i = 0; i < n && !ret; i++) {
		/* A CPU always has a weight: a zero one would fail open. */
		ret = compile_weighted(limits, weights[i] ? weights[i] : 1,
				       shares[i].limit);
		memcpy(shares[i].pool, pool, sizeof(pool));
	}
	return ret;
}

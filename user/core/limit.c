// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include "limit.h"

#define NS_PER_S 1000000000ULL

/*
 * interval = ns_x_rate / rate ns, scaled by 2^shift into
 * [XRL_INTERVAL_MIN, 2 * XRL_INTERVAL_MIN): the shift is the one that
 * lands it there, found by comparing exact integers (no floating point
 * in what decides the representation).
 */
static int interval_shift(uint64_t ns_x_rate, uint64_t rate)
{
	unsigned __int128 time = ns_x_rate, span;
	int shift;

	/* The first shift at which the interval reaches 2 * MIN, minus one. */
	for (shift = XRL_SHIFT_MIN; shift <= XRL_SHIFT_MAX; shift++) {
		span = (unsigned __int128)2 * XRL_INTERVAL_MIN * rate;
		if (shift >= 0 ? time << shift >= span :
				 time >= span << -shift)
			return shift - 1;
	}
	return XRL_SHIFT_MAX;
}

/*
 * Sets interval and shift: ceil(ns_x_rate * 2^shift / rate), exact in
 * 128 bits for ns_x_rate < 2^64 and rate < 2^64 (a share's rate is
 * rate * weight, up to 2^60): rounding up keeps the admitted rate at or
 * below the configured one.
 */
static void compile_interval(uint64_t ns_x_rate, uint64_t rate,
			     struct xrl_limit *limit)
{
	unsigned __int128 time = ns_x_rate, per = rate;
	int shift;

	shift = interval_shift(ns_x_rate, rate);
	if (shift >= 0)
		time <<= shift;
	else
		per <<= -shift;
	limit->interval = (uint64_t)((time + per - 1) / per);
	limit->shift = shift;
}

/* interval = ns_x_rate / rate ns per unit: 1e9 / pps, 8e9 / bps */
static int compile(uint64_t ns_x_rate, uint64_t rate, uint64_t burst,
		   struct xrl_limit *limit)
{
	memset(limit, 0, sizeof(*limit));
	if (!rate || !burst)
		return -EINVAL;
	if (rate > XRL_RATE_MAX || burst > XRL_BURST_MAX)
		return -ERANGE;

	compile_interval(ns_x_rate, rate, limit);
	limit->tolerance = burst * limit->interval;
	return 0;
}

int xrl_limit_compile_pps(uint64_t pps, uint64_t burst, struct xrl_limit *limit)
{
	return compile(NS_PER_S, pps, burst, limit);
}

int xrl_limit_compile_pps_share(uint64_t pps, uint64_t burst, unsigned shares,
				struct xrl_limit *limit)
{
	uint64_t burst_share;

	if (!shares)
		return -EINVAL;
	burst_share = burst / shares ? burst / shares : 1;
	/* 1e9 / (pps / shares) ns per packet: exact, whatever the split. */
	return compile(NS_PER_S * shares, pps, burst && pps ? burst_share : 0,
		       limit);
}

/*
 * A share of weight / XRL_SHARE_ONE of a limit: interval for the rate
 * rate * weight / ONE (exact: 1e9 * ONE / (rate * weight), rate * ONE
 * below 2^60), and the whole
 * limit's tolerance as a time (burst / rate, in this share's units), but
 * never below one packet (or one full-size frame, XRL_AGG_FLOOR_BYTES): a
 * CPU whose share of the burst is under one packet still admits one.
 */
static int compile_share(uint64_t ns_x_rate, uint64_t rate, uint64_t burst,
			 uint32_t weight, uint64_t floor_cost,
			 struct xrl_limit *limit)
{
	unsigned __int128 tolerance;
	uint64_t floor;

	memset(limit, 0, sizeof(*limit));
	if (!rate || !burst || !weight || weight > XRL_SHARE_ONE)
		return -EINVAL;
	if (rate > XRL_RATE_MAX || burst > XRL_BURST_MAX)
		return -ERANGE;
	compile_interval(ns_x_rate * XRL_SHARE_ONE, rate * weight, limit);
	tolerance = (unsigned __int128)burst * weight * limit->interval /
		    XRL_SHARE_ONE;
	floor = (burst < floor_cost ? burst : floor_cost) * limit->interval;
	limit->tolerance = tolerance > floor ? (uint64_t)tolerance : floor;
	return 0;
}

int xrl_limit_compile_pps_weighted(uint64_t pps, uint64_t burst,
				   uint32_t weight, struct xrl_limit *limit)
{
	return compile_share(NS_PER_S, pps, burst, weight, 1, limit);
}

int xrl_limit_compile_bps_weighted(uint64_t bps, uint64_t burst_bytes,
				   uint32_t weight, struct xrl_limit *limit)
{
	return compile_share(8 * NS_PER_S, bps, burst_bytes, weight,
			     XRL_AGG_FLOOR_BYTES, limit);
}

int xrl_limit_compile_pace(uint64_t ns, uint64_t packets, uint64_t burst,
			   struct xrl_limit *limit)
{
	if (!ns)
		return -EINVAL;
	return compile(ns, packets, burst, limit);
}

int xrl_limit_compile_bps(uint64_t bps, uint64_t burst_bytes,
			  struct xrl_limit *limit)
{
	return compile(8 * NS_PER_S, bps, burst_bytes, limit);
}

double xrl_limit_rate(const struct xrl_limit *limit)
{
	if (!limit->interval)
		return 0;
	return ldexp((double)NS_PER_S / (double)limit->interval, limit->shift);
}

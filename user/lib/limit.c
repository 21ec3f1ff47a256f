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

/* interval = ns_x_rate / rate ns per unit: 1e9 / pps, 8e9 / bps */
static int compile(uint64_t ns_x_rate, uint64_t rate, uint64_t burst,
		   struct xrl_limit *limit)
{
	unsigned __int128 numerator;
	int shift;

	memset(limit, 0, sizeof(*limit));
	if (!rate || !burst)
		return -EINVAL;
	if (rate > XRL_RATE_MAX || burst > XRL_BURST_MAX)
		return -ERANGE;

	shift = interval_shift(ns_x_rate, rate);
	/* ceil(ns_x_rate * 2^shift / rate), exact in 128 bits: rounding up
	 * keeps the admitted rate at or below the configured one. */
	numerator = (unsigned __int128)ns_x_rate << (shift + 64);
	numerator = (numerator + rate - 1) / rate;
	limit->interval = (uint64_t)((numerator + UINT64_MAX) >> 64);
	limit->tolerance = burst * limit->interval;
	limit->shift = shift;
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

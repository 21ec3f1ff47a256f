/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_LIMIT_H
#define XRL_LIMIT_H

#include <stdint.h>
#include "xrl.h"

/* Largest rates (pps, or bits per second) and bursts a policy may ask for. */
#define XRL_RATE_MAX	1000000000000ULL	/* 1e12 */
#define XRL_BURST_MAX	(1ULL << 32)
/* Least burst of a CPU's share of a byte budget: one full-size frame. */
#define XRL_AGG_FLOOR_BYTES	1518

/*
 * Compile a rate and its burst into the GCRA form the XDP program uses
 * (see struct xrl_limit in include/xrl.h): packets per second with a
 * burst in packets, or bits per second with a burst in bytes. Return 0,
 * -EINVAL for a zero rate or burst, -ERANGE for one beyond the maxima.
 */
int xrl_limit_compile_pps(uint64_t pps, uint64_t burst,
			  struct xrl_limit *limit);
/*
 * One of @shares equal shares of a pps limit: rate pps / shares, burst
 * burst / shares (at least 1), so that @shares such limits together admit
 * at most pps * t + max(burst, shares). Used for per-CPU budgets.
 */
int xrl_limit_compile_pps_share(uint64_t pps, uint64_t burst, unsigned shares,
				struct xrl_limit *limit);
/*
 * A CPU's share of an aggregate budget: weight / XRL_SHARE_ONE of the rate
 * and of the burst (the tolerance, a time, is the whole limit's; at least
 * one packet or byte's worth). Shares whose weights sum to XRL_SHARE_ONE
 * together admit at most rate * t + burst + one packet (or one
 * XRL_AGG_FLOOR_BYTES frame) per CPU.
 */
int xrl_limit_compile_pps_weighted(uint64_t pps, uint64_t burst,
				   uint32_t weight, struct xrl_limit *limit);
int xrl_limit_compile_bps_weighted(uint64_t bps, uint64_t burst_bytes,
				   uint32_t weight, struct xrl_limit *limit);
/* A pace: @packets packets every @ns nanoseconds (rate packets / ns),
 * with a burst in packets: the limit pps = 1e9 * packets / ns would get
 * when that is whole (same rounding), for leaky buckets and windows. */
int xrl_limit_compile_pace(uint64_t ns, uint64_t packets, uint64_t burst,
			   struct xrl_limit *limit);
int xrl_limit_compile_bps(uint64_t bps, uint64_t burst_bytes,
			  struct xrl_limit *limit);

/* What a compiled limit really admits per second (packets, or bytes for a
 * bps limit), for display and for tests of the error bound. */
double xrl_limit_rate(const struct xrl_limit *limit);

#endif

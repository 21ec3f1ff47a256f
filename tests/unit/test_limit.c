// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rate -> GCRA compilation (user/core/limit.c): shifts, error bound, limits. */
#include <errno.h>
#include <criterion/criterion.h>
#include "limit.h"

#define NS_PER_S 1000000000ULL

/*
 * The compiled interval I (units of 2^-shift ns per packet or byte) must
 * satisfy, exactly in integers, with T = ns per packet or byte times rate
 * (1e9 for pps, 8e9 for bps):
 *   never faster:      I * rate >= T * 2^shift
 *   within 1/4096:     (I - 1) * rate < T * 2^shift, I >= 4096
 * so the admitted rate is <= the configured one and within 0.025%.
 */
static void check_interval(uint64_t ns_x_rate, uint64_t rate,
			   const struct xrl_limit *lim)
{
	unsigned __int128 exact = ns_x_rate, lhs;

	exact = lim->shift >= 0 ? exact << lim->shift : exact;
	lhs = (unsigned __int128)lim->interval * rate;
	if (lim->shift < 0)
		lhs <<= -lim->shift;
	cr_assert(lhs >= exact, "rate %lu: interval %lu shift %d is too short",
		  rate, lim->interval, lim->shift);
	lhs = (unsigned __int128)(lim->interval - 1) * rate;
	if (lim->shift < 0)
		lhs <<= -lim->shift;
	cr_assert(lhs < exact, "rate %lu: interval %lu shift %d is too long",
		  rate, lim->interval, lim->shift);
	cr_assert(lim->interval >= XRL_INTERVAL_MIN &&
		  lim->interval <= 2 * XRL_INTERVAL_MIN,
		  "rate %lu: interval %lu out of range", rate, lim->interval);
}

/* Rates spread over [lo, hi]: every power of two, its neighbours, and
 * 1000 points per decade of a geometric walk. */
static void for_rates(uint64_t lo, uint64_t hi,
		      void (*check)(uint64_t rate))
{
	double r;
	int bit;

	for (r = lo; r <= hi; r *= 1.0023)
		check((uint64_t)r);
	for (bit = 0; bit < 64; bit++) {
		uint64_t p = 1ULL << bit;

		if (p >= lo && p <= hi)
			check(p);
		if (p - 1 >= lo && p - 1 <= hi)
			check(p - 1);
		if (p + 1 >= lo && p + 1 <= hi)
			check(p + 1);
	}
	check(lo);
	check(hi);
}

static void check_pps(uint64_t pps)
{
	struct xrl_limit lim;
	double real;

	cr_assert_eq(xrl_limit_compile_pps(pps, 7, &lim), 0, "pps %lu", pps);
	check_interval(NS_PER_S, pps, &lim);
	cr_assert_eq(lim.tolerance, 7 * lim.interval);
	real = xrl_limit_rate(&lim);
	cr_assert(real <= pps * (1 + 1e-12) && real >= pps * (1 - 0.001),
		  "pps %lu compiles to %.6f", pps, real);
}

static void check_bps(uint64_t bps)
{
	struct xrl_limit lim;
	double real;

	cr_assert_eq(xrl_limit_compile_bps(bps, 1500, &lim), 0, "bps %lu", bps);
	check_interval(8 * NS_PER_S, bps, &lim);
	cr_assert_eq(lim.tolerance, 1500 * lim.interval);
	/* xrl_limit_rate of a bps limit is in bytes per second. */
	real = xrl_limit_rate(&lim) * 8;
	cr_assert(real <= bps * (1 + 1e-12) && real >= bps * (1 - 0.001),
		  "bps %lu compiles to %.6f", bps, real);
}

Test(limit, pps_from_1_to_100M_is_never_above_and_within_0_1_percent)
{
	for_rates(1, 100000000, check_pps);
}

Test(limit, bps_from_8k_to_400G_is_never_above_and_within_0_1_percent)
{
	for_rates(8000, 400000000000ULL, check_bps);
}

Test(limit, rates_outside_the_advertised_range_still_compile_exactly)
{
	for_rates(100000000, XRL_RATE_MAX, check_pps);
	for_rates(1, 8000, check_bps);
	for_rates(400000000000ULL, XRL_RATE_MAX, check_bps);
}

Test(limit, shifts_at_the_ends_of_the_range)
{
	struct {
		int bps;
		uint64_t rate;
		int shift;
	} cases[] = {
		{ 0, 1, -17 },			/* 1 s per packet */
		{ 0, 100000000, 9 },		/* 10 ns per packet */
		{ 1, 8000, -7 },		/* 1 ms per byte */
		{ 1, 400000000000ULL, 18 },	/* 0.02 ns per byte */
		{ 1, 8, -17 },			/* 1 s per byte */
	};
	struct xrl_limit lim;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = cases[i].bps ?
			xrl_limit_compile_bps(cases[i].rate, 1, &lim) :
			xrl_limit_compile_pps(cases[i].rate, 1, &lim);

		cr_assert_eq(ret, 0);
		cr_assert_eq(lim.shift, cases[i].shift, "rate %lu: shift %d",
			     cases[i].rate, lim.shift);
		cr_assert(lim.shift >= XRL_SHIFT_MIN &&
			  lim.shift <= XRL_SHIFT_MAX);
	}
}

Test(limit, tolerance_fits_the_bucket_clock_for_every_burst)
{
	struct xrl_limit lim;

	/* Largest interval, largest burst: under 2^45 units, far inside the
	 * 2^57 units a bucket's 58-bit clock tells apart (include/xrl.h). */
	cr_assert_eq(xrl_limit_compile_pps(3, XRL_BURST_MAX, &lim), 0);
	cr_assert_eq(lim.tolerance, XRL_BURST_MAX * lim.interval);
	cr_assert_lt(lim.tolerance, 1ULL << 46);
	cr_assert_eq(xrl_limit_compile_bps(XRL_RATE_MAX, XRL_BURST_MAX, &lim),
		     0);
	cr_assert_lt(lim.tolerance, 1ULL << 46);
}

Test(limit, zero_rate_or_burst_is_einval)
{
	struct xrl_limit lim = { .interval = 1 };

	cr_assert_eq(xrl_limit_compile_pps(0, 10, &lim), -EINVAL);
	cr_assert_eq(lim.interval, 0, "a failed compile leaves no limit");
	cr_assert_eq(xrl_limit_compile_pps(10, 0, &lim), -EINVAL);
	cr_assert_eq(xrl_limit_compile_bps(0, 1500, &lim), -EINVAL);
	cr_assert_eq(xrl_limit_compile_bps(8000, 0, &lim), -EINVAL);
}

Test(limit, rate_or_burst_past_the_maximum_is_erange)
{
	struct xrl_limit lim;

	cr_assert_eq(xrl_limit_compile_pps(XRL_RATE_MAX, 1, &lim), 0);
	cr_assert_eq(xrl_limit_compile_pps(XRL_RATE_MAX + 1, 1, &lim), -ERANGE);
	cr_assert_eq(xrl_limit_compile_bps(XRL_RATE_MAX + 1, 1, &lim), -ERANGE);
	cr_assert_eq(xrl_limit_compile_pps(1, XRL_BURST_MAX, &lim), 0);
	cr_assert_eq(xrl_limit_compile_pps(1, XRL_BURST_MAX + 1, &lim),
		     -ERANGE);
	cr_assert_eq(xrl_limit_compile_bps(8, XRL_BURST_MAX + 1, &lim),
		     -ERANGE);
	cr_assert_eq(xrl_limit_compile_pps(UINT64_MAX, 1, &lim), -ERANGE);
}

Test(limit, an_unset_limit_has_no_rate)
{
	struct xrl_limit lim = { 0 };

	cr_assert_eq(xrl_limit_rate(&lim), 0);
}

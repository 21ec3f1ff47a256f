// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * clock.c - the one reading of the clocks (clock.h).
 */
#include "clock.h"

uint64_t xrl_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * XRL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

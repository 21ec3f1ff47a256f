/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * clock.h - the one reading of the clocks. CLOCK_MONOTONIC is the
 * program's clock (bpf_ktime_get_ns()): buckets, bans, deadlines and the
 * sync engine are on it; CLOCK_REALTIME is the wall clock, for what is
 * kept across restarts and shown to people.
 */
#ifndef XRL_CLOCK_H
#define XRL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define XRL_NS_PER_US	1000ULL
#define XRL_NS_PER_MS	1000000ULL
#define XRL_NS_PER_S	1000000000ULL

/* The time on @clock, in nanoseconds. */
uint64_t xrl_clock_ns(clockid_t clock);

#endif

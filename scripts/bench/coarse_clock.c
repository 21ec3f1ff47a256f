// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * clock.c - what the coarse clock (bpf_ktime_get_coarse_ns) would cost in
 * accuracy. Its speed gain is measured by `xrl-bench micro` (the clock
 * rows); here the limiter runs on its test clock, fed either exact
 * packet times or the same times rounded down to the coarse clock's
 * tick, as the coarse clock would report them, and what it admits is
 * compared with what the rule allows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "coarse_clock.h"
#include "datapath.h"
#include "loader.h"
#include "packet.h"
#include "policy.h"
#include "policy_map.h"
#include "stats.h"

#define SIM_START_NS	(1000 * NS_PER_S)
#define ACCURACY_GOAL	0.001	/* 0.1% of the long-run rate */

struct sim {
	__u64 pps, burst;	/* the rule */
	double offered;		/* packets per second sent, evenly spaced */
	double seconds;
	__u64 tick_ns;		/* 1: the precise clock */
};

static __u64 passed_count(struct xrl_datapath *dp)
{
	struct xrl_counter totals[XRL_VERDICT_COUNT];

	if (xrl_stats_read(dp, totals))
		return 0;
	return totals[XRL_VERDICT_PASS].packets;
}

static int apply_rule(struct xrl_datapath *dp, const struct sim *s)
{
	struct xrl_policy policy;
	char err[256] = "";
	int ret;

	ret = xrl_policy_init(&policy);
	if (ret)
		return ret;
	policy.rules[0].action = XRL_ACTION_LIMIT;
	policy.rules[0].pps = s->pps;
	policy.rules[0].burst = s->burst;
	ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("clock: %s", err);
	xrl_policy_free(&policy);
	return ret;
}

/*
 * Sends s->offered * s->seconds packets of a fresh source, each at its
 * exact time rounded down to the tick; packets that share a clock
 * reading go in one test run. Stores how many were admitted.
 */
static int simulate(struct xrl_datapath *dp, const struct sim *s, int source,
		    __u64 *admitted)
{
	__u64 n_packets = (__u64)(s->offered * s->seconds);
	__u64 i = 0, group, seen, before;
	char src[32];
	struct packet pkt;
	int ret;

	snprintf(src, sizeof(src), "198.18.%d.%d", source / 250, 1 + source % 250);
	if (packet_from(&pkt, src))
		return -EINVAL;
	ret = apply_rule(dp, s);
	if (ret)
		return ret;
	before = passed_count(dp);
	while (i < n_packets) {
		seen = SIM_START_NS + (__u64)(i * (NS_PER_S / s->offered));
		seen -= seen % s->tick_ns;
		/* The packets after i that the clock shows at the same time. */
		for (group = 1; i + group < n_packets; group++) {
			__u64 t = SIM_START_NS +
				  (__u64)((i + group) * (NS_PER_S / s->offered));

			if (t - t % s->tick_ns != seen)
				break;
		}
		xrl_datapath_set_time(dp, seen);
		/*
		 * One packet per test run: a run of more repeats switches
		 * the kernel's XDP dispatcher to the program and back, an
		 * RCU grace period each, milliseconds on a busy machine.
		 */
		for (; group; group--, i++) {
			ret = bench_test_run(dp->prog_fd, pkt.data, pkt.len, 1,
					     NULL, NULL);
			if (ret)
				return ret;
		}
	}
	*admitted = passed_count(dp) - before;
	return 0;
}

/* Admitted long-run rate against the rule's, for a flood over it. */
static int flood_row(struct xrl_datapath *dp, const struct sim *s, int source)
{
	char name[160], value[96], target[32];
	__u64 admitted;
	double rate, error;
	int ret;

	ret = simulate(dp, s, source, &admitted);
	if (ret)
		return ret;
	/* The burst passes once; after it, the rate. */
	rate = (admitted - (double)s->burst) / s->seconds;
	error = rate / s->pps - 1;
	snprintf(name, sizeof(name),
		 "%s clock, %llu pps burst %llu, flood at %.0fx for %g s",
		 s->tick_ns > 1 ? "coarse" : "precise",
		 (unsigned long long)s->pps, (unsigned long long)s->burst,
		 s->offered / s->pps, s->seconds);
	snprintf(value, sizeof(value), "%llu admitted, rate error %+.3f%%",
		 (unsigned long long)admitted, 100 * error);
	snprintf(target, sizeof(target), "within 0.1%%");
	bench_row("clock accuracy (test-clock simulation)", name, value, "",
		  target, bench_verdict(fabs(error), ACCURACY_GOAL));
	return 0;
}

/* What a sender that keeps to the rate loses. */
static int steady_row(struct xrl_datapath *dp, const struct sim *s, int source)
{
	char name[160], value[96];
	__u64 admitted, sent = (__u64)(s->offered * s->seconds);
	double refused;
	int ret;

	ret = simulate(dp, s, source, &admitted);
	if (ret)
		return ret;
	refused = 1 - (double)admitted / sent;
	snprintf(name, sizeof(name),
		 "%s clock, %llu pps burst %llu, steady sender at %.0f%% of it "
		 "for %g s",
		 s->tick_ns > 1 ? "coarse" : "precise",
		 (unsigned long long)s->pps, (unsigned long long)s->burst,
		 100 * s->offered / s->pps, s->seconds);
	snprintf(value, sizeof(value), "%.3f%% refused", 100 * refused);
	bench_row("clock accuracy (test-clock simulation)", name, value, "",
		  "none refused", refused == 0 ? "met" : "**MISSED**");
	return 0;
}

int bench_clock(int argc, char **argv)
{
	struct xrl_load_opts opts = { .max_sources = 1024, .test_clock = true };
	struct xrl_datapath dp;
	struct timespec res;
	char value[32];
	__u64 tick;
	int ret, source = 0;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		return -errno;
	tick = res.tv_sec * NS_PER_S + res.tv_nsec;
	snprintf(value, sizeof(value), "%.1f ms", tick / 1e6);
	bench_row("clock accuracy (test-clock simulation)",
		  "coarse clock tick (clock_getres CLOCK_MONOTONIC_COARSE)",
		  value, "", "", "");
	ret = xrl_datapath_load(&dp, &opts);
	if (ret)
		return ret;
	{
		const struct sim floods[] = {
			{ 100000, 100000 * tick / NS_PER_S, 200000, 1, 1 },
			{ 100000, 100000 * tick / NS_PER_S, 200000, 1, tick },
			{ 100000, 100000 * tick / NS_PER_S, 200000, 10, tick },
			{ 1000, 1000 * tick / NS_PER_S, 2000, 10, tick },
			{ 1000, 1000 * tick / NS_PER_S + 1, 2000, 10, tick },
			{ 100000, 100000 * tick / NS_PER_S / 4, 200000, 10, tick },
		};
		const struct sim steady[] = {
			{ 100000, 100000 * tick / NS_PER_S, 99000, 1, 1 },
			{ 100000, 100000 * tick / NS_PER_S, 99000, 1, tick },
			{ 100000, 100000 * tick / NS_PER_S / 4, 99000, 1, tick },
		};
		size_t i;

		for (i = 0; !ret && i < sizeof(floods) / sizeof(*floods); i++)
			ret = flood_row(&dp, &floods[i], source++);
		for (i = 0; !ret && i < sizeof(steady) / sizeof(*steady); i++)
			ret = steady_row(&dp, &steady[i], source++);
	}
	if (ret)
		bench_log("clock: %s", strerror(-ret));
	xrl_datapath_close(&dp);
	return ret;
}

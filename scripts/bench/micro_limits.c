// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * micro_limits.c - rows of the limiter's own path: the floor every row
 * pays, the limiter against the reference with 1 to 100,000 rules, the
 * new-source budget, the sliding window, the clocks (micro.h).
 */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "micro.h"
#include "policy.h"
#include "policy_map.h"
#include "ref.skel.h"
#include "rules.h"
#include "verdict.skel.h"

int micro_floor(struct micro *m)
{
	struct side sides[] = {
		{ .prog_fd = bpf_program__fd(m->ref->progs.bench_ref) },
		{ .prog_fd = bpf_program__fd(m->verdict->progs.bench_drop) },
	};
	int ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 2);

	if (!ret)
		micro_row_ns("wrapper + XDP_DROP against the reference, one "
			     "hot source (floor paid by every row)", &sides[1],
			     &sides[0], "", 0);
	return ret;
}

int micro_rules(struct micro *m, size_t n_rules)
{
	char target[96];
	double limit;
	struct side sides[2] = {
		{ .prog_fd = bpf_program__fd(m->ref->progs.bench_ref) },
		{ .prog_fd = m->dp.prog_fd },
	};
	char name[128];
	int t, ret;

	ret = bench_apply_rules(&m->dp, n_rules, false);
	for (t = 0; !ret && t < TRAFFICS; t++) {
		if (m->only && !strstr(m->only, traffic_keys[t]))
			continue;
		bench_log("micro: %zu rules, %s", n_rules, traffics[t].name);
		ret = micro_warm(m, t, sides[0].prog_fd);
		if (!ret)
			ret = micro_warm(m, t, sides[1].prog_fd);
		if (!ret)
			ret = micro_side_by_side(m, t, sides, 2);
		if (ret)
			break;
		snprintf(name, sizeof(name), "limiter vs reference, %zu rule%s, "
			 "%s", n_rules, n_rules > 1 ? "s" : "",
			 traffics[t].name);
		limit = micro_goal_of(t, n_rules, target, sizeof(target));
		micro_row_ns(name, &sides[1], &sides[0], target, limit);
	}
	return ret;
}

/*
 * Always-new sources under the product's default new-source budget: past
 * the budget's burst, a new source gets no bucket but is judged by its
 * /48's fallback bucket (include/xrl.h). Measured after the hit-path
 * rows, with the table full.
 */
int micro_budget(struct micro *m)
{
	struct side sides[2] = {
		{ .prog_fd = bpf_program__fd(m->ref->progs.bench_ref) },
		{ .prog_fd = m->dp.prog_fd },
	};
	int ret;

	ret = bench_apply_rules(&m->dp, 1, true);
	if (!ret)
		ret = micro_warm(m, TRAFFIC_NEW, sides[1].prog_fd);
	if (!ret)
		ret = micro_side_by_side(m, TRAFFIC_NEW, sides, 2);
	if (ret)
		return ret;
	micro_row_ns("limiter vs reference, 1 rule, always-new sources, table "
		     "full, default new-source budget (refused: /48 fallback "
		     "bucket)", &sides[1], &sides[0], "", 0);
	return 0;
}

/*
 * A sliding window (issue 14) on one hot source: limit 1,000,000 in 1 ms,
 * which the source never reaches, so every packet is admitted: one add
 * to the sub-window's counter, the other 15 read, a rotation every
 * 66.7 us. Against the reference admitting too (micro_levels()).
 * Goal of issue 25: <= 1.5.
 */
int micro_window(struct micro *m)
{
	struct side sides[2] = {
		{ .prog_fd = bpf_program__fd(m->ref_admitting->progs.bench_ref) },
		{ .prog_fd = m->dp.prog_fd },
	};
	struct xrl_policy policy;
	char err[256] = "";
	int ret;

	ret = bench_build_policy(&policy, 1, false);
	if (!ret) {
		policy.rules[0].pps = policy.rules[0].burst = 0;
		policy.rules[0].strategy = (struct xrl_strategy_spec){
			.kind = XRL_STRATEGY_SLIDING_WINDOW,
			.limit = XRL_WINDOW_LIMIT_MAX,
			.window_ns = 1000000,
		};
		ret = xrl_policy_apply(&m->dp, &policy, err, sizeof(err));
		if (ret)
			bench_log("micro: window policy: %s", err);
	}
	xrl_policy_free(&policy);
	if (!ret)
		ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 2);
	if (ret)
		return ret;
	micro_row_ns("limiter vs reference admitting, 1 sliding_window rule "
		     "(1000000 in 1ms: admitted), one hot source", &sides[1],
		     &sides[0], "<= 1.5 (issue 25)", 1.5);
	return 0;
}

/* The clock's share: each program with the precise clock, the coarse
 * clock, and (the limiter) no clock read at all. */
int micro_clocks(struct micro *m)
{
	struct side sides[] = {
		{ .prog_fd = bpf_program__fd(m->ref->progs.bench_ref) },
		{ .prog_fd = bpf_program__fd(m->ref_coarse->progs.bench_ref) },
		{ .prog_fd = m->dp.prog_fd },
		{ .prog_fd = m->dp_clockless.prog_fd },
	};
	int ret;

	ret = bench_apply_rules(&m->dp, 1, false);
	if (!ret)
		ret = bench_apply_rules(&m->dp_clockless, 1, false);
	if (!ret)
		ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 4);
	if (ret)
		return ret;
	micro_row_ns("reference with bpf_ktime_get_coarse_ns vs with "
		     "bpf_ktime_get_ns, one hot source", &sides[1], &sides[0],
		     "", 0);
	micro_row_ns("limiter, 1 rule, no clock read (test clock) vs "
		     "reference, one hot source", &sides[3], &sides[0], "", 0);
	return 0;
}

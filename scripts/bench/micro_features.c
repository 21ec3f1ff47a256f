// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * micro_features.c - rows of what a rule may add: levels, an L4 match,
 * bans (micro.h).
 */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cidr.h"
#include "limit.h"
#include "loader.h"
#include "micro.h"
#include "policy.h"
#include "policy_map.h"
#include "ref.skel.h"
#include "rules.h"
#include "verdict.skel.h"

/*
 * Levels (issue 14) on one hot source: the default rule with 0, 2 (/24,
 * /16) and 3 (/24, /16, /8) IPv4 levels, every bucket admitting (10^12
 * pps, burst 2^32), so each packet takes from the source's bucket and
 * from every level's: one lookup of the level's limits and one of its
 * bucket, and a compare-and-swap, per level. Against the reference
 * admitting too (so both sides write their bucket; the reference that
 * refuses, as the token-bucket rows have it, runs beside them for
 * scale); the 0-level row is the same rule without levels, for the cost
 * of the levels themselves. Goals of issue 25: 0 levels <= 1.1, 3
 * levels <= 3.5.
 */
static int apply_levels(struct micro *m, unsigned n_levels)
{
	static const unsigned prefixes[] = { 24, 16, 8 };
	struct xrl_policy policy;
	struct xrl_rule_spec *rule;
	char err[256] = "";
	unsigned i;
	int ret;

	ret = bench_build_policy(&policy, 1, false);
	if (ret)
		goto out;
	rule = &policy.rules[0];
	rule->pps = XRL_RATE_MAX;
	rule->burst = XRL_BURST_MAX;
	rule->n_levels = n_levels;
	for (i = 0; i < n_levels; i++)
		rule->levels[i] = (struct xrl_level_spec){
			.family = XRL_FAMILY_IPV4, .prefix = prefixes[i],
			.pps = XRL_RATE_MAX, .burst = XRL_BURST_MAX,
		};
	ret = xrl_policy_apply(&m->dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("micro: %u levels: %s", n_levels, err);
out:
	xrl_policy_free(&policy);
	return ret;
}

int micro_levels(struct micro *m)
{
	static const unsigned counts[] = { 0, 2, 3 };
	static const double goals[] = { 1.1, 0, 3.5 };
	struct side sides[3] = {
		{ .prog_fd = bpf_program__fd(m->ref_admitting->progs.bench_ref) },
		{ .prog_fd = m->dp.prog_fd },
		{ .prog_fd = bpf_program__fd(m->ref->progs.bench_ref) },
	};
	char name[160], goal[32] = "";
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < sizeof(counts) / sizeof(*counts); i++) {
		ret = apply_levels(m, counts[i]);
		if (!ret)
			ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 3);
		if (ret)
			break;
		snprintf(name, sizeof(name), "limiter vs reference admitting, "
			 "1 rule with %u IPv4 level%s%s (all admitting), one "
			 "hot source", counts[i], counts[i] == 1 ? "" : "s",
			 counts[i] == 3 ? " (/24, /16, /8)" :
			 counts[i] == 2 ? " (/24, /16)" : "");
		if (goals[i])
			snprintf(goal, sizeof(goal), "<= %.1f (issue 25)",
				 goals[i]);
		micro_row_ns(name, &sides[1], &sides[0], goals[i] ? goal : "",
			     goals[i]);
		if (!counts[i])
			micro_row_ns("reference admitting vs reference "
				     "refusing, one hot source (what an "
				     "admission adds)", &sides[0], &sides[2],
				     "", 0);
	}
	return ret;
}

/*
 * An L4 rule covering the hot source (issue 14): its key is split and
 * every packet is classified, reading the L4 header. The frame is UDP
 * with ports 0: the rule "udp dport 0-1023" takes it; "tcp syn" is
 * looked at and passes it by, so the prefix's plain rule judges it.
 */
static int apply_l4_rule(struct xrl_datapath *dp, bool matching)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT,
		.pps = BENCH_PPS,
		.burst = BENCH_BURST,
	};
	struct xrl_policy policy;
	char err[256] = "";
	int ret;

	ret = bench_build_policy(&policy, 1, false);
	if (!ret)
		ret = xrl_cidr_parse("198.18.0.0/15", &rule.prefix);
	if (!ret) {
		snprintf(rule.name, sizeof(rule.name), "plain");
		ret = xrl_policy_add(&policy, &rule);
	}
	if (!ret) {
		snprintf(rule.name, sizeof(rule.name), "l4");
		rule.match.proto = matching ? 17 : 6;	/* udp, tcp */
		rule.match.flags = matching ? XRL_MATCH_DPORT : XRL_MATCH_SYN;
		rule.match.dport_hi = matching ? 1023 : 0;
		ret = xrl_policy_add(&policy, &rule);
	}
	if (!ret)
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("applying the L4 rule: %s %s", strerror(-ret), err);
	xrl_policy_free(&policy);
	return ret;
}

int micro_l4(struct micro *m)
{
	struct side sides[2] = {
		{ .prog_fd = bpf_program__fd(m->ref->progs.bench_ref) },
		{ .prog_fd = m->dp.prog_fd },
	};
	int matching, ret = 0;

	for (matching = 1; !ret && matching >= 0; matching--) {
		ret = apply_l4_rule(&m->dp, matching);
		if (!ret)
			ret = micro_warm(m, TRAFFIC_HOT, sides[1].prog_fd);
		if (!ret)
			ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 2);
		if (ret)
			break;
		micro_row_ns(matching ? "limiter vs reference, L4 rule (udp "
			     "dport 0-1023) taking the hot source, one hot "
			     "source" :
			     "limiter vs reference, L4 rule (tcp syn) passing "
			     "the hot source by to its prefix's plain rule, "
			     "one hot source", &sides[1], &sides[0], "", 0);
	}
	return ret;
}

/*
 * Issue 14, bans: a banned source should be the cheapest drop there is.
 * One hot source under a default rule of 1 pps, burst 1, so that every
 * packet but the first is dropped: by the limit on one data path, and
 * on another, where the rule has ban: 30d, unjudged (banned at its first
 * drop). Both load the same program; only the policy differs.
 */
int micro_apply_over_limit(struct xrl_datapath *dp, bool ban)
{
	struct xrl_policy policy;
	char err[256] = "";
	int ret = bench_build_policy(&policy, 1, false);

	if (!ret) {
		policy.rules[0].pps = 1;
		policy.rules[0].burst = 1;
		policy.rules[0].ban.ns = ban ? 30 * 86400 * NS_PER_S : 0;
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	}
	if (ret)
		bench_log("bans: %s %s", strerror(-ret), err);
	xrl_policy_free(&policy);
	return ret;
}

int micro_bans(struct micro *m)
{
	struct xrl_datapath banning;
	struct side sides[3] = {
		{ .prog_fd = bpf_program__fd(m->verdict->progs.bench_drop) },
		{ .prog_fd = m->dp.prog_fd },
	};
	int ret;

	ret = xrl_datapath_load(&banning, NULL);
	if (ret)
		return ret;
	sides[2].prog_fd = banning.prog_fd;
	bench_log("micro: a banned source");
	ret = micro_apply_over_limit(&m->dp, false);
	if (!ret)
		ret = micro_apply_over_limit(&banning, true);
	if (!ret)
		ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 3);
	if (!ret) {
		micro_row_ns("banned source (ban: 30d) vs the same source "
			     "dropped by its limit, one hot source", &sides[2],
			     &sides[1], "< 1.00 (the cheapest drop)", 1.0);
		micro_row_ns("banned source vs wrapper + XDP_DROP (the floor)",
			     &sides[2], &sides[0], "", 0);
	}
	xrl_datapath_close(&banning);
	return ret;
}

/*
 * Issue 26, escalation: what a rule with escalate_ costs a source it
 * passes (one lookup of its prefix's record per packet), against the
 * same rule without. The hot source under 198.18.0.0/15 with a ban, on
 * two data paths of the same program; only the policy differs.
 */
static int apply_escalating(struct xrl_datapath *dp, bool escalate)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT,
		.pps = BENCH_PPS,
		.burst = BENCH_BURST,
		.ban.ns = 3600 * NS_PER_S,
	};
	struct xrl_policy policy;
	char err[256] = "";
	int ret;

	if (escalate)
		rule.ban.escalate = (struct xrl_rule_spec_escalate){
			.prefix = 24, .after = 5, .within_ns = 600 * NS_PER_S,
			.ns = 3600 * NS_PER_S,
		};
	ret = bench_build_policy(&policy, 1, false);
	if (!ret)
		ret = xrl_cidr_parse("198.18.0.0/15", &rule.prefix);
	if (!ret) {
		snprintf(rule.name, sizeof(rule.name), "edge");
		ret = xrl_policy_add(&policy, &rule);
	}
	if (!ret)
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("escalate: %s %s", strerror(-ret), err);
	xrl_policy_free(&policy);
	return ret;
}

int micro_escalate(struct micro *m)
{
	struct xrl_datapath escalating;
	struct side sides[2] = { { .prog_fd = m->dp.prog_fd } };
	int ret;

	ret = xrl_datapath_load(&escalating, NULL);
	if (ret)
		return ret;
	sides[1].prog_fd = escalating.prog_fd;
	bench_log("micro: a rule with escalate_");
	ret = apply_escalating(&m->dp, false);
	if (!ret)
		ret = apply_escalating(&escalating, true);
	if (!ret)
		ret = micro_warm(m, TRAFFIC_HOT, sides[1].prog_fd);
	if (!ret)
		ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 2);
	if (!ret)
		micro_row_ns("rule with escalate_ vs the same rule without, "
			     "one hot source passed", &sides[1], &sides[0],
			     "", 0);
	xrl_datapath_close(&escalating);
	return ret;
}

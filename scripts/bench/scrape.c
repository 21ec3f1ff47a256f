// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * scrape.c - the cost of one /metrics scrape for a policy of 1,000
 * rules: xrl_metrics_collect() (every map read once, rule counters in
 * batches) and xrl_metrics_format(), as the daemon's scrape thread runs
 * them; and, apart, the walk that counts tracked sources, which the
 * daemon does at most every XRL_METRICS_COUNT_INTERVAL_S.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "common.h"
#include "datapath.h"
#include "loader.h"
#include "mapwalk.h"
#include "metrics.h"
#include "metrics_collect.h"
#include "policy_map.h"
#include "rules.h"
#include "scrape.h"

#define SCRAPE_RULES	1000
#define SCRAPE_RUNS	21
#define COUNT_SOURCES	1000000
#define SCRAPE_TARGET_MS 1.0

static int time_scrape(struct xrl_datapath *dp, const struct xrl_policy *policy,
		       double *cpu_ms, double *wall_ms, size_t *bytes)
{
	double cpu[SCRAPE_RUNS], wall[SCRAPE_RUNS];
	struct xrl_metrics m = { .tracked_sources = -1 };
	uint64_t cpu0, wall0;
	char *text;
	size_t i;
	int run, ret = 0;

	m.rules = calloc(policy->n_rules, sizeof(*m.rules));
	if (!m.rules)
		return -ENOMEM;
	m.n_rules = policy->n_rules;
	for (run = 0; run < SCRAPE_RUNS && !ret; run++) {
		for (i = 0; i < policy->n_rules; i++) {
			m.rules[i].id = policy->rules[i].id;
			m.rules[i].name = policy->rules[i].name;
		}
		cpu0 = bench_thread_cpu_ns();
		wall0 = bench_now_ns();
		ret = xrl_metrics_collect(dp, &m);
		if (!ret)
			ret = xrl_metrics_format(&m, &text, bytes);
		cpu[run] = (bench_thread_cpu_ns() - cpu0) / 1e6;
		wall[run] = (bench_now_ns() - wall0) / 1e6;
		if (!ret)
			free(text);
	}
	free(m.rules);
	*cpu_ms = bench_median(cpu, SCRAPE_RUNS);
	*wall_ms = bench_median(wall, SCRAPE_RUNS);
	return ret;
}

/* Fills the bucket map with @n sources, then times one count. */
static int time_count(struct xrl_datapath *dp, long n, double *ms)
{
	struct xrl_bucket_key key = { .tag = XRL_FAMILY_IPV4 };
	struct xrl_bucket bucket = { .rule_id = 1 };
	uint64_t wall0;
	long i, count;

	key.addr[10] = 0xff;
	key.addr[11] = 0xff;
	for (i = 0; i < n; i++) {
		key.addr[12] = 198;
		key.addr[13] = 18 + (i >> 16);
		key.addr[14] = i >> 8;
		key.addr[15] = i;
		if (bpf_map_update_elem(dp->buckets_fd, &key, &bucket, BPF_ANY))
			return -errno;
	}
	wall0 = bench_now_ns();
	count = xrl_map_count(dp->buckets_fd, sizeof(key));
	*ms = (bench_now_ns() - wall0) / 1e6;
	if (count < 0)
		return count;
	bench_log("scrape: counted %ld of %ld sources", count, n);
	return 0;
}

int bench_scrape(int argc, char **argv)
{
	struct xrl_load_opts opts = {};
	struct xrl_policy policy;
	struct xrl_datapath dp;
	double cpu_ms, wall_ms, count_ms = 0;
	char err[256], value[128];
	size_t bytes = 0;
	int ret;

	ret = xrl_datapath_load(&dp, &opts);
	if (ret) {
		bench_log("scrape: loading: %s", strerror(-ret));
		return ret;
	}
	ret = bench_build_policy(&policy, SCRAPE_RULES, false);
	if (ret)
		goto close_dp;
	ret = xrl_policy_apply(&dp, &policy, err, sizeof(err));
	if (ret) {
		bench_log("scrape: apply: %s", err);
		goto free_policy;
	}
	ret = time_scrape(&dp, &policy, &cpu_ms, &wall_ms, &bytes);
	if (ret) {
		bench_log("scrape: %s", strerror(-ret));
		goto free_policy;
	}
	snprintf(value, sizeof(value), "%.3f ms CPU, %.3f ms wall, %zu bytes",
		 cpu_ms, wall_ms, bytes);
	bench_row("metrics", "collect + format, 1000 rules (median of 21)",
		  value, "", "< 1 ms CPU", bench_verdict(cpu_ms,
							  SCRAPE_TARGET_MS));
	/* --no-count: the scrape alone (for a profiler). */
	if (argc > 1 && !strcmp(argv[1], "--no-count"))
		goto free_policy;
	ret = time_count(&dp, COUNT_SOURCES, &count_ms);
	if (ret) {
		bench_log("scrape: counting: %s", strerror(-ret));
		goto free_policy;
	}
	snprintf(value, sizeof(value), "%.1f ms wall (%.2f us/source)",
		 count_ms, count_ms * 1000 / COUNT_SOURCES);
	bench_row("metrics", "count of tracked sources, 1000000 buckets "
		  "(cached, at most every 10 s)", value, "", "", "");
free_policy:
	xrl_policy_free(&policy);
close_dp:
	xrl_datapath_close(&dp);
	return ret;
}

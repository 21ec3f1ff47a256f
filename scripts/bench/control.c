// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control.c - control plane: how long xrl_policy_apply() takes to swap
 * in policies of 1,000 to 1,000,000 rules (the first install, then
 * reloads of an edited policy, in --quick too), and whether the kernel's
 * LPM trie takes a batch update that would do the fill in one syscall.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "common.h"
#include "control.h"
#include "datapath.h"
#include "loader.h"
#include "policy_map.h"
#include "rule.h"
#include "rules.h"

#define APPLY_RUNS	5
/* The kernel's "operation not supported" for map ops; not in libc. */
#define ENOTSUPP	524
/* Issue 11's goals (again in issue 25): the CPU time of one swap. */
#define SWAP_100K_MS	100.0
#define SWAP_1M_MS	1000.0
#define BIG_POLICY	1000000
/* The swaps timed are of a policy with one rule in this many edited. */
#define CHANGED_EVERY	100

/*
 * Wall time, and the thread's CPU time (its own work, kernel included):
 * on a busy machine the wall time also counts waiting for a CPU.
 */
struct span {
	double wall_ms;
	double cpu_ms;
};

static void span_start(struct span *s)
{
	s->wall_ms = bench_now_ns() / 1e6;
	s->cpu_ms = bench_thread_cpu_ns() / 1e6;
}

static void span_stop(struct span *s)
{
	s->wall_ms = bench_now_ns() / 1e6 - s->wall_ms;
	s->cpu_ms = bench_thread_cpu_ns() / 1e6 - s->cpu_ms;
}

/* One apply of @policy: its CPU and wall time. */
static int apply_once(struct xrl_datapath *dp, const struct xrl_policy *policy,
		      struct span *s)
{
	char err[256] = "";
	int ret;

	span_start(s);
	ret = xrl_policy_apply(dp, policy, err, sizeof(err));
	span_stop(s);
	if (ret)
		bench_log("apply: %s", err);
	return ret;
}

/* @runs applies, each of the policy that is not in force: @policies[0]
 * is in force before the first. */
static int time_apply(struct xrl_datapath *dp,
		      const struct xrl_policy policies[2], int runs,
		      struct bench_spread *cpu_ms, struct bench_spread *wall_ms)
{
	double wall[APPLY_RUNS], cpu[APPLY_RUNS];
	struct span s;
	int run, ret;

	for (run = 0; run < runs; run++) {
		ret = apply_once(dp, &policies[(run + 1) % 2], &s);
		if (ret)
			return ret;
		wall[run] = s.wall_ms;
		cpu[run] = s.cpu_ms;
	}
	bench_spread_of(cpu, runs, cpu_ms);
	bench_spread_of(wall, runs, wall_ms);
	return 0;
}

/*
 * @policy with one rule in CHANGED_EVERY given another rate: the swap
 * between the two is that of a policy edited in place, every id kept.
 */
static int edited_copy(const struct xrl_policy *policy, struct xrl_policy *out)
{
	size_t i;
	int ret;

	ret = bench_build_policy(out, policy->n_rules, false);
	for (i = 1; !ret && i < out->n_rules; i += CHANGED_EVERY)
		out->rules[i].pps *= 2;
	return ret;
}

static void row_first_install(size_t n_rules, const struct span *s)
{
	char name[96], value[160];

	snprintf(name, sizeof(name), "xrl_policy_apply, %zu rules, first "
		 "install (counters for its new rules)", n_rules);
	snprintf(value, sizeof(value), "%.1f ms CPU (%.2f us/rule), %.1f ms "
		 "wall", s->cpu_ms, s->cpu_ms * 1000 / n_rules, s->wall_ms);
	bench_row("control plane", name, value, "", "", "");
}

/*
 * The swaps of a policy of @n_rules, after its first install (a row of
 * its own): each the policy not in force, the two 1 % apart (a reload
 * of an edited file). With a goal (@goal_ms > 0) a row that says met
 * or missed, and "not possible" when the policy cap of include/xrl.h is
 * below @n_rules: that row picks the size up by itself once the cap
 * allows it.
 */
static int measure_apply(struct xrl_datapath *dp, size_t n_rules, int runs,
			 double goal_ms)
{
	struct bench_spread cpu, wall;
	struct xrl_policy policies[2];
	char name[96], value[160], cpu_text[64], target[64];
	struct span first;
	int ret;

	snprintf(name, sizeof(name), "xrl_policy_apply, %zu rules, 1%% of "
		 "them changed", n_rules);
	snprintf(target, sizeof(target), "<= %.0f ms CPU (issue 11)", goal_ms);
	if (n_rules > XRL_MAX_RULES) {
		snprintf(value, sizeof(value), "not possible: cap of %d rules "
			 "(XRL_MAX_RULES)", XRL_MAX_RULES);
		bench_row("control plane", name, value, "", target,
			  "**MISSED**");
		return 0;
	}
	ret = bench_build_policy(&policies[0], n_rules, false);
	if (!ret)
		ret = edited_copy(&policies[0], &policies[1]);
	if (!ret)
		ret = apply_once(dp, &policies[0], &first);
	if (!ret)
		row_first_install(n_rules, &first);
	if (!ret)
		ret = time_apply(dp, policies, runs, &cpu, &wall);
	xrl_policy_free(&policies[1]);
	xrl_policy_free(&policies[0]);
	if (ret && goal_ms > 0) {
		snprintf(value, sizeof(value), "failed: %s", strerror(-ret));
		bench_row("control plane", name, value, "", target,
			  "**MISSED**");
		return 0;
	}
	if (ret)
		return ret;
	bench_spread_fmt(cpu_text, sizeof(cpu_text), &cpu, 1);
	snprintf(value, sizeof(value), "%s ms CPU (%.2f us/rule), %.1f ms wall",
		 cpu_text, cpu.median * 1000 / n_rules, wall.median);
	bench_row("control plane", name, value, "", goal_ms > 0 ? target : "",
		  goal_ms > 0 ? bench_spread_verdict(&cpu, goal_ms) : "");
	return 0;
}

/*
 * Fills a fresh LPM trie with the compiled rules of @policy in one
 * BPF_MAP_UPDATE_BATCH, as xrl_policy_apply() could; -EINVAL or
 * -EOPNOTSUPP when the map type has no batch operations.
 */
static int fill_batch(const struct xrl_policy *policy, struct span *s)
{
	LIBBPF_OPTS(bpf_map_create_opts, create, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_batch_opts, batch);
	struct xrl_lpm_key *keys;
	struct xrl_rule *values;
	__u32 count = policy->n_rules;
	size_t i;
	int fd, ret = 0;

	keys = calloc(count, sizeof(*keys));
	values = calloc(count, sizeof(*values));
	if (!keys || !values) {
		ret = -ENOMEM;
		goto free_arrays;
	}
	for (i = 0; !ret && i < count; i++) {
		keys[i] = policy->rules[i].prefix;
		ret = xrl_rule_compile(&policy->rules[i], &values[i]);
	}
	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "xrl_bench_lpm",
			    sizeof(*keys), sizeof(*values), XRL_MAX_RULES,
			    &create);
	if (fd < 0) {
		ret = -errno;
		goto free_arrays;
	}
	span_start(s);
	if (!ret && bpf_map_update_batch(fd, keys, values, &count, &batch))
		ret = -errno;
	span_stop(s);
	close(fd);
free_arrays:
	free(values);
	free(keys);
	return ret;
}

static int measure_batch(size_t n_rules)
{
	struct xrl_policy policy;
	struct span s = { 0, 0 };
	char value[96];
	int ret;

	ret = bench_build_policy(&policy, n_rules, false);
	if (ret)
		return ret;
	ret = fill_batch(&policy, &s);
	xrl_policy_free(&policy);
	if (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -ENOTSUPP) {
		snprintf(value, sizeof(value),
			 "not supported by this kernel's LPM trie (%s)",
			 strerror(-ret));
		ret = 0;
	} else if (!ret) {
		snprintf(value, sizeof(value), "%.1f ms CPU, %.1f ms wall",
			 s.cpu_ms, s.wall_ms);
	} else {
		return ret;
	}
	bench_row("control plane", "LPM fill in one bpf_map_update_batch, "
		  "100000 rules", value, "", "", "");
	return 0;
}

/*
 * What the same number of exact-match entries costs in a hash map filled
 * by one batch: the price of a structure other than a trie, for the
 * rules (/32, /64) that are exact.
 */
static int measure_hash_batch(size_t n_rules)
{
	LIBBPF_OPTS(bpf_map_batch_opts, batch);
	struct xrl_policy policy;
	struct xrl_lpm_key *keys;
	struct xrl_rule *values;
	struct span s = { 0, 0 };
	__u32 count = n_rules;
	char value[96];
	size_t i;
	int fd, ret;

	ret = bench_build_policy(&policy, n_rules, false);
	if (ret)
		return ret;
	keys = calloc(n_rules, sizeof(*keys));
	values = calloc(n_rules, sizeof(*values));
	if (!keys || !values) {
		ret = -ENOMEM;
		goto free_all;
	}
	for (i = 0; !ret && i < n_rules; i++) {
		keys[i] = policy.rules[i].prefix;
		ret = xrl_rule_compile(&policy.rules[i], &values[i]);
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "xrl_bench_hash", sizeof(*keys),
			    sizeof(*values), XRL_MAX_RULES, NULL);
	if (fd < 0) {
		ret = -errno;
		goto free_all;
	}
	span_start(&s);
	if (!ret && bpf_map_update_batch(fd, keys, values, &count, &batch))
		ret = -errno;
	span_stop(&s);
	close(fd);
	if (!ret) {
		snprintf(value, sizeof(value), "%.1f ms CPU, %.1f ms wall",
			 s.cpu_ms, s.wall_ms);
		bench_row("control plane", "for comparison: 100000 entries into "
			  "a hash map, one batch", value, "", "", "");
	}
free_all:
	free(values);
	free(keys);
	xrl_policy_free(&policy);
	return ret;
}

/* Building a policy rule by rule, as a policy file loader does. */
static int measure_policy_add(size_t n_rules)
{
	struct xrl_policy source, built;
	char name[96], value[96];
	struct span s;
	size_t i;
	int ret;

	ret = bench_build_policy(&source, n_rules, false);
	if (ret)
		return ret;
	ret = xrl_policy_init(&built);
	span_start(&s);
	for (i = 1; !ret && i < n_rules; i++)
		ret = xrl_policy_add(&built, &source.rules[i]);
	span_stop(&s);
	snprintf(value, sizeof(value), "%.1f ms CPU, %.1f ms wall", s.cpu_ms,
		 s.wall_ms);
	xrl_policy_free(&built);
	xrl_policy_free(&source);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "xrl_policy_add of %zu rules, one by one",
		 n_rules);
	bench_row("control plane", name, value, "", "", "");
	return 0;
}

int bench_control(int argc, char **argv)
{
	struct xrl_load_opts opts = { .max_sources = 1024,
				      .max_rules = XRL_MAX_RULES };
	int runs = APPLY_RUNS;
	struct xrl_datapath dp;
	int ret;

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		runs = 1;
	ret = xrl_datapath_load(&dp, &opts);
	if (ret) {
		bench_log("control: loading the data path: %s", strerror(-ret));
		return ret;
	}
	/* --size N: the swaps of one size only (for a profiler). */
	if (argc > 2 && !strcmp(argv[1], "--size")) {
		ret = measure_apply(&dp, strtoul(argv[2], NULL, 10), runs, 0);
		goto close_dp;
	}
	ret = measure_apply(&dp, 1000, runs, 0);
	if (!ret)
		ret = measure_apply(&dp, 10000, runs, 0);
	if (!ret)
		ret = measure_apply(&dp, 100000, runs, SWAP_100K_MS);
	if (!ret)
		ret = measure_apply(&dp, BIG_POLICY, runs, SWAP_1M_MS);
	if (!ret)
		ret = measure_batch(100000);
	if (!ret)
		ret = measure_hash_batch(100000);
	if (!ret)
		ret = measure_policy_add(10000);
close_dp:
	if (ret)
		bench_log("control: %s", strerror(-ret));
	xrl_datapath_close(&dp);
	return ret;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control.c - control plane: how long xrl_policy_apply() takes to swap
 * in policies of 1,000 to 1,000,000 rules, and whether the kernel's LPM
 * trie takes a batch update that would do the fill in one syscall.
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
#include "policy_map.h"
#include "rules.h"

#define APPLY_RUNS	3
/* The kernel's "operation not supported" for map ops; not in libc. */
#define ENOTSUPP	524
#define SWAP_TARGET_MS	100.0
#define SWAP_1M_TARGET_MS	1000.0

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

static int time_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		      struct span *median)
{
	double wall[APPLY_RUNS], cpu[APPLY_RUNS];
	char err[256] = "";
	struct span s;
	int run, ret;

	for (run = 0; run < APPLY_RUNS; run++) {
		span_start(&s);
		ret = xrl_policy_apply(dp, policy, err, sizeof(err));
		span_stop(&s);
		if (ret) {
			bench_log("apply: %s", err);
			return ret;
		}
		wall[run] = s.wall_ms;
		cpu[run] = s.cpu_ms;
	}
	median->wall_ms = bench_median(wall, APPLY_RUNS);
	median->cpu_ms = bench_median(cpu, APPLY_RUNS);
	return 0;
}

static int measure_apply(struct xrl_datapath *dp, size_t n_rules)
{
	struct xrl_policy policy;
	char name[96], value[96];
	struct span s;
	int ret;

	ret = bench_build_policy(&policy, n_rules, false);
	if (!ret)
		ret = time_apply(dp, &policy, &s);
	xrl_policy_free(&policy);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "xrl_policy_apply, %zu rules", n_rules);
	snprintf(value, sizeof(value), "%.1f ms CPU (%.2f us/rule), %.1f ms wall",
		 s.cpu_ms, s.cpu_ms * 1000 / n_rules, s.wall_ms);
	if (n_rules == 100000)
		bench_row("control plane", name, value, "", "< 100 ms CPU",
			  bench_verdict(s.cpu_ms, SWAP_TARGET_MS));
	else if (n_rules == 1000000)
		bench_row("control plane", name, value, "", "< 1000 ms CPU",
			  bench_verdict(s.cpu_ms, SWAP_1M_TARGET_MS));
	else
		bench_row("control plane", name, value, "", "", "");
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
	static const size_t rule_counts[] = { 1000, 10000, 100000, 1000000 };
	struct xrl_load_opts opts = { .max_sources = 1024,
				      .max_rules = XRL_MAX_RULES };
	struct xrl_datapath dp;
	size_t i;
	int ret;

	ret = xrl_datapath_load(&dp, &opts);
	if (ret) {
		bench_log("control: loading the data path: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; !ret && i < sizeof(rule_counts) / sizeof(*rule_counts); i++)
		ret = measure_apply(&dp, rule_counts[i]);
	if (!ret)
		ret = measure_batch(100000);
	if (!ret)
		ret = measure_hash_batch(100000);
	if (!ret)
		ret = measure_policy_add(10000);
	if (!ret)
		ret = measure_policy_add(30000);
	if (ret)
		bench_log("control: %s", strerror(-ret));
	xrl_datapath_close(&dp);
	return ret;
}

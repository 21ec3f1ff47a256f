/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rules.h - the policies the benchmarks apply: many limit rules, built
 * and applied through the project's library (user/lib/policy.h).
 */
#ifndef XRL_BENCH_RULES_H
#define XRL_BENCH_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include "policy.h"

/* The rule every benchmark source is judged by, and the reference's. */
#define BENCH_PPS		1000
#define BENCH_BURST		100

/*
 * Builds a policy of @n_rules limit rules (see rules.c), with no
 * new-source budget (every new source gets a bucket, as in the
 * reference) unless @budget: then the default one. 0 or -errno.
 */
int bench_build_policy(struct xrl_policy *policy, size_t n_rules, bool budget);

/* Builds and applies such a policy. 0 or -errno (logged). */
int bench_apply_rules(struct xrl_datapath *dp, size_t n_rules, bool budget);
/* The same; with @admitting, every rule at the most it may admit (10^12
 * pps, burst 2^32), so that the hot source's every packet is admitted. */
int bench_apply_rules_at(struct xrl_datapath *dp, size_t n_rules,
			 bool budget, bool admitting);

#endif

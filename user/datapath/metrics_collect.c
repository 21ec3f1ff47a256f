// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * metrics_collect.c - collecting the counters for a scrape, each map read
 * once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bans.h"
#include "bucket.h"
#include "clock.h"
#include "datapath.h"
#include "metrics_collect.h"
#include "stats.h"

/* Rule counters read per batch call: 64 KiB per CPU. */
#define RULE_BATCH 2048

static int by_id(const void *a, const void *b)
{
	const struct xrl_metrics_rule *ra = a, *rb = b;

	return (ra->id > rb->id) - (ra->id < rb->id);
}

/*
 * Reads the per-CPU counters of ids [@first, @first + @count) in one
 * call and adds up those of the rules among them (@rules sorted by id,
 * starting at *@next). Returns 0 or -errno.
 */
static int read_rule_batch(int fd, __u32 first, __u32 count, int n_cpus,
			   struct xrl_rule_counters *values, __u32 *keys,
			   struct xrl_metrics_rule *rules, size_t n_rules,
			   size_t *next)
{
	const size_t words = sizeof(struct xrl_rule_counters) / sizeof(__u64);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 in = first - 1, out, got = count, slot;
	struct xrl_metrics_rule *rule;
	const __u64 *cpu_words;
	__u64 *sum;
	size_t w;
	int cpu;

	/* A batch starts after the key given: at 0 when given none. */
	if (bpf_map_lookup_batch(fd, first ? &in : NULL, &out, keys, values,
				 &got, &opts) &&
	    errno != ENOENT)
		return -errno;
	for (; *next < n_rules; (*next)++) {
		rule = &rules[*next];
		if (rule->id >= first + count)
			break;
		slot = rule->id - first;
		if (slot >= got)
			return -ENOENT;
		sum = (__u64 *)&rule->counters;
		memset(sum, 0, sizeof(rule->counters));
		for (cpu = 0; cpu < n_cpus; cpu++) {
			cpu_words =
				(const __u64
					 *)&values[(size_t)slot * n_cpus + cpu];
			for (w = 0; w < words; w++)
				sum[w] += cpu_words[w];
		}
	}
	return 0;
}

/*
 * Rule ids are given out from the low end, so the counters of a policy
 * of n rules lie in about n / RULE_BATCH contiguous batches: one system
 * call each, where a lookup per rule would be n calls.
 */
static int read_rule_counters(const struct xrl_datapath *dp,
			      struct xrl_metrics *m)
{
	int n_cpus = libbpf_num_possible_cpus();
	struct xrl_rule_counters *values;
	size_t next = 0;
	__u32 first, *keys;
	int ret = 0;

	if (n_cpus < 0)
		return n_cpus;
	if (!m->n_rules)
		return 0;
	qsort(m->rules, m->n_rules, sizeof(*m->rules), by_id);
	values = calloc((size_t)RULE_BATCH * n_cpus, sizeof(*values));
	keys = calloc(RULE_BATCH, sizeof(*keys));
	if (!values || !keys) {
		ret = -ENOMEM;
		goto free_buffers;
	}
	while (next < m->n_rules && !ret) {
		if (m->rules[next].id >= XRL_MAX_RULES) {
			ret = -ERANGE;
			break;
		}
		first = m->rules[next].id;
		ret = read_rule_batch(dp->rule_stats_fd, first,
				      first + RULE_BATCH > XRL_MAX_RULES ?
					      XRL_MAX_RULES - first :
					      RULE_BATCH,
				      n_cpus, values, keys, m->rules,
				      m->n_rules, &next);
	}
free_buffers:
	free(keys);
	free(values);
	return ret;
}

int xrl_metrics_collect(const struct xrl_datapath *dp, struct xrl_metrics *m)
{
	struct xrl_manual_bans_fill fill;
	__u64 now = xrl_clock_ns(CLOCK_MONOTONIC), by_hand = 0;
	int ret;

	ret = xrl_stats_read(dp, m->totals);
	if (!ret)
		ret = xrl_table_stats_read(dp, &m->table);
	if (!ret)
		ret = xrl_table_forgotten_read(dp, &m->forgotten);
	if (!ret)
		ret = xrl_event_stats_read(dp, &m->events);
	if (!ret)
		ret = xrl_ban_stats_read(dp, &m->bans);
	if (!ret)
		ret = xrl_bans_active(dp, now, &m->active_bans);
	/* A ban by hand in force is a ban too (the program drops its
	 * prefix as banned). */
	if (!ret)
		ret = xrl_manual_bans_active(dp, now, &by_hand);
	m->active_bans += by_hand;
	if (!ret)
		ret = xrl_manual_bans_fill(dp, &fill);
	if (!ret) {
		m->manual_bans = fill.entries;
		m->manual_bans_capacity = fill.max_entries;
	}
	if (!ret)
		ret = read_rule_counters(dp, m);
	m->capacity = xrl_datapath_max_sources(dp);
	return ret;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "datapath.h"
#include "stats.h"

/*
 * Reads one slot of a per-CPU array as @n_words 64-bit counters per CPU
 * and adds them up: every counter struct of the program is made of
 * __u64 words only, so one summing loop serves all of them.
 */
static int sum_percpu(int map_fd, __u32 index, __u64 *sum, size_t n_words)
{
	int n_cpus = libbpf_num_possible_cpus();
	__u64 *values;
	size_t cpu, word;
	int ret = 0;

	if (n_cpus < 0)
		return n_cpus;
	values = calloc((size_t)n_cpus * n_words, sizeof(*values));
	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &index, values)) {
		ret = -errno;
		goto free_values;
	}
	memset(sum, 0, n_words * sizeof(*sum));
	for (cpu = 0; cpu < (size_t)n_cpus; cpu++)
		for (word = 0; word < n_words; word++)
			sum[word] += values[cpu * n_words + word];
free_values:
	free(values);
	return ret;
}

int xrl_stats_read(const struct xrl_datapath *dp,
		   struct xrl_counter totals[XRL_VERDICT_COUNT])
{
	__u32 verdict;
	int ret;

	for (verdict = 0; verdict < XRL_VERDICT_COUNT; verdict++) {
		ret = sum_percpu(dp->stats_fd, verdict, (__u64 *)&totals[verdict],
				 sizeof(totals[verdict]) / sizeof(__u64));
		if (ret)
			return ret;
	}
	return 0;
}

int xrl_rule_stats_read(const struct xrl_datapath *dp, __u32 rule_id,
			struct xrl_rule_counters *totals)
{
	int ret = sum_percpu(dp->rule_stats_fd, rule_id, (__u64 *)totals,
			     sizeof(*totals) / sizeof(__u64));

	/* No entry: a rule whose counters are not made yet counted none. */
	if (ret == -ENOENT) {
		memset(totals, 0, sizeof(*totals));
		ret = 0;
	}
	return ret;
}

int xrl_table_stats_read(const struct xrl_datapath *dp,
			 struct xrl_table_counters *totals)
{
	return sum_percpu(dp->table_stats_fd, 0, totals->events,
			  XRL_TABLE_EVENTS);
}

int xrl_event_stats_read(const struct xrl_datapath *dp,
			 struct xrl_event_state *totals)
{
	return sum_percpu(dp->event_state_fd, 0, (__u64 *)totals,
			  sizeof(*totals) / sizeof(__u64));
}

int xrl_capture_stats_read(const struct xrl_datapath *dp,
			   struct xrl_capture_state *totals)
{
	if (dp->capture_st_fd < 0)
		return -EOPNOTSUPP;
	return sum_percpu(dp->capture_st_fd, 0, (__u64 *)totals,
			  sizeof(*totals) / sizeof(__u64));
}

int xrl_ban_stats_read(const struct xrl_datapath *dp,
		       struct xrl_ban_counters *totals)
{
	return sum_percpu(dp->ban_stats_fd, 0, (__u64 *)totals,
			  sizeof(*totals) / sizeof(__u64));
}

int xrl_table_forgotten_read(const struct xrl_datapath *dp, __u64 *n)
{
	struct xrl_table_counters sum;
	int ret = sum_percpu(dp->table_stats_fd, XRL_TABLE_STATS_FORGOTTEN,
			     sum.events, XRL_TABLE_EVENTS);

	/* Pins of a build before the slot: none counted. */
	*n = ret ? 0 : sum.events[XRL_TABLE_INSERT];
	return ret == -ENOENT ? 0 : ret;
}

/*
 * Two userspace writers at the same instant (a reset beside a policy
 * change's scrub) may lose one's count: a read-modify-write, as the map
 * has no atomic add from userspace; the program never writes the slot.
 */
int xrl_table_forgotten_add(const struct xrl_datapath *dp, __u64 n)
{
	__u32 key = XRL_TABLE_STATS_FORGOTTEN;
	int n_cpus = libbpf_num_possible_cpus();
	struct xrl_table_counters *values;
	int ret = 0;

	if (!n)
		return 0;
	if (n_cpus < 0)
		return n_cpus;
	values = calloc((size_t)n_cpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(dp->table_stats_fd, &key, values)) {
		/* Pins of a build before the slot: nothing to count in. */
		ret = errno == ENOENT ? 0 : -errno;
		goto free_values;
	}
	values[0].events[XRL_TABLE_INSERT] += n;
	if (bpf_map_update_elem(dp->table_stats_fd, &key, values, 0))
		ret = -errno;
free_values:
	free(values);
	return ret;
}

int xrl_block_hits_read(const struct xrl_datapath *dp, __u32 index,
			struct xrl_counter *hits)
{
	return sum_percpu(dp->block_hits_fd, index, (__u64 *)hits,
			  sizeof(*hits) / sizeof(__u64));
}

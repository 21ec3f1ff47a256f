// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>
#include "datapath.h"
#include "rule_counters.h"
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

/* Tries at reading a way no change was under way in; a change takes a
 * few hundred nanoseconds and comes with a packet of another rule. */
#define COPY_READS	8

/* The since of rule @id in the table in force, or 0 (none: since >= 1). */
static __u32 since_in_force(int table_fd, __u32 id)
{
	struct xrl_rule rule;

	if (table_fd < 0 || bpf_map_lookup_elem(table_fd, &id, &rule))
		return 0;
	return rule.since;
}

/* No CPU's copy of the way @way was being changed while it was read. */
static bool way_whole(const struct xrl_rule_copy *way, int n_cpus)
{
	int cpu;

	for (cpu = 0; cpu < n_cpus; cpu++)
		if (way[cpu].tail != way[cpu].head)
			return false;
	return true;
}

/* Reads way @way of every CPU into @out until no CPU's was being
 * changed; a CPU's still changing after COPY_READS reads gets claim 0. */
static int read_way(const struct xrl_datapath *dp, __u32 way,
		    struct xrl_rule_copy *out, int n_cpus)
{
	bool whole = false;
	int tries, cpu;

	for (tries = 0; tries < COPY_READS && !whole; tries++) {
		if (bpf_map_lookup_elem(dp->rule_cache_fd, &way, out))
			return -errno;
		whole = way_whole(out, n_cpus);
	}
	for (cpu = 0; cpu < n_cpus; cpu++)
		if (out[cpu].tail != out[cpu].head)
			out[cpu].claim = 0;
	return 0;
}

/* Ways @first .. @first + @n - 1 in one call (a scrape reads them all):
 * 0, or -errno (then they are read one by one). */
static int read_all_ways(const struct xrl_datapath *dp, __u32 first, __u32 n,
			 struct xrl_rule_copies *copies)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 *keys, in = first ? first - 1 : 0, out, count = n;
	int ret = 0;

	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	if (bpf_map_lookup_batch(dp->rule_cache_fd, first ? &in : NULL, &out,
				 keys, copies->ways, &count, &opts) &&
	    errno != ENOENT)
		ret = -errno;
	if (!ret && (count != n || keys[0] != first))
		ret = -EIO;
	free(keys);
	return ret;
}

/* Keeps the claims of @way's copies whose id the table in force holds at
 * the claim's since or not at all (a rule out of the policy keeps its
 * counts, as the program does: bpf/rule_cache.h claim_counters()); one
 * lookup per distinct claim of the way. */
static void keep_claims_in_force(struct xrl_rule_copy *way, int n_cpus,
				 int table_fd)
{
	__u64 checked = 0;
	bool in_force = false;
	__u32 since;
	int cpu;

	for (cpu = 0; cpu < n_cpus; cpu++) {
		__u64 claim = way[cpu].claim;

		if (!claim)
			continue;
		if (claim != checked) {
			checked = claim;
			since = since_in_force(table_fd, (__u32)claim - 1);
			in_force = !since || since == (__u32)(claim >> 32);
		}
		if (!in_force)
			way[cpu].claim = 0;
	}
}

int xrl_rule_copies_read(const struct xrl_datapath *dp, __u32 first_way,
			 __u32 n_ways, struct xrl_rule_copies *copies)
{
	struct xrl_policy_head head;
	int table_fd = -1, ret = 0;
	struct xrl_rule_copy *way;
	bool batched;
	__u32 i;

	memset(copies, 0, sizeof(*copies));
	copies->n_cpus = libbpf_num_possible_cpus();
	if (copies->n_cpus < 0)
		return copies->n_cpus;
	if (dp->rule_cache_fd < 0 || first_way >= XRL_RULE_CACHE_WAYS)
		return 0;	/* pins of a program without copies */
	if (n_ways > XRL_RULE_CACHE_WAYS - first_way)
		n_ways = XRL_RULE_CACHE_WAYS - first_way;
	copies->ways = calloc((size_t)n_ways * copies->n_cpus, sizeof(*way));
	if (!copies->ways)
		return -ENOMEM;
	if (!xrl_datapath_head(dp, &head))
		table_fd = xrl_datapath_inner_fd(dp->rule_table_fd,
						 head.rules_slot);
	batched = n_ways > 1 && !read_all_ways(dp, first_way, n_ways, copies);
	for (i = 0; i < n_ways && !ret; i++) {
		way = &copies->ways[(size_t)i * copies->n_cpus];
		if (!batched || !way_whole(way, copies->n_cpus))
			ret = read_way(dp, first_way + i, way, copies->n_cpus);
		keep_claims_in_force(way, copies->n_cpus, table_fd);
	}
	if (table_fd >= 0)
		close(table_fd);
	if (ret) {
		xrl_rule_copies_free(copies);
		return ret;
	}
	copies->first_way = first_way;
	copies->n_ways = n_ways;
	return 0;
}

void xrl_rule_copies_free(struct xrl_rule_copies *copies)
{
	free(copies->ways);
	copies->ways = NULL;
	copies->n_ways = 0;
}

const struct xrl_rule_counters *
xrl_rule_copies_held(const struct xrl_rule_copies *copies, __u32 id, int cpu)
{
	__u32 way = id & (XRL_RULE_CACHE_WAYS - 1);
	const struct xrl_rule_copy *copy;

	if (way < copies->first_way ||
	    way - copies->first_way >= copies->n_ways ||
	    cpu >= copies->n_cpus)
		return NULL;
	copy = &copies->ways[(size_t)(way - copies->first_way) *
				     copies->n_cpus + cpu];
	return copy->claim && (__u32)copy->claim == id + 1 ? &copy->counts :
							       NULL;
}

void xrl_rule_counters_add(struct xrl_rule_counters *totals,
			   const struct xrl_rule_copies *copies, __u32 id,
			   int cpu, const struct xrl_rule_counters *value)
{
	const struct xrl_rule_counters *held;
	const __u64 *from;
	__u64 *to = (__u64 *)totals;
	size_t w;

	held = xrl_rule_copies_held(copies, id, cpu);
	from = (const __u64 *)(held ? held : value);
	if (!from)
		return;
	for (w = 0; w < sizeof(*totals) / sizeof(__u64); w++)
		to[w] += from[w];
}

int xrl_rule_stats_read(const struct xrl_datapath *dp, __u32 rule_id,
			struct xrl_rule_counters *totals)
{
	struct xrl_rule_counters *values = NULL;
	struct xrl_rule_copies copies;
	bool made = true;
	int cpu, ret;

	memset(totals, 0, sizeof(*totals));
	/* The copies first: a copy's counters are written back before
	 * its claim changes (include/xrl.h, struct xrl_rule_copy). */
	ret = xrl_rule_copies_read(dp, rule_id & (XRL_RULE_CACHE_WAYS - 1),
				   1, &copies);
	if (ret)
		return ret;
	values = calloc(copies.n_cpus, sizeof(*values));
	if (!values) {
		ret = -ENOMEM;
		goto free_copies;
	}
	/* No entry: a rule whose counters are not made yet counted none. */
	ret = xrl_rule_counters_lookup(dp, rule_id, values);
	if (ret && ret != -ENOENT)
		goto free_copies;
	made = !ret;
	ret = 0;
	for (cpu = 0; cpu < copies.n_cpus; cpu++)
		xrl_rule_counters_add(totals, &copies, rule_id, cpu,
				      made ? &values[cpu] : NULL);
free_copies:
	free(values);
	xrl_rule_copies_free(&copies);
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

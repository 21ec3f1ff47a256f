// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * metrics_collect.c - collecting the counters for a scrape, each map read
 * once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bans.h"
#include "blocklists.h"
#include "bucket.h"
#include "clock.h"
#include "datapath.h"
#include "metrics_collect.h"
#include "stats.h"

/* Rule counters read per batch call: 96 KiB per CPU. */
#define RULE_BATCH 2048

static int by_id(const void *a, const void *b)
{
	const struct xrl_metrics_rule *ra = a, *rb = b;

	return (ra->id > rb->id) - (ra->id < rb->id);
}

/* A scrape's read of the rule counters: the rules listed (sorted by
 * id), which of them an entry was found for, and the buffers of one
 * batch. */
struct counters_read {
	struct xrl_metrics *m;
	struct xrl_rule_copies copies;
	bool *found;		/* per rule of m */
	size_t n_found;
	struct xrl_rule_counters *values;
	__u32 *keys, batch;
	int n_cpus;
};

/* Adds the per-CPU @values of rule @id to its rule, if listed and not
 * found before (an id's entry is in one map; the first map's is the one
 * the program counts in): on a CPU whose copy of the rule holds its
 * counters, the copy's. */
static void add_rule_counters(struct counters_read *r, __u32 id,
			      const struct xrl_rule_counters *values)
{
	struct xrl_metrics_rule probe = { .id = id }, *rule;
	struct xrl_metrics *m = r->m;
	size_t at;
	int cpu;

	rule = bsearch(&probe, m->rules, m->n_rules, sizeof(*m->rules), by_id);
	if (!rule)
		return;
	at = (size_t)(rule - m->rules);
	if (r->found[at])
		return;
	r->found[at] = true;
	r->n_found++;
	for (cpu = 0; cpu < r->n_cpus; cpu++)
		xrl_rule_counters_add(&rule->counters, &r->copies, id, cpu,
				      &values[cpu]);
}

/* Every entry of counters map @fd, r->batch per system call. */
static int read_counters_map(struct counters_read *r, int fd)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	bool more = true, first = true;
	__u32 in, out, got, i;

	while (more) {
		got = r->batch;
		if (bpf_map_lookup_batch(fd, first ? NULL : &in, &out, r->keys,
					 r->values, &got, &opts)) {
			if (errno != ENOENT)
				return -errno;
			more = false;	/* the last batch */
		}
		for (i = 0; i < got; i++)
			add_rule_counters(r, r->keys[i],
					  &r->values[(size_t)i * r->n_cpus]);
		in = out;
		first = false;
	}
	return 0;
}

/*
 * The counters maps hold the rules in force only (rulemaps.c), so they
 * are read whole, RULE_BATCH entries per system call, and each entry
 * added to its rule, found by id: a policy of n rules costs about
 * n / RULE_BATCH calls, where a lookup per rule would be n. A walk of a
 * hash reads every bucket, held or not, so the spill map (sized to the
 * id space: rule_counters.h) is read only when a rule listed has no
 * entry in the first.
 */
static int read_rule_counters(const struct xrl_datapath *dp,
			      struct xrl_metrics *m)
{
	struct counters_read r = { .m = m };
	size_t i;
	int ret = 0;

	r.n_cpus = libbpf_num_possible_cpus();
	if (r.n_cpus < 0)
		return r.n_cpus;
	for (i = 0; i < m->n_rules; i++)
		memset(&m->rules[i].counters, 0, sizeof(m->rules[i].counters));
	if (!m->n_rules)
		return 0;
	qsort(m->rules, m->n_rules, sizeof(*m->rules), by_id);
	/* The map holds the rules listed and, for a swap, those going
	 * out: one call for most scrapes, and buffers no larger than it
	 * takes (under malloc's mmap threshold, so no page is faulted in
	 * afresh per scrape). */
	r.batch = m->n_rules + m->n_rules / 4 + 16;
	if (r.batch > RULE_BATCH)
		r.batch = RULE_BATCH;
	r.values = malloc((size_t)r.batch * r.n_cpus * sizeof(*r.values));
	r.keys = malloc(r.batch * sizeof(*r.keys));
	r.found = calloc(m->n_rules, sizeof(*r.found));
	if (!r.values || !r.keys || !r.found) {
		ret = -ENOMEM;
		goto free_buffers;
	}
	/* The copies first (include/xrl.h, struct xrl_rule_copy). */
	ret = xrl_rule_copies_read(dp, 0, XRL_RULE_CACHE_WAYS, &r.copies);
	if (!ret)
		ret = read_counters_map(&r, dp->rule_stats_fd);
	if (!ret && r.n_found < m->n_rules)
		ret = read_counters_map(&r, dp->rule_spill_fd);
free_buffers:
	xrl_rule_copies_free(&r.copies);
	free(r.found);
	free(r.keys);
	free(r.values);
	return ret;
}

static int read_blocklists(const struct xrl_datapath *dp, struct xrl_metrics *m)
{
	struct xrl_blocklist_report lists[XRL_BLOCKLISTS_MAX];
	int i, n = xrl_blocklists_read(dp, lists);

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		memcpy(m->blocklists[i].name, lists[i].name,
		       sizeof(m->blocklists[i].name));
		m->blocklists[i].entries = lists[i].entries;
		m->blocklists[i].hits = lists[i].hits;
	}
	m->n_blocklists = (size_t)n;
	return 0;
}

/* An escalated ban in force: counted, and in its rule's gauge. */
static int count_escalation(const struct xrl_escalated_ban *ban, void *ctx)
{
	struct xrl_metrics *m = ctx;
	struct xrl_metrics_rule probe = { .id = ban->rule_id }, *rule;

	m->escalated_bans++;
	rule = bsearch(&probe, m->rules, m->n_rules, sizeof(*m->rules), by_id);
	if (rule)
		rule->escalated_bans++;
	return 0;
}

static int read_escalations(const struct xrl_datapath *dp,
			    struct xrl_metrics *m, __u64 now)
{
	size_t r;

	m->escalated_bans = 0;
	for (r = 0; r < m->n_rules; r++)
		m->rules[r].escalated_bans = 0;
	return xrl_escalated_bans(dp, now, count_escalation, m);
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
		ret = read_blocklists(dp, m);
	if (!ret)
		ret = read_rule_counters(dp, m);
	/* After the counters: the rules are sorted by id then. */
	if (!ret)
		ret = read_escalations(dp, m, now);
	m->capacity = xrl_datapath_max_sources(dp);
	return ret;
}

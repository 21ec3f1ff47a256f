/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stats.h - the program's per-CPU counters, summed over CPUs.
 */
#ifndef XRL_STATS_H
#define XRL_STATS_H

#include "counters.h"
#include "xrl.h"

struct xrl_datapath;

/* Sums the global counters of every CPU into @totals. 0 or -errno. */
int xrl_stats_read(const struct xrl_datapath *dp,
		   struct xrl_counter totals[XRL_VERDICT_COUNT]);

/* Sums the counters of rule @rule_id over every CPU: those of its
 * counters entry (rule_counters.h), and on a CPU whose copy of it holds
 * them, the copy's (include/xrl.h, struct xrl_rule_copy). 0 or -errno. */
int xrl_rule_stats_read(const struct xrl_datapath *dp, __u32 rule_id,
			struct xrl_rule_counters *totals);

/*
 * The CPUs' rule copies (xrl_rule_cache) of ways @first_way and on, read
 * before the counters maps are: a way a change was under way in while it
 * was read is read again, and a claim is kept only when it names a rule
 * in force at its since (else it is 0: that CPU's counters are those of
 * its entry).
 */
struct xrl_rule_copies {
	int n_cpus;
	__u32 first_way, n_ways;	/* n_ways 0: none (pins without it) */
	struct xrl_rule_copy *ways;	/* [(way - first_way) * n_cpus + cpu] */
};

int xrl_rule_copies_read(const struct xrl_datapath *dp, __u32 first_way,
			 __u32 n_ways, struct xrl_rule_copies *copies);
void xrl_rule_copies_free(struct xrl_rule_copies *copies);

/* The counters of rule @id that CPU @cpu's copy holds, or NULL: that
 * CPU's are its entry's value. */
const struct xrl_rule_counters *
xrl_rule_copies_held(const struct xrl_rule_copies *copies, __u32 id, int cpu);

/* Adds CPU @cpu's counters of rule @id to @totals: its copy's if it holds
 * them, else @value (that CPU's value of its entry; NULL: none). */
void xrl_rule_counters_add(struct xrl_rule_counters *totals,
			   const struct xrl_rule_copies *copies, __u32 id,
			   int cpu, const struct xrl_rule_counters *value);

/* Sums the table pressure counters (new-source budget, fallback) of
 * every CPU. 0 or -errno. */
int xrl_table_stats_read(const struct xrl_datapath *dp,
			 struct xrl_table_counters *totals);

/* The buckets userspace deleted (reset, a policy change's scrub), which
 * are no evictions (include/xrl.h, XRL_TABLE_STATS_FORGOTTEN): read, and
 * counted after deleting @n. 0 or -errno. */
int xrl_table_forgotten_read(const struct xrl_datapath *dp, __u64 *n);
int xrl_table_forgotten_add(const struct xrl_datapath *dp, __u64 n);

/* Sums the limit event counters (and cap state) of every CPU. */
int xrl_event_stats_read(const struct xrl_datapath *dp,
			 struct xrl_event_state *totals);

/* Sums a capture's counts (and budget state) of every CPU; -EOPNOTSUPP
 * for pins made before capture. */
int xrl_capture_stats_read(const struct xrl_datapath *dp,
			   struct xrl_capture_state *totals);

/* Sums the bans started (and repeats) of every CPU. 0 or -errno. */
int xrl_ban_stats_read(const struct xrl_datapath *dp,
		       struct xrl_ban_counters *totals);

/* The hits of blocklist slot @index (bpf/blocklists.h), summed. */
int xrl_block_hits_read(const struct xrl_datapath *dp, __u32 index,
			struct xrl_counter *hits);

#endif

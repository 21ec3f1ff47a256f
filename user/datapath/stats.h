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

/* Sums the counters of rule @rule_id over every CPU. 0 or -errno. */
int xrl_rule_stats_read(const struct xrl_datapath *dp, __u32 rule_id,
			struct xrl_rule_counters *totals);

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

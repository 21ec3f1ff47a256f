/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rule_counters.h - the entries of the per-rule counters, each id's in
 * one of two maps: xrl_rule_stats while it has room, else xrl_rule_spill
 * (include/xrl.h, XRL_RULE_STATS_FIRST). Made, found, removed and walked
 * here only, so no caller picks a map.
 */
#ifndef XRL_RULE_COUNTERS_H
#define XRL_RULE_COUNTERS_H

#include <stdbool.h>
#include <linux/types.h>

struct xrl_datapath;

/*
 * Makes rule @id's entry with @value (a per-CPU value as the map's
 * syscalls lay it out), in xrl_rule_stats while it has room, else in
 * xrl_rule_spill. With @keep, an entry the id has (in either map) is
 * left as it is; else it is set to @value where it is. 0 or -errno.
 */
int xrl_rule_counters_make(const struct xrl_datapath *dp, __u32 id,
			   const void *value, bool keep);

/* Removes rule @id's entry, from whichever map holds it: 0 (also when
 * none does) or -errno. */
int xrl_rule_counters_remove(const struct xrl_datapath *dp, __u32 id);

/* Rule @id's per-CPU values into @values (xrl_datapath_cpus() of them,
 * 8-byte aligned): 0, -ENOENT when none is made, or -errno. */
int xrl_rule_counters_lookup(const struct xrl_datapath *dp, __u32 id,
			     void *values);

/* Calls @fn(id, ctx) for the id of each entry of both maps, as
 * xrl_map_walk() does (mapwalk.h). */
int xrl_rule_counters_walk(const struct xrl_datapath *dp,
			   int (*fn)(const void *id, const void *unused,
				     void *ctx),
			   void *ctx);

#endif

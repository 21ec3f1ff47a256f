// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rule_counters.c - each rule id's counters entry, in one of two maps.
 *
 * The program looks an id up in xrl_rule_stats, then in xrl_rule_spill
 * (bpf/xdp_ratelimit.bpf.c, rule_stats_of()), so an id must never have
 * an entry in both: one in the spill map is found there first, and a
 * new one goes to the spill map only when xrl_rule_stats is full (a map
 * not preallocated refuses a new key past max_entries with -E2BIG,
 * while replacing a key it holds always succeeds).
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "datapath.h"
#include "mapwalk.h"
#include "rule_counters.h"
#include "xrl.h"

/* A per-CPU value as the map's syscalls lay it out: 8-byte aligned. */
static size_t values_size(void)
{
	size_t stride = (sizeof(struct xrl_rule_counters) + 7) & ~7UL;

	return stride * xrl_datapath_cpus();
}

/* Whether the spill map holds an entry of @id: 1, 0 or -errno. */
static int spilled(const struct xrl_datapath *dp, __u32 id)
{
	void *values;
	int ret;

	values = malloc(values_size());
	if (!values)
		return -ENOMEM;
	ret = bpf_map_lookup_elem(dp->rule_spill_fd, &id, values) ? -errno : 1;
	free(values);
	return ret == -ENOENT ? 0 : ret;
}

/* A new entry (or, with BPF_ANY, the one xrl_rule_stats holds) for an
 * id the spill map does not hold. */
static int make_unspilled(const struct xrl_datapath *dp, __u32 id,
			  const void *value, __u64 flags)
{
	int ret = xrl_map_update(dp->rule_stats_fd, &id, value, flags);

	if (ret == -E2BIG)
		ret = xrl_map_update(dp->rule_spill_fd, &id, value, flags);
	return ret == -EEXIST && flags == BPF_NOEXIST ? 0 : ret;
}

int xrl_rule_counters_make(const struct xrl_datapath *dp, __u32 id,
			   const void *value, bool keep)
{
	int ret;

	if (keep) {
		ret = spilled(dp, id);
		if (ret)
			return ret < 0 ? ret : 0;
		return make_unspilled(dp, id, value, BPF_NOEXIST);
	}
	ret = xrl_map_update(dp->rule_spill_fd, &id, value, BPF_EXIST);
	if (ret != -ENOENT)
		return ret;
	return make_unspilled(dp, id, value, BPF_ANY);
}

static int remove_from(int fd, __u32 id)
{
	return bpf_map_delete_elem(fd, &id) && errno != ENOENT ? -errno : 0;
}

int xrl_rule_counters_remove(const struct xrl_datapath *dp, __u32 id)
{
	int ret = remove_from(dp->rule_stats_fd, id);

	return ret ? ret : remove_from(dp->rule_spill_fd, id);
}

int xrl_rule_counters_lookup(const struct xrl_datapath *dp, __u32 id,
			     void *values)
{
	if (!bpf_map_lookup_elem(dp->rule_stats_fd, &id, values))
		return 0;
	if (errno != ENOENT)
		return -errno;
	return bpf_map_lookup_elem(dp->rule_spill_fd, &id, values) ? -errno :
								     0;
}

int xrl_rule_counters_walk(const struct xrl_datapath *dp,
			   int (*fn)(const void *id, const void *unused,
				     void *ctx),
			   void *ctx)
{
	int ret = xrl_map_walk(dp->rule_stats_fd, sizeof(__u32), 0, fn, ctx);

	return ret ? ret : xrl_map_walk(dp->rule_spill_fd, sizeof(__u32), 0,
					fn, ctx);
}

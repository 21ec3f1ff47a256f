// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * query.c - what a loaded or adopted data path is: its table size, the
 * CPUs its budgets are split over, the rules map in force. Apart from
 * datapath.c so that what applies a policy (policy_map.c, aggregate.c)
 * can ask without calling back into the loader.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "datapath.h"

__u32 xrl_datapath_max_sources(const struct xrl_datapath *dp)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(dp->buckets_fd, &info, &len))
		return 0;
	return info.max_entries;
}

unsigned xrl_datapath_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? (unsigned)n : 1;
}

int xrl_datapath_rules_fd(const struct xrl_datapath *dp)
{
	__u32 zero = 0, rules_id;
	int fd;

	if (bpf_map_lookup_elem(dp->policy_fd, &zero, &rules_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(rules_id);
	return fd < 0 ? -errno : fd;
}

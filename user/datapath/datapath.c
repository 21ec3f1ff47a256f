// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * datapath.c - what a loaded or adopted data path is: its table size, the
 * CPUs its budgets are split over, the policy in force. Apart from the
 * loader (loader.c) so that what applies a policy (policy_map.c,
 * aggregate.c) can ask without calling back into it.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xrl.h"
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

/* How long an update waits for per-CPU memory (xrl_map_update()). */
#define UPDATE_ENOMEM_WAIT_US	1000
#define UPDATE_ENOMEM_TRIES	2000

int xrl_map_update(int fd, const void *key, const void *value, __u64 flags)
{
	unsigned tries = 0;

	while (bpf_map_update_elem(fd, key, value, flags)) {
		if (errno != ENOMEM || ++tries == UPDATE_ENOMEM_TRIES)
			return -errno;
		usleep(UPDATE_ENOMEM_WAIT_US);
	}
	return 0;
}

int xrl_datapath_inner_fd(int outer_fd, __u32 slot)
{
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

int xrl_datapath_head_fd(const struct xrl_datapath *dp)
{
	return xrl_datapath_inner_fd(dp->settings_fd, 0);
}

int xrl_datapath_head(const struct xrl_datapath *dp,
		      struct xrl_policy_head *out)
{
	__u32 zero = 0;
	int fd, ret = 0;

	fd = xrl_datapath_head_fd(dp);
	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &zero, out))
		ret = -errno;
	close(fd);
	return ret;
}

int xrl_datapath_settings(const struct xrl_datapath *dp,
			  struct xrl_settings *out)
{
	struct xrl_policy_head head;
	int ret = xrl_datapath_head(dp, &head);

	if (!ret)
		*out = head.settings;
	return ret;
}

int xrl_datapath_rules_fd(const struct xrl_datapath *dp)
{
	struct xrl_policy_head head;
	int ret = xrl_datapath_head(dp, &head);

	return ret ? ret : xrl_datapath_inner_fd(dp->policy_fd, head.rules_slot);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bans.c - the program's ban records (bpf/bans.h) as userspace counts
 * them: the bans in force, for /metrics; how full the map of bans by
 * hand is, for status and /metrics.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include "bans.h"
#include "datapath.h"
#include "mapwalk.h"

struct active_walk {
	__u64 now_ns;
	__u64 n;
};

static int count_active(const void *key, const void *value, void *ctx)
{
	const struct xrl_ban *ban = value;
	struct active_walk *walk = ctx;

	(void)key;
	if (ban->until_ns && (__s64)(ban->until_ns - walk->now_ns) > 0)
		walk->n++;
	return 0;
}

int xrl_bans_active(const struct xrl_datapath *dp, __u64 now_ns, __u64 *n)
{
	struct active_walk walk = { .now_ns = now_ns };
	int ret;

	if (dp->bans_fd < 0)
		return -ENOENT;
	ret = xrl_map_walk(dp->bans_fd, sizeof(struct xrl_bucket_key),
			   sizeof(struct xrl_ban), count_active, &walk);
	if (!ret)
		*n = walk.n;
	return ret;
}

int xrl_manual_bans_fill(const struct xrl_datapath *dp,
			 struct xrl_manual_bans_fill *fill)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	long n;

	if (dp->manual_bans_fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(dp->manual_bans_fd, &info, &len))
		return -errno;
	n = xrl_map_count(dp->manual_bans_fd,
			  sizeof(struct xrl_manual_ban_key));
	if (n < 0)
		return (int)n;
	fill->entries = n;
	fill->max_entries = info.max_entries;
	return 0;
}

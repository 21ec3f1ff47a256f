// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bans.c - the program's ban records (bpf/bans.h) as userspace counts
 * them: the bans in force, for /metrics.
 */
#include <errno.h>
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

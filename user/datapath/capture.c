// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * capture.c - a capture's config, counts and ring (capture.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture.h"
#include "clock.h"
#include "datapath.h"
#include "limit.h"

bool xrl_capture_supported(const struct xrl_datapath *dp)
{
	return dp->capture_fd >= 0 && dp->capture_rb_fd >= 0 &&
	       dp->capture_st_fd >= 0;
}

__u64 xrl_capture_clock_ns(void)
{
	return xrl_clock_ns(CLOCK_MONOTONIC);
}

static int config_read(const struct xrl_datapath *dp,
		       struct xrl_capture_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(dp->capture_fd, &zero, cfg) ? -errno : 0;
}

static int config_write(const struct xrl_datapath *dp,
			const struct xrl_capture_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_update_elem(dp->capture_fd, &zero, cfg, BPF_ANY) ?
	       -errno : 0;
}

/* A config armed by a process that still runs, before its lease ends. */
static bool held_by_other(const struct xrl_capture_config *cfg)
{
	pid_t owner = (pid_t)cfg->owner;

	if (!cfg->armed || owner == getpid())
		return false;
	if (cfg->until_ns < xrl_capture_clock_ns())
		return false;
	return owner > 0 && (!kill(owner, 0) || errno == EPERM);
}

/* The counts and the budget's state, zero on every CPU. */
static int state_clear(const struct xrl_datapath *dp)
{
	int n_cpus = libbpf_num_possible_cpus();
	struct xrl_capture_state *zeros;
	__u32 zero = 0;
	int ret = 0;

	if (n_cpus < 0)
		return n_cpus;
	zeros = calloc(n_cpus, sizeof(*zeros));
	if (!zeros)
		return -ENOMEM;
	if (bpf_map_update_elem(dp->capture_st_fd, &zero, zeros, BPF_ANY))
		ret = -errno;
	free(zeros);
	return ret;
}

static int discard_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* What a capture before this one left in the ring. */
static int ring_empty(const struct xrl_datapath *dp)
{
	struct ring_buffer *ring;
	int ret;

	ring = ring_buffer__new(dp->capture_rb_fd, discard_record, NULL, NULL);
	if (!ring)
		return -errno;
	ret = ring_buffer__consume(ring);
	ring_buffer__free(ring);
	return ret < 0 ? ret : 0;
}

int xrl_capture_arm(const struct xrl_datapath *dp,
		    const struct xrl_capture_config *cfg, pid_t *owner)
{
	struct xrl_capture_config now, armed = *cfg;
	int ret;

	if (!xrl_capture_supported(dp))
		return -EOPNOTSUPP;
	ret = config_read(dp, &now);
	if (ret)
		return ret;
	if (held_by_other(&now)) {
		*owner = (pid_t)now.owner;
		return -EBUSY;
	}
	ret = xrl_limit_compile_pps_share(XRL_CAPTURE_PER_SECOND,
					  XRL_CAPTURE_BURST,
					  xrl_datapath_cpus(), &armed.budget);
	if (!ret)
		ret = state_clear(dp);
	if (!ret)
		ret = ring_empty(dp);
	if (ret)
		return ret;
	armed.armed = 1;
	armed.owner = (__u32)getpid();
	armed.until_ns = xrl_capture_clock_ns() + XRL_CAPTURE_LEASE_NS;
	return config_write(dp, &armed);
}

int xrl_capture_renew(const struct xrl_datapath *dp, pid_t *owner)
{
	struct xrl_capture_config cfg;
	int ret = config_read(dp, &cfg);

	if (ret)
		return ret;
	if (!cfg.armed || (pid_t)cfg.owner != getpid()) {
		*owner = cfg.armed ? (pid_t)cfg.owner : 0;
		return -EBUSY;
	}
	/* A read-modify-write: the program only ever clears armed, which
	 * a write here could undo for at most one lease. */
	cfg.until_ns = xrl_capture_clock_ns() + XRL_CAPTURE_LEASE_NS;
	return config_write(dp, &cfg);
}

int xrl_capture_disarm(const struct xrl_datapath *dp)
{
	struct xrl_capture_config cfg;
	int ret = config_read(dp, &cfg);

	if (ret || (pid_t)cfg.owner != getpid())
		return ret;
	memset(&cfg, 0, sizeof(cfg));
	return config_write(dp, &cfg);
}

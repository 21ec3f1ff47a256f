/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * config.h - what a policy file holds: the policy, and the daemon's keys
 * beside it (interfaces:, redis:, sync_interval:, metrics:). Read by policy_read.h.
 */
#ifndef XRL_CONFIG_H
#define XRL_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "policy.h"

#define XRL_MAX_IFACES 32

struct xrl_config {
	struct xrl_policy policy;
	char *interfaces[XRL_MAX_IFACES];	/* "interfaces:" list */
	size_t n_interfaces;
	char *redis;			/* "redis:" HOST:PORT, or NULL */
	int redis_line;
	uint64_t sync_interval_ms;	/* "sync_interval:"; 0: not set */
	char *metrics;			/* "metrics:" ADDR:PORT, or NULL */
	int metrics_line;
};

#define XRL_SYNC_INTERVAL_MIN_MS	10
#define XRL_SYNC_INTERVAL_MAX_MS	60000

#endif

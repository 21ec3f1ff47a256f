/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_file.h - the YAML policy file (also the daemon's config file).
 * Parsed with libyaml; never by hand.
 */
#ifndef XRL_POLICY_FILE_H
#define XRL_POLICY_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "policy.h"

#define XRL_MAX_IFACES 32

struct xrl_config {
	struct xrl_policy policy;
	char *interfaces[XRL_MAX_IFACES];	/* "interfaces:" list */
	size_t n_interfaces;
	char *redis;			/* "redis:" HOST:PORT, or NULL */
	int redis_line;
	uint64_t sync_interval_ms;	/* "sync_interval:"; 0: not set */
};

#define XRL_SYNC_INTERVAL_MIN_MS	10
#define XRL_SYNC_INTERVAL_MAX_MS	60000

/* "HOST:PORT" (the last colon splits, so "[::1]" style is not needed for
 * names and IPv4). 0 or -EINVAL. */
int xrl_hostport_parse(const char *text, char *host, size_t len,
		       uint16_t *port);

/*
 * Parses a policy file (docs/POLICY.md). On success returns 0 with @config
 * filled (free it with xrl_config_free). On error @config holds nothing to
 * free and @err one line: -EINVAL with "FILE:LINE: FIELD: what is wrong
 * (value)" for a bad policy, -errno with "FILE: cannot read: REASON" for a
 * file that cannot be read.
 */
int xrl_config_load_file(const char *path, struct xrl_config *config,
			 char *err, size_t len);

/* The same from text in memory; @name stands for the file in errors. */
int xrl_config_load_string(const char *text, size_t text_len, const char *name,
			   struct xrl_config *config, char *err, size_t len);

void xrl_config_free(struct xrl_config *config);

/* Writes @policy back as a policy file (rules in order); loading it gives
 * the same policy, line numbers aside. 0 or -EIO/-ENOMEM. */
int xrl_policy_write_yaml(FILE *out, const struct xrl_policy *policy);

#endif

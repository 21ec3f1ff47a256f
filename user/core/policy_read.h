/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_read.h - the YAML policy file (also the daemon's config file)
 * read into a struct xrl_config (config.h). Parsed with libyaml; never by
 * hand. Its keys: fields.h; the file's format: docs/POLICY.md and
 * xdp-ratelimit.yaml(5).
 */
#ifndef XRL_POLICY_READ_H
#define XRL_POLICY_READ_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"

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

/* Its first half: the file's bytes in *@text (free() it), *@size of
 * them, or -errno with "FILE: cannot read: REASON" in @err. */
int xrl_config_read_file(const char *path, char **text, size_t *size,
			 char *err, size_t len);

/* The same from text in memory; @name stands for the file in errors. */
int xrl_config_load_string(const char *text, size_t text_len, const char *name,
			   struct xrl_config *config, char *err, size_t len);

void xrl_config_free(struct xrl_config *config);

#endif

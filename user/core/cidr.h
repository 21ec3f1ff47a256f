/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cidr.h - prefixes: text ("198.18.0.0/15", "fd00::/8", "198.18.0.1")
 * to IPv4-mapped LPM keys (include/xrl.h, struct xrl_lpm_key) and back.
 */
#ifndef XRL_CIDR_H
#define XRL_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include "xrl.h"

/*
 * Parses "198.18.0.0/15", "fd00::/8", "198.18.0.1" (a /32) or
 * "fd00::1" (a /128) into an IPv4-mapped LPM key. -EINVAL for text that is
 * no address, -ERANGE for a bad length, -EADDRNOTAVAIL for host bits set.
 */
int xrl_cidr_parse(const char *text, struct xrl_lpm_key *key);
/*
 * True when @text, parsed into @key, is an IPv6 prefix of IPv4-mapped
 * (::ffff:0:0/96) or IPv4-compatible (::/96) addresses other than just
 * :: and ::1: a rule that would never match the IPv4 sources it names
 * (the data path keeps IPv6 sources apart). Writes the IPv4 prefix meant
 * into @ipv4.
 */
bool xrl_cidr_names_ipv4(const char *text, const struct xrl_lpm_key *key,
			 char *ipv4, size_t len);
/* Writes a key back as CIDR text ("0.0.0.0/0" style for the default). */
void xrl_cidr_format(const struct xrl_lpm_key *key, char *buf, size_t len);

/* IPv4, IPv6, or ANY for the default rule (/0). */
enum xrl_family xrl_prefix_family(const struct xrl_lpm_key *prefix);
/* Whether two keys are one prefix. */
bool xrl_prefix_equal(const struct xrl_lpm_key *a,
		      const struct xrl_lpm_key *b);

#endif

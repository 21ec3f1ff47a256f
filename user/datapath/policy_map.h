/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_map.h - a policy in the data path: applied in one step (a fresh
 * LPM map is filled and swapped into the program's outer map with a
 * single update), read back, compared.
 */
#ifndef XRL_POLICY_MAP_H
#define XRL_POLICY_MAP_H

#include <stddef.h>
#include "policy.h"

struct xrl_datapath;

/*
 * Makes @policy the data path's in one step. Nothing changes when it
 * fails (returns -errno, @err says why).
 */
int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len);

/*
 * Reads back the rules map in force: prefixes, ids and actions (no
 * rates, no names beyond the CIDR text) and the key prefix lengths; enough
 * to carry ids over when the full policy is not known. 0 or -errno.
 */
int xrl_policy_read_ids(const struct xrl_datapath *dp,
			struct xrl_policy *out);

/*
 * 0 when the data path holds exactly @policy compiled (every rule, no
 * other, and its settings); -ESTALE when not, -errno on failure.
 */
int xrl_policy_matches_map(const struct xrl_datapath *dp,
			   const struct xrl_policy *policy);

#endif

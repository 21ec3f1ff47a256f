/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * plan.h - what applying a policy would change against the one in force,
 * as one JSON object: `check` shows it before, `reload` and `rule revert`
 * report it after, the CLI prints it with one printer. Built from
 * xrl_policy_diff (policy_map.h); reads only.
 */
#ifndef XRL_PLAN_H
#define XRL_PLAN_H

#include <jansson.h>
#include "policy.h"

struct xrl_datapath;

/*
 * {"changes": [{"change": "add"|"remove"|"change", "cidr": "198.18.3.0/24"
 * or "default", "what": "deny ..."}], "settings_changed": ["malformed"],
 * "added", "removed", "changed", "unchanged", "in_force"} for @next
 * against the policy in force in @dp. NULL with *@ret = -errno.
 */
json_t *xrl_plan_json(const struct xrl_datapath *dp,
		      const struct xrl_policy *next, int *ret);

/* Prints a plan (xrl_plan_json) as its lines, each indented by two. */
void xrl_plan_print(json_t *plan);

#endif

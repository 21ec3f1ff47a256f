// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ban.c - a rule's bans (ban:, ban_after:, ban_max:) as the policy model
 * checks and compiles them, and the durations they are written in. What
 * the program does with them: bpf/bans.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ban.h"
#include "fields.h"
#include "rule_spec.h"

uint64_t xrl_rule_ban_max(const struct xrl_rule_spec *rule)
{
	if (rule->ban.max_ns)
		return rule->ban.max_ns;
	if (rule->ban.ns > XRL_BAN_LIMIT_NS / XRL_BAN_MAX_FACTOR)
		return XRL_BAN_LIMIT_NS;
	return rule->ban.ns * XRL_BAN_MAX_FACTOR;
}

/*
 * Only a per-source limit rule bans: a monitor rule drops nothing, allow
 * and deny judge no limit, and an aggregate rule has no source to ban.
 */
int xrl_rule_ban_check(const struct xrl_rule_spec *rule, char *err,
		       size_t len)
{
	if (!rule->ban.ns) {
		if (rule->ban.after_ns || rule->ban.max_ns) {
			snprintf(err, len, "%s: needs ban: (how long a ban "
				 "lasts)", rule->ban.after_ns ? "ban_after" :
				 "ban_max");
			return -EINVAL;
		}
		return 0;
	}
	if (rule->action != XRL_ACTION_LIMIT) {
		snprintf(err, len, "ban: only a limit rule bans (this one is "
			 "%s)", xrl_action_name(rule->action));
		return -EINVAL;
	}
	if (rule->scope != XRL_SCOPE_SOURCE) {
		snprintf(err, len, "ban: only a rule of scope source bans "
			 "(an aggregate has no source to ban)");
		return -EINVAL;
	}
	if (rule->ban.max_ns && rule->ban.max_ns < rule->ban.ns) {
		snprintf(err, len, "ban_max: shorter than ban:");
		return -EINVAL;
	}
	return 0;
}

void xrl_rule_ban_compile(const struct xrl_rule_spec *rule,
			  struct xrl_rule_ban *out)
{
	memset(out, 0, sizeof(*out));
	if (!rule->ban.ns || rule->action != XRL_ACTION_LIMIT ||
	    rule->scope != XRL_SCOPE_SOURCE)
		return;
	out->duration_ns = rule->ban.ns;
	out->after_ns = rule->ban.after_ns;
	out->max_ns = xrl_rule_ban_max(rule);
}

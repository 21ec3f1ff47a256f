// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rule.c - one rule of a policy: its name, its checks (the ones that
 * span its fields, shared by the policy file and the control socket) and
 * its compiled form, the value the data path's rule maps hold (rule.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ban.h"
#include "cidr.h"
#include "fields.h"
#include "levels.h"
#include "limit.h"
#include "match.h"
#include "rule.h"
#include "rule_spec.h"
#include "strategy.h"

void xrl_rule_default_name(const struct xrl_rule_spec *rule, char *buf,
			   size_t len)
{
	char cidr[64], match[64];

	xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
	xrl_match_format(&rule->match, match, sizeof(match));
	snprintf(buf, len, "%s%s%s", cidr, *match ? " " : "", match);
}

int xrl_rule_name_check(const char *name, const struct xrl_lpm_key *prefix,
			char *err, size_t len)
{
	struct xrl_lpm_key as_cidr;
	const unsigned char *c;

	if (!*name || strlen(name) >= XRL_RULE_NAME_MAX) {
		snprintf(err, len, "name: must be 1 to %d characters",
			 XRL_RULE_NAME_MAX - 1);
		return -EINVAL;
	}
	for (c = (const unsigned char *)name; *c; c++) {
		if (*c < 0x20 || *c == 0x7f) {
			snprintf(err, len, "name: control characters are not "
				 "allowed");
			return -EINVAL;
		}
	}
	if (!xrl_cidr_parse(name, &as_cidr) &&
	    !xrl_prefix_equal(&as_cidr, prefix)) {
		snprintf(err, len, "name: is the CIDR of another prefix");
		return -EINVAL;
	}
	return 0;
}

int xrl_rule_check(const struct xrl_rule_spec *rule, char *err, size_t len)
{
	struct xrl_rule compiled;
	bool limited = rule->action == XRL_ACTION_LIMIT ||
		       rule->action == XRL_ACTION_MONITOR;

	if (rule->action >= XRL_ACTION_COUNT) {
		snprintf(err, len, "action: unknown action");
		return -EINVAL;
	}
	/* Ranges first, whatever the action: an allow or deny rule keeps
	 * its numbers (for a switch back to limit) and writes them to YAML,
	 * which must load again. */
	if (rule->pps > XRL_RATE_MAX || rule->bps > XRL_RATE_MAX) {
		snprintf(err, len, "%s: %llu is over the maximum %llu",
			 rule->pps > XRL_RATE_MAX ? "pps" : "bps",
			 (unsigned long long)(rule->pps > XRL_RATE_MAX ?
					      rule->pps : rule->bps),
			 XRL_RATE_MAX);
		return -EINVAL;
	}
	if (rule->burst > XRL_BURST_MAX || rule->burst_bytes > XRL_BURST_MAX) {
		snprintf(err, len, "%s: over the maximum %llu",
			 rule->burst > XRL_BURST_MAX ? "burst" : "burst_bytes",
			 XRL_BURST_MAX);
		return -EINVAL;
	}
	if (rule->scope >= XRL_SCOPE_COUNT) {
		snprintf(err, len, "scope: unknown scope");
		return -EINVAL;
	}
	if (rule->global && rule->scope != XRL_SCOPE_AGGREGATE) {
		snprintf(err, len, "global: needs scope: aggregate");
		return -EINVAL;
	}
	if (xrl_strategy_check(rule, limited, err, len) ||
	    xrl_rule_ban_check(rule, err, len) ||
	    xrl_rule_escalate_check(rule, err, len))
		return -EINVAL;
	/* A window keeps no bucket to hold a ban (docs/POLICY.md "Bans"). */
	if (rule->ban.ns && rule->strategy.kind == XRL_STRATEGY_SLIDING_WINDOW) {
		snprintf(err, len, "ban: not with strategy: sliding_window");
		return -EINVAL;
	}
	if (xrl_match_check(rule, false, err, len) ||
	    xrl_levels_check(rule, err, len))
		return -EINVAL;
	if (!limited)
		return 0;
	if (rule->strategy.kind != XRL_STRATEGY_TOKEN_BUCKET)
		return xrl_rule_compile(rule, &compiled);
	if (!rule->pps && !rule->bps) {
		snprintf(err, len, "pps: a %s rule needs pps or bps",
			 xrl_action_name(rule->action));
		return -EINVAL;
	}
	if (rule->pps && !rule->burst) {
		snprintf(err, len, "burst: pps needs a burst of at least 1");
		return -EINVAL;
	}
	if (rule->bps && !rule->burst_bytes) {
		snprintf(err, len,
			 "burst_bytes: bps needs a burst_bytes of at least 1");
		return -EINVAL;
	}
	return xrl_rule_compile(rule, &compiled);
}

int xrl_rule_compile(const struct xrl_rule_spec *rule, struct xrl_rule *out)
{
	struct xrl_limits level_limits[XRL_LEVELS_MAX];
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->id = rule->id;
	out->action = rule->action;
	out->scope = rule->scope;
	out->window.strategy = rule->strategy.kind;
	out->match = rule->match;
	out->match.next = 0;
	if (rule->action != XRL_ACTION_LIMIT && rule->action != XRL_ACTION_MONITOR)
		return 0;
	err = xrl_levels_compile(rule, &out->levels, level_limits);
	if (err)
		return err;
	if (rule->strategy.kind != XRL_STRATEGY_TOKEN_BUCKET)
		return xrl_strategy_compile(rule, out);
	if (rule->pps)
		err = xrl_limit_compile_pps(rule->pps, rule->burst,
					    &out->limit[XRL_LIMIT_PACKETS]);
	if (!err && rule->bps)
		err = xrl_limit_compile_bps(rule->bps, rule->burst_bytes,
					    &out->limit[XRL_LIMIT_BYTES]);
	xrl_rule_ban_compile(rule, &out->ban);
	xrl_rule_escalate_compile(rule, &out->escalate);
	return err;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ban.c - a rule's bans (ban:, ban_after:, ban_max:) and their escalation
 * to a subnet (escalate_*:) as the policy model checks and compiles them,
 * and the durations they are written in. What the program does with
 * them: bpf/bans.h, bpf/escalate.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ban.h"
#include "cidr.h"
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

/* The rule's family's bits and its prefix's length within them. */
static unsigned family_bits(const struct xrl_rule_spec *rule)
{
	return xrl_prefix_family(&rule->prefix) == XRL_FAMILY_IPV4 ? 32 : 128;
}

static unsigned rule_len(const struct xrl_rule_spec *rule)
{
	if (xrl_prefix_family(&rule->prefix) == XRL_FAMILY_IPV4)
		return rule->prefix.prefixlen - 96;
	return rule->prefix.prefixlen;
}

/* The first escalate_ key of the rule left out while another is set. */
static const char *escalate_missing(const struct xrl_rule_spec_escalate *e)
{
	if (!e->prefix)
		return "escalate_prefix";
	if (!e->after)
		return "escalate_after";
	if (!e->within_ns)
		return "escalate_within";
	if (!e->ns)
		return "escalate_ban";
	return NULL;
}

/*
 * Escalation counts the rule's own bans, so it needs them; its prefix is
 * of the rule's one family (not the default rule's two) and inside what
 * the rule covers: a prefix wider than the rule would ban sources
 * another rule judges.
 */
int xrl_rule_escalate_check(const struct xrl_rule_spec *rule, char *err,
			    size_t len)
{
	const struct xrl_rule_spec_escalate *e = &rule->ban.escalate;
	const char *missing = escalate_missing(e);
	unsigned bits = family_bits(rule);

	if (!e->prefix && !e->after && !e->within_ns && !e->ns)
		return 0;
	if (missing) {
		snprintf(err, len, "%s: escalation needs escalate_prefix:, "
			 "escalate_after:, escalate_within: and escalate_ban:",
			 missing);
		return -EINVAL;
	}
	if (!rule->ban.ns) {
		snprintf(err, len, "escalate_prefix: needs ban: (escalation "
			 "counts the rule's bans)");
		return -EINVAL;
	}
	if (!rule->prefix.prefixlen) {
		snprintf(err, len, "escalate_prefix: not in the default rule "
			 "(it covers two families)");
		return -EINVAL;
	}
	if (e->prefix >= bits) {
		snprintf(err, len, "escalate_prefix: /%u is not shorter than "
			 "an %s address (/%u)", e->prefix, bits == 32 ?
			 "IPv4" : "IPv6", bits);
		return -EINVAL;
	}
	if (e->prefix < rule_len(rule)) {
		snprintf(err, len, "escalate_prefix: /%u is wider than the "
			 "rule's /%u (it would ban sources of other rules)",
			 e->prefix, rule_len(rule));
		return -EINVAL;
	}
	if (e->after < 2 || e->after > XRL_ESCALATE_AFTER_MAX) {
		snprintf(err, len, "escalate_after: %u is not 2 to %d sources",
			 e->after, XRL_ESCALATE_AFTER_MAX);
		return -EINVAL;
	}
	return 0;
}

int xrl_rule_escalate_check_keys(const struct xrl_rule_spec *rule,
				 unsigned v4_prefix, unsigned v6_prefix,
				 char *err, size_t len)
{
	unsigned prefix = rule->ban.escalate.prefix;
	bool ipv4;
	unsigned key;

	if (!rule->ban.escalate.after || !rule->prefix.prefixlen)
		return 0;
	ipv4 = xrl_prefix_family(&rule->prefix) == XRL_FAMILY_IPV4;
	key = ipv4 ? v4_prefix : v6_prefix;
	if (prefix < key)
		return 0;
	snprintf(err, len, "escalate_prefix: /%u is not shorter than the %s "
		 "source key /%u (keys.%s_prefix)", prefix, ipv4 ? "IPv4" :
		 "IPv6", key, ipv4 ? "ipv4" : "ipv6");
	return -EINVAL;
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

void xrl_rule_escalate_compile(const struct xrl_rule_spec *rule,
			       struct xrl_rule_escalate *out)
{
	const struct xrl_rule_spec_escalate *e = &rule->ban.escalate;

	memset(out, 0, sizeof(*out));
	if (!rule->ban.ns || !e->after || rule->action != XRL_ACTION_LIMIT ||
	    rule->scope != XRL_SCOPE_SOURCE || !rule->prefix.prefixlen)
		return;
	out->within_ns = e->within_ns;
	out->duration_ns = e->ns;
	out->after = (__u8)e->after;
	out->prefix = (__u8)e->prefix;
}

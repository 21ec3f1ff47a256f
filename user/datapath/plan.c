// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * plan.c - a policy diff as JSON, and its lines (plan.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "cidr.h"
#include "fields.h"
#include "levels.h"
#include "plan.h"
#include "policy_map.h"

/* "limit pps 10/s burst 5 level 28:pps=100,burst=200": as rule list
 * shows a rule's limits. */
static void describe_spec(const struct xrl_rule_spec *rule, char *buf,
			  size_t len)
{
	size_t n = snprintf(buf, len, "%s", xrl_action_name(rule->action));
	char level[160];
	unsigned i;

	if (rule->pps && n < len)
		n += snprintf(buf + n, len - n, " pps %llu/s burst %llu",
			      (unsigned long long)rule->pps,
			      (unsigned long long)rule->burst);
	if (rule->bps && n < len)
		n += snprintf(buf + n, len - n, " bps %llu/s burst_bytes %llu",
			      (unsigned long long)rule->bps,
			      (unsigned long long)rule->burst_bytes);
	if (rule->scope != XRL_SCOPE_SOURCE && n < len)
		n += snprintf(buf + n, len - n, " scope %s%s",
			      xrl_scope_name(rule->scope),
			      rule->global ? " global" : "");
	for (i = 0; i < rule->n_levels && i < XRL_LEVELS_MAX && n < len; i++) {
		xrl_level_format(&rule->levels[i],
				 xrl_prefix_family(&rule->prefix), level,
				 sizeof(level));
		n += snprintf(buf + n, len - n, " level %s", level);
	}
}

struct plan_ctx {
	json_t *changes;
	int ret;
};

static void add_change(enum xrl_rule_change change,
		       const struct xrl_lpm_key *prefix,
		       const struct xrl_rule_spec *next,
		       const struct xrl_rule *in_force, void *ctx)
{
	static const char *const verbs[] = {
		[XRL_RULE_ADDED] = "add",
		[XRL_RULE_REMOVED] = "remove",
		[XRL_RULE_CHANGED] = "change",
	};
	struct plan_ctx *plan = ctx;
	char cidr[64], what[1024], line[1100];

	if (prefix->prefixlen)
		xrl_cidr_format(prefix, cidr, sizeof(cidr));
	else
		snprintf(cidr, sizeof(cidr), "default");
	if (change == XRL_RULE_REMOVED) {
		snprintf(line, sizeof(line), "%s",
			 xrl_action_name(in_force->action));
	} else {
		describe_spec(next, what, sizeof(what));
		if (change == XRL_RULE_CHANGED &&
		    in_force->action != next->action)
			snprintf(line, sizeof(line), "%s (was %s)", what,
				 xrl_action_name(in_force->action));
		else
			snprintf(line, sizeof(line), "%s%s", what,
				 change == XRL_RULE_CHANGED ?
					 " (limits or scope)" : "");
	}
	if (json_array_append_new(plan->changes,
				  json_pack("{s:s, s:s, s:s}", "change",
					    verbs[change], "cidr", cidr,
					    "what", line)))
		plan->ret = -ENOMEM;
}

static json_t *settings_json(const struct xrl_policy_diff *diff)
{
	const struct {
		bool changed;
		const char *name;
	} settings[] = {
		{ diff->keys, "keys" },
		{ diff->malformed, "malformed" },
		{ diff->vlan_overflow, "vlan_overflow" },
		{ diff->ipv4_mapped, "ipv4_mapped" },
		{ diff->unjudged_fragments, "unjudged_fragments" },
		{ diff->header_overflow, "header_overflow" },
		{ diff->new_sources, "new_sources" },
		{ diff->unknown, "unknown_sources" },
		{ diff->events, "events" },
	};
	json_t *names = json_array();
	size_t i;

	for (i = 0; names && i < sizeof(settings) / sizeof(settings[0]); i++)
		if (settings[i].changed)
			json_array_append_new(names,
					      json_string(settings[i].name));
	return names;
}

json_t *xrl_plan_json(const struct xrl_datapath *dp,
		      const struct xrl_policy *next, int *ret)
{
	struct plan_ctx plan = { .changes = json_array() };
	struct xrl_policy_diff diff;
	json_t *obj;

	if (!plan.changes) {
		*ret = -ENOMEM;
		return NULL;
	}
	*ret = xrl_policy_diff(dp, next, add_change, &plan, &diff);
	if (!*ret)
		*ret = plan.ret;
	if (*ret) {
		json_decref(plan.changes);
		return NULL;
	}
	obj = json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:I}", "changes",
			plan.changes, "settings_changed", settings_json(&diff),
			"added", (json_int_t)diff.added, "removed",
			(json_int_t)diff.removed, "changed",
			(json_int_t)diff.changed, "unchanged",
			(json_int_t)diff.same, "in_force",
			(json_int_t)diff.in_force);
	if (!obj)
		*ret = -ENOMEM;
	return obj;
}

void xrl_plan_print(json_t *plan)
{
	json_t *change, *name;
	size_t i;

	json_array_foreach(json_object_get(plan, "changes"), i, change)
		printf("  %-7s %-24s %s\n",
		       json_string_value(json_object_get(change, "change")),
		       json_string_value(json_object_get(change, "cidr")),
		       json_string_value(json_object_get(change, "what")));
	json_array_foreach(json_object_get(plan, "settings_changed"), i, name)
		printf("%s%s", i ? ", " : "  settings change: ",
		       json_string_value(name));
	printf(json_array_size(json_object_get(plan, "settings_changed")) ?
		       "\n" : "  settings unchanged\n");
	printf("  %lld added, %lld removed, %lld changed, %lld unchanged "
	       "(of %lld in force)\n",
	       json_integer_value(json_object_get(plan, "added")),
	       json_integer_value(json_object_get(plan, "removed")),
	       json_integer_value(json_object_get(plan, "changed")),
	       json_integer_value(json_object_get(plan, "unchanged")),
	       json_integer_value(json_object_get(plan, "in_force")));
}

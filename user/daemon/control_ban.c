// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_ban.c - a rule's bans over the control socket: "ban",
 * "ban_after" and "ban_max" of rule.add (and of the runtime overlay's
 * rules), durations as text ("30s"), parsed as the policy file does.
 */
#include <errno.h>
#include <stdio.h>
#include "ban.h"
#include "control_cmds.h"
#include "units.h"

static int ban_field(json_t *req, const char *field, uint64_t *ns, char *err,
		     size_t len)
{
	const char *text;
	int ret = xrl_control_string(req, field, false, &text, err, len);

	if (ret || !text)
		return ret;
	ret = xrl_duration_ns_parse(text, XRL_BAN_LIMIT_NS, ns);
	if (ret == -ERANGE) {
		snprintf(err, len, "%s: \"%.32s\" is over the maximum 30d",
			 field, text);
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, len, "%s: \"%.32s\" is not a duration such as "
			 "30s, 500ms, 10m, 1h or 7d", field, text);
		return -EINVAL;
	}
	return 0;
}

int xrl_control_parse_ban(json_t *req, struct xrl_rule_spec *rule, char *err,
			  size_t len)
{
	int ret = ban_field(req, "ban", &rule->ban.ns, err, len);

	if (!ret && json_object_get(req, "ban") && !rule->ban.ns) {
		snprintf(err, len, "ban: a ban lasts at least 1ms");
		return -EINVAL;
	}
	if (!ret)
		ret = ban_field(req, "ban_after", &rule->ban.after_ns, err, len);
	if (!ret)
		ret = ban_field(req, "ban_max", &rule->ban.max_ns, err, len);
	if (!ret && json_object_get(req, "ban_max") && !rule->ban.max_ns) {
		snprintf(err, len, "ban_max: at least 1ms");
		return -EINVAL;
	}
	return ret;
}

void xrl_control_ban_json(json_t *obj, const struct xrl_rule_spec *rule)
{
	char text[32];

	if (!obj || !rule->ban.ns)
		return;
	xrl_duration_ns_format(rule->ban.ns, text, sizeof(text));
	json_object_set_new(obj, "ban", json_string(text));
	if (rule->ban.after_ns) {
		xrl_duration_ns_format(rule->ban.after_ns, text, sizeof(text));
		json_object_set_new(obj, "ban_after", json_string(text));
	}
	if (rule->ban.max_ns) {
		xrl_duration_ns_format(rule->ban.max_ns, text, sizeof(text));
		json_object_set_new(obj, "ban_max", json_string(text));
	}
}

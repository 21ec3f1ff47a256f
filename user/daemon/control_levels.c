// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_levels.c - a rule's levels over the control socket: "levels" of
 * rule.add (and of the runtime overlay's rules), a list of level texts
 * ("24:pps=1k,burst=2k"), parsed by the core (xrl_level_parse) as the
 * CLI's --level is.
 */
#include <errno.h>
#include <stdio.h>
#include "cidr.h"
#include "control_cmds.h"
#include "levels.h"

#define LEVEL_EXAMPLE	"\"24:pps=1k,burst=2k\""

int xrl_control_parse_levels(json_t *req, struct xrl_rule_spec *rule,
			     char *err, size_t len)
{
	json_t *levels = json_object_get(req, "levels"), *item;
	enum xrl_family family = xrl_prefix_family(&rule->prefix);
	size_t i;
	int ret;

	rule->n_levels = 0;
	if (!levels || json_is_null(levels))
		return 0;
	if (!json_is_array(levels)) {
		snprintf(err, len, "levels: must be a list of levels like "
			 LEVEL_EXAMPLE);
		return -EINVAL;
	}
	if (!json_array_size(levels)) {
		snprintf(err, len, "levels: an empty list (leave levels out "
			 "for none)");
		return -EINVAL;
	}
	if (json_array_size(levels) > XRL_LEVELS_MAX) {
		snprintf(err, len, "levels: %zu levels, more than the maximum "
			 "%d", json_array_size(levels), XRL_LEVELS_MAX);
		return -EINVAL;
	}
	json_array_foreach(levels, i, item) {
		if (!json_is_string(item)) {
			snprintf(err, len, "levels[%zu]: must be a string like "
				 LEVEL_EXAMPLE, i);
			return -EINVAL;
		}
		ret = xrl_level_parse(json_string_value(item), (unsigned)i,
				      family, &rule->levels[i], err, len);
		if (ret)
			return ret;
	}
	rule->n_levels = (unsigned)json_array_size(levels);
	return 0;
}

void xrl_control_levels_json(json_t *obj, const struct xrl_rule_spec *rule)
{
	enum xrl_family family = xrl_prefix_family(&rule->prefix);
	json_t *levels;
	char text[160];
	unsigned i;

	if (!obj || !rule->n_levels)
		return;
	levels = json_array();
	for (i = 0; levels && i < rule->n_levels && i < XRL_LEVELS_MAX; i++) {
		xrl_level_format(&rule->levels[i], family, text, sizeof(text));
		json_array_append_new(levels, json_string(text));
	}
	json_object_set_new(obj, "levels", levels);
}

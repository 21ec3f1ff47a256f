// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rule_json.c - a rule as one JSON object, read and written key by key
 * from the rule table (rule_json.h). Requests are a stranger's input:
 * every value's type is checked before it is read, and this file must
 * never crash or leak on any of them (tests/fuzz/fuzz_control.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cidr.h"
#include "fields.h"
#include "levels.h"
#include "match.h"
#include "rule.h"
#include "rule_json.h"
#include "units.h"

#define LEVEL_EXAMPLE	"\"24:pps=1k,burst=2k\""

int xrl_json_string(json_t *obj, const char *field, bool required,
		    const char **value, char *err, size_t len)
{
	json_t *item = json_object_get(obj, field);

	*value = NULL;
	if (!item) {
		if (required)
			snprintf(err, len, "%s: missing", field);
		return required ? -EINVAL : 0;
	}
	if (!json_is_string(item)) {
		snprintf(err, len, "%s: must be a string", field);
		return -EINVAL;
	}
	*value = json_string_value(item);
	return 0;
}

int xrl_rule_json_cidr(const char *text, struct xrl_lpm_key *key, char *err,
		       size_t len)
{
	const struct xrl_field *cidr = xrl_field_find(xrl_rule_fields,
						      xrl_n_rule_fields,
						      "cidr");
	struct xrl_rule_spec rule = { 0 };
	int ret;

	ret = xrl_field_parse(cidr, text, &rule, XRL_STYLE_SOCKET, err, len);
	if (!ret)
		*key = rule.prefix;
	return ret;
}

/* ---- reading -------------------------------------------------------- */

/* "levels": a list of level texts (xrl_level_parse), as the CLI's
 * --level gives them. */
static int read_levels(json_t *obj, const struct xrl_field *f,
		       struct xrl_rule_spec *rule, char *err, size_t len)
{
	json_t *levels = json_object_get(obj, f->key), *item;
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

/* A quantity as a number or a text such as "10k" (null: none). */
static int read_quantity(json_t *item, const struct xrl_field *f,
			 struct xrl_rule_spec *rule, char *err, size_t len)
{
	json_int_t number;

	if (!item || json_is_null(item))
		return 0;
	if (json_is_string(item))
		return xrl_field_parse(f, json_string_value(item), rule,
				       XRL_STYLE_SOCKET, err, len);
	if (!json_is_integer(item)) {
		snprintf(err, len, "%s: must be a number or a quantity like "
			 "\"10k\"", f->key);
		return -EINVAL;
	}
	number = json_integer_value(item);
	if (number < 0) {
		snprintf(err, len, "%s: %lld is negative", f->key,
			 (long long)number);
		return -EINVAL;
	}
	xrl_field_set_value(f, rule, (uint64_t)number);
	return 0;
}

/* A number or a text for a quantity, a boolean for a flag, a text for
 * the rest; absent, the field keeps its default. */
static int read_field(json_t *obj, const struct xrl_field *f,
		      struct xrl_rule_spec *rule, char *err, size_t len)
{
	json_t *item = json_object_get(obj, f->key);
	const char *text;
	int ret;

	switch (f->type) {
	case XRL_FIELD_NAME:
	case XRL_FIELD_CIDR:
		return 0;	/* read first, together */
	case XRL_FIELD_LEVELS:
		return read_levels(obj, f, rule, err, len);
	case XRL_FIELD_QUANTITY:
		return read_quantity(item, f, rule, err, len);
	case XRL_FIELD_FLAG:
		if (!item)
			return 0;
		if (!json_is_boolean(item)) {
			snprintf(err, len, "%s: must be true or false", f->key);
			return -EINVAL;
		}
		return xrl_field_parse(f, json_is_true(item) ? "true" : "false",
				       rule, XRL_STYLE_SOCKET, err, len);
	default:
		ret = xrl_json_string(obj, f->key, false, &text, err, len);
		if (ret || !text)
			return ret;
		return xrl_field_parse(f, text, rule, XRL_STYLE_SOCKET, err,
				       len);
	}
}

/* "cidr", then "name": judged with the prefix in hand, or made of it. */
static int read_identity(json_t *obj, struct xrl_rule_spec *rule, char *err,
			 size_t len)
{
	const char *cidr, *name;
	int ret;

	ret = xrl_json_string(obj, "cidr", true, &cidr, err, len);
	if (!ret)
		ret = xrl_rule_json_cidr(cidr, &rule->prefix, err, len);
	if (!ret)
		ret = xrl_json_string(obj, "name", false, &name, err, len);
	if (!ret && name)
		ret = xrl_rule_name_check(name, &rule->prefix, err, len);
	if (!ret && name)
		snprintf(rule->name, sizeof(rule->name), "%s", name);
	return ret;
}

/* A rule written without a name: an L4 rule its CIDR and match, the
 * default rule "default", the rest their CIDR. */
static void default_name(struct xrl_rule_spec *rule)
{
	if (!xrl_match_is_plain(&rule->match))
		xrl_rule_default_name(rule, rule->name, sizeof(rule->name));
	else if (rule->prefix.prefixlen == 0)
		snprintf(rule->name, sizeof(rule->name), "%s",
			 XRL_DEFAULT_RULE_NAME);
	else
		xrl_cidr_format(&rule->prefix, rule->name, sizeof(rule->name));
}

int xrl_rule_json_read(json_t *obj, struct xrl_rule_spec *rule, char *err,
		       size_t len)
{
	size_t i;
	int ret;

	memset(rule, 0, sizeof(*rule));
	rule->action = XRL_ACTION_LIMIT;
	ret = read_identity(obj, rule, err, len);
	for (i = 0; !ret && i < xrl_n_rule_fields; i++)
		ret = read_field(obj, &xrl_rule_fields[i], rule, err, len);
	if (ret)
		return ret;
	if (!rule->name[0])
		default_name(rule);
	return xrl_rule_check(rule, err, len);
}

/* ---- writing -------------------------------------------------------- */

static json_t *levels_json(const struct xrl_rule_spec *rule)
{
	enum xrl_family family = xrl_prefix_family(&rule->prefix);
	json_t *levels = json_array();
	char text[160];
	unsigned i;

	for (i = 0; levels && i < rule->n_levels && i < XRL_LEVELS_MAX; i++) {
		xrl_level_format(&rule->levels[i], family, text, sizeof(text));
		if (json_array_append_new(levels, json_string(text))) {
			json_decref(levels);
			return NULL;
		}
	}
	return levels;
}

static json_t *field_json(const struct xrl_field *f,
			  const struct xrl_rule_spec *rule)
{
	char text[96];

	switch (f->type) {
	case XRL_FIELD_QUANTITY:
		return json_integer((json_int_t)xrl_field_value(f, rule));
	case XRL_FIELD_FLAG:
		return json_boolean(xrl_field_value(f, rule));
	case XRL_FIELD_LEVELS:
		return levels_json(rule);
	default:
		xrl_field_format(f, rule, text, sizeof(text));
		return json_string(text);
	}
}

int xrl_rule_json_add(json_t *obj, const struct xrl_rule_spec *rule)
{
	const struct xrl_field *f;
	char match[64];
	size_t i;

	for (i = 0; i < xrl_n_rule_fields; i++) {
		f = &xrl_rule_fields[i];
		if (xrl_field_is_set(f, rule, true) &&
		    json_object_set_new(obj, f->key, field_json(f, rule)))
			return -ENOMEM;
	}
	if (xrl_match_is_plain(&rule->match))
		return 0;
	xrl_match_format(&rule->match, match, sizeof(match));
	return json_object_set_new(obj, "match", json_string(match)) ?
	       -ENOMEM : 0;
}

json_t *xrl_rule_json(const struct xrl_rule_spec *rule)
{
	json_t *obj = json_object();

	if (obj && xrl_rule_json_add(obj, rule)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_read.c - the policy file read: its YAML walked map by map
 * (yaml_walk.h) against the tables of its keys (fields.h). A key of a
 * type every reader knows is read by read_value(); the others (a rule's
 * name and levels, the lists, new_sources:, redis:) by functions of their
 * own here. Checks that span fields of a rule are xrl_rule_check()'s, so
 * the file and the control socket judge rules alike.
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "blocklist.h"
#include "cidr.h"
#include "fields.h"
#include "levels.h"
#include "match.h"
#include "policy_read.h"
#include "rule.h"
#include "units.h"
#include "yaml_walk.h"

/* What a rule's map fills; the spec goes into the policy once whole. */
struct rule_draft {
	struct xrl_rule_spec spec;
	const char *cidr_text;		/* owned by the document */
	const char *name_text;		/* as written, or NULL */
};

/* The three ways to give a level's prefix come first in its table. */
#define LEVEL_PREFIXES	3

/* ---- values of the types every reader knows ------------------------- */

/* A scalar parsed into @obj by its entry (fields.c); its line noted
 * where the entry keeps one. */
static int read_value(struct xrl_yaml *y, const char *field,
		      yaml_node_t *value, const struct xrl_field *f, void *obj)
{
	char why[256];
	const char *text;
	int ret = xrl_yaml_scalar(y, field, value, &text);

	if (ret)
		return ret;
	if (xrl_field_parse(f, text, obj, XRL_STYLE_FILE, why, sizeof(why)))
		return xrl_yaml_fail(y, value, field, value, "%s", why);
	if (f->line_offset)
		*(int *)((char *)obj + f->line_offset) = xrl_yaml_line(value);
	return 0;
}

/* ---- a rule's levels (levels.c) ------------------------------------- */

/* A level's prefix is of the rule's family, known once the rule's map is
 * read (cidr: may follow levels:): XRL_FAMILY_ANY until then. */
static int read_level_value(struct xrl_yaml *y, const char *field,
			    yaml_node_t *value, const struct xrl_field *f,
			    void *target)
{
	static const enum xrl_family families[LEVEL_PREFIXES] = {
		XRL_FAMILY_ANY, XRL_FAMILY_IPV4, XRL_FAMILY_IPV6,
	};
	struct xrl_level_spec *level = target;
	size_t index = (size_t)(f - xrl_level_fields);

	if (index < LEVEL_PREFIXES)
		level->family = families[index];
	return read_value(y, field, value, f, level);
}

/* Exactly one of prefix:, ipv4_prefix:, ipv6_prefix:; the level's line
 * is its prefix's. */
static int check_level_prefix(struct xrl_yaml *y, const char *path,
			      yaml_node_t *map,
			      const struct xrl_yaml_seen *seen,
			      struct xrl_level_spec *level)
{
	yaml_node_t *first = NULL;
	char field[XRL_YAML_FIELD_MAX];
	int i;

	for (i = 0; i < LEVEL_PREFIXES; i++)
		if (seen->node[i] &&
		    (!first || seen->node[i]->start_mark.index <
			       first->start_mark.index))
			first = seen->node[i];
	for (i = 0; i < LEVEL_PREFIXES; i++) {
		yaml_node_t *node = seen->node[i];

		if (!node || node == first)
			continue;
		xrl_yaml_field_name(field, path, xrl_level_fields[i].key);
		return xrl_yaml_fail(y, node, field, node, "a level has one "
				     "of prefix, ipv4_prefix or ipv6_prefix, "
				     "not two");
	}
	if (!first)
		return xrl_yaml_fail(y, map, path, NULL, "a level needs "
				     "prefix, ipv4_prefix or ipv6_prefix");
	level->line = xrl_yaml_line(first);
	return 0;
}

/* levels: a list of 1 to XRL_LEVELS_MAX maps of xrl_level_fields. */
static int read_levels(struct xrl_yaml *y, const char *field,
		       yaml_node_t *value, struct rule_draft *draft)
{
	char path[XRL_YAML_FIELD_MAX];
	struct xrl_yaml_seen seen;
	size_t count, i;
	int ret;

	ret = xrl_yaml_expect(y, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	count = xrl_yaml_count(value);
	if (!count)
		return xrl_yaml_fail(y, value, field, NULL, "an empty list "
				     "(leave levels: out for none)");
	if (count > XRL_LEVELS_MAX)
		return xrl_yaml_fail(y, value, field, NULL, "%zu levels, more "
				     "than the maximum %d", count,
				     XRL_LEVELS_MAX);
	memset(draft->spec.levels, 0, sizeof(draft->spec.levels));
	for (i = 0; i < count; i++) {
		yaml_node_t *map = xrl_yaml_item(y, value, i);

		snprintf(path, sizeof(path), "%s[%zu]", field, i);
		ret = xrl_yaml_walk(y, path, map, xrl_level_fields,
				    xrl_n_level_fields, 0, read_level_value,
				    &draft->spec.levels[i], &seen);
		if (!ret)
			ret = check_level_prefix(y, path, map, &seen,
						 &draft->spec.levels[i]);
		if (ret)
			return ret;
	}
	draft->spec.n_levels = (unsigned)count;
	return 0;
}

/* The node of level @index of the rule at @map, or NULL. */
static yaml_node_t *level_item(struct xrl_yaml *y, yaml_node_t *map,
			       unsigned long index)
{
	return xrl_yaml_item(y, map ? xrl_yaml_map_value(y, map, "levels") :
			     NULL, index);
}

/*
 * "levels[i].key: why" (levels.c) of the rule at @map: at that key of
 * level i as the file writes it (its prefix by whichever of its three
 * names it has), else at the level, else at the rule.
 */
static int level_error(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		       const char *why)
{
	const char *colon = strstr(why, ": "), *key = NULL;
	yaml_node_t *level, *at = NULL;
	char name[32], sub[64], field[XRL_YAML_FIELD_MAX];
	unsigned long index;
	char *rest;
	int i;

	index = strtoul(why + strlen("levels["), &rest, 10);
	level = level_item(y, map, index);
	if (colon && rest[0] == ']' && rest[1] == '.' && colon > rest + 2) {
		snprintf(name, sizeof(name), "%.*s", (int)(colon - rest - 2),
			 rest + 2);
		key = name;
	}
	for (i = 0; level && key && !at && i < LEVEL_PREFIXES; i++)
		if (!strcmp(key, "prefix") ||
		    !strcmp(key, xrl_level_fields[i].key))
			if ((at = xrl_yaml_map_value(y, level,
						     xrl_level_fields[i].key)))
				key = xrl_level_fields[i].key;
	if (level && key && !at)
		at = xrl_yaml_map_value(y, level, key);
	snprintf(sub, sizeof(sub), "levels[%lu]%s%s", index, key ? "." : "",
		 key ? key : "");
	xrl_yaml_field_name(field, path, sub);
	return xrl_yaml_fail(y, at ? at : level ? level : map, field, at, "%s",
			     colon ? colon + 2 : why);
}

/* A level's "prefix:" takes the rule's family; the default rule covers
 * both, so it must say which. */
static int resolve_levels(struct xrl_yaml *y, const char *path,
			  yaml_node_t *map, struct xrl_rule_spec *rule)
{
	enum xrl_family family = xrl_prefix_family(&rule->prefix);
	char sub[32], field[XRL_YAML_FIELD_MAX];
	yaml_node_t *node;
	unsigned i;

	for (i = 0; i < rule->n_levels; i++) {
		if (rule->levels[i].family != XRL_FAMILY_ANY)
			continue;
		if (family != XRL_FAMILY_ANY) {
			rule->levels[i].family = family;
			continue;
		}
		node = xrl_yaml_map_value(y, level_item(y, map, i), "prefix");
		snprintf(sub, sizeof(sub), "levels[%u].prefix", i);
		xrl_yaml_field_name(field, path, sub);
		return xrl_yaml_fail(y, node, field, node, "%s covers IPv4 and "
				     "IPv6 sources: write ipv4_prefix: or "
				     "ipv6_prefix:",
				     rule->prefix.prefixlen ||
				     strcmp(path, "default") ?
				     "a rule for every source" :
				     "the default rule");
	}
	return 0;
}

/* ---- a rule (and the default rule) ---------------------------------- */

/* The name is judged with the CIDR in hand (xrl_rule_name_check), once
 * the map is read; the cidr is kept as written for a name. */
static int read_rule_value(struct xrl_yaml *y, const char *field,
			   yaml_node_t *value, const struct xrl_field *f,
			   void *target)
{
	struct rule_draft *draft = target;
	int ret;

	switch (f->type) {
	case XRL_FIELD_NAME:
		return xrl_yaml_scalar(y, field, value, &draft->name_text);
	case XRL_FIELD_LEVELS:
		return read_levels(y, field, value, draft);
	default:
		ret = read_value(y, field, value, f, &draft->spec);
		if (!ret && f->type == XRL_FIELD_CIDR)
			draft->cidr_text =
				(const char *)value->data.scalar.value;
		return ret;
	}
}

/* The library's checks say "field: what is wrong"; the error points at
 * that field's line when the rule has it, else at the rule's. */
static int rule_error(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		      const char *why, const struct xrl_yaml_seen *seen)
{
	char key[32], field[XRL_YAML_FIELD_MAX];
	const char *colon = strstr(why, ": ");
	yaml_node_t *at = map, *shown = NULL;
	const struct xrl_field *f;

	if (!colon)
		return xrl_yaml_fail(y, map, path, NULL, "%s", why);
	if (!strncmp(why, "levels[", strlen("levels[")))
		return level_error(y, path, map, why);
	snprintf(key, sizeof(key), "%.*s", (int)(colon - why), why);
	f = xrl_field_find(xrl_rule_fields, xrl_n_rule_fields, key);
	if (f && seen->node[f - xrl_rule_fields])
		at = seen->node[f - xrl_rule_fields];
	/* A value is shown when it is one: not a list (levels:). */
	if (at != map && at->type == YAML_SCALAR_NODE)
		shown = at;
	xrl_yaml_field_name(field, path, key);
	return xrl_yaml_fail(y, at, field, shown, "%s", colon + 2);
}

static int check_rule(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		      const struct rule_draft *draft,
		      const struct xrl_yaml_seen *seen)
{
	char why[128];

	if (xrl_rule_check(&draft->spec, why, sizeof(why)))
		return rule_error(y, path, map, why, seen);
	return 0;
}

static int read_default(struct xrl_yaml *y, const char *field,
			yaml_node_t *value, const struct xrl_field *f,
			void *target)
{
	struct xrl_config *config = target;
	struct xrl_rule_spec *dflt = &config->policy.rules[0];
	struct rule_draft draft = { .spec = *dflt };
	struct xrl_yaml_seen seen;
	int ret;

	draft.spec.action = XRL_ACTION_LIMIT;
	ret = xrl_yaml_walk(y, field, value, f->sub, xrl_n_rule_fields,
			    XRL_FIELD_RULE_ONLY, read_rule_value, &draft,
			    &seen);
	if (!ret)
		ret = resolve_levels(y, field, value, &draft.spec);
	if (ret)
		return ret;
	draft.spec.line = xrl_yaml_line(value);
	ret = check_rule(y, field, value, &draft, &seen);
	if (!ret)
		*dflt = draft.spec;
	return ret;
}

/* One rule's map into @spec; duplicates are looked for across all. */
static int read_rule(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		      struct xrl_rule_spec *spec)
{
	struct rule_draft draft = { .spec.action = XRL_ACTION_LIMIT };
	char field[XRL_YAML_FIELD_MAX], why[128];
	const char *name;
	struct xrl_yaml_seen seen;
	int ret;

	ret = xrl_yaml_walk(y, path, map, xrl_rule_fields, xrl_n_rule_fields, 0,
			    read_rule_value, &draft, &seen);
	if (ret)
		return ret;
	if (!draft.cidr_text) {
		xrl_yaml_field_name(field, path, "cidr");
		return xrl_yaml_fail(y, map, field, NULL, "missing (every rule "
				     "but default: needs one)");
	}
	ret = resolve_levels(y, path, map, &draft.spec);
	if (ret)
		return ret;
	name = draft.name_text ? draft.name_text : draft.cidr_text;
	if (!draft.name_text && !xrl_match_is_plain(&draft.spec.match)) {
		/* Rules of one prefix must not share the CIDR as a name. */
		xrl_rule_default_name(&draft.spec, draft.spec.name,
				      sizeof(draft.spec.name));
		name = draft.spec.name;
	}
	if (xrl_rule_name_check(name, &draft.spec.prefix, why, sizeof(why)))
		return rule_error(y, path, map, why, &seen);
	if (name != draft.spec.name)
		snprintf(draft.spec.name, sizeof(draft.spec.name), "%s", name);
	draft.spec.line = xrl_yaml_line(map);
	ret = check_rule(y, path, map, &draft, &seen);
	if (!ret)
		*spec = draft.spec;
	return ret;
}

static int compare_names(const void *a, const void *b)
{
	const struct xrl_rule_spec *const *x = a, *const *y = b;
	int order = strcmp((*x)->name, (*y)->name);

	return order ? order : (*x < *y ? -1 : *x > *y);
}

/* Names are how rules are found (rule del NAME), so two may not share one;
 * sorted, the pair shows up side by side in O(n log n). */
static int check_names_unique(struct xrl_yaml *y, const struct xrl_policy *p,
			      yaml_node_t *rules)
{
	const struct xrl_rule_spec **by_name, *first, *second;
	char field[XRL_YAML_FIELD_MAX];
	yaml_node_t *item;
	size_t i;
	int ret = 0;

	by_name = calloc(p->n_rules, sizeof(*by_name));
	if (!by_name)
		return -ENOMEM;
	for (i = 0; i < p->n_rules; i++)
		by_name[i] = &p->rules[i];
	qsort(by_name, p->n_rules, sizeof(*by_name), compare_names);
	for (i = 1; i < p->n_rules; i++) {
		if (strcmp(by_name[i - 1]->name, by_name[i]->name))
			continue;
		/* rules[k] of the file is policy rule k + 1 */
		first = by_name[i - 1];
		second = by_name[i];
		item = xrl_yaml_item(y, rules, second - p->rules - 1);
		item = xrl_yaml_map_value(y, item, "name") ?: item;
		snprintf(field, sizeof(field), "rules[%td].name",
			 second - p->rules - 1);
		if (first == p->rules)
			ret = xrl_yaml_fail(y, item, field, NULL, "the default "
					    "rule's name (%s)", second->name);
		else
			ret = xrl_yaml_fail(y, item, field, NULL,
				   "duplicate of the rule at line %d (%s)",
					    first->line, second->name);
		break;
	}
	free(by_name);
	return ret;
}

/* Rule @clash has the prefix and match of an earlier one (@why -EEXIST)
 * or is one too many at its prefix (-EMLINK): name the lines. */
static int duplicate_cidr(struct xrl_yaml *y, const struct xrl_rule_spec *specs,
			  size_t clash, yaml_node_t *rules, int why)
{
	const struct xrl_lpm_key *prefix = &specs[clash].prefix;
	yaml_node_t *cidr = xrl_yaml_map_value(y,
					       xrl_yaml_item(y, rules, clash),
					       "cidr");
	char field[XRL_YAML_FIELD_MAX];
	size_t i;
	int line = 0;

	snprintf(field, sizeof(field), "rules[%zu].cidr", clash);
	if (why == -EMLINK)
		return xrl_yaml_fail(y, cidr, field, cidr, "more than %d rules "
				     "at one prefix (rules that differ in "
				     "proto, ports or tcp_flags)",
				     XRL_MATCH_CHAIN_MAX);
	if (prefix->prefixlen == 0 && xrl_match_is_plain(&specs[clash].match))
		return xrl_yaml_fail(y, cidr, field, cidr,
				     "covers every source: set it as default:");
	for (i = 0; i < clash && !line; i++)
		if (xrl_prefix_equal(&specs[i].prefix, prefix) &&
		    !xrl_match_compare(&specs[i].match, &specs[clash].match))
			line = specs[i].line;
	if (!line)
		return xrl_yaml_fail(y, cidr, field, cidr, "duplicate of a "
				     "rule of the policy");
	return xrl_yaml_fail(y, cidr, field, cidr, "duplicate of the rule at "
			     "line %d", line);
}

static int read_rules(struct xrl_yaml *y, const char *field,
		      yaml_node_t *value, const struct xrl_field *f,
		      void *target)
{
	struct xrl_config *config = target;
	struct xrl_rule_spec *specs;
	char path[XRL_YAML_FIELD_MAX];
	size_t count, i, clash;
	int ret = 0;

	ret = xrl_yaml_expect(y, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	count = xrl_yaml_count(value);
	if (count > XRL_MAX_RULES - 1)
		return xrl_yaml_fail(y, value, field, NULL,
			    "%zu rules, more than the maximum %d", count,
				     XRL_MAX_RULES - 1);
	specs = calloc(count ? count : 1, sizeof(*specs));
	if (!specs)
		return -ENOMEM;
	for (i = 0; i < count && !ret; i++) {
		snprintf(path, sizeof(path), "%s[%zu]", field, i);
		ret = read_rule(y, path, xrl_yaml_item(y, value, i), &specs[i]);
	}
	/* All at once: one sort finds duplicates, not a scan per rule. */
	if (!ret)
		ret = xrl_policy_add_many(&config->policy, specs, count, &clash);
	if (ret == -EEXIST || ret == -EMLINK)
		ret = duplicate_cidr(y, specs, clash, value, ret);
	free(specs);
	return ret ? ret : check_names_unique(y, &config->policy, value);
}

/* ---- the top level -------------------------------------------------- */

/* What the kernel's dev_valid_name() accepts. */
static bool valid_ifname(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return !strpbrk(name, "/: \t\n\r\f\v");
}

static int read_interfaces(struct xrl_yaml *y, const char *field,
			   yaml_node_t *value, const struct xrl_field *f,
			   void *target)
{
	struct xrl_config *config = target;
	char item_field[XRL_YAML_FIELD_MAX];
	yaml_node_item_t *item;
	const char *name;
	size_t i;
	int ret;

	ret = xrl_yaml_expect(y, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	for (item = value->data.sequence.items.start;
	     item < value->data.sequence.items.top; item++) {
		yaml_node_t *node = yaml_document_get_node(y->doc, *item);

		snprintf(item_field, sizeof(item_field), "%s[%td]", field,
			 item - value->data.sequence.items.start);
		ret = xrl_yaml_scalar(y, item_field, node, &name);
		if (ret)
			return ret;
		if (!valid_ifname(name))
			return xrl_yaml_fail(y, node, item_field, node,
					     "not an interface name");
		for (i = 0; i < config->n_interfaces; i++)
			if (!strcmp(config->interfaces[i], name))
				return xrl_yaml_fail(y, node, item_field, node,
						     "listed twice");
		if (config->n_interfaces == XRL_MAX_IFACES)
			return xrl_yaml_fail(y, node, item_field, node,
				    "more than %d interfaces", XRL_MAX_IFACES);
		config->interfaces[config->n_interfaces] = strdup(name);
		if (!config->interfaces[config->n_interfaces])
			return -ENOMEM;
		config->n_interfaces++;
	}
	return 0;
}

static int read_blocklists(struct xrl_yaml *y, const char *field,
			   yaml_node_t *value, const struct xrl_field *f,
			   void *target)
{
	struct xrl_config *config = target;

	return xrl_blocklists_read_yaml(y, field, value, f, &config->policy);
}

/* {pps: N, burst: M}, both needed, or "off" for no budget at all. */
static int read_new_sources(struct xrl_yaml *y, const char *field,
			    yaml_node_t *value, const struct xrl_field *f,
			    void *target)
{
	struct xrl_config *config = target;
	struct xrl_policy *policy = &config->policy;
	char missing[XRL_YAML_FIELD_MAX];
	struct xrl_yaml_seen seen;
	size_t i;
	int ret;

	if (value->type == YAML_SCALAR_NODE) {
		if (strcmp((const char *)value->data.scalar.value, "off"))
			return xrl_yaml_fail(y, value, field, value,
				    "must be off or a map of pps and burst");
		policy->new_sources_off = true;
		return 0;
	}
	ret = xrl_yaml_walk(y, field, value, f->sub, f->n_sub, 0, read_value,
			    config, &seen);
	if (ret)
		return ret;
	for (i = 0; i < f->n_sub; i++) {
		if (seen.node[i])
			continue;
		xrl_yaml_field_name(missing, field, f->sub[i].key);
		return xrl_yaml_fail(y, value, missing, NULL, "missing");
	}
	return 0;
}

/* A daemon setting's text, and its line for the daemon's errors. */
static int keep_text(const char *text, yaml_node_t *value, char **out,
		     int *line)
{
	*out = strdup(text);
	if (!*out)
		return -ENOMEM;
	*line = xrl_yaml_line(value);
	return 0;
}

static int read_redis(struct xrl_yaml *y, const char *field,
		      yaml_node_t *value, const struct xrl_field *f,
		      void *target)
{
	struct xrl_config *config = target;
	char host[256];
	uint16_t port;
	const char *text;
	int ret = xrl_yaml_scalar(y, field, value, &text);

	if (ret)
		return ret;
	if (xrl_hostport_parse(text, host, sizeof(host), &port))
		return xrl_yaml_fail(y, value, field, value,
			    "must be HOST:PORT (a port from 1 to 65535)");
	return keep_text(text, value, &config->redis, &config->redis_line);
}

/* Checked by the daemon, which serves it (metrics_http.h), at start. */
static int read_metrics(struct xrl_yaml *y, const char *field,
			yaml_node_t *value, const struct xrl_field *f,
			void *target)
{
	struct xrl_config *config = target;
	const char *text;
	int ret = xrl_yaml_scalar(y, field, value, &text);

	if (ret)
		return ret;
	return keep_text(text, value, &config->metrics, &config->metrics_line);
}

static int read_sync_interval(struct xrl_yaml *y, const char *field,
			      yaml_node_t *value, const struct xrl_field *f,
			      void *target)
{
	struct xrl_config *config = target;
	const char *text;
	int ret = xrl_yaml_scalar(y, field, value, &text);

	if (ret)
		return ret;
	if (xrl_duration_ms_parse(text, &config->sync_interval_ms) ||
	    config->sync_interval_ms < XRL_SYNC_INTERVAL_MIN_MS ||
	    config->sync_interval_ms > XRL_SYNC_INTERVAL_MAX_MS)
		return xrl_yaml_fail(y, value, field, value,
				     "must be %dms to %ds (\"100ms\", \"1s\")",
				     XRL_SYNC_INTERVAL_MIN_MS,
				     XRL_SYNC_INTERVAL_MAX_MS / 1000);
	return 0;
}

/* A map of keys of every reader's types (keys:, events:). */
static int read_map(struct xrl_yaml *y, const char *field, yaml_node_t *value,
		    const struct xrl_field *f, void *target)
{
	return xrl_yaml_walk(y, field, value, f->sub, f->n_sub, 0, read_value,
			     target, NULL);
}

/* The keys of the top level read by their own functions; the rest by
 * their type. */
static const struct {
	const char *key;
	xrl_yaml_read_fn read;
} top_readers[] = {
	{ "new_sources", read_new_sources },
	{ "interfaces", read_interfaces },
	{ "blocklists", read_blocklists },
	{ "default", read_default },
	{ "rules", read_rules },
	{ "redis", read_redis },
	{ "sync_interval", read_sync_interval },
	{ "metrics", read_metrics },
};

static int read_top(struct xrl_yaml *y, const char *field, yaml_node_t *value,
		    const struct xrl_field *f, void *target)
{
	size_t i;

	for (i = 0; i < sizeof(top_readers) / sizeof(top_readers[0]); i++)
		if (!strcmp(top_readers[i].key, f->key))
			return top_readers[i].read(y, field, value, f, target);
	if (f->type == XRL_FIELD_MAP)
		return read_map(y, field, value, f, target);
	return read_value(y, field, value, f, target);
}

/* ---- loading -------------------------------------------------------- */

/* "escalate_prefix: why" of a rule @map at @path, at its value. */
static int key_error(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		     const char *why)
{
	const char *colon = strstr(why, ": ");
	char key[32], field[XRL_YAML_FIELD_MAX];
	yaml_node_t *at;

	if (!colon)
		return xrl_yaml_fail(y, map, path, NULL, "%s", why);
	snprintf(key, sizeof(key), "%.*s", (int)(colon - why), why);
	at = map ? xrl_yaml_map_value(y, map, key) : NULL;
	xrl_yaml_field_name(field, path, key);
	return xrl_yaml_fail(y, at ? at : map, field, at, "%s", colon + 2);
}

/* Levels and escalation against the source keys, once the whole file
 * is read (keys: may follow the rules). */
static int check_level_keys(struct xrl_yaml *y, const struct xrl_policy *p)
{
	yaml_node_t *root = yaml_document_get_root_node(y->doc), *map;
	char path[XRL_YAML_FIELD_MAX], why[160];
	size_t i;

	for (i = 0; i < p->n_rules; i++) {
		if (!xrl_levels_check_keys(&p->rules[i], p->v4_prefix,
					   p->v6_prefix, why, sizeof(why)))
			continue;
		/* rules[k] of the file is policy rule k + 1 */
		if (i == 0) {
			snprintf(path, sizeof(path), "default");
			map = xrl_yaml_map_value(y, root, "default");
		} else {
			snprintf(path, sizeof(path), "rules[%zu]", i - 1);
			map = xrl_yaml_item(y, xrl_yaml_map_value(y, root,
								  "rules"),
					    i - 1);
		}
		if (strncmp(why, "levels[", strlen("levels[")))
			return key_error(y, path, map, why);
		return level_error(y, path, map, why);
	}
	return 0;
}

int xrl_config_load_string(const char *text, size_t text_len, const char *name,
			   struct xrl_config *config, char *err, size_t len)
{
	struct xrl_yaml y = { .name = name, .err = err, .err_len = len };
	yaml_document_t doc;
	int ret;

	memset(config, 0, sizeof(*config));
	if (len)
		err[0] = '\0';
	ret = xrl_yaml_load(&y, text, text_len, &doc);
	if (ret)
		goto report;
	y.doc = &doc;
	ret = xrl_policy_init(&config->policy);
	if (ret)
		goto delete_doc;
	ret = xrl_yaml_walk(&y, "", yaml_document_get_root_node(&doc),
			    xrl_policy_fields, xrl_n_policy_fields, 0, read_top,
			    config, NULL);
	if (!ret)
		ret = check_level_keys(&y, &config->policy);
	if (ret)
		xrl_config_free(config);
delete_doc:
	yaml_document_delete(&doc);
report:
	if (ret && len && !err[0])
		snprintf(err, len, "%s: %s", name, strerror(-ret));
	return ret;
}

int xrl_config_read_file(const char *path, char **out, size_t *out_size,
			 char *err, size_t len)
{
	size_t size = 0, cap = 0, got;
	char *text = NULL;
	FILE *file;
	int ret = 0;

	file = fopen(path, "r");
	if (!file) {
		ret = -errno;
		goto report;
	}
	/* Read to the end rather than trust st_size: works for pipes and
	 * /dev/stdin, and a directory fails here with EISDIR. The buffer
	 * doubles: few reallocations, which in the daemon's reading thread
	 * take the address space's lock from the control loop. */
	do {
		if (size == cap) {
			char *grown = realloc(text, cap ? cap * 2 : 65536);

			if (!grown) {
				ret = -ENOMEM;
				goto close_file;
			}
			text = grown;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(text + size, 1, cap - size, file);
		size += got;
		/* Past the limit is far enough for its refusal. */
	} while (got && size <= XRL_YAML_SIZE_MAX);
	if (ferror(file))
		ret = errno ? -errno : -EIO;
close_file:
	fclose(file);
report:
	if (ret) {
		snprintf(err, len, "%s: cannot read: %s", path, strerror(-ret));
		free(text);
		return ret;
	}
	*out = text;
	*out_size = size;
	return 0;
}

int xrl_config_load_file(const char *path, struct xrl_config *config,
			 char *err, size_t len)
{
	size_t size;
	char *text;
	int ret;

	memset(config, 0, sizeof(*config));
	ret = xrl_config_read_file(path, &text, &size, err, len);
	if (ret)
		return ret;
	ret = xrl_config_load_string(text, size, path, config, err, len);
	free(text);
	return ret;
}

int xrl_hostport_parse(const char *text, char *host, size_t len,
		       uint16_t *port)
{
	const char *colon = strrchr(text, ':');
	char *end;
	long value;

	if (!colon || colon == text || (size_t)(colon - text) >= len)
		return -EINVAL;
	errno = 0;
	value = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || value < 1 || value > 65535)
		return -EINVAL;
	snprintf(host, len, "%.*s", (int)(colon - text), text);
	*port = (uint16_t)value;
	return 0;
}

void xrl_config_free(struct xrl_config *config)
{
	size_t i;

	free(config->redis);
	free(config->metrics);
	for (i = 0; i < config->n_interfaces; i++)
		free(config->interfaces[i]);
	xrl_policy_free(&config->policy);
	memset(config, 0, sizeof(*config));
}


// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_file.c - the YAML policy file, read through libyaml's document
 * loader (every node keeps its line) and checked against tables of fields.
 *
 * Each map of the format (the top level, keys:, a rule, default:) is a
 * table of {key, parse function}; walk_map() refuses unknown and duplicate
 * keys and hands each value to its function. A new key is one table entry.
 * Checks that span fields of a rule are xrl_rule_check()'s, so the file and
 * the control socket judge rules alike.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "limit.h"
#include "match.h"
#include "policy_file.h"
#include "units.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define FIELD_MAX	320	/* a path ("rules[131070]") and a shown key */
#define VALUE_SHOWN	48	/* a value in an error is cut after this */
#define FILE_MAX	(64 << 20)	/* bigger than any sane policy */

struct loader {
	const char *name;		/* the file, as errors name it */
	yaml_document_t *doc;
	char *err;
	size_t err_len;
};

struct field;
typedef int (*parse_fn)(struct loader *ld, const char *field,
			yaml_node_t *value, void *target);

struct field {
	const char *key;
	parse_fn parse;
};

/* What a rule's map fills; the spec goes into the policy once whole. */
struct rule_draft {
	struct xrl_rule_spec spec;
	const char *cidr_text;		/* owned by the document */
	const char *name_text;		/* as written, or NULL */
};

/* Value nodes met while walking one map, by field index, for the checks
 * that look at several fields and for errors that point at a line. */
#define MAX_FIELDS	24	/* keys in one map's table */

struct seen {
	yaml_node_t *node[MAX_FIELDS];
};

/* ---- errors ---------------------------------------------------------- */

static int node_line(const yaml_node_t *node)
{
	return node ? (int)node->start_mark.line + 1 : 1;
}

/* A scalar as an error shows it: cut, with control bytes escaped, so the
 * error stays one line whatever the file holds. */
static void value_text(const yaml_node_t *node, char *buf, size_t len)
{
	const unsigned char *text;
	size_t i, n, out = 0;

	if (!node || node->type != YAML_SCALAR_NODE) {
		snprintf(buf, len, "%s", "");
		return;
	}
	text = node->data.scalar.value;
	n = node->data.scalar.length;
	for (i = 0; i < n && out + 5 < len; i++) {
		if (i == VALUE_SHOWN) {
			out += snprintf(buf + out, len - out, "...");
			break;
		}
		if (text[i] < 0x20 || text[i] == 0x7f)
			out += snprintf(buf + out, len - out, "\\x%02x", text[i]);
		else
			buf[out++] = text[i];
	}
	buf[out] = '\0';
}

/* "FILE:LINE: FIELD: what is wrong", then " (value)" when @shown is set. */
static int __attribute__((format(printf, 5, 6)))
fail(struct loader *ld, const yaml_node_t *at, const char *field,
     const yaml_node_t *shown, const char *fmt, ...)
{
	char value[VALUE_SHOWN * 4 + 8];
	size_t used;
	va_list ap;
	int n;

	n = snprintf(ld->err, ld->err_len, "%s:%d: %s: ", ld->name,
		     node_line(at), field);
	used = n < 0 ? 0 : (size_t)n;
	if (used >= ld->err_len)
		return -EINVAL;
	va_start(ap, fmt);
	n = vsnprintf(ld->err + used, ld->err_len - used, fmt, ap);
	va_end(ap);
	used += n < 0 ? 0 : (size_t)n;
	if (shown && used < ld->err_len) {
		value_text(shown, value, sizeof(value));
		snprintf(ld->err + used, ld->err_len - used, " (%s)", value);
	}
	return -EINVAL;
}

static const char *type_name(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		return "a map";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return node->data.scalar.length ? "a single value" : "empty";
	}
}

static int expect_type(struct loader *ld, const char *field,
		       yaml_node_t *node, yaml_node_type_t type)
{
	static const char *const wanted[] = {
		[YAML_SCALAR_NODE] = "a single value",
		[YAML_SEQUENCE_NODE] = "a list",
		[YAML_MAPPING_NODE] = "a map",
	};

	if (node->type == type)
		return 0;
	return fail(ld, node, field,
		    node->type == YAML_SCALAR_NODE && node->data.scalar.length ?
		    node : NULL,
		    "must be %s, not %s", wanted[type], type_name(node));
}

/* The scalar's text, refused when it hides a NUL byte (a "\0" escape)
 * that C strings would silently cut at. */
static int scalar(struct loader *ld, const char *field, yaml_node_t *node,
		  const char **text)
{
	int ret = expect_type(ld, field, node, YAML_SCALAR_NODE);

	if (ret)
		return ret;
	*text = (const char *)node->data.scalar.value;
	if (strlen(*text) != node->data.scalar.length)
		return fail(ld, node, field, node, "contains a NUL byte");
	return 0;
}

/* ---- walking maps against tables ------------------------------------ */

static void field_name(char *buf, const char *path, const char *key)
{
	char shown[VALUE_SHOWN * 4 + 8];
	yaml_node_t fake = { .type = YAML_SCALAR_NODE };

	fake.data.scalar.value = (yaml_char_t *)key;
	fake.data.scalar.length = strlen(key);
	value_text(&fake, shown, sizeof(shown));
	snprintf(buf, FIELD_MAX, "%.64s%s%s", path, *path ? "." : "", shown);
}

static const char *key_text(const yaml_node_t *key)
{
	return (const char *)key->data.scalar.value;
}

static int find_field(const struct field *fields, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(fields[i].key, key))
			return (int)i;
	return -1;
}

static int unknown_key(struct loader *ld, const char *field,
		       yaml_node_t *key, const struct field *fields, size_t n)
{
	char expected[256] = "";
	size_t i, used = 0;

	for (i = 0; i < n && used < sizeof(expected); i++)
		used += snprintf(expected + used, sizeof(expected) - used,
				 "%s%s", i ? ", " : "", fields[i].key);
	return fail(ld, key, field, NULL, "unknown key, expected one of: %s",
		    expected);
}

/* The value of @key in @map (a map walked already), or NULL. */
static yaml_node_t *map_value(struct loader *ld, yaml_node_t *map,
			      const char *key)
{
	yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++)
		if (!strcmp(key_text(yaml_document_get_node(ld->doc, pair->key)),
			    key))
			return yaml_document_get_node(ld->doc, pair->value);
	return NULL;
}

/*
 * Hands each value of @map to its field's parse function, in file order.
 * @seen (optional) gets the value nodes by field index.
 */
static int walk_map(struct loader *ld, const char *path, yaml_node_t *map,
		    const struct field *fields, size_t n, void *target,
		    struct seen *seen)
{
	yaml_node_t *keys_seen[MAX_FIELDS] = { NULL };
	char field[FIELD_MAX];
	yaml_node_pair_t *pair;
	int ret, index;

	ret = expect_type(ld, *path ? path : "policy", map, YAML_MAPPING_NODE);
	if (ret)
		return ret;
	if (seen)
		memset(seen, 0, sizeof(*seen));
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(ld->doc, pair->key);
		yaml_node_t *value = yaml_document_get_node(ld->doc, pair->value);

		if (key->type != YAML_SCALAR_NODE ||
		    strlen(key_text(key)) != key->data.scalar.length) {
			snprintf(field, sizeof(field), "%s", *path ? path : "policy");
			return fail(ld, key, field, NULL,
				    "a key must be a plain word, not %s",
				    type_name(key));
		}
		field_name(field, path, key_text(key));
		index = find_field(fields, n, key_text(key));
		if (index < 0)
			return unknown_key(ld, field, key, fields, n);
		if (keys_seen[index])
			return fail(ld, key, field, NULL,
				    "duplicate key, first at line %d",
				    node_line(keys_seen[index]));
		keys_seen[index] = key;
		if (seen)
			seen->node[index] = value;
		ret = fields[index].parse(ld, field, value, target);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- quantities and numbers ----------------------------------------- */


/* A positive quantity up to @max, for rates and bursts. */
static int parse_amount(struct loader *ld, const char *field, yaml_node_t *node,
			uint64_t max, uint64_t *out)
{
	const char *text;
	int ret = scalar(ld, field, node, &text);

	if (ret)
		return ret;
	ret = xrl_parse_quantity(text, out);
	if (ret == -EDOM)
		return fail(ld, node, field, node, "not a whole number");
	if (ret == -ERANGE || (!ret && *out > max))
		return fail(ld, node, field, node, "over the maximum %" PRIu64,
			    max);
	if (ret)
		return fail(ld, node, field, node,
			    "not a number with an optional k, M or G");
	if (*out == 0)
		return fail(ld, node, field, node, "must be at least 1");
	return 0;
}

static int parse_uint_range(struct loader *ld, const char *field,
			    yaml_node_t *node, unsigned min, unsigned max,
			    uint32_t *out)
{
	const char *text;
	unsigned long n;
	char *end;
	int ret = scalar(ld, field, node, &text);

	if (ret)
		return ret;
	errno = 0;
	n = strtoul(text, &end, 10);
	if (*text < '0' || *text > '9' || *end || errno || n < min || n > max)
		return fail(ld, node, field, node, "must be %u to %u", min, max);
	*out = (uint32_t)n;
	return 0;
}

/* ---- keys: ---------------------------------------------------------- */

static int parse_ipv4_prefix(struct loader *ld, const char *field,
			     yaml_node_t *value, void *target)
{
	struct xrl_policy *policy = target;

	return parse_uint_range(ld, field, value, 1, 32, &policy->v4_prefix);
}

static int parse_ipv6_prefix(struct loader *ld, const char *field,
			     yaml_node_t *value, void *target)
{
	struct xrl_policy *policy = target;

	return parse_uint_range(ld, field, value, 1, 128, &policy->v6_prefix);
}

static const struct field key_fields[] = {
	{ "ipv4_prefix", parse_ipv4_prefix },
	{ "ipv6_prefix", parse_ipv6_prefix },
};

/* ---- a rule (and the default rule) ---------------------------------- */

/* Judged with the CIDR in hand (xrl_rule_name_check), once the map is read. */
static int parse_name(struct loader *ld, const char *field, yaml_node_t *value,
		      void *target)
{
	struct rule_draft *draft = target;

	return scalar(ld, field, value, &draft->name_text);
}

static int parse_cidr(struct loader *ld, const char *field, yaml_node_t *value,
		      void *target)
{
	struct rule_draft *draft = target;
	char ipv4[INET_ADDRSTRLEN + 4];
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	ret = xrl_cidr_parse(text, &draft->spec.prefix);
	if (ret == -ERANGE)
		return fail(ld, value, field, value,
			    "prefix length out of range (0-32 for IPv4, 0-128 for IPv6)");
	if (ret == -EADDRNOTAVAIL)
		return fail(ld, value, field, value,
			    "host bits set after the prefix length");
	if (ret)
		return fail(ld, value, field, value,
			    "not an IPv4 or IPv6 address or prefix");
	if (xrl_cidr_names_ipv4(text, &draft->spec.prefix, ipv4, sizeof(ipv4)))
		return fail(ld, value, field, value,
			    "an IPv4 prefix written as IPv6, which matches no "
			    "IPv4 source: write %s", ipv4);
	draft->cidr_text = text;
	return 0;
}

static int parse_action(struct loader *ld, const char *field,
			yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_action_parse(text, &draft->spec.action))
		return fail(ld, value, field, value,
			    "unknown action, expected limit, monitor, allow or deny");
	return 0;
}

static int parse_pps(struct loader *ld, const char *field, yaml_node_t *value,
		     void *target)
{
	struct rule_draft *draft = target;

	return parse_amount(ld, field, value, XRL_RATE_MAX, &draft->spec.pps);
}

static int parse_burst(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;

	return parse_amount(ld, field, value, XRL_BURST_MAX, &draft->spec.burst);
}

static int parse_bps(struct loader *ld, const char *field, yaml_node_t *value,
		     void *target)
{
	struct rule_draft *draft = target;

	return parse_amount(ld, field, value, XRL_RATE_MAX, &draft->spec.bps);
}

static int parse_burst_bytes(struct loader *ld, const char *field,
			     yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;

	return parse_amount(ld, field, value, XRL_BURST_MAX,
			    &draft->spec.burst_bytes);
}

static int parse_scope(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_scope_parse(text, &draft->spec.scope))
		return fail(ld, value, field, value,
			    "unknown scope, expected source or aggregate");
	return 0;
}

static int parse_global(struct loader *ld, const char *field,
			yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (!strcmp(text, "true"))
		draft->spec.global = true;
	else if (!strcmp(text, "false"))
		draft->spec.global = false;
	else
		return fail(ld, value, field, value, "must be true or false");
	draft->spec.global_line = node_line(value);
	return 0;
}

/* ---- strategies (strategy.c) ---------------------------------------- */

static int parse_strategy(struct loader *ld, const char *field,
			  yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_strategy_parse(text, &draft->spec.strategy.kind))
		return fail(ld, value, field, value, "unknown strategy, "
			    "expected token_bucket, leaky_bucket or "
			    "sliding_window");
	return 0;
}

static int parse_duration(struct loader *ld, const char *field,
			  yaml_node_t *value, uint64_t min, uint64_t max,
			  const char *bounds, uint64_t *out)
{
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	ret = xrl_duration_ns_parse(text, UINT64_MAX, out);
	if (ret == -EINVAL)
		return fail(ld, value, field, value, "not a duration such as "
			    "100ms, 2s, 1m or 500us");
	if (ret || *out < min || *out > max)
		return fail(ld, value, field, value, "must be %s", bounds);
	return 0;
}

static int parse_interval(struct loader *ld, const char *field,
			  yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;

	return parse_duration(ld, field, value, 1, XRL_INTERVAL_MAX_NS,
			      "1ns to 1h", &draft->spec.strategy.interval_ns);
}

static int parse_window(struct loader *ld, const char *field,
			yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;

	return parse_duration(ld, field, value, XRL_WINDOW_MIN_NS,
			      XRL_WINDOW_MAX_NS, "1ms to 1h",
			      &draft->spec.strategy.window_ns);
}

static int parse_limit(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;

	return parse_amount(ld, field, value, XRL_WINDOW_LIMIT_MAX,
			    &draft->spec.strategy.limit);
}

/* ban:, ban_after:, ban_max: (docs/POLICY.md "Bans"). */
static int parse_ban_duration(struct loader *ld, const char *field,
			      yaml_node_t *value, uint64_t *ns)
{
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	ret = xrl_duration_ns_parse(text, XRL_BAN_LIMIT_NS, ns);
	if (ret == -ERANGE)
		return fail(ld, value, field, value, "over the maximum 30d");
	if (ret)
		return fail(ld, value, field, value, "not a duration such as "
			    "30s, 500ms, 10m, 1h or 7d");
	return 0;
}

static int parse_ban(struct loader *ld, const char *field,
		     yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	int ret = parse_ban_duration(ld, field, value, &draft->spec.ban.ns);

	if (!ret && !draft->spec.ban.ns)
		return fail(ld, value, field, value, "a ban lasts at least "
			    "1ms (leave ban: out for none)");
	return ret;
}

static int parse_ban_after(struct loader *ld, const char *field,
			   yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;

	return parse_ban_duration(ld, field, value,
				  &draft->spec.ban.after_ns);
}

static int parse_ban_max(struct loader *ld, const char *field,
			 yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	int ret = parse_ban_duration(ld, field, value,
				     &draft->spec.ban.max_ns);

	if (!ret && !draft->spec.ban.max_ns)
		return fail(ld, value, field, value, "at least 1ms");
	return ret;
}

/* ---- a rule's L4 match (match.h) ----------------------------------- */

static int parse_proto(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_match_proto_parse(text, &draft->spec.match.proto))
		return fail(ld, value, field, value, "unknown protocol, "
			    "expected tcp, udp, icmp or icmpv6");
	return 0;
}

static int parse_ports(struct loader *ld, const char *field,
		       yaml_node_t *value, __u16 *lo, __u16 *hi)
{
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	ret = xrl_match_ports_parse(text, lo, hi);
	if (ret == -ERANGE)
		return fail(ld, value, field, value,
			    "range low end above its high end");
	if (ret)
		return fail(ld, value, field, value,
			    "not a port 0-65535 or a range LOW-HIGH");
	return 0;
}

static int parse_sport(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	struct xrl_rule_match *m = &draft->spec.match;

	m->flags |= XRL_MATCH_SPORT;
	return parse_ports(ld, field, value, &m->sport_lo, &m->sport_hi);
}

static int parse_dport(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	struct xrl_rule_match *m = &draft->spec.match;

	m->flags |= XRL_MATCH_DPORT;
	return parse_ports(ld, field, value, &m->dport_lo, &m->dport_hi);
}

static int parse_tcp_flags(struct loader *ld, const char *field,
			   yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_match_flags_parse(text, &draft->spec.match.flags))
		return fail(ld, value, field, value,
			    "unknown flags, expected syn (SYN without ACK)");
	return 0;
}

/* ---- a rule's levels (levels.c) ------------------------------------ */

/* A level's "prefix:" is of the rule's family, known once the rule's map
 * is read (cidr: may follow levels:): XRL_FAMILY_ANY until then. */
static int parse_level_prefix_in(struct loader *ld, const char *field,
				 yaml_node_t *value, enum xrl_family family,
				 struct xrl_level_spec *level)
{
	level->family = family;
	return parse_uint_range(ld, field, value, 1, 128, &level->prefix);
}

static int parse_level_prefix(struct loader *ld, const char *field,
			      yaml_node_t *value, void *target)
{
	return parse_level_prefix_in(ld, field, value, XRL_FAMILY_ANY,
				     target);
}

static int parse_level_ipv4_prefix(struct loader *ld, const char *field,
				   yaml_node_t *value, void *target)
{
	return parse_level_prefix_in(ld, field, value, XRL_FAMILY_IPV4,
				     target);
}

static int parse_level_ipv6_prefix(struct loader *ld, const char *field,
				   yaml_node_t *value, void *target)
{
	return parse_level_prefix_in(ld, field, value, XRL_FAMILY_IPV6,
				     target);
}

static int parse_level_pps(struct loader *ld, const char *field,
			   yaml_node_t *value, void *target)
{
	struct xrl_level_spec *level = target;

	return parse_amount(ld, field, value, XRL_RATE_MAX, &level->pps);
}

static int parse_level_burst(struct loader *ld, const char *field,
			     yaml_node_t *value, void *target)
{
	struct xrl_level_spec *level = target;

	return parse_amount(ld, field, value, XRL_BURST_MAX, &level->burst);
}

static int parse_level_bps(struct loader *ld, const char *field,
			   yaml_node_t *value, void *target)
{
	struct xrl_level_spec *level = target;

	return parse_amount(ld, field, value, XRL_RATE_MAX, &level->bps);
}

static int parse_level_burst_bytes(struct loader *ld, const char *field,
				   yaml_node_t *value, void *target)
{
	struct xrl_level_spec *level = target;

	return parse_amount(ld, field, value, XRL_BURST_MAX,
			    &level->burst_bytes);
}

/* The three ways to give a level's prefix come first: LEVEL_PREFIXES. */
#define LEVEL_PREFIXES	3

static const struct field level_fields[] = {
	{ "prefix", parse_level_prefix },
	{ "ipv4_prefix", parse_level_ipv4_prefix },
	{ "ipv6_prefix", parse_level_ipv6_prefix },
	{ "pps", parse_level_pps },
	{ "burst", parse_level_burst },
	{ "bps", parse_level_bps },
	{ "burst_bytes", parse_level_burst_bytes },
};

/* Exactly one of prefix:, ipv4_prefix:, ipv6_prefix:; the level's line
 * is its prefix's. */
static int check_level_prefix(struct loader *ld, const char *path,
			      yaml_node_t *map, const struct seen *seen,
			      struct xrl_level_spec *level)
{
	yaml_node_t *first = NULL;
	char field[FIELD_MAX];
	int i;

	for (i = 0; i < LEVEL_PREFIXES; i++)
		if (seen->node[i] && (!first || seen->node[i]->start_mark.index <
					       first->start_mark.index))
			first = seen->node[i];
	for (i = 0; i < LEVEL_PREFIXES; i++) {
		yaml_node_t *node = seen->node[i];

		if (!node || node == first)
			continue;
		field_name(field, path, level_fields[i].key);
		return fail(ld, node, field, node, "a level has one of "
			    "prefix, ipv4_prefix or ipv6_prefix, not two");
	}
	if (!first)
		return fail(ld, map, path, NULL, "a level needs prefix, "
			    "ipv4_prefix or ipv6_prefix");
	level->line = node_line(first);
	return 0;
}

/* levels: a list of 1 to XRL_LEVELS_MAX maps of level_fields. */
static int parse_levels(struct loader *ld, const char *field,
			yaml_node_t *value, void *target)
{
	struct rule_draft *draft = target;
	char path[FIELD_MAX];
	struct seen seen;
	size_t count, i;
	int ret;

	ret = expect_type(ld, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	count = value->data.sequence.items.top -
		value->data.sequence.items.start;
	if (!count)
		return fail(ld, value, field, NULL, "an empty list (leave "
			    "levels: out for none)");
	if (count > XRL_LEVELS_MAX)
		return fail(ld, value, field, NULL, "%zu levels, more than the "
			    "maximum %d", count, XRL_LEVELS_MAX);
	memset(draft->spec.levels, 0, sizeof(draft->spec.levels));
	for (i = 0; i < count; i++) {
		yaml_node_t *map = yaml_document_get_node(ld->doc,
				value->data.sequence.items.start[i]);

		snprintf(path, sizeof(path), "%s[%zu]", field, i);
		ret = walk_map(ld, path, map, level_fields,
			       ARRAY_SIZE(level_fields),
			       &draft->spec.levels[i], &seen);
		if (!ret)
			ret = check_level_prefix(ld, path, map, &seen,
						 &draft->spec.levels[i]);
		if (ret)
			return ret;
	}
	draft->spec.n_levels = (unsigned)count;
	return 0;
}

/* The node of level @index of the rule at @map, or NULL. */
static yaml_node_t *level_item(struct loader *ld, yaml_node_t *map,
			       unsigned long index)
{
	yaml_node_t *levels = map ? map_value(ld, map, "levels") : NULL;

	if (!levels || levels->type != YAML_SEQUENCE_NODE ||
	    index >= (unsigned long)(levels->data.sequence.items.top -
				     levels->data.sequence.items.start))
		return NULL;
	return yaml_document_get_node(ld->doc,
				      levels->data.sequence.items.start[index]);
}

/*
 * "levels[i].key: why" (levels.c) of the rule at @map: at that key of
 * level i as the file writes it (its prefix by whichever of its three
 * names it has), else at the level, else at the rule.
 */
static int level_error(struct loader *ld, const char *path, yaml_node_t *map,
		       const char *why)
{
	const char *colon = strstr(why, ": "), *key = NULL;
	yaml_node_t *level, *at = NULL;
	char name[32], sub[64], field[FIELD_MAX];
	unsigned long index;
	char *rest;
	int i;

	index = strtoul(why + strlen("levels["), &rest, 10);
	level = level_item(ld, map, index);
	if (colon && rest[0] == ']' && rest[1] == '.' && colon > rest + 2) {
		snprintf(name, sizeof(name), "%.*s", (int)(colon - rest - 2),
			 rest + 2);
		key = name;
	}
	for (i = 0; level && key && !at && i < LEVEL_PREFIXES; i++)
		if (!strcmp(key, "prefix") || !strcmp(key, level_fields[i].key))
			if ((at = map_value(ld, level, level_fields[i].key)))
				key = level_fields[i].key;
	if (level && key && !at)
		at = map_value(ld, level, key);
	snprintf(sub, sizeof(sub), "levels[%lu]%s%s", index, key ? "." : "",
		 key ? key : "");
	field_name(field, path, sub);
	return fail(ld, at ? at : level ? level : map, field, at, "%s",
		    colon ? colon + 2 : why);
}

/* A level's "prefix:" takes the rule's family; the default rule covers
 * both, so it must say which. */
static int resolve_levels(struct loader *ld, const char *path,
			  yaml_node_t *map, struct xrl_rule_spec *rule)
{
	enum xrl_family family = xrl_prefix_family(&rule->prefix);
	char sub[32], field[FIELD_MAX];
	yaml_node_t *node;
	unsigned i;

	for (i = 0; i < rule->n_levels; i++) {
		if (rule->levels[i].family != XRL_FAMILY_ANY)
			continue;
		if (family != XRL_FAMILY_ANY) {
			rule->levels[i].family = family;
			continue;
		}
		node = map_value(ld, level_item(ld, map, i), "prefix");
		snprintf(sub, sizeof(sub), "levels[%u].prefix", i);
		field_name(field, path, sub);
		return fail(ld, node, field, node, "%s covers IPv4 and IPv6 "
			    "sources: write ipv4_prefix: or ipv6_prefix:",
			    rule->prefix.prefixlen || strcmp(path, "default") ?
			    "a rule for every source" : "the default rule");
	}
	return 0;
}

#define LIMIT_FIELDS					\
	{ "action", parse_action },			\
	{ "pps", parse_pps },				\
	{ "burst", parse_burst },			\
	{ "bps", parse_bps },				\
	{ "burst_bytes", parse_burst_bytes },		\
	{ "scope", parse_scope },			\
	{ "global", parse_global },			\
	{ "strategy", parse_strategy },			\
	{ "interval", parse_interval },			\
	{ "limit", parse_limit },			\
	{ "window", parse_window },			\
	{ "ban", parse_ban },				\
	{ "ban_after", parse_ban_after },		\
	{ "ban_max", parse_ban_max },			\
	{ "levels", parse_levels }

static const struct field rule_fields[] = {
	{ "name", parse_name },
	{ "cidr", parse_cidr },
	LIMIT_FIELDS,
	{ "proto", parse_proto },
	{ "sport", parse_sport },
	{ "dport", parse_dport },
	{ "tcp_flags", parse_tcp_flags },
};

static const struct field default_fields[] = {
	LIMIT_FIELDS,
};

/* The library's checks say "field: what is wrong"; the error points at
 * that field's line when the rule has it, else at the rule's. */
static int rule_error(struct loader *ld, const char *path, yaml_node_t *map,
		      const char *why, const struct field *fields, size_t n,
		      const struct seen *seen)
{
	char key[32], field[FIELD_MAX];
	const char *colon = strstr(why, ": ");
	yaml_node_t *at = map, *shown = NULL;
	int index;

	if (!colon)
		return fail(ld, map, path, NULL, "%s", why);
	if (!strncmp(why, "levels[", strlen("levels[")))
		return level_error(ld, path, map, why);
	snprintf(key, sizeof(key), "%.*s", (int)(colon - why), why);
	index = find_field(fields, n, key);
	if (index >= 0 && seen->node[index])
		at = seen->node[index];
	/* A value is shown when it is one: not a list (levels:). */
	if (at != map && at->type == YAML_SCALAR_NODE)
		shown = at;
	field_name(field, path, key);
	return fail(ld, at, field, shown, "%s", colon + 2);
}

static int check_rule(struct loader *ld, const char *path, yaml_node_t *map,
		      const struct rule_draft *draft,
		      const struct field *fields, size_t n,
		      const struct seen *seen)
{
	char why[128];

	if (xrl_rule_check(&draft->spec, why, sizeof(why)))
		return rule_error(ld, path, map, why, fields, n, seen);
	return 0;
}

static int parse_default(struct loader *ld, const char *field,
			 yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	struct xrl_rule_spec *dflt = &config->policy.rules[0];
	struct rule_draft draft = { .spec = *dflt };
	struct seen seen;
	int ret;

	draft.spec.action = XRL_ACTION_LIMIT;
	ret = walk_map(ld, field, value, default_fields,
		       ARRAY_SIZE(default_fields), &draft, &seen);
	if (!ret)
		ret = resolve_levels(ld, field, value, &draft.spec);
	if (ret)
		return ret;
	draft.spec.line = node_line(value);
	ret = check_rule(ld, field, value, &draft, default_fields,
			 ARRAY_SIZE(default_fields), &seen);
	if (!ret)
		*dflt = draft.spec;
	return ret;
}

/* One rule's map into @spec; duplicates are looked for across all. */
static int parse_rule(struct loader *ld, const char *path, yaml_node_t *map,
		      struct xrl_rule_spec *spec)
{
	struct rule_draft draft = { .spec.action = XRL_ACTION_LIMIT };
	char field[FIELD_MAX], why[128];
	const char *name;
	struct seen seen;
	int ret;

	ret = walk_map(ld, path, map, rule_fields, ARRAY_SIZE(rule_fields),
		       &draft, &seen);
	if (ret)
		return ret;
	if (!draft.cidr_text) {
		field_name(field, path, "cidr");
		return fail(ld, map, field, NULL, "missing (every rule but "
			    "default: needs one)");
	}
	ret = resolve_levels(ld, path, map, &draft.spec);
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
		return rule_error(ld, path, map, why, rule_fields,
				  ARRAY_SIZE(rule_fields), &seen);
	if (name != draft.spec.name)
		snprintf(draft.spec.name, sizeof(draft.spec.name), "%s", name);
	draft.spec.line = node_line(map);
	ret = check_rule(ld, path, map, &draft, rule_fields,
			 ARRAY_SIZE(rule_fields), &seen);
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
static int check_names_unique(struct loader *ld, const struct xrl_policy *p,
			      yaml_node_t *rules)
{
	const struct xrl_rule_spec **by_name, *first, *second;
	char field[FIELD_MAX];
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
		item = yaml_document_get_node(ld->doc,
			rules->data.sequence.items.start[second - p->rules - 1]);
		item = map_value(ld, item, "name") ?: item;
		snprintf(field, sizeof(field), "rules[%td].name",
			 second - p->rules - 1);
		if (first == p->rules)
			ret = fail(ld, item, field, NULL,
				   "the default rule's name (%s)", second->name);
		else
			ret = fail(ld, item, field, NULL,
				   "duplicate of the rule at line %d (%s)",
				   first->line, second->name);
		break;
	}
	free(by_name);
	return ret;
}

static yaml_node_t *rule_item(struct loader *ld, yaml_node_t *rules,
			      size_t index)
{
	return yaml_document_get_node(ld->doc,
				      rules->data.sequence.items.start[index]);
}

/* Rule @clash has the prefix and match of an earlier one (@why -EEXIST)
 * or is one too many at its prefix (-EMLINK): name the lines. */
static int duplicate_cidr(struct loader *ld, const struct xrl_rule_spec *specs,
			  size_t clash, yaml_node_t *rules, int why)
{
	const struct xrl_lpm_key *prefix = &specs[clash].prefix;
	yaml_node_t *cidr = map_value(ld, rule_item(ld, rules, clash), "cidr");
	char field[FIELD_MAX];
	size_t i;
	int line = 0;

	snprintf(field, sizeof(field), "rules[%zu].cidr", clash);
	if (why == -EMLINK)
		return fail(ld, cidr, field, cidr, "more than %d rules at one "
			    "prefix (rules that differ in proto, ports or "
			    "tcp_flags)", XRL_MATCH_CHAIN_MAX);
	if (prefix->prefixlen == 0 && xrl_match_is_plain(&specs[clash].match))
		return fail(ld, cidr, field, cidr,
			    "covers every source: set it as default:");
	for (i = 0; i < clash && !line; i++)
		if (specs[i].prefix.prefixlen == prefix->prefixlen &&
		    !memcmp(specs[i].prefix.addr, prefix->addr,
			    sizeof(prefix->addr)) &&
		    !xrl_match_compare(&specs[i].match, &specs[clash].match))
			line = specs[i].line;
	if (!line)
		return fail(ld, cidr, field, cidr, "duplicate of a rule of "
			    "the policy");
	return fail(ld, cidr, field, cidr, "duplicate of the rule at line %d",
		    line);
}

static int parse_rules(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	struct xrl_rule_spec *specs;
	char path[FIELD_MAX];
	size_t count, i, clash;
	int ret = 0;

	ret = expect_type(ld, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	count = value->data.sequence.items.top - value->data.sequence.items.start;
	if (count > XRL_MAX_RULES - 1)
		return fail(ld, value, field, NULL,
			    "%zu rules, more than the maximum %d", count,
			    XRL_MAX_RULES - 1);
	specs = calloc(count ? count : 1, sizeof(*specs));
	if (!specs)
		return -ENOMEM;
	for (i = 0; i < count && !ret; i++) {
		snprintf(path, sizeof(path), "%s[%zu]", field, i);
		ret = parse_rule(ld, path, rule_item(ld, value, i), &specs[i]);
	}
	/* All at once: one sort finds duplicates, not a scan per rule. */
	if (!ret)
		ret = xrl_policy_add_many(&config->policy, specs, count, &clash);
	if (ret == -EEXIST || ret == -EMLINK)
		ret = duplicate_cidr(ld, specs, clash, value, ret);
	free(specs);
	return ret ? ret : check_names_unique(ld, &config->policy, value);
}

/* ---- the top level -------------------------------------------------- */

static int parse_keys(struct loader *ld, const char *field, yaml_node_t *value,
		      void *target)
{
	struct xrl_config *config = target;

	return walk_map(ld, field, value, key_fields, ARRAY_SIZE(key_fields),
			&config->policy, NULL);
}

/*
 * A setting of two words, @words[0] meaning 0 and @words[1] meaning 1 (the
 * enum values of every such setting); anything else is refused naming
 * both.
 */
static int parse_two_words(struct loader *ld, const char *field,
			   yaml_node_t *value, const char *const words[2],
			   unsigned *out)
{
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (!strcmp(text, words[0]) || !strcmp(text, words[1])) {
		*out = !strcmp(text, words[1]);
		return 0;
	}
	return fail(ld, value, field, value, "must be %s or %s", words[0],
		    words[1]);
}

static int parse_malformed(struct loader *ld, const char *field,
			   yaml_node_t *value, void *target)
{
	static const char *const words[2] = {
		[XRL_MALFORMED_PASS] = "pass", [XRL_MALFORMED_DROP] = "drop",
	};
	struct xrl_config *config = target;
	unsigned verdict;
	int ret = parse_two_words(ld, field, value, words, &verdict);

	if (!ret)
		config->policy.malformed = verdict;
	return ret;
}

static int parse_vlan_overflow(struct loader *ld, const char *field,
			       yaml_node_t *value, void *target)
{
	static const char *const words[2] = {
		[XRL_VLAN_OVERFLOW_DROP] = "drop",
		[XRL_VLAN_OVERFLOW_PASS] = "pass",
	};
	struct xrl_config *config = target;
	unsigned verdict;
	int ret = parse_two_words(ld, field, value, words, &verdict);

	if (!ret)
		config->policy.vlan_overflow = verdict;
	return ret;
}

static int parse_ipv4_mapped(struct loader *ld, const char *field,
			     yaml_node_t *value, void *target)
{
	static const char *const words[2] = {
		[XRL_IPV4_MAPPED_DROP] = "drop",
		[XRL_IPV4_MAPPED_IPV6] = "ipv6",
	};
	struct xrl_config *config = target;
	unsigned verdict;
	int ret = parse_two_words(ld, field, value, words, &verdict);

	if (!ret)
		config->policy.ipv4_mapped = verdict;
	return ret;
}

static int parse_unjudged_fragments(struct loader *ld, const char *field,
				    yaml_node_t *value, void *target)
{
	static const char *const words[2] = {
		[XRL_UNJUDGED_FRAGMENTS_DROP] = "drop",
		[XRL_UNJUDGED_FRAGMENTS_PLAIN] = "plain",
	};
	struct xrl_config *config = target;
	unsigned verdict;
	int ret = parse_two_words(ld, field, value, words, &verdict);

	if (!ret)
		config->policy.unjudged_fragments = verdict;
	return ret;
}

static int parse_header_overflow(struct loader *ld, const char *field,
				 yaml_node_t *value, void *target)
{
	static const char *const words[2] = {
		[XRL_HEADER_OVERFLOW_DROP] = "drop",
		[XRL_HEADER_OVERFLOW_PLAIN] = "plain",
	};
	struct xrl_config *config = target;
	unsigned verdict;
	int ret = parse_two_words(ld, field, value, words, &verdict);

	if (!ret)
		config->policy.header_overflow = verdict;
	return ret;
}

/* What the kernel's dev_valid_name() accepts. */
static bool valid_ifname(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return !strpbrk(name, "/: \t\n\r\f\v");
}

static int parse_interfaces(struct loader *ld, const char *field,
			    yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	char item_field[FIELD_MAX];
	yaml_node_item_t *item;
	const char *name;
	size_t i;
	int ret;

	ret = expect_type(ld, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	for (item = value->data.sequence.items.start;
	     item < value->data.sequence.items.top; item++) {
		yaml_node_t *node = yaml_document_get_node(ld->doc, *item);

		snprintf(item_field, sizeof(item_field), "%s[%td]", field,
			 item - value->data.sequence.items.start);
		ret = scalar(ld, item_field, node, &name);
		if (ret)
			return ret;
		if (!valid_ifname(name))
			return fail(ld, node, item_field, node,
				    "not an interface name");
		for (i = 0; i < config->n_interfaces; i++)
			if (!strcmp(config->interfaces[i], name))
				return fail(ld, node, item_field, node,
					    "listed twice");
		if (config->n_interfaces == XRL_MAX_IFACES)
			return fail(ld, node, item_field, node,
				    "more than %d interfaces", XRL_MAX_IFACES);
		config->interfaces[config->n_interfaces] = strdup(name);
		if (!config->interfaces[config->n_interfaces])
			return -ENOMEM;
		config->n_interfaces++;
	}
	return 0;
}

/* ---- new_sources: and unknown_sources: ------------------------------ */

static int parse_new_pps(struct loader *ld, const char *field,
			 yaml_node_t *value, void *target)
{
	struct xrl_policy *policy = target;

	return parse_amount(ld, field, value, XRL_RATE_MAX, &policy->new_pps);
}

static int parse_new_burst(struct loader *ld, const char *field,
			   yaml_node_t *value, void *target)
{
	struct xrl_policy *policy = target;

	return parse_amount(ld, field, value, XRL_BURST_MAX,
			    &policy->new_burst);
}

static const struct field new_sources_fields[] = {
	{ "pps", parse_new_pps },
	{ "burst", parse_new_burst },
};

/* {pps: N, burst: M}, both needed, or "off" for no budget at all. */
static int parse_new_sources(struct loader *ld, const char *field,
			     yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	struct xrl_policy *policy = &config->policy;
	char missing[FIELD_MAX];
	struct seen seen;
	size_t i;
	int ret;

	if (value->type == YAML_SCALAR_NODE) {
		if (strcmp((const char *)value->data.scalar.value, "off"))
			return fail(ld, value, field, value,
				    "must be off or a map of pps and burst");
		policy->new_sources_off = true;
		return 0;
	}
	ret = walk_map(ld, field, value, new_sources_fields,
		       ARRAY_SIZE(new_sources_fields), policy, &seen);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(new_sources_fields); i++) {
		if (seen.node[i])
			continue;
		field_name(missing, field, new_sources_fields[i].key);
		return fail(ld, value, missing, NULL, "missing");
	}
	return 0;
}

static int parse_unknown_sources(struct loader *ld, const char *field,
				 yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_unknown_parse(text, &config->policy.unknown))
		return fail(ld, value, field, value,
			    "must be pass, drop or prefix");
	return 0;
}

/* ---- events: -------------------------------------------------------- */

#define QUIET_MAX_NS	(86400ULL * 1000000000ULL)
#define EVENTS_PER_SECOND_MAX	1000000

/* "10s", "500ms", "2m", "1h": a whole number and its unit. */
static int parse_quiet_period(struct loader *ld, const char *field,
			      yaml_node_t *value, void *target)
{
	struct xrl_policy *policy = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	ret = xrl_duration_ns_parse(text, QUIET_MAX_NS,
				    &policy->event_quiet_ns);
	if (ret == -ERANGE)
		return fail(ld, value, field, value, "over the maximum 24h");
	if (ret)
		return fail(ld, value, field, value, "not a duration such as "
			    "10s, 500ms, 2m or 1h");
	return 0;
}

static int parse_events_per_second(struct loader *ld, const char *field,
				   yaml_node_t *value, void *target)
{
	struct xrl_policy *policy = target;
	uint32_t cap;
	int ret;

	ret = parse_uint_range(ld, field, value, 0, EVENTS_PER_SECOND_MAX,
			       &cap);
	if (!ret)
		policy->events_per_second = cap;
	return ret;
}

static const struct field events_fields[] = {
	{ "quiet_period", parse_quiet_period },
	{ "max_per_second", parse_events_per_second },
};

/* {quiet_period: 10s, max_per_second: 100}; either may be left out. */
static int parse_events(struct loader *ld, const char *field,
			yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;

	return walk_map(ld, field, value, events_fields,
			ARRAY_SIZE(events_fields), &config->policy, NULL);
}

/* ---- redis: and sync_interval: (the daemon's) ------------------------ */

static int parse_redis(struct loader *ld, const char *field,
		       yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	char host[256];
	uint16_t port;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_hostport_parse(text, host, sizeof(host), &port))
		return fail(ld, value, field, value,
			    "must be HOST:PORT (a port from 1 to 65535)");
	config->redis = strdup(text);
	if (!config->redis)
		return -ENOMEM;
	config->redis_line = node_line(value);
	return 0;
}

static int parse_sync_interval(struct loader *ld, const char *field,
			       yaml_node_t *value, void *target)
{
	struct xrl_config *config = target;
	const char *text;
	int ret = scalar(ld, field, value, &text);

	if (ret)
		return ret;
	if (xrl_duration_ms_parse(text, &config->sync_interval_ms) ||
	    config->sync_interval_ms < XRL_SYNC_INTERVAL_MIN_MS ||
	    config->sync_interval_ms > XRL_SYNC_INTERVAL_MAX_MS)
		return fail(ld, value, field, value,
			    "must be %dms to %ds (\"100ms\", \"1s\")",
			    XRL_SYNC_INTERVAL_MIN_MS,
			    XRL_SYNC_INTERVAL_MAX_MS / 1000);
	return 0;
}

static const struct field top_fields[] = {
	{ "keys", parse_keys },
	{ "malformed", parse_malformed },
	{ "vlan_overflow", parse_vlan_overflow },
	{ "ipv4_mapped", parse_ipv4_mapped },
	{ "unjudged_fragments", parse_unjudged_fragments },
	{ "header_overflow", parse_header_overflow },
	{ "new_sources", parse_new_sources },
	{ "unknown_sources", parse_unknown_sources },
	{ "events", parse_events },
	{ "interfaces", parse_interfaces },
	{ "default", parse_default },
	{ "rules", parse_rules },
	{ "redis", parse_redis },
	{ "sync_interval", parse_sync_interval },
};

_Static_assert(ARRAY_SIZE(top_fields) <= MAX_FIELDS, "top_fields");
_Static_assert(ARRAY_SIZE(key_fields) <= MAX_FIELDS, "key_fields");
_Static_assert(ARRAY_SIZE(rule_fields) <= MAX_FIELDS, "rule_fields");
_Static_assert(ARRAY_SIZE(level_fields) <= MAX_FIELDS, "level_fields");
_Static_assert(ARRAY_SIZE(new_sources_fields) <= MAX_FIELDS, "new_sources");
_Static_assert(ARRAY_SIZE(events_fields) <= MAX_FIELDS, "events_fields");

/* Levels against the source keys, once the whole file is read (keys:
 * may follow the rules). */
static int check_level_keys(struct loader *ld, const struct xrl_policy *p)
{
	yaml_node_t *root = yaml_document_get_root_node(ld->doc), *map;
	char path[FIELD_MAX], why[160];
	size_t i;

	for (i = 0; i < p->n_rules; i++) {
		if (!xrl_levels_check_keys(&p->rules[i], p->v4_prefix,
					   p->v6_prefix, why, sizeof(why)))
			continue;
		/* rules[k] of the file is policy rule k + 1 */
		if (i == 0) {
			snprintf(path, sizeof(path), "default");
			map = map_value(ld, root, "default");
		} else {
			snprintf(path, sizeof(path), "rules[%zu]", i - 1);
			map = rule_item(ld, map_value(ld, root, "rules"),
					i - 1);
		}
		return level_error(ld, path, map, why);
	}
	return 0;
}

/* ---- loading -------------------------------------------------------- */

/* libyaml's own words, at its line; reader errors (bad UTF-8, control
 * bytes) carry an offset instead of a mark. */
static int syntax_error(struct loader *ld, const yaml_parser_t *parser,
			const char *text)
{
	size_t line = parser->problem_mark.line, i;
	int n;

	if (parser->error == YAML_READER_ERROR)
		for (i = line = 0; i < parser->problem_offset; i++)
			line += text[i] == '\n';
	n = snprintf(ld->err, ld->err_len, "%s:%zu: yaml: %s", ld->name,
		     line + 1, parser->problem ? parser->problem : "syntax error");
	if (parser->context && n >= 0 && (size_t)n < ld->err_len)
		snprintf(ld->err + n, ld->err_len - n, " (%s at line %zu)",
			 parser->context, parser->context_mark.line + 1);
	return -EINVAL;
}

static int load_document(struct loader *ld, const char *text, size_t len,
			 yaml_document_t *doc)
{
	yaml_document_t extra;
	yaml_parser_t parser;
	bool more;
	int ret = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, doc))
		goto syntax_error;
	if (!yaml_document_get_root_node(doc)) {
		snprintf(ld->err, ld->err_len, "%s:1: policy: the file is empty",
			 ld->name);
		ret = -EINVAL;
		goto free_doc;
	}
	/* A second document would be silently ignored: refuse it. */
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_document_delete(doc);
		goto syntax_error;
	}
	more = yaml_document_get_root_node(&extra) != NULL;
	if (more) {
		snprintf(ld->err, ld->err_len,
			 "%s:%d: policy: more than one YAML document", ld->name,
			 (int)extra.start_mark.line + 1);
		ret = -EINVAL;
	}
	yaml_document_delete(&extra);
	if (!ret)
		goto delete_parser;
free_doc:
	yaml_document_delete(doc);
delete_parser:
	yaml_parser_delete(&parser);
	return ret;

syntax_error:
	if (parser.error == YAML_MEMORY_ERROR)
		ret = -ENOMEM;
	else
		ret = syntax_error(ld, &parser, text);
	yaml_parser_delete(&parser);
	return ret;
}

int xrl_config_load_string(const char *text, size_t text_len, const char *name,
			   struct xrl_config *config, char *err, size_t len)
{
	struct loader ld = { .name = name, .err = err, .err_len = len };
	yaml_document_t doc;
	int ret;

	memset(config, 0, sizeof(*config));
	if (len)
		err[0] = '\0';
	ret = load_document(&ld, text, text_len, &doc);
	if (ret)
		goto report;
	ld.doc = &doc;
	ret = xrl_policy_init(&config->policy);
	if (ret)
		goto delete_doc;
	ret = walk_map(&ld, "", yaml_document_get_root_node(&doc), top_fields,
		       ARRAY_SIZE(top_fields), config, NULL);
	if (!ret)
		ret = check_level_keys(&ld, &config->policy);
	if (ret)
		xrl_config_free(config);
delete_doc:
	yaml_document_delete(&doc);
report:
	if (ret && len && !err[0])
		snprintf(err, len, "%s: %s", name, strerror(-ret));
	return ret;
}

int xrl_config_load_file(const char *path, struct xrl_config *config,
			 char *err, size_t len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *file;
	int ret = 0;

	memset(config, 0, sizeof(*config));
	file = fopen(path, "r");
	if (!file) {
		ret = -errno;
		goto report;
	}
	/* Read to the end rather than trust st_size: works for pipes and
	 * /dev/stdin, and a directory fails here with EISDIR. */
	for (;;) {
		char *grown = realloc(text, size + 65536);
		size_t got;

		if (!grown) {
			ret = -ENOMEM;
			goto close_file;
		}
		text = grown;
		got = fread(text + size, 1, 65536, file);
		size += got;
		if (got < 65536)
			break;
		if (size > FILE_MAX) {
			ret = -EFBIG;
			goto close_file;
		}
	}
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
	for (i = 0; i < config->n_interfaces; i++)
		free(config->interfaces[i]);
	xrl_policy_free(&config->policy);
	memset(config, 0, sizeof(*config));
}

/* ---- writing -------------------------------------------------------- */


static int emit(yaml_emitter_t *emitter, yaml_event_t *event, int made)
{
	if (!made || !yaml_emitter_emit(emitter, event))
		return -EIO;
	return 0;
}

static int emit_scalar(yaml_emitter_t *emitter, const char *text)
{
	yaml_event_t event;

	return emit(emitter, &event,
		    yaml_scalar_event_initialize(&event, NULL, NULL,
						 (yaml_char_t *)text, -1, 1, 1,
						 YAML_ANY_SCALAR_STYLE));
}

static int emit_pair(yaml_emitter_t *emitter, const char *key,
		     const char *value)
{
	int ret = emit_scalar(emitter, key);

	return ret ? ret : emit_scalar(emitter, value);
}

static int emit_quantity(yaml_emitter_t *emitter, const char *key,
			 uint64_t value)
{
	char text[32];

	if (!value)
		return 0;
	xrl_format_quantity(value, text, sizeof(text));
	return emit_pair(emitter, key, text);
}

static int emit_map_start(yaml_emitter_t *emitter, bool flow)
{
	yaml_event_t event;

	return emit(emitter, &event,
		    yaml_mapping_start_event_initialize(&event, NULL, NULL, 1,
			flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

static int emit_map_end(yaml_emitter_t *emitter)
{
	yaml_event_t event;

	return emit(emitter, &event, yaml_mapping_end_event_initialize(&event));
}

static int emit_duration(yaml_emitter_t *emitter, const char *key,
			 uint64_t ns)
{
	char text[32];

	if (!ns)
		return 0;
	xrl_duration_ns_format(ns, text, sizeof(text));
	return emit_pair(emitter, key, text);
}

/* Only when not the default, so that a file without it stays so. */
static int emit_strategy(yaml_emitter_t *emitter,
			 const struct xrl_strategy_spec *s)
{
	int ret = 0;

	if (s->kind != XRL_STRATEGY_TOKEN_BUCKET)
		ret = emit_pair(emitter, "strategy", xrl_strategy_name(s->kind));
	if (!ret)
		ret = emit_duration(emitter, "interval", s->interval_ns);
	if (!ret)
		ret = emit_quantity(emitter, "limit", s->limit);
	return ret ? ret : emit_duration(emitter, "window", s->window_ns);
}

/* ban:, and ban_after: and ban_max: when set. */
static int emit_ban(yaml_emitter_t *emitter, const struct xrl_rule_spec *rule)
{
	int ret;

	if (!rule->ban.ns)
		return 0;
	ret = emit_duration(emitter, "ban", rule->ban.ns);
	if (!ret)
		ret = emit_duration(emitter, "ban_after", rule->ban.after_ns);
	if (!ret)
		ret = emit_duration(emitter, "ban_max", rule->ban.max_ns);
	return ret;
}

static int emit_ports(yaml_emitter_t *emitter, const char *key, __u16 lo,
		      __u16 hi)
{
	char text[16];

	if (lo == hi)
		snprintf(text, sizeof(text), "%u", lo);
	else
		snprintf(text, sizeof(text), "%u-%u", lo, hi);
	return emit_pair(emitter, key, text);
}

/* A rule's L4 keys, none for a plain rule. */
static int emit_match(yaml_emitter_t *emitter, const struct xrl_rule_match *m)
{
	int ret = 0;

	if (xrl_match_is_plain(m))
		return 0;
	ret = emit_pair(emitter, "proto", xrl_match_proto_name(m->proto));
	if (!ret && m->flags & XRL_MATCH_SPORT)
		ret = emit_ports(emitter, "sport", m->sport_lo, m->sport_hi);
	if (!ret && m->flags & XRL_MATCH_DPORT)
		ret = emit_ports(emitter, "dport", m->dport_lo, m->dport_hi);
	if (!ret && m->flags & XRL_MATCH_SYN)
		ret = emit_pair(emitter, "tcp_flags", "syn");
	return ret;
}

/* levels:, each level a flow map: "prefix:" in a rule of one family,
 * "ipv4_prefix:" or "ipv6_prefix:" in the default rule. */
static int emit_levels(yaml_emitter_t *emitter,
		       const struct xrl_rule_spec *rule)
{
	bool both = xrl_prefix_family(&rule->prefix) == XRL_FAMILY_ANY;
	const struct xrl_level_spec *level;
	yaml_event_t event;
	char number[16];
	unsigned i;
	int ret;

	if (!rule->n_levels)
		return 0;
	ret = emit_scalar(emitter, "levels");
	if (!ret)
		ret = emit(emitter, &event,
			   yaml_sequence_start_event_initialize(&event, NULL,
				NULL, 1, YAML_BLOCK_SEQUENCE_STYLE));
	for (i = 0; !ret && i < rule->n_levels && i < XRL_LEVELS_MAX; i++) {
		level = &rule->levels[i];
		snprintf(number, sizeof(number), "%u", level->prefix);
		ret = emit_map_start(emitter, true);
		if (!ret)
			ret = emit_pair(emitter, !both ? "prefix" :
					level->family == XRL_FAMILY_IPV4 ?
					"ipv4_prefix" : "ipv6_prefix", number);
		if (!ret)
			ret = emit_quantity(emitter, "pps", level->pps);
		if (!ret)
			ret = emit_quantity(emitter, "burst", level->burst);
		if (!ret)
			ret = emit_quantity(emitter, "bps", level->bps);
		if (!ret)
			ret = emit_quantity(emitter, "burst_bytes",
					    level->burst_bytes);
		if (!ret)
			ret = emit_map_end(emitter);
	}
	return ret ? ret : emit(emitter, &event,
				yaml_sequence_end_event_initialize(&event));
}

/* The fields of a rule, inside its map. */
static int emit_rule_body(yaml_emitter_t *emitter,
			  const struct xrl_rule_spec *rule)
{
	int ret = emit_pair(emitter, "action", xrl_action_name(rule->action));

	if (!ret)
		ret = emit_strategy(emitter, &rule->strategy);
	if (!ret)
		ret = emit_quantity(emitter, "pps", rule->pps);
	if (!ret)
		ret = emit_quantity(emitter, "burst", rule->burst);
	if (!ret)
		ret = emit_quantity(emitter, "bps", rule->bps);
	if (!ret)
		ret = emit_quantity(emitter, "burst_bytes", rule->burst_bytes);
	if (!ret && rule->scope != XRL_SCOPE_SOURCE)
		ret = emit_pair(emitter, "scope", xrl_scope_name(rule->scope));
	if (!ret && rule->global)
		ret = emit_pair(emitter, "global", "true");
	if (!ret)
		ret = emit_ban(emitter, rule);
	if (!ret)
		ret = emit_levels(emitter, rule);
	return ret ? ret : emit_match(emitter, &rule->match);
}

static int emit_rule(yaml_emitter_t *emitter, const struct xrl_rule_spec *rule)
{
	char cidr[64];
	int ret;

	xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
	ret = emit_map_start(emitter, false);
	if (!ret)
		ret = emit_pair(emitter, "name", rule->name);
	if (!ret)
		ret = emit_pair(emitter, "cidr", cidr);
	if (!ret)
		ret = emit_rule_body(emitter, rule);
	return ret ? ret : emit_map_end(emitter);
}

/* Only when not the default, so that a file without it stays so. */
static int emit_new_sources(yaml_emitter_t *emitter,
			    const struct xrl_policy *policy)
{
	int ret;

	if (policy->new_sources_off)
		return emit_pair(emitter, "new_sources", "off");
	if (!policy->new_pps)
		return 0;
	ret = emit_scalar(emitter, "new_sources");
	if (!ret)
		ret = emit_map_start(emitter, true);
	if (!ret)
		ret = emit_quantity(emitter, "pps", policy->new_pps);
	if (!ret)
		ret = emit_quantity(emitter, "burst", policy->new_burst);
	return ret ? ret : emit_map_end(emitter);
}

/* Only when not the default, in the units it reads back exactly in. */
static int emit_events(yaml_emitter_t *emitter, const struct xrl_policy *policy)
{
	char text[32];
	int ret;

	if (policy->event_quiet_ns == XRL_EVENT_QUIET_NS &&
	    policy->events_per_second == XRL_EVENTS_PER_SECOND)
		return 0;
	ret = emit_scalar(emitter, "events");
	if (!ret)
		ret = emit_map_start(emitter, true);
	if (policy->event_quiet_ns % 1000000000ULL)
		snprintf(text, sizeof(text), "%llums", (unsigned long long)
			 (policy->event_quiet_ns / 1000000ULL));
	else
		snprintf(text, sizeof(text), "%llus", (unsigned long long)
			 (policy->event_quiet_ns / 1000000000ULL));
	if (!ret)
		ret = emit_pair(emitter, "quiet_period", text);
	snprintf(text, sizeof(text), "%llu",
		 (unsigned long long)policy->events_per_second);
	if (!ret)
		ret = emit_pair(emitter, "max_per_second", text);
	return ret ? ret : emit_map_end(emitter);
}

static int emit_policy(yaml_emitter_t *emitter, const struct xrl_policy *policy)
{
	yaml_event_t event;
	char number[16];
	size_t i;
	int ret;

	ret = emit_map_start(emitter, false);
	if (!ret)
		ret = emit_scalar(emitter, "keys");
	if (!ret)
		ret = emit_map_start(emitter, false);
	snprintf(number, sizeof(number), "%u", policy->v4_prefix);
	if (!ret)
		ret = emit_pair(emitter, "ipv4_prefix", number);
	snprintf(number, sizeof(number), "%u", policy->v6_prefix);
	if (!ret)
		ret = emit_pair(emitter, "ipv6_prefix", number);
	if (!ret)
		ret = emit_map_end(emitter);
	if (!ret)
		ret = emit_pair(emitter, "malformed",
				policy->malformed == XRL_MALFORMED_DROP ?
				"drop" : "pass");
	if (!ret && policy->vlan_overflow != XRL_VLAN_OVERFLOW_DROP)
		ret = emit_pair(emitter, "vlan_overflow", "pass");
	if (!ret && policy->ipv4_mapped != XRL_IPV4_MAPPED_DROP)
		ret = emit_pair(emitter, "ipv4_mapped", "ipv6");
	if (!ret &&
	    policy->unjudged_fragments != XRL_UNJUDGED_FRAGMENTS_DROP)
		ret = emit_pair(emitter, "unjudged_fragments", "plain");
	if (!ret && policy->header_overflow != XRL_HEADER_OVERFLOW_DROP)
		ret = emit_pair(emitter, "header_overflow", "plain");
	if (!ret)
		ret = emit_new_sources(emitter, policy);
	if (!ret && policy->unknown != XRL_UNKNOWN_PREFIX)
		ret = emit_pair(emitter, "unknown_sources",
				xrl_unknown_name(policy->unknown));
	if (!ret)
		ret = emit_events(emitter, policy);
	if (!ret && policy->n_rules) {
		ret = emit_scalar(emitter, "default");
		if (!ret)
			ret = emit_map_start(emitter, false);
		if (!ret)
			ret = emit_rule_body(emitter, &policy->rules[0]);
		if (!ret)
			ret = emit_map_end(emitter);
	}
	if (!ret)
		ret = emit_scalar(emitter, "rules");
	if (!ret)
		ret = emit(emitter, &event,
			   yaml_sequence_start_event_initialize(&event, NULL,
				NULL, 1, policy->n_rules > 1 ?
				YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE));
	for (i = 1; !ret && i < policy->n_rules; i++)
		ret = emit_rule(emitter, &policy->rules[i]);
	if (!ret)
		ret = emit(emitter, &event,
			   yaml_sequence_end_event_initialize(&event));
	return ret ? ret : emit_map_end(emitter);
}

int xrl_policy_write_yaml(FILE *out, const struct xrl_policy *policy)
{
	yaml_emitter_t emitter;
	yaml_event_t event;
	int ret;

	if (!yaml_emitter_initialize(&emitter))
		return -ENOMEM;
	yaml_emitter_set_output_file(&emitter, out);
	yaml_emitter_set_unicode(&emitter, 1);
	ret = emit(&emitter, &event,
		   yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING));
	if (!ret)
		ret = emit(&emitter, &event,
			   yaml_document_start_event_initialize(&event, NULL,
							NULL, NULL, 1));
	if (!ret)
		ret = emit_policy(&emitter, policy);
	if (!ret)
		ret = emit(&emitter, &event,
			   yaml_document_end_event_initialize(&event, 1));
	if (!ret)
		ret = emit(&emitter, &event,
			   yaml_stream_end_event_initialize(&event));
	if (!ret && !yaml_emitter_flush(&emitter))
		ret = -EIO;
	yaml_emitter_delete(&emitter);
	return ret;
}

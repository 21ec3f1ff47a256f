// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * yaml_walk.c - a YAML document walked map by map against tables of keys
 * (yaml_walk.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "yaml_walk.h"

#define VALUE_SHOWN	48	/* a value in an error is cut after this */

/* ---- errors ---------------------------------------------------------- */

int xrl_yaml_line(const yaml_node_t *node)
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
			out += snprintf(buf + out, len - out, "\\x%02x",
					text[i]);
		else
			buf[out++] = text[i];
	}
	buf[out] = '\0';
}

/* "FILE:LINE: FIELD: what is wrong", then " (value)" when @shown is set. */
int xrl_yaml_fail(struct xrl_yaml *y, const yaml_node_t *at, const char *field,
		  const yaml_node_t *shown, const char *fmt, ...)
{
	char value[VALUE_SHOWN * 4 + 8];
	size_t used;
	va_list ap;
	int n;

	n = snprintf(y->err, y->err_len, "%s:%d: %s: ", y->name,
		     xrl_yaml_line(at), field);
	used = n < 0 ? 0 : (size_t)n;
	if (used >= y->err_len)
		return -EINVAL;
	va_start(ap, fmt);
	n = vsnprintf(y->err + used, y->err_len - used, fmt, ap);
	va_end(ap);
	used += n < 0 ? 0 : (size_t)n;
	if (shown && used < y->err_len) {
		value_text(shown, value, sizeof(value));
		snprintf(y->err + used, y->err_len - used, " (%s)", value);
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

int xrl_yaml_expect(struct xrl_yaml *y, const char *field, yaml_node_t *node,
		    yaml_node_type_t type)
{
	static const char *const wanted[] = {
		[YAML_SCALAR_NODE] = "a single value",
		[YAML_SEQUENCE_NODE] = "a list",
		[YAML_MAPPING_NODE] = "a map",
	};

	if (node->type == type)
		return 0;
	return xrl_yaml_fail(y, node, field,
		    node->type == YAML_SCALAR_NODE && node->data.scalar.length ?
			     node : NULL,
		    "must be %s, not %s", wanted[type], type_name(node));
}

/* The scalar's text, refused when it hides a NUL byte (a "\0" escape)
 * that C strings would silently cut at. */
int xrl_yaml_scalar(struct xrl_yaml *y, const char *field, yaml_node_t *node,
		    const char **text)
{
	int ret = xrl_yaml_expect(y, field, node, YAML_SCALAR_NODE);

	if (ret)
		return ret;
	*text = (const char *)node->data.scalar.value;
	if (strlen(*text) != node->data.scalar.length)
		return xrl_yaml_fail(y, node, field, node, "contains a NUL "
				     "byte");
	return 0;
}

/* ---- walking maps against tables ------------------------------------ */

void xrl_yaml_field_name(char *buf, const char *path, const char *key)
{
	char shown[VALUE_SHOWN * 4 + 8];
	yaml_node_t fake = { .type = YAML_SCALAR_NODE };

	fake.data.scalar.value = (yaml_char_t *)key;
	fake.data.scalar.length = strlen(key);
	value_text(&fake, shown, sizeof(shown));
	snprintf(buf, XRL_YAML_FIELD_MAX, "%.64s%s%s", path, *path ? "." : "",
		 shown);
}

static const char *key_text(const yaml_node_t *key)
{
	return (const char *)key->data.scalar.value;
}

/* The index of @key among the keys of @table not skipped, or -1. */
static int key_index(const struct xrl_field *table, size_t n, unsigned skip,
		     const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(table[i].flags & skip) && !strcmp(table[i].key, key))
			return (int)i;
	return -1;
}

static int unknown_key(struct xrl_yaml *y, const char *field,
		       yaml_node_t *key, const struct xrl_field *table,
		       size_t n, unsigned skip)
{
	char expected[256] = "";
	size_t i, used = 0;

	for (i = 0; i < n && used < sizeof(expected); i++)
		if (!(table[i].flags & skip))
			used += snprintf(expected + used,
					 sizeof(expected) - used, "%s%s",
					 used ? ", " : "", table[i].key);
	return xrl_yaml_fail(y, key, field, NULL, "unknown key, expected one "
			     "of: %s", expected);
}

/* The value of @key in @map (a map walked already), or NULL. */
yaml_node_t *xrl_yaml_map_value(struct xrl_yaml *y, yaml_node_t *map,
				const char *key)
{
	yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++)
		if (!strcmp(key_text(yaml_document_get_node(y->doc, pair->key)),
			    key))
			return yaml_document_get_node(y->doc, pair->value);
	return NULL;
}

yaml_node_t *xrl_yaml_item(struct xrl_yaml *y, yaml_node_t *list,
			   size_t index)
{
	if (!list || list->type != YAML_SEQUENCE_NODE ||
	    index >= xrl_yaml_count(list))
		return NULL;
	return yaml_document_get_node(y->doc,
				      list->data.sequence.items.start[index]);
}

size_t xrl_yaml_count(const yaml_node_t *list)
{
	if (!list || list->type != YAML_SEQUENCE_NODE)
		return 0;
	return (size_t)(list->data.sequence.items.top -
			list->data.sequence.items.start);
}

int xrl_yaml_walk(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		  const struct xrl_field *table, size_t n, unsigned skip,
		  xrl_yaml_read_fn read, void *target,
		  struct xrl_yaml_seen *seen)
{
	yaml_node_t *keys_seen[XRL_YAML_KEYS_MAX] = { NULL };
	char field[XRL_YAML_FIELD_MAX];
	yaml_node_pair_t *pair;
	int ret, index;

	if (n > XRL_YAML_KEYS_MAX)
		return -E2BIG;
	ret = xrl_yaml_expect(y, *path ? path : "policy", map,
			      YAML_MAPPING_NODE);
	if (ret)
		return ret;
	if (seen)
		memset(seen, 0, sizeof(*seen));
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(y->doc, pair->key);
		yaml_node_t *value = yaml_document_get_node(y->doc,
							    pair->value);

		if (key->type != YAML_SCALAR_NODE ||
		    strlen(key_text(key)) != key->data.scalar.length) {
			snprintf(field, sizeof(field), "%s", *path ? path :
				 "policy");
			return xrl_yaml_fail(y, key, field, NULL, "a key must "
					     "be a plain word, not %s",
					     type_name(key));
		}
		xrl_yaml_field_name(field, path, key_text(key));
		index = key_index(table, n, skip, key_text(key));
		if (index < 0)
			return unknown_key(y, field, key, table, n, skip);
		if (keys_seen[index])
			return xrl_yaml_fail(y, key, field, NULL, "duplicate "
					     "key, first at line %d",
					     xrl_yaml_line(keys_seen[index]));
		keys_seen[index] = key;
		if (seen)
			seen->node[index] = value;
		ret = read(y, field, value, &table[index], target);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- loading -------------------------------------------------------- */

/* libyaml's own words, at its line; reader errors (bad UTF-8, control
 * bytes) carry an offset instead of a mark. */
static int syntax_error(struct xrl_yaml *y, const yaml_parser_t *parser,
			const char *text, size_t len)
{
	size_t line = parser->problem_mark.line, i;
	int n;

	if (parser->error == YAML_READER_ERROR)
		for (i = line = 0; i < parser->problem_offset; i++)
			line += text[i] == '\n';
	/* libyaml's words for a tab do not say "tab": the usual mistake.
	 * Its mark may be the end of the text (which ends in no NUL). */
	if (parser->error == YAML_SCANNER_ERROR &&
	    parser->problem_mark.index < len &&
	    text[parser->problem_mark.index] == '\t') {
		snprintf(y->err, y->err_len, "%s:%zu: yaml: a tab at column "
			 "%zu; YAML indents with spaces only", y->name,
			 line + 1, parser->problem_mark.column + 1);
		return -EINVAL;
	}
	n = snprintf(y->err, y->err_len, "%s:%zu: yaml: %s", y->name, line + 1,
		     parser->problem ? parser->problem : "syntax error");
	if (parser->context && n >= 0 && (size_t)n < y->err_len)
		snprintf(y->err + n, y->err_len - n, " (%s at line %zu)",
			 parser->context, parser->context_mark.line + 1);
	return -EINVAL;
}

/* "FILE:LINE: yaml: ..." for a limit of the text's shape. */
static int over_limit(struct xrl_yaml *y, const yaml_event_t *event,
		      const char *what, unsigned long long max)
{
	snprintf(y->err, y->err_len, "%s:%zu: yaml: %s than the maximum %llu",
		 y->name, event->start_mark.line + 1, what, max);
	return -E2BIG;
}

/*
 * Depth and node count, checked on libyaml's events before any document
 * is built. libyaml's scanner walks its whole stack of flow levels for
 * every token, so a text nested N deep costs N times its size to scan
 * (a quadratic cost: 50 s for 200 KB of "[[[..."); stopped at
 * XRL_YAML_DEPTH_MAX levels it costs at most that many times its size.
 * A syntax error is left to the loader that follows, which meets it at
 * the same place, scanning no deeper than this did.
 */
static int check_shape(struct xrl_yaml *y, const char *text, size_t len)
{
	unsigned long long nodes = 0;
	yaml_parser_t parser;
	yaml_event_t event;
	unsigned depth = 0;
	int ret = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!ret && yaml_parser_parse(&parser, &event)) {
		yaml_event_type_t type = event.type;

		switch (type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > XRL_YAML_DEPTH_MAX)
				ret = over_limit(y, &event, "nested deeper",
						 XRL_YAML_DEPTH_MAX);
			/* fall through */
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (!ret && ++nodes > XRL_YAML_NODES_MAX)
				ret = over_limit(y, &event, "more values, "
						 "lists and maps",
						 XRL_YAML_NODES_MAX);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&event);
		if (type == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	return ret;
}

int xrl_yaml_load(struct xrl_yaml *y, const char *text, size_t len,
		  yaml_document_t *doc)
{
	yaml_document_t extra;
	yaml_parser_t parser;
	bool more;
	int ret = 0;

	if (len > XRL_YAML_SIZE_MAX) {
		snprintf(y->err, y->err_len, "%s: yaml: larger than the "
			 "maximum %llu bytes (%llu MiB)", y->name,
			 XRL_YAML_SIZE_MAX, XRL_YAML_SIZE_MAX >> 20);
		return -EFBIG;
	}
	ret = check_shape(y, text, len);
	if (ret)
		return ret;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, doc))
		goto syntax_error;
	if (!yaml_document_get_root_node(doc)) {
		snprintf(y->err, y->err_len, "%s:1: policy: the file is empty",
			 y->name);
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
		snprintf(y->err, y->err_len,
			 "%s:%d: policy: more than one YAML document", y->name,
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
		ret = syntax_error(y, &parser, text, len);
	yaml_parser_delete(&parser);
	return ret;
}


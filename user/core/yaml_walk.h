/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * yaml_walk.h - a YAML document, loaded whole through libyaml (every node
 * keeps its line, nothing is parsed by hand), walked map by map against a
 * table of keys (fields.h), with refusals of one line:
 * "FILE:LINE: FIELD: what is wrong (value)".
 */
#ifndef XRL_YAML_WALK_H
#define XRL_YAML_WALK_H

#include <stddef.h>
#include <yaml.h>
#include "fields.h"

#define XRL_YAML_FIELD_MAX	320	/* a path ("rules[131070]") and a key */
#define XRL_YAML_KEYS_MAX	32	/* keys in one map's table */

/* The most a policy file may be: room for the most rules a policy holds
 * (1,048,575 of up to seven keys: 15 nodes, 128 bytes each; four keys in
 * block style take 9 and 72), and no more, since libyaml keeps every
 * node in memory (2.5 GB for those 1,048,575 rules). */
#define XRL_YAML_SIZE_MAX	(128ULL << 20)	/* bytes */
#define XRL_YAML_NODES_MAX	(1ULL << 24)	/* values, lists and maps */
#define XRL_YAML_DEPTH_MAX	64U		/* lists and maps in lists
						 * and maps; a policy needs 5 */

struct xrl_yaml {
	const char *name;		/* the file, as errors name it */
	yaml_document_t *doc;
	char *err;
	size_t err_len;
};

/* The value nodes of the keys met in one map, by index in its table. */
struct xrl_yaml_seen {
	yaml_node_t *node[XRL_YAML_KEYS_MAX];
};

/*
 * What a walk does with the value of a key of its table: @f is the key's
 * entry, @field its path ("rules[2].pps"). 0 or -errno (-EINVAL with the
 * refusal in the loader's error).
 */
typedef int (*xrl_yaml_read_fn)(struct xrl_yaml *y, const char *field,
				yaml_node_t *value, const struct xrl_field *f,
				void *target);

/*
 * Loads @len bytes of @text as exactly one YAML document into @doc
 * (yaml_document_delete() it). -EINVAL with the error for a syntax error,
 * an empty file or a second document; -EFBIG for a text over
 * XRL_YAML_SIZE_MAX, -E2BIG for one nested deeper than XRL_YAML_DEPTH_MAX
 * or of more than XRL_YAML_NODES_MAX nodes (checked before the document
 * is built); -ENOMEM.
 */
int xrl_yaml_load(struct xrl_yaml *y, const char *text, size_t len,
		  yaml_document_t *doc);

/*
 * Hands each value of the map @map (at @path, "" for the top) to @read,
 * in file order, refusing a value that is no map, keys that are not
 * words, keys not in @table (or in it with one of @skip's flags) and keys
 * given twice. @seen (optional) gets the value nodes by table index.
 */
int xrl_yaml_walk(struct xrl_yaml *y, const char *path, yaml_node_t *map,
		  const struct xrl_field *table, size_t n, unsigned skip,
		  xrl_yaml_read_fn read, void *target,
		  struct xrl_yaml_seen *seen);

/* "FILE:LINE: FIELD: what is wrong", then " (value)" with @shown. */
int xrl_yaml_fail(struct xrl_yaml *y, const yaml_node_t *at,
		  const char *field, const yaml_node_t *shown,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* 0 when @node is of @type, else the refusal. */
int xrl_yaml_expect(struct xrl_yaml *y, const char *field, yaml_node_t *node,
		    yaml_node_type_t type);
/* The text of a scalar, refused when it is not one or hides a NUL. */
int xrl_yaml_scalar(struct xrl_yaml *y, const char *field, yaml_node_t *node,
		    const char **text);

/* "PATH.KEY" into @buf (XRL_YAML_FIELD_MAX bytes), the key shown safe. */
void xrl_yaml_field_name(char *buf, const char *path, const char *key);
/* The line of @node (1 for none). */
int xrl_yaml_line(const yaml_node_t *node);
/* The value of @key in the map @map (walked already), or NULL. */
yaml_node_t *xrl_yaml_map_value(struct xrl_yaml *y, yaml_node_t *map,
				const char *key);
/* Item @index of the list @list, or NULL; how many items it has. */
yaml_node_t *xrl_yaml_item(struct xrl_yaml *y, yaml_node_t *list,
			   size_t index);
size_t xrl_yaml_count(const yaml_node_t *list);

#endif

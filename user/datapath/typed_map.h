/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * typed_map.h - maps typed with the program's BTF, so that bpftool names
 * their fields: the inner maps a policy is installed in, and the
 * templates their outer maps check them against.
 */
#ifndef XRL_TYPED_MAP_H
#define XRL_TYPED_MAP_H

#include <linux/types.h>
#include <linux/bpf.h>
#include "datapath.h"

struct btf;

/* What a map is: its type, name, the BTF names of its key and value
 * types (NULL: none) and sizes. */
struct xrl_map_shape {
	enum bpf_map_type type;
	const char *name;
	const char *key_type;
	const char *value_type;
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 flags;
};

/* The inner maps of a policy (include/xrl.h, "How a policy is
 * installed"): its head; the rule table of a rules slot, by id; its
 * classifier, by prefix; of @n entries. The templates are the same. */
extern const struct xrl_map_shape xrl_head_shape;
struct xrl_map_shape xrl_table_shape(__u32 n);
struct xrl_map_shape xrl_classifier_shape(__u32 n);

/*
 * A map of @shape typed by @btf, loaded in the kernel as @btf_fd (both
 * may be absent: -1, NULL), untyped when the BTF lacks its types.
 * Returns its fd, or -errno.
 */
int xrl_typed_map_create(const struct xrl_map_shape *shape,
			 const struct btf *btf, int btf_fd);

/*
 * A BTF loaded in the kernel that types the shapes above by size only
 * (the program's, with field names, is not loaded yet when the templates
 * are made), or NULL; btf__free() it.
 */
struct btf *xrl_template_btf(void);

/* The same, typed with the BTF of @dp's program. */
int xrl_datapath_map_create(const struct xrl_datapath *dp,
			    const struct xrl_map_shape *shape);

#endif

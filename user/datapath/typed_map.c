// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * typed_map.c - maps typed with the program's BTF.
 *
 * An inner map and its outer map's template must be typed alike: Linux
 * 6.1 compares their timer offsets (bpf_map_meta_equal()), which is
 * -EINVAL for a map created without BTF and -ENOENT for one typed by a
 * BTF without a timer, and refuses the inner map when they differ. So
 * the templates are made here too (user/datapath/datapath.c), from the
 * program's BTF before it is loaded.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "xrl.h"
#include "typed_map.h"

const struct xrl_map_shape xrl_head_shape = {
	.type = BPF_MAP_TYPE_ARRAY,
	.name = XRL_PIN_HEAD,
	.key_type = "__u32",
	.value_type = "xrl_policy_head",
	.key_size = sizeof(__u32),
	.value_size = sizeof(struct xrl_policy_head),
	.max_entries = 1,
};

struct xrl_map_shape xrl_table_shape(__u32 n)
{
	return (struct xrl_map_shape){
		.type = BPF_MAP_TYPE_HASH,
		.name = XRL_PIN_TABLE,
		.key_type = "__u32",
		.value_type = "xrl_rule",
		.key_size = sizeof(__u32),
		.value_size = sizeof(struct xrl_rule),
		.max_entries = n,
	};
}

struct xrl_map_shape xrl_classifier_shape(__u32 n)
{
	return (struct xrl_map_shape){
		.type = BPF_MAP_TYPE_HASH,
		.name = XRL_PIN_RULES,
		.key_type = "xrl_rule_key",
		.value_type = "xrl_rule",
		.key_size = sizeof(struct xrl_rule_key),
		.value_size = sizeof(struct xrl_rule),
		.max_entries = n,
	};
}

struct btf *xrl_template_btf(void)
{
	const struct {
		const char *name;
		__u32 size;
	} types[] = {
		{ "xrl_rule_key", sizeof(struct xrl_rule_key) },
		{ "xrl_rule", sizeof(struct xrl_rule) },
		{ "xrl_policy_head", sizeof(struct xrl_policy_head) },
	};
	struct btf *btf = btf__new_empty();
	int u32, ret = 0;
	size_t i;

	if (!btf)
		return NULL;
	u32 = btf__add_int(btf, "unsigned int", sizeof(__u32), 0);
	ret = u32 < 0 ? u32 : btf__add_typedef(btf, "__u32", u32);
	for (i = 0; i < sizeof(types) / sizeof(types[0]) && ret >= 0; i++)
		ret = btf__add_struct(btf, types[i].name, types[i].size);
	if (ret < 0 || btf__load_into_kernel(btf)) {
		btf__free(btf);
		return NULL;
	}
	return btf;
}

int xrl_typed_map_create(const struct xrl_map_shape *shape,
			 const struct btf *btf, int btf_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = shape->flags);
	int key_id, value_id, fd;

	if (btf && btf_fd >= 0 && shape->key_type && shape->value_type) {
		key_id = btf__find_by_name(btf, shape->key_type);
		value_id = btf__find_by_name(btf, shape->value_type);
		if (key_id > 0 && value_id > 0) {
			opts.btf_fd = btf_fd;
			opts.btf_key_type_id = key_id;
			opts.btf_value_type_id = value_id;
		}
	}
	fd = bpf_map_create(shape->type, shape->name, shape->key_size,
			    shape->value_size, shape->max_entries, &opts);
	return fd < 0 ? -errno : fd;
}

int xrl_datapath_map_create(const struct xrl_datapath *dp,
			    const struct xrl_map_shape *shape)
{
	struct btf *btf = NULL;
	int btf_fd = -1, fd;

	if (dp->btf_id) {
		btf = btf__load_from_kernel_by_id(dp->btf_id);
		btf_fd = bpf_btf_get_fd_by_id(dp->btf_id);
	}
	fd = xrl_typed_map_create(shape, btf, btf_fd);
	if (btf_fd >= 0)
		close(btf_fd);
	btf__free(btf);
	return fd;
}

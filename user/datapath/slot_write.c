// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * slot_write.c - a compiled policy into a rules slot's maps: whole into
 * new maps, or only what changed into the slot's own (slot_write.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "slot_write.h"
#include "typed_map.h"

#ifndef ENOTSUPP
#define ENOTSUPP	524	/* the kernel's, leaked to userspace */
#endif

void xrl_slot_maps_close(struct xrl_slot_maps *maps)
{
	if (maps->table_fd >= 0)
		close(maps->table_fd);
	if (maps->rules_fd >= 0)
		close(maps->rules_fd);
	maps->table_fd = maps->rules_fd = -1;
}

int xrl_slot_fill(int fd, const void *keys, size_t key_size,
		  const void *values, size_t value_size, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = n;
	size_t i;

	if (!n || !bpf_map_update_batch(fd, keys, values, &count, &opts))
		return 0;
	if (errno != EINVAL && errno != ENOTSUPP && errno != EOPNOTSUPP)
		return -errno;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, (const char *)keys + i * key_size,
					(const char *)values + i * value_size,
					0))
			return -errno;
	return 0;
}

int xrl_slot_changed_ids(const struct xrl_installed_rule *by_id,
			 size_t n_ids, const struct xrl_compiled *c,
			 __u32 **out, size_t *n)
{
	const struct xrl_installed_rule *k;
	size_t i;

	*n = 0;
	*out = malloc((c->n_rules ? c->n_rules : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < c->n_rules; i++) {
		k = c->ids[i] < n_ids ? &by_id[c->ids[i]] : NULL;
		if (!k || !k->since ||
		    k->fingerprint != c->fingerprints[i])
			(*out)[(*n)++] = c->ids[i];
	}
	return 0;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

bool xrl_slot_holds(const struct xrl_datapath *dp, __u32 slot,
		    const struct xrl_slot_maps *maps)
{
	__u32 table_id = 0, rules_id = 0;

	if (maps->table_fd < 0 || maps->rules_fd < 0 ||
	    bpf_map_lookup_elem(dp->rule_table_fd, &slot, &table_id) ||
	    bpf_map_lookup_elem(dp->policy_fd, &slot, &rules_id))
		return false;
	return table_id && table_id == map_id(maps->table_fd) &&
	       rules_id && rules_id == map_id(maps->rules_fd);
}

/* The entries a swap in place writes: rules of the table, and keys of
 * the classifier with their values. */
struct in_place {
	__u32 *ids;
	struct xrl_rule *rules;
	size_t n_rules;
	struct xrl_rule_key *keys;
	union xrl_classifier_value *values;
	size_t n;
	size_t *index_of;	/* by id: index in the compiled policy + 1 */
};

static void in_place_free(struct in_place *w)
{
	free(w->ids);
	free(w->rules);
	free(w->keys);
	free(w->values);
	free(w->index_of);
}

static int in_place_init(struct in_place *w, const struct xrl_compiled *c,
			 size_t n_ids)
{
	size_t i, room = n_ids * (1 + XRL_LEVELS_MAX) + 1;

	memset(w, 0, sizeof(*w));
	w->ids = malloc((n_ids ? n_ids : 1) * sizeof(*w->ids));
	w->rules = malloc((n_ids ? n_ids : 1) * sizeof(*w->rules));
	w->keys = malloc(room * sizeof(*w->keys));
	w->values = malloc(room * sizeof(*w->values));
	w->index_of = calloc((size_t)c->max_id + 1, sizeof(*w->index_of));
	if (!w->ids || !w->rules || !w->keys || !w->values || !w->index_of)
		return -ENOMEM;
	for (i = 0; i < c->n_rules; i++)
		w->index_of[c->ids[i]] = i + 1;
	return 0;
}

static void add_entry(struct in_place *w, const struct xrl_compiled *c,
		      size_t at)
{
	w->keys[w->n] = c->keys[at];
	w->values[w->n] = c->values[at];
	w->n++;
}

/* Rule @id's entries, once: its table entry, its chain's head entry if
 * it heads one, its levels. -ESTALE: the id is not in @c. */
static int add_rule_entries(struct in_place *w, const struct xrl_compiled *c,
			    __u32 id)
{
	size_t i, level;

	if (id > c->max_id || !w->index_of[id])
		return -ESTALE;
	if (w->index_of[id] == SIZE_MAX)
		return 0;	/* added already */
	i = w->index_of[id] - 1;
	w->index_of[id] = SIZE_MAX;
	w->ids[w->n_rules] = id;
	w->rules[w->n_rules++] = c->rules[i];
	if (c->head_at[i] != SIZE_MAX)
		add_entry(w, c, c->head_at[i]);
	for (level = 0; level < c->rules[i].levels.count; level++)
		add_entry(w, c, c->levels_at[i] + level);
	return 0;
}

int xrl_slot_write_in_place(const struct xrl_slot_maps *maps,
			    const struct xrl_compiled *c, const __u32 *before,
			    size_t n_before, const __u32 *ids, size_t n_ids)
{
	struct in_place w;
	size_t i;
	int ret;

	ret = in_place_init(&w, c, n_ids + n_before);
	for (i = 0; !ret && i < n_before; i++)
		ret = add_rule_entries(&w, c, before[i]);
	for (i = 0; !ret && i < n_ids; i++)
		ret = add_rule_entries(&w, c, ids[i]);
	if (!ret)
		add_entry(&w, c, c->n - 1);	/* the meta: its generation */
	if (!ret)
		ret = xrl_slot_fill(maps->table_fd, w.ids, sizeof(*w.ids), w.rules,
			   sizeof(*w.rules), w.n_rules);
	if (!ret)
		ret = xrl_slot_fill(maps->rules_fd, w.keys, sizeof(*w.keys), w.values,
			   sizeof(*w.values), w.n);
	in_place_free(&w);
	return ret;
}

int xrl_slot_write_new(struct xrl_datapath *dp, const struct xrl_compiled *c,
		       int *table_fd, int *rules_fd)
{
	struct xrl_map_shape table_shape = xrl_table_shape(c->n_rules);
	struct xrl_map_shape rules_shape = xrl_classifier_shape(c->n);
	int ret;

	*table_fd = xrl_datapath_map_create(dp, &table_shape);
	*rules_fd = xrl_datapath_map_create(dp, &rules_shape);
	if (*table_fd < 0 || *rules_fd < 0)
		return *table_fd < 0 ? *table_fd : *rules_fd;
	ret = xrl_slot_fill(*table_fd, c->ids, sizeof(*c->ids), c->rules,
		   sizeof(*c->rules), c->n_rules);
	if (!ret)
		ret = xrl_slot_fill(*rules_fd, c->keys, sizeof(*c->keys), c->values,
			   sizeof(*c->values), c->n);
	return ret;
}


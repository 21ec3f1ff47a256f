// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * overlay.c - runtime changes kept beside the policy file (overlay.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cidr.h"
#include "levels.h"
#include "overlay.h"
#include "rule_json.h"
#include "state_file.h"

#define OVERLAY_VERSION 1

void xrl_overlay_free(struct xrl_overlay *ov)
{
	free(ov->rules);
	free(ov->deleted);
	memset(ov, 0, sizeof(*ov));
}

static int load_rules(json_t *array, struct xrl_overlay *ov, char *err,
		      size_t len)
{
	char why[256];
	json_t *item;
	size_t i;
	int ret;

	if (!json_is_array(array)) {
		snprintf(err, len, "rules: must be a list");
		return -EINVAL;
	}
	ov->rules = calloc(json_array_size(array) ?: 1, sizeof(*ov->rules));
	if (!ov->rules)
		return -ENOMEM;
	json_array_foreach(array, i, item) {
		ret = xrl_rule_json_read(item, &ov->rules[i], why,
					 sizeof(why));
		if (ret) {
			snprintf(err, len, "rules[%zu]: %s", i, why);
			return ret;
		}
		ov->rules[i].runtime = true;
		ov->n_rules++;
	}
	return 0;
}

static int load_deleted(json_t *array, struct xrl_overlay *ov, char *err,
			size_t len)
{
	char why[256];
	json_t *item;
	size_t i;
	int ret;

	if (!json_is_array(array)) {
		snprintf(err, len, "deleted: must be a list");
		return -EINVAL;
	}
	ov->deleted = calloc(json_array_size(array) ?: 1, sizeof(*ov->deleted));
	if (!ov->deleted)
		return -ENOMEM;
	json_array_foreach(array, i, item) {
		ret = json_is_string(item) ?
			      xrl_rule_json_cidr(json_string_value(item),
						 &ov->deleted[i], why,
						 sizeof(why)) :
			      -EINVAL;
		if (ret) {
			snprintf(err, len, "deleted[%zu]: %s", i,
				 json_is_string(item) ? why : "not a CIDR");
			return ret;
		}
		ov->n_deleted++;
	}
	return 0;
}

int xrl_overlay_load(const char *path, struct xrl_overlay *ov, char *err,
		     size_t len)
{
	char why[400] = "";
	json_t *root;
	int ret;

	memset(ov, 0, sizeof(*ov));
	root = xrl_state_read_json(path, &ret, err, len);
	if (!root)
		return ret == -ENOENT ? 0 : ret;
	ret = -EINVAL;
	if (!json_is_object(root) ||
	    json_integer_value(json_object_get(root, "version")) !=
		    OVERLAY_VERSION)
		snprintf(why, sizeof(why),
			 "not a runtime overlay of version "
			 "%d",
			 OVERLAY_VERSION);
	else
		ret = load_rules(json_object_get(root, "rules"), ov, why,
				 sizeof(why));
	if (!ret)
		ret = load_deleted(json_object_get(root, "deleted"), ov, why,
				   sizeof(why));
	json_decref(root);
	if (ret) {
		snprintf(err, len, "%s: %s", path, why);
		xrl_overlay_free(ov);
	}
	return ret;
}

static json_t *overlay_json(const struct xrl_policy *policy,
			    const struct xrl_lpm_key *deleted, size_t n_deleted)
{
	json_t *root, *rules, *gone;
	char cidr[64];
	size_t i;

	root = json_pack("{s:i, s:[], s:[]}", "version", OVERLAY_VERSION,
			 "rules", "deleted");
	if (!root)
		return NULL;
	rules = json_object_get(root, "rules");
	gone = json_object_get(root, "deleted");
	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].runtime &&
		    json_array_append_new(rules,
					  xrl_rule_json(&policy->rules[i])))
			goto fail;
	for (i = 0; i < n_deleted; i++) {
		xrl_cidr_format(&deleted[i], cidr, sizeof(cidr));
		if (json_array_append_new(gone, json_string(cidr)))
			goto fail;
	}
	return root;
fail:
	json_decref(root);
	return NULL;
}

int xrl_overlay_stage(const char *path, const struct xrl_policy *policy,
		      const struct xrl_lpm_key *deleted, size_t n_deleted,
		      char *err, size_t len)
{
	json_t *root;
	int ret;

	root = overlay_json(policy, deleted, n_deleted);
	if (!root) {
		snprintf(err, len, "saving the runtime changes: out of memory");
		return -ENOMEM;
	}
	ret = xrl_state_stage_json(path, root);
	json_decref(root);
	if (ret)
		snprintf(err, len,
			 "saving the runtime changes to %s: %s; "
			 "nothing changed",
			 path, strerror(-ret));
	return ret;
}

/* The entries of one kind (kept, or dropped) as "add 198.18.9.0/24,
 * delete 198.18.3.0/24", and how many: a long list ends in "...". */
struct summary_list {
	char text[200];
	size_t n;
	bool cut;
};

static void list_add(struct summary_list *list, const char *what,
		     const struct xrl_lpm_key *prefix)
{
	size_t at = strlen(list->text);
	char cidr[64], item[96];

	xrl_cidr_format(prefix, cidr, sizeof(cidr));
	snprintf(item, sizeof(item), "%s%s %s", list->n ? ", " : "", what,
		 cidr);
	list->n++;
	if (list->cut)
		return;
	/* Room for ", ..." is always left. */
	if (at + strlen(item) + 6 > sizeof(list->text)) {
		snprintf(list->text + at, sizeof(list->text) - at, ", ...");
		list->cut = true;
		return;
	}
	memcpy(list->text + at, item, strlen(item) + 1);
}

static void summarize(struct xrl_overlay_outcome *out,
		      const struct summary_list *kept,
		      const struct summary_list *dropped)
{
	size_t n = kept->n + dropped->n;
	const char *noun = n == 1 ? "change" : "changes";

	out->n_kept = kept->n;
	out->n_dropped = dropped->n;
	out->summary[0] = '\0';
	if (kept->n && dropped->n)
		snprintf(out->summary, sizeof(out->summary),
			 "%zu runtime %s kept: %s; %zu dropped (no longer in "
			 "the file): %s", kept->n,
			 kept->n == 1 ? "change" : "changes", kept->text,
			 dropped->n, dropped->text);
	else if (kept->n)
		snprintf(out->summary, sizeof(out->summary),
			 "%zu runtime %s kept: %s", n, noun, kept->text);
	else if (dropped->n)
		snprintf(out->summary, sizeof(out->summary),
			 "%zu runtime %s dropped (no longer in the file): %s",
			 n, noun, dropped->text);
}

/* The deleted prefixes the file has a plain rule for go (kept), the
 * others are left out of the overlay (dropped). */
static int merge_deleted(struct xrl_policy *policy,
			 const struct xrl_overlay *ov,
			 struct xrl_overlay_outcome *out,
			 struct summary_list *kept,
			 struct summary_list *dropped)
{
	static const struct xrl_rule_match plain;
	char cidr[64];
	size_t i;
	int ret;

	out->deleted = calloc(ov->n_deleted ?: 1, sizeof(*out->deleted));
	if (!out->deleted)
		return -ENOMEM;
	for (i = 0; i < ov->n_deleted; i++) {
		if (!ov->deleted[i].prefixlen ||
		    !xrl_policy_find_match(policy, &ov->deleted[i], &plain)) {
			list_add(dropped, "delete", &ov->deleted[i]);
			continue;
		}
		xrl_cidr_format(&ov->deleted[i], cidr, sizeof(cidr));
		ret = xrl_policy_del(policy, cidr);
		if (ret)
			return ret;
		out->deleted[out->n_deleted++] = ov->deleted[i];
		list_add(kept, "delete", &ov->deleted[i]);
	}
	return 0;
}

static int merge_rule(struct xrl_policy *policy,
		      const struct xrl_rule_spec *rule,
		      struct summary_list *kept, char *err, size_t len)
{
	struct xrl_rule_spec *same, *named;
	char cidr[64], other[64], at[32], why[160];
	int ret;

	xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
	/* The file's keys may have changed under the rule's levels. */
	if (xrl_levels_check_keys(rule, policy->v4_prefix, policy->v6_prefix,
				  why, sizeof(why))) {
		snprintf(err, len, "the runtime rule %s (%s): %s", rule->name,
			 cidr, why);
		return -EINVAL;
	}
	same = xrl_policy_find_match(policy, &rule->prefix, &rule->match);
	named = xrl_policy_find(policy, rule->name);
	if (named && named != same) {
		xrl_cidr_format(&named->prefix, other, sizeof(other));
		at[0] = '\0';
		if (named->line)
			snprintf(at, sizeof(at), " (line %d)", named->line);
		snprintf(err, len,
			 "the runtime rule %s (%s) has the name of the file's "
			 "rule for %s%s; rename one or delete the runtime rule",
			 rule->name, cidr, other, at);
		return -EEXIST;
	}
	list_add(kept, same ? "change" : "add", &rule->prefix);
	if (same) {
		*same = *rule;
		return 0;
	}
	ret = xrl_policy_add(policy, rule);
	if (ret)
		snprintf(err, len, "runtime rule %s (%s): %s", rule->name,
			 cidr, strerror(-ret));
	return ret;
}

int xrl_overlay_merge(struct xrl_policy *policy, const struct xrl_overlay *ov,
		      struct xrl_overlay_outcome *out, char *err, size_t len)
{
	struct summary_list kept = { .n = 0 }, dropped = { .n = 0 };
	struct xrl_overlay_outcome merged = { .n_deleted = 0 };
	size_t i;
	int ret;

	ret = merge_deleted(policy, ov, &merged, &kept, &dropped);
	if (ret)
		snprintf(err, len, "runtime deletions: %s", strerror(-ret));
	for (i = 0; !ret && i < ov->n_rules; i++)
		ret = merge_rule(policy, &ov->rules[i], &kept, err, len);
	if (ret) {
		free(merged.deleted);
		return ret;
	}
	summarize(&merged, &kept, &dropped);
	*out = merged;
	return 0;
}

int xrl_overlay_deleted_with(const struct xrl_lpm_key *deleted, size_t n,
			     const struct xrl_lpm_key *prefix, bool add,
			     struct xrl_lpm_key **out, size_t *n_out)
{
	size_t i;

	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n_out = 0;
	for (i = 0; i < n; i++)
		if (!xrl_prefix_equal(&deleted[i], prefix))
			(*out)[(*n_out)++] = deleted[i];
	if (add)
		(*out)[(*n_out)++] = *prefix;
	return 0;
}

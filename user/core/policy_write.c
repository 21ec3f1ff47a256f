// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_write.c - a policy written back as a policy file, key by key in
 * the order of their tables (fields.h): what is not set is left out, so
 * that a file without a key stays so.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <yaml.h>
#include "cidr.h"
#include "config.h"
#include "fields.h"
#include "policy_write.h"

/* The policy tables' offsets are of a struct xrl_config; its policy is
 * its first member, so a policy stands for it. */
_Static_assert(offsetof(struct xrl_config, policy) == 0, "config");

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

static int emit_map_start(yaml_emitter_t *emitter, bool flow)
{
	yaml_event_t event;

	return emit(emitter, &event,
		    yaml_mapping_start_event_initialize(&event, NULL, NULL, 1,
			flow ? YAML_FLOW_MAPPING_STYLE :
			       YAML_BLOCK_MAPPING_STYLE));
}

static int emit_map_end(yaml_emitter_t *emitter)
{
	yaml_event_t event;

	return emit(emitter, &event, yaml_mapping_end_event_initialize(&event));
}

static int emit_list_start(yaml_emitter_t *emitter, bool flow)
{
	yaml_event_t event;

	return emit(emitter, &event,
		    yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
			flow ? YAML_FLOW_SEQUENCE_STYLE :
			       YAML_BLOCK_SEQUENCE_STYLE));
}

static int emit_list_end(yaml_emitter_t *emitter)
{
	yaml_event_t event;

	return emit(emitter, &event,
		    yaml_sequence_end_event_initialize(&event));
}

/* "key: value" of @f when it is set. */
static int emit_field(yaml_emitter_t *emitter, const struct xrl_field *f,
		      const void *obj)
{
	char text[96];

	if (!xrl_field_is_set(f, obj, false))
		return 0;
	xrl_field_format(f, obj, text, sizeof(text));
	return emit_pair(emitter, f->key, text);
}

/* A level as a flow map: "prefix:" in a rule of one family,
 * "ipv4_prefix:" or "ipv6_prefix:" in the default rule (the first three
 * keys of its table), then its limits. */
static int emit_level(yaml_emitter_t *emitter,
		      const struct xrl_level_spec *level, bool both)
{
	const struct xrl_field *prefix = &xrl_level_fields[!both ? 0 :
		level->family == XRL_FAMILY_IPV4 ? 1 : 2];
	size_t i;
	int ret = emit_map_start(emitter, true);

	if (!ret)
		ret = emit_field(emitter, prefix, level);
	for (i = 3; !ret && i < xrl_n_level_fields; i++)
		ret = emit_field(emitter, &xrl_level_fields[i], level);
	return ret ? ret : emit_map_end(emitter);
}

static int emit_levels(yaml_emitter_t *emitter, const struct xrl_field *f,
		       const struct xrl_rule_spec *rule)
{
	bool both = xrl_prefix_family(&rule->prefix) == XRL_FAMILY_ANY;
	unsigned i;
	int ret;

	if (!xrl_field_is_set(f, rule, false))
		return 0;
	ret = emit_scalar(emitter, f->key);
	if (!ret)
		ret = emit_list_start(emitter, false);
	for (i = 0; !ret && i < rule->n_levels && i < XRL_LEVELS_MAX; i++)
		ret = emit_level(emitter, &rule->levels[i], both);
	return ret ? ret : emit_list_end(emitter);
}

/* A rule's map: its keys (those of default: for the default rule). */
static int emit_rule(yaml_emitter_t *emitter, const struct xrl_rule_spec *rule,
		     unsigned skip)
{
	const struct xrl_field *f;
	size_t i;
	int ret = emit_map_start(emitter, false);

	for (i = 0; !ret && i < xrl_n_rule_fields; i++) {
		f = &xrl_rule_fields[i];
		if (f->flags & skip)
			continue;
		if (f->type == XRL_FIELD_LEVELS)
			ret = emit_levels(emitter, f, rule);
		else
			ret = emit_field(emitter, f, rule);
	}
	return ret ? ret : emit_map_end(emitter);
}

static int emit_rules(yaml_emitter_t *emitter, const struct xrl_policy *policy)
{
	size_t i;
	int ret = emit_scalar(emitter, "rules");

	if (!ret)
		ret = emit_list_start(emitter, policy->n_rules <= 1);
	for (i = 1; !ret && i < policy->n_rules; i++)
		ret = emit_rule(emitter, &policy->rules[i], 0);
	return ret ? ret : emit_list_end(emitter);
}

/* A map of the keys of @f's table (keys: as a block, the rest flow). */
static int emit_map(yaml_emitter_t *emitter, const struct xrl_field *f,
		    const void *obj, bool flow)
{
	size_t i;
	int ret = emit_scalar(emitter, f->key);

	if (!ret)
		ret = emit_map_start(emitter, flow);
	for (i = 0; !ret && i < f->n_sub; i++)
		ret = emit_field(emitter, &f->sub[i], obj);
	return ret ? ret : emit_map_end(emitter);
}

/* Whether every key of @f's map holds its value of a fresh policy. */
static bool map_is_default(const struct xrl_field *f, const void *obj)
{
	struct xrl_config fresh;
	bool same = true;
	size_t i;

	if (xrl_policy_init(&fresh.policy))
		return false;
	for (i = 0; i < f->n_sub; i++)
		same &= xrl_field_value(&f->sub[i], obj) ==
			xrl_field_value(&f->sub[i], &fresh);
	xrl_policy_free(&fresh.policy);
	return same;
}

/* new_sources: off, a map of its budget, or nothing for the default. */
static int emit_new_sources(yaml_emitter_t *emitter, const struct xrl_field *f,
			    const struct xrl_policy *policy)
{
	if (policy->new_sources_off)
		return emit_pair(emitter, f->key, "off");
	return policy->new_pps ? emit_map(emitter, f, policy, true) : 0;
}

/* blocklists: a list of {name, file, action}, or nothing for none. */
static int emit_blocklists(yaml_emitter_t *emitter, const struct xrl_field *f,
			   const struct xrl_policy *policy)
{
	const struct xrl_blocklist_spec *spec;
	size_t i;
	int ret;

	if (!policy->n_blocklists)
		return 0;
	ret = emit_scalar(emitter, f->key) ?: emit_list_start(emitter, false);
	for (i = 0; !ret && i < policy->n_blocklists; i++) {
		spec = &policy->blocklists[i];
		ret = emit_map_start(emitter, true) ?:
		      emit_pair(emitter, "name", spec->name) ?:
		      emit_pair(emitter, "file", spec->file) ?:
		      emit_pair(emitter, "action",
				xrl_blocklist_action_name(spec->action)) ?:
		      emit_map_end(emitter);
	}
	return ret ? ret : emit_list_end(emitter);
}

static int emit_setting(yaml_emitter_t *emitter, const struct xrl_field *f,
			const struct xrl_policy *policy)
{
	if (!strcmp(f->key, "blocklists"))
		return emit_blocklists(emitter, f, policy);
	if (!strcmp(f->key, "keys"))
		return emit_map(emitter, f, policy, false);
	if (!strcmp(f->key, "new_sources"))
		return emit_new_sources(emitter, f, policy);
	if (!strcmp(f->key, "default")) {
		if (!policy->n_rules)
			return 0;
		return emit_scalar(emitter, f->key) ?:
		       emit_rule(emitter, &policy->rules[0],
				 XRL_FIELD_RULE_ONLY);
	}
	if (!strcmp(f->key, "rules"))
		return emit_rules(emitter, policy);
	if (f->type == XRL_FIELD_MAP)
		return map_is_default(f, policy) ? 0 :
		       emit_map(emitter, f, policy, true);
	return emit_field(emitter, f, policy);
}

static int emit_policy(yaml_emitter_t *emitter, const struct xrl_policy *policy)
{
	const struct xrl_field *f;
	size_t i;
	int ret = emit_map_start(emitter, false);

	for (i = 0; !ret && i < xrl_n_policy_fields; i++) {
		f = &xrl_policy_fields[i];
		if (!(f->flags & XRL_FIELD_DAEMON))
			ret = emit_setting(emitter, f, policy);
	}
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
		   yaml_stream_start_event_initialize(&event,
						      YAML_UTF8_ENCODING));
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

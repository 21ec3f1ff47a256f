// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_map.c - a policy as the data path holds it: applied in one swap
 * of the policy head (rules and settings together), read back, compared
 * with the maps in force.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "aggregate.h"
#include "datapath.h"
#include "mapwalk.h"
#include "policy.h"
#include "policy_map.h"

/*
 * Types @key and @value of the program's BTF for a map about to be
 * created, so that bpftool names its fields; without them (no BTF, or
 * not found) the map is made all the same. Returns the BTF fd to close
 * after creating the map, or -1.
 */
static int name_types(const struct xrl_datapath *dp, const char *key,
		      int key_kind, const char *value,
		      struct bpf_map_create_opts *opts)
{
	struct btf *btf;
	int btf_fd, key_id, value_id;

	if (!dp->btf_id)
		return -1;
	btf = btf__load_from_kernel_by_id(dp->btf_id);
	btf_fd = bpf_btf_get_fd_by_id(dp->btf_id);
	if (btf && btf_fd >= 0) {
		key_id = btf__find_by_name_kind(btf, key, key_kind);
		value_id = btf__find_by_name_kind(btf, value, BTF_KIND_STRUCT);
		if (key_id > 0 && value_id > 0) {
			opts->btf_fd = btf_fd;
			opts->btf_key_type_id = key_id;
			opts->btf_value_type_id = value_id;
		}
	}
	btf__free(btf);
	return btf_fd;
}

/* A new, empty LPM map. */
static int create_rules_map(const struct xrl_datapath *dp)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	int btf_fd, fd;

	btf_fd = name_types(dp, "xrl_lpm_key", BTF_KIND_STRUCT, "xrl_rule",
			    &opts);
	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, XRL_PIN_RULES,
			    sizeof(struct xrl_lpm_key), sizeof(struct xrl_rule),
			    XRL_MAX_RULES, &opts);
	if (fd < 0)
		fd = -errno;
	if (btf_fd >= 0)
		close(btf_fd);
	return fd;
}

/*
 * A new head map holding @head, frozen: once it may be in force nothing
 * writes it in place, so a policy's settings change only with its swap
 * (and bpftool shows it frozen). The program may not write it either
 * (BPF_F_RDONLY_PROG, as the program's template of the inner map says).
 */
static int create_head_map(const struct xrl_datapath *dp,
			   const struct xrl_policy_head *head)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_RDONLY_PROG);
	__u32 zero = 0;
	int btf_fd, fd;

	btf_fd = name_types(dp, "__u32", BTF_KIND_TYPEDEF, "xrl_policy_head",
			    &opts);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, XRL_PIN_HEAD, sizeof(__u32),
			    sizeof(*head), 1, &opts);
	if (fd < 0)
		fd = -errno;
	if (btf_fd >= 0)
		close(btf_fd);
	if (fd >= 0 && (bpf_map_update_elem(fd, &zero, head, 0) ||
			bpf_map_freeze(fd))) {
		close(fd);
		fd = -errno;
	}
	return fd;
}

static int fill_rules_map(int fd, const struct xrl_policy *policy, char *err,
			  size_t len)
{
	struct xrl_rule value;
	char cidr[64];
	size_t i;
	int ret;

	for (i = 0; i < policy->n_rules; i++) {
		const struct xrl_rule_spec *rule = &policy->rules[i];

		ret = xrl_rule_compile(rule, &value);
		if (!ret && bpf_map_update_elem(fd, &rule->prefix, &value, 0))
			ret = -errno;
		if (ret) {
			xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
			snprintf(err, len, "rule %s (%s): %s", rule->name, cidr,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Re-pins @fd as @name, for bpftool; the data path does not depend on
 * it, so a failure here only loses the inspection path. */
static void pin_in_force(const struct xrl_datapath *dp, int fd,
			 const char *name)
{
	char path[PATH_MAX + 16];

	if (!dp->pin_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", dp->pin_dir, name);
	unlink(path);
	bpf_obj_pin(fd, path);
}

int xrl_policy_stage(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     struct xrl_staged_policy *staged, char *err, size_t len)
{
	struct xrl_policy_head head = {}, in_force;
	int ret;

	staged->rules_fd = staged->head_fd = -1;
	if (policy->n_rules == 0 || policy->rules[0].prefix.prefixlen != 0) {
		snprintf(err, len, "policy has no default rule");
		return -EINVAL;
	}
	/* The slot the head in force does not name: no packet reads it,
	 * since the swap of that head waited for every packet judged by
	 * the head before it (include/xrl.h). */
	if (!xrl_datapath_head(dp, &in_force))
		head.rules_slot = (in_force.rules_slot + 1) % XRL_POLICY_SLOTS;
	staged->slot = head.rules_slot;

	ret = staged->rules_fd = create_rules_map(dp);
	if (ret < 0) {
		snprintf(err, len, "creating the rules map: %s", strerror(-ret));
		goto unstage;
	}
	ret = fill_rules_map(staged->rules_fd, policy, err, len);
	if (ret)
		goto unstage;
	if (bpf_map_update_elem(dp->policy_fd, &head.rules_slot,
				&staged->rules_fd, 0)) {
		ret = -errno;
		snprintf(err, len, "writing rules slot %u: %s", head.rules_slot,
			 strerror(-ret));
		goto unstage;
	}
	xrl_policy_settings(policy, xrl_datapath_max_sources(dp),
			    xrl_datapath_cpus(), &head.settings);
	ret = staged->head_fd = create_head_map(dp, &head);
	if (ret < 0) {
		snprintf(err, len, "creating the policy head: %s",
			 strerror(-ret));
		goto unstage;
	}
	return 0;

unstage:
	xrl_policy_unstage(staged);
	return ret;
}

int xrl_policy_commit(struct xrl_datapath *dp,
		      const struct xrl_staged_policy *staged, char *err,
		      size_t len)
{
	__u32 zero = 0;
	int ret;

	/* The one step the data path sees. Returns once no packet is still
	 * judged by the head it replaces. */
	if (bpf_map_update_elem(dp->settings_fd, &zero, &staged->head_fd, 0)) {
		ret = -errno;
		snprintf(err, len, "swapping in the policy head: %s",
			 strerror(-ret));
		return ret;
	}
	pin_in_force(dp, staged->rules_fd, XRL_PIN_RULES);
	pin_in_force(dp, staged->head_fd, XRL_PIN_HEAD);
	return 0;
}

void xrl_policy_unstage(struct xrl_staged_policy *staged)
{
	if (staged->rules_fd >= 0)
		close(staged->rules_fd);
	if (staged->head_fd >= 0)
		close(staged->head_fd);
	staged->rules_fd = staged->head_fd = -1;
}

int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len)
{
	struct xrl_staged_policy staged;
	int ret;

	ret = xrl_policy_stage(dp, policy, &staged, err, len);
	if (ret)
		return ret;
	/* Shares before the switch: an aggregate rule finds its budget
	 * from its first packet on. */
	ret = xrl_agg_write_even(dp, policy, err, len);
	if (!ret)
		ret = xrl_policy_commit(dp, &staged, err, len);
	if (!ret)
		xrl_agg_forget_stale(dp, policy);
	xrl_policy_unstage(&staged);
	return ret;
}

/* Calls @fn for each entry of the rules map in force until it fails. */
static int walk_rules_map(const struct xrl_datapath *dp,
			  int (*fn)(const void *key, const void *value,
				    void *ctx),
			  void *ctx)
{
	int fd, ret;

	fd = xrl_datapath_rules_fd(dp);
	if (fd < 0)
		return fd;
	ret = xrl_map_walk(fd, sizeof(struct xrl_lpm_key),
			   sizeof(struct xrl_rule), fn, ctx);
	close(fd);
	return ret;
}

static int add_read_rule(const void *key_ptr, const void *value_ptr,
			 void *ctx)
{
	const struct xrl_lpm_key *key = key_ptr;
	const struct xrl_rule *value = value_ptr;
	struct xrl_policy *policy = ctx;
	struct xrl_rule_spec rule = {
		.prefix = *key,
		.action = value->action,
		.scope = value->scope < XRL_SCOPE_COUNT ? value->scope :
			 XRL_SCOPE_SOURCE,
	};
	int ret;

	if (key->prefixlen == 0) {
		policy->rules[0].action = value->action;
		policy->rules[0].id = value->id;
		return 0;
	}
	xrl_cidr_format(key, rule.name, sizeof(rule.name));
	ret = xrl_policy_add(policy, &rule);
	if (ret)
		return ret;
	policy->rules[policy->n_rules - 1].id = value->id;
	return 0;
}

int xrl_policy_read_ids(const struct xrl_datapath *dp, struct xrl_policy *out)
{
	struct xrl_settings settings;
	int ret;

	ret = xrl_policy_init(out);
	if (ret)
		return ret;
	ret = xrl_datapath_settings(dp, &settings);
	if (!ret)
		ret = walk_rules_map(dp, add_read_rule, out);
	if (ret) {
		xrl_policy_free(out);
		return ret;
	}
	out->v4_prefix = settings.v4_prefix;
	out->v6_prefix = settings.v6_prefix;
	out->malformed = settings.malformed_verdict;
	out->unknown = settings.unknown_verdict;
	if (settings.new_sources_set) {
		out->new_pps = settings.new_sources_pps;
		out->new_burst = settings.new_sources_burst;
		out->new_sources_off = !settings.new_sources.interval;
	}
	return 0;
}

struct match_ctx {
	const struct xrl_rule_spec **sorted;
	size_t n_rules;
	size_t n_seen;
};

static int match_rule(const void *key, const void *value, void *ctx)
{
	struct match_ctx *match = ctx;
	const struct xrl_rule_spec *rule;
	struct xrl_rule compiled;

	rule = xrl_policy_find_sorted(match->sorted, match->n_rules, key);
	if (!rule || xrl_rule_compile(rule, &compiled) ||
	    memcmp(&compiled, value, sizeof(compiled)))
		return -ESTALE;
	match->n_seen++;
	return 0;
}

int xrl_policy_matches_map(const struct xrl_datapath *dp,
			   const struct xrl_policy *policy)
{
	struct xrl_settings in_force, wanted;
	struct match_ctx match = { .n_rules = policy->n_rules };
	int ret;

	ret = xrl_datapath_settings(dp, &in_force);
	if (ret)
		return ret;
	xrl_policy_settings(policy, xrl_datapath_max_sources(dp),
			    xrl_datapath_cpus(), &wanted);
	if (memcmp(&in_force, &wanted, sizeof(wanted)))
		return -ESTALE;
	match.sorted = xrl_policy_sorted(policy);
	if (!match.sorted)
		return -ENOMEM;
	ret = walk_rules_map(dp, match_rule, &match);
	free(match.sorted);
	if (!ret && match.n_seen != policy->n_rules)
		ret = -ESTALE;
	return ret;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_map.c - a policy as the data path holds it: applied in one swap
 * of the rules map, read back, compared with the maps in force.
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

/* A new, empty LPM map with the program's BTF, so bpftool names fields. */
static int create_rules_map(const struct xrl_datapath *dp)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	struct btf *btf = NULL;
	int btf_fd = -1, fd, key_id, value_id;

	if (dp->btf_id) {
		btf = btf__load_from_kernel_by_id(dp->btf_id);
		btf_fd = bpf_btf_get_fd_by_id(dp->btf_id);
	}
	if (btf && btf_fd >= 0) {
		key_id = btf__find_by_name_kind(btf, "xrl_lpm_key", BTF_KIND_STRUCT);
		value_id = btf__find_by_name_kind(btf, "xrl_rule", BTF_KIND_STRUCT);
		if (key_id > 0 && value_id > 0) {
			opts.btf_fd = btf_fd;
			opts.btf_key_type_id = key_id;
			opts.btf_value_type_id = value_id;
		}
	}
	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, XRL_PIN_RULES,
			    sizeof(struct xrl_lpm_key), sizeof(struct xrl_rule),
			    XRL_MAX_RULES, &opts);
	if (fd < 0)
		fd = -errno;
	if (btf_fd >= 0)
		close(btf_fd);
	btf__free(btf);
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

/* Re-pins the rules map in force, for bpftool; the data path does not
 * depend on it, so a failure here only loses the inspection path. */
static void pin_rules_map(const struct xrl_datapath *dp, int fd)
{
	char path[PATH_MAX + 16];

	if (!dp->pin_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", dp->pin_dir, XRL_PIN_RULES);
	unlink(path);
	bpf_obj_pin(fd, path);
}

int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len)
{
	struct xrl_settings settings;
	__u32 zero = 0;
	int fd, ret;

	if (policy->n_rules == 0 || policy->rules[0].prefix.prefixlen != 0) {
		snprintf(err, len, "policy has no default rule");
		return -EINVAL;
	}
	/* Shares first: an aggregate rule finds its budget from its first
	 * packet on. */
	ret = xrl_agg_write_even(dp, policy, err, len);
	if (ret)
		return ret;
	fd = create_rules_map(dp);
	if (fd < 0) {
		snprintf(err, len, "creating the rules map: %s", strerror(-fd));
		return fd;
	}
	ret = fill_rules_map(fd, policy, err, len);
	if (ret)
		goto close_map;

	/* The one step the data path sees: the outer slot now names the new
	 * map. Packets being judged keep the old one until they finish. */
	if (bpf_map_update_elem(dp->policy_fd, &zero, &fd, 0)) {
		ret = -errno;
		snprintf(err, len, "swapping in the rules map: %s", strerror(-ret));
		goto close_map;
	}
	xrl_policy_settings(policy, xrl_datapath_max_sources(dp),
			    xrl_datapath_cpus(), &settings);
	if (bpf_map_update_elem(dp->settings_fd, &zero, &settings, 0)) {
		ret = -errno;
		snprintf(err, len, "writing settings: %s", strerror(-ret));
		goto close_map;
	}
	pin_rules_map(dp, fd);
	xrl_agg_forget_stale(dp, policy);
close_map:
	close(fd);
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

static int read_settings(const struct xrl_datapath *dp,
			 struct xrl_settings *settings)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(dp->settings_fd, &zero, settings))
		return -errno;
	return 0;
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
	ret = read_settings(dp, &settings);
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

	ret = read_settings(dp, &in_force);
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

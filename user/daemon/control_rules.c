// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_rules.c - rule.add, rule.del, rule.list and reload over the
 * control socket: the rules of a request read by the rule table
 * (rule_json.h), each change made by the change engine (change.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "budget.h"
#include "cidr.h"
#include "control_cmds.h"
#include "fields.h"
#include "file_load.h"
#include "levels.h"
#include "log.h"
#include "match.h"
#include "notify.h"
#include "overlay.h"
#include "policy_running.h"
#include "rule_json.h"
#include "stats.h"

static json_t *counter_json(const struct xrl_counter *counter)
{
	return json_pack("{s:I, s:I}", "packets", (json_int_t)counter->packets,
			 "bytes", (json_int_t)counter->bytes);
}

/* Whether the policy file (as last read) has a rule for @prefix and
 * @match: only then does a runtime deletion of it need keeping. */
static bool file_has(struct xrl_daemon_state *state,
		     const struct xrl_lpm_key *prefix,
		     const struct xrl_rule_match *match)
{
	return xrl_policy_find_match(&state->file, prefix, match) != NULL;
}

/* A rule as rule.list and rule.add show it: its id, its keys, where it
 * comes from, and what the data path counted for it. */
static json_t *rule_json(struct xrl_daemon_state *state,
			 const struct xrl_rule_spec *rule)
{
	struct xrl_rule_counters counters;
	json_t *obj = json_pack("{s:I}", "id", (json_int_t)rule->id);

	if (!obj || xrl_rule_json_add(obj, rule)) {
		json_decref(obj);
		return NULL;
	}
	json_object_set_new(obj, "source",
			    json_string(rule->runtime ? "runtime" : "file"));
	if (rule->runtime && file_has(state, &rule->prefix, &rule->match))
		json_object_set_new(obj, "replaces_file", json_true());
	if (rule->global)
		json_object_set_new(obj, "degraded", json_boolean(
			xrl_budgets_rule_degraded(state->budgets, rule->id)));
	if (!state->dp || xrl_rule_stats_read(state->dp, rule->id, &counters))
		return obj;
	json_object_set_new(obj, "passed", counter_json(
		&counters.outcome[XRL_RULE_PASSED]));
	json_object_set_new(obj, "dropped", counter_json(
		&counters.outcome[XRL_RULE_DROPPED]));
	if (rule->ban.ns)
		json_object_set_new(obj, "banned", counter_json(
			&counters.outcome[XRL_RULE_BANNED]));
	return obj;
}

static struct xrl_rule_spec *find_name(struct xrl_policy *policy,
				       const char *name)
{
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (!strcmp(policy->rules[i].name, name))
			return &policy->rules[i];
	return NULL;
}

/* rule.add: a new rule, or (with "replace": true) a new version of one. */
int xrl_control_rule_add(struct xrl_request *req)
{
	struct xrl_rule_spec rule, *old, *named;
	struct xrl_lpm_key *deleted;
	struct xrl_policy next;
	size_t n_deleted;
	char cidr[64];
	json_t *replace_item = json_object_get(req->json, "replace");
	bool replace = false;
	int ret;

	if (replace_item && !json_is_boolean(replace_item)) {
		snprintf(req->err, sizeof(req->err),
			 "replace: must be true or false");
		return -EINVAL;
	}
	replace = replace_item && json_is_true(replace_item);
	ret = xrl_rule_json_read(req->json, &rule, req->err,
				 sizeof(req->err));
	if (!ret)
		ret = xrl_levels_check_keys(&rule, req->state->policy.v4_prefix,
					    req->state->policy.v6_prefix,
					    req->err, sizeof(req->err));
	if (!ret)
		ret = xrl_daemon_check_in_force(req->state, req->err,
						sizeof(req->err));
	if (ret)
		return ret;
	rule.runtime = true;
	ret = xrl_policy_copy(&next, &req->state->policy);
	if (ret)
		goto no_memory;

	xrl_cidr_format(&rule.prefix, cidr, sizeof(cidr));
	old = xrl_policy_find_match(&next, &rule.prefix, &rule.match);
	named = find_name(&next, rule.name);
	if (old && !replace) {
		snprintf(req->err, sizeof(req->err), "a rule for %s already "
			 "exists (\"%s\"); add \"replace\": true to change it",
			 cidr, old->name);
		ret = -EEXIST;
		goto free_next;
	}
	if (named && named != old) {
		snprintf(req->err, sizeof(req->err), "name: \"%s\" is already "
			 "the name of the rule for another CIDR", rule.name);
		ret = -EEXIST;
		goto free_next;
	}
	if (old) {
		if (!json_object_get(req->json, "name"))
			memcpy(rule.name, old->name, sizeof(rule.name));
		rule.id = old->id;
		*old = rule;
	} else {
		ret = xrl_policy_add(&next, &rule);
		if (ret == -EMLINK) {
			snprintf(req->err, sizeof(req->err), "%s already holds "
				 "%d rules (that differ in proto, ports or "
				 "tcp_flags)", cidr, XRL_MATCH_CHAIN_MAX);
			goto free_next;
		}
		if (ret == -ENOSPC) {
			snprintf(req->err, sizeof(req->err), "the policy holds "
				 "the most rules there may be (%d)",
				 XRL_MAX_RULES);
			goto free_next;
		}
		if (ret)
			goto free_next;
	}
	/* The deleted list holds plain rules' prefixes: an L4 rule leaves
	 * it as it is (the default's prefix is never in it). */
	ret = xrl_overlay_deleted_with(req->state->deleted,
				       req->state->n_deleted,
				       xrl_match_is_plain(&rule.match) ?
				       &rule.prefix : &(struct xrl_lpm_key){ 0 },
				       false, &deleted, &n_deleted);
	if (ret)
		goto free_next;
	ret = xrl_daemon_change_runtime(req->state, &next, deleted, n_deleted,
					req->err, sizeof(req->err));
	if (ret)
		return ret;
	pr_info("rule.add: %s (%s) %s", cidr, rule.name,
		xrl_action_name(rule.action));
	old = xrl_policy_find_match(&req->state->policy, &rule.prefix,
			  &rule.match);
	json_object_set_new(req->response, "rule",
			    rule_json(req->state, old));
	return 0;

free_next:
	xrl_policy_free(&next);
	return ret;
no_memory:
	snprintf(req->err, sizeof(req->err), "out of memory");
	return ret;
}

int xrl_control_rule_del(struct xrl_request *req)
{
	struct xrl_rule_spec *rule;
	struct xrl_lpm_key *gone, key;
	struct xrl_policy next;
	const char *which;
	size_t n_gone;
	json_t *deleted;
	char cidr[64];
	int ret;

	ret = xrl_json_string(req->json, "rule", true, &which, req->err,
				 sizeof(req->err));
	if (!ret)
		ret = xrl_daemon_check_in_force(req->state, req->err,
						sizeof(req->err));
	if (ret)
		return ret;
	rule = xrl_policy_find(&req->state->policy, which);
	/* What rule.add takes, rule.del takes: "198.18.0.7" is a /32. */
	/* A CIDR names its plain rule; L4 rules go by name. */
	if (!rule && !xrl_cidr_parse(which, &key))
		rule = xrl_policy_find_match(&req->state->policy, &key,
				   &(struct xrl_rule_match){ 0 });
	if (!rule) {
		snprintf(req->err, sizeof(req->err), "no rule is named or has "
			 "the CIDR \"%.64s\"", which);
		return -ENOENT;
	}
	/* Runtime deletions are kept by prefix (overlay.h), which names a
	 * plain rule: an L4 rule of the file is removed in the file. Only a
	 * rule the file has needs one: deleting a rule added at runtime
	 * leaves nothing behind. */
	if (!xrl_match_is_plain(&rule->match) && !rule->runtime) {
		snprintf(req->err, sizeof(req->err), "\"%s\" is an L4 rule "
			 "of the policy file: remove it there and reload",
			 rule->name);
		return -EPERM;
	}
	if (rule->prefix.prefixlen == 0 && xrl_match_is_plain(&rule->match)) {
		snprintf(req->err, sizeof(req->err), "the default rule cannot "
			 "be removed (change it with rule.add and "
			 "\"replace\")");
		return -EPERM;
	}
	deleted = rule_json(req->state, rule);
	xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
	ret = xrl_overlay_deleted_with(req->state->deleted,
				       req->state->n_deleted,
				       xrl_match_is_plain(&rule->match) ?
				       &rule->prefix : &(struct xrl_lpm_key){ 0 },
				       xrl_match_is_plain(&rule->match) &&
				       file_has(req->state, &rule->prefix,
						&rule->match),
				       &gone, &n_gone);
	if (ret) {
		snprintf(req->err, sizeof(req->err), "%s", strerror(-ret));
		goto put_deleted;
	}
	ret = xrl_policy_copy(&next, &req->state->policy);
	if (!ret)
		ret = xrl_policy_del(&next, rule->name);
	if (ret) {
		snprintf(req->err, sizeof(req->err), "%s", strerror(-ret));
		free(gone);
		goto put_deleted;
	}
	ret = xrl_daemon_change_runtime(req->state, &next, gone, n_gone,
					req->err, sizeof(req->err));
	if (ret)
		goto put_deleted;
	pr_info("rule.del: %s", cidr);
	json_object_set(req->response, "deleted", deleted);
put_deleted:
	json_decref(deleted);
	return ret;
}

/* The file's rules deleted at runtime: [{"cidr", "name", "action"}]. */
static json_t *deleted_json(struct xrl_daemon_state *state)
{
	static const struct xrl_rule_match plain;
	const struct xrl_rule_spec *rule;
	json_t *list = json_array();
	char cidr[64];
	size_t i;

	for (i = 0; list && i < state->n_deleted; i++) {
		xrl_cidr_format(&state->deleted[i], cidr, sizeof(cidr));
		rule = xrl_policy_find_match(&state->file, &state->deleted[i],
					     &plain);
		json_array_append_new(list, json_pack("{s:s, s:s?, s:s?}",
			"cidr", cidr, "name", rule ? rule->name : NULL,
			"action", rule ? xrl_action_name(rule->action) : NULL));
	}
	return list;
}

int xrl_control_rule_list(struct xrl_request *req)
{
	const struct xrl_policy *policy = &req->state->policy;
	const struct xrl_field *f;
	json_t *rules = json_array();
	char word[32];
	size_t i;

	if (!rules)
		return -ENOMEM;
	for (i = 0; i < policy->n_rules; i++)
		json_array_append_new(rules, rule_json(req->state,
						       &policy->rules[i]));
	json_object_set_new(req->response, "rules", rules);
	json_object_set_new(req->response, "deleted",
			    deleted_json(req->state));
	json_object_set_new(req->response, "v4_prefix",
			    json_integer(policy->v4_prefix));
	json_object_set_new(req->response, "v6_prefix",
			    json_integer(policy->v6_prefix));
	/* The settings of the file's table it shows (a policy stands for
	 * its config: the table's offsets are of one). */
	for (i = 0; i < xrl_n_policy_fields; i++) {
		f = &xrl_policy_fields[i];
		if (!(f->flags & XRL_FIELD_LISTED))
			continue;
		xrl_field_format(f, policy, word, sizeof(word));
		json_object_set_new(req->response, f->key, json_string(word));
	}
	return 0;
}

/* The response to a reload of @path, applied or refused (@ret), with
 * what it changed (@report, taken over). */
static int reload_answer(struct xrl_request *req, const char *path, int ret,
			 json_t *report)
{
	char words[600];

	xrl_notify_status(req->state);
	if (ret) {
		json_decref(report);
		return ret;
	}
	pr_info("reloaded %s: %s", path,
		xrl_daemon_reload_words(req->state, words, sizeof(words)));
	xrl_control_reply_plan(req, report);
	json_object_set_new(req->response, "path", json_string(path));
	json_object_set_new(req->response, "rules",
			    json_integer(req->state->policy.n_rules));
	json_object_set_new(req->response, "runtime",
			    json_string(req->state->last_reload.runtime));
	return 0;
}

int xrl_control_reload(struct xrl_request *req)
{
	json_t *report = NULL;
	const char *path;
	int ret;

	ret = xrl_json_string(req->json, "path", false, &path, req->err,
				 sizeof(req->err));
	if (ret)
		return ret;
	if (path && !req->privileged) {
		snprintf(req->err, sizeof(req->err), "only root may reload "
			 "from a path; reload without one reads %s",
			 req->state->config_path ? req->state->config_path :
			 "the config file");
		return -EPERM;
	}
	/* Read off the loop: answered by xrl_control_reload_done. */
	if (req->state->load) {
		ret = xrl_daemon_reload_start(req->state, path, req->err,
					      sizeof(req->err));
		return ret ? ret : XRL_REQUEST_LATER;
	}
	ret = xrl_daemon_reload(req->state, path, &report, req->err,
				sizeof(req->err));
	return reload_answer(req, path ? path : req->state->config_path, ret,
			     report);
}

int xrl_control_reload_done(struct xrl_request *req)
{
	json_t *report = NULL;
	int ret = xrl_daemon_reload_finish(req->state, &report, req->err,
					   sizeof(req->err));

	return reload_answer(req, req->state->load->path, ret, report);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_overlay.c - rule.revert and check over the control socket: the
 * runtime changes (overlay.h) undone, and what a reload would do. Both
 * compute their policy with xrl_daemon_plan, as reload does (change.h),
 * so what check shows is what reload does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cidr.h"
#include "control_cmds.h"
#include "log.h"
#include "notify.h"
#include "overlay.h"
#include "pin.h"
#include "rule_json.h"

void xrl_control_reply_plan(struct xrl_request *req, json_t *report)
{
	const char *key;
	json_t *value;

	json_object_foreach(report, key, value)
		json_object_set(req->response, key, value);
	json_decref(report);
}

/*
 * The prefix that @which names: a rule's name (in force, or the file's
 * rule deleted at runtime), else a CIDR. 0 or -ENOENT with @req->err.
 */
static int revert_prefix(struct xrl_request *req, const char *which,
			 struct xrl_lpm_key *prefix)
{
	struct xrl_rule_spec *rule;

	rule = xrl_policy_find(&req->state->policy, which);
	if (!rule)
		rule = xrl_policy_find(&req->state->file, which);
	if (rule) {
		*prefix = rule->prefix;
		return 0;
	}
	if (!xrl_cidr_parse(which, prefix))
		return 0;
	snprintf(req->err, sizeof(req->err), "no rule is named or has the "
		 "CIDR \"%.64s\"", which);
	return -ENOENT;
}

/* "add 198.18.9.0/24": one overlay entry as the reply lists it. */
static void list_entry(struct xrl_request *req, json_t *list,
		       const char *what, const struct xrl_lpm_key *prefix)
{
	char cidr[64], line[96];

	(void)req;
	xrl_cidr_format(prefix, cidr, sizeof(cidr));
	snprintf(line, sizeof(line), "%s %s", what, cidr);
	json_array_append_new(list, json_string(line));
}

/*
 * Leaves out of @ov its entries for @prefix (all of them when NULL),
 * each named in @reverted. Returns how many went.
 */
static size_t drop_entries(struct xrl_request *req, struct xrl_overlay *ov,
			   const struct xrl_lpm_key *prefix, json_t *reverted)
{
	struct xrl_rule_spec *rule;
	size_t i, kept = 0, gone = 0;

	for (i = 0; i < ov->n_rules; i++) {
		rule = &ov->rules[i];
		if (prefix && !xrl_prefix_equal(&rule->prefix, prefix)) {
			ov->rules[kept++] = *rule;
			continue;
		}
		list_entry(req, reverted,
			   xrl_policy_find_match(&req->state->file,
						 &rule->prefix, &rule->match) ?
				   "change" : "add",
			   &rule->prefix);
		gone++;
	}
	ov->n_rules = kept;
	for (i = kept = 0; i < ov->n_deleted; i++) {
		if (prefix && !xrl_prefix_equal(&ov->deleted[i], prefix)) {
			ov->deleted[kept++] = ov->deleted[i];
			continue;
		}
		list_entry(req, reverted, "delete", &ov->deleted[i]);
		gone++;
	}
	ov->n_deleted = kept;
	return gone;
}

/* "rule" (a name or a CIDR) or "all": true, one of the two. */
static int revert_target(struct xrl_request *req, bool *all,
			 struct xrl_lpm_key *prefix)
{
	json_t *all_item = json_object_get(req->json, "all");
	const char *which;
	int ret;

	ret = xrl_json_string(req->json, "rule", false, &which, req->err,
			      sizeof(req->err));
	if (ret)
		return ret;
	if (all_item && !json_is_boolean(all_item)) {
		snprintf(req->err, sizeof(req->err),
			 "all: must be true or false");
		return -EINVAL;
	}
	*all = json_is_true(all_item);
	if (*all == !!which) {
		snprintf(req->err, sizeof(req->err), "name a rule (\"rule\": "
			 "NAME or CIDR) or \"all\": true, one of the two");
		return -EINVAL;
	}
	return *all ? 0 : revert_prefix(req, which, prefix);
}

/*
 * rule.revert: the runtime changes for a prefix (or all) leave the
 * overlay, and the policy file is applied with what is left of it.
 */
int xrl_control_rule_revert(struct xrl_request *req)
{
	struct xrl_reload_plan plan;
	struct xrl_lpm_key prefix;
	struct xrl_overlay ov;
	json_t *reverted, *report;
	char cidr[64];
	bool all;
	int ret;

	ret = revert_target(req, &all, &prefix);
	if (!ret)
		ret = xrl_daemon_check_in_force(req->state, req->err,
						sizeof(req->err));
	if (ret)
		return ret;
	reverted = json_array();
	if (!reverted || xrl_daemon_overlay(req->state, &ov)) {
		json_decref(reverted);
		snprintf(req->err, sizeof(req->err), "out of memory");
		return -ENOMEM;
	}
	if (!drop_entries(req, &ov, all ? NULL : &prefix, reverted)) {
		xrl_cidr_format(&prefix, cidr, sizeof(cidr));
		snprintf(req->err, sizeof(req->err), "no runtime change %s%s "
			 "(rule list marks them)", all ? "" : "for ",
			 all ? "to revert" : cidr);
		ret = -ENOENT;
		goto free_overlay;
	}
	ret = xrl_daemon_plan(req->state, NULL, NULL, 0, &ov, &plan,
			      req->err, sizeof(req->err));
	if (ret)
		goto free_overlay;
	report = xrl_daemon_plan_json(req->state, &plan);
	ret = xrl_daemon_apply_plan(req->state, &plan, true, req->err,
				    sizeof(req->err));
	xrl_notify_status(req->state);
	if (ret) {
		json_decref(report);
		goto free_overlay;
	}
	pr_info("rule.revert: %zu runtime changes reverted; %s applied: "
		"%zu rules", json_array_size(reverted),
		req->state->config_path, req->state->policy.n_rules);
	xrl_control_reply_plan(req, report);
	json_object_set(req->response, "reverted", reverted);
	json_object_set_new(req->response, "rules",
			    json_integer(req->state->policy.n_rules));
free_overlay:
	json_decref(reverted);
	xrl_overlay_free(&ov);
	return ret;
}

/*
 * check: what a reload of "path" would change, runtime changes included;
 * applies nothing. The daemon reads the file for root only (as reload);
 * anyone may send its "text" (named "path" in the messages).
 */
int xrl_control_check(struct xrl_request *req)
{
	json_t *text_item = json_object_get(req->json, "text");
	struct xrl_reload_plan plan;
	struct xrl_overlay ov;
	const char *path;
	json_t *report;
	int ret;

	ret = xrl_json_string(req->json, "path", true, &path, req->err,
			      sizeof(req->err));
	if (ret)
		return ret;
	if (text_item && !json_is_string(text_item)) {
		snprintf(req->err, sizeof(req->err), "text: must be a string");
		return -EINVAL;
	}
	if (!text_item && !req->privileged) {
		snprintf(req->err, sizeof(req->err), "only root may have the "
			 "daemon read a file; send its \"text\"");
		return -EPERM;
	}
	if (xrl_daemon_overlay(req->state, &ov)) {
		snprintf(req->err, sizeof(req->err), "out of memory");
		return -ENOMEM;
	}
	ret = xrl_daemon_plan(req->state, path,
			      text_item ? json_string_value(text_item) : NULL,
			      json_string_length(text_item), &ov, &plan,
			      req->err, sizeof(req->err));
	xrl_overlay_free(&ov);
	if (ret)
		return ret;
	report = xrl_daemon_plan_json(req->state, &plan);
	if (report) {
		json_object_set_new(report, "file_rules",
				    json_integer(plan.file.n_rules));
		if (req->state->lock)
			json_object_set_new(report, "pin_dir", json_string(
				req->state->lock->path));
	}
	xrl_reload_plan_free(&plan);
	if (!report) {
		snprintf(req->err, sizeof(req->err), "comparing with the "
			 "policy in force failed");
		return -EIO;
	}
	xrl_control_reply_plan(req, report);
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * change.c - the one way the daemon changes the policy in force
 * (change.h): every command, SIGHUP and the start go through change().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <bpf/bpf.h>
#include "budget.h"
#include "cidr.h"
#include "clock.h"
#include "change.h"
#include "file_load.h"
#include "datapath.h"
#include "log.h"
#include "manual_bans.h"
#include "overlay.h"
#include "pin.h"
#include "plan.h"
#include "policy_read.h"
#include "policy_map.h"
#include "policy_running.h"
#include "policy_write.h"
#include "rule.h"
#include "state_file.h"

/* A global rule needs Redis: the daemon's --redis or the config's. */
static int check_global(const struct xrl_daemon_state *state,
			const struct xrl_rule_spec *rule, char *why,
			size_t len)
{
	if (!rule->global || (state->budgets && state->budgets->global))
		return 0;
	if (rule->global_line)
		snprintf(why, len, "global: needs a Redis address (redis: in "
			 "the config, or --redis), line %d", rule->global_line);
	else
		snprintf(why, len, "global: needs a Redis address (redis: in "
			 "the config, or --redis)");
	return -EINVAL;
}

/* The sync engine follows the policy now in force; the data path already
 * enforces it (even shares), so a failure here is only logged. */
static void follow_budgets(struct xrl_daemon_state *state)
{
	int ret;

	if (!state->budgets)
		return;
	ret = xrl_budgets_set_policy(state->budgets, &state->policy,
				     xrl_clock_ns(CLOCK_MONOTONIC));
	if (ret)
		pr_warn("aggregate budgets: writing the shares: %s",
			strerror(-ret));
}

/* Every apply swaps in a new head: its id names the policy in force. */
static int head_map_id(const struct xrl_datapath *dp, __u32 *id)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(dp->settings_fd, &zero, id) ? -errno : 0;
}

int xrl_daemon_check_in_force(struct xrl_daemon_state *state, char *err,
			      size_t len)
{
	__u32 id;

	if (!state->dp || !state->head_map_id ||
	    head_map_id(state->dp, &id) || id == state->head_map_id)
		return 0;
	snprintf(err, len, "the policy in force was replaced outside the "
		 "daemon (xdp-ratelimit attach --policy?); reload to take "
		 "it over");
	return -ESTALE;
}

/*
 * When another policy was swapped in behind the daemon's back, ids are
 * carried from what is really in force (read back from the map), so its
 * sources keep their buckets through the reload that takes it over.
 */
static int resync_ids(struct xrl_daemon_state *state)
{
	struct xrl_policy in_force;
	char err[256];
	int ret;

	if (!xrl_daemon_check_in_force(state, err, sizeof(err)))
		return 0;
	ret = xrl_policy_read_ids(state->dp, &in_force);
	if (ret)
		return ret;
	pr_warn("%s", err);
	xrl_policy_free(&state->policy);
	state->policy = in_force;
	return 0;
}

/*
 * Ids, then the swap, under the pin directory's lock as the CLI takes
 * it: the id mark and the policy in force are shared with `attach`.
 */
static int commit(struct xrl_daemon_state *state, struct xrl_policy *next,
		  char *err, size_t len)
{
	int ret;

	if (state->lock)
		flock(state->lock->fd, LOCK_EX);
	if (state->dp)
		ret = xrl_policy_take_ids(state->dp, next, &state->policy, err,
					  len);
	else if ((ret = xrl_policy_carry_ids(next, &state->policy)))
		snprintf(err, len, "no free rule id: %s", strerror(-ret));
	if (ret)
		goto unlock;
	/* Bans by hand hold through every change (control_bans.c). */
	if (state->bans && state->bans->n)
		next->manual_bans = true;
	if (state->apply)
		ret = state->apply(state, next, err, len);
	else if (state->dp)
		ret = xrl_policy_apply(state->dp, next, err, len);
	else {
		snprintf(err, len, "no data path to apply the policy to");
		ret = -ENODEV;
	}
unlock:
	if (state->lock)
		flock(state->lock->fd, LOCK_UN);
	return ret;
}

/* Puts the policy of @state back in force after a change that was
 * applied but could not be saved. */
static void undo_change(struct xrl_daemon_state *state)
{
	struct xrl_policy back;
	char err[256];

	if (xrl_policy_copy(&back, &state->policy))
		return;
	if (commit(state, &back, err, sizeof(err)))
		pr_err("putting the policy back: %s", err);
	xrl_policy_free(&back);
}

/*
 * The whole of a policy change, common to every command and to SIGHUP.
 * A runtime change (@deleted set: the prefixes deleted at runtime after
 * it) is saved first to the overlay's temporary file and renamed into
 * place once applied: what cannot be saved is not applied, what is
 * applied is saved.
 */
static int change(struct xrl_daemon_state *state, struct xrl_policy *next,
		  struct xrl_lpm_key *deleted, size_t n_deleted, char *err,
		  size_t len)
{
	bool runtime = deleted != NULL, staged = false;
	char why[256], cidr[64];
	size_t i;
	int ret;

	ret = resync_ids(state);
	if (ret) {
		snprintf(err, len, "reading the policy in force: %s",
			 strerror(-ret));
		goto refuse;
	}
	if (!next->n_rules || next->rules[0].prefix.prefixlen != 0) {
		snprintf(err, len, "the policy has no default rule");
		ret = -EINVAL;
		goto refuse;
	}
	for (i = 0; i < next->n_rules; i++) {
		ret = xrl_rule_check(&next->rules[i], why, sizeof(why));
		if (!ret)
			ret = check_global(state, &next->rules[i], why,
					   sizeof(why));
		if (ret) {
			xrl_cidr_format(&next->rules[i].prefix, cidr,
					sizeof(cidr));
			snprintf(err, len, "rule %s (%s): %s",
				 next->rules[i].name, cidr, why);
			goto refuse;
		}
	}
	if (runtime && state->overlay_path) {
		ret = xrl_overlay_stage(state->overlay_path, next, deleted,
					n_deleted, err, len);
		if (ret)
			goto refuse;
		staged = true;
	}
	ret = commit(state, next, err, len);
	if (ret)
		goto refuse;
	if (staged) {
		ret = xrl_state_commit(state->overlay_path);
		if (ret) {
			staged = false;
			snprintf(err, len, "saving the runtime changes to %s: "
				 "%s", state->overlay_path, strerror(-ret));
			undo_change(state);
			goto refuse;
		}
	}
	if (runtime) {
		free(state->deleted);
		state->deleted = deleted;
		state->n_deleted = n_deleted;
		deleted = NULL;
	}

	xrl_policy_free(&state->policy);
	state->policy = *next;
	memset(next, 0, sizeof(*next));
	xrl_policy_blocklists_applied(&state->policy);
	state->n_changes++;
	follow_budgets(state);
	if (state->dp && head_map_id(state->dp, &state->head_map_id))
		state->head_map_id = 0;
	state->changed_at = time(NULL);
	if (state->changed)
		state->changed(state);
	ret = xrl_daemon_save_state(state);
	if (ret)
		pr_warn("keeping a copy of the policy in %s: %s",
			state->state_path, strerror(-ret));
	return 0;

refuse:
	if (staged)
		xrl_state_discard(state->overlay_path);
	free(deleted);
	xrl_policy_free(next);
	return ret;
}

void xrl_daemon_refused(struct xrl_daemon_state *state, const char *why)
{
	state->n_refused++;
	pr_warn("change refused, the policy in force stays: %s", why);
}

int xrl_daemon_change(struct xrl_daemon_state *state, struct xrl_policy *next,
		      char *err, size_t len)
{
	return change(state, next, NULL, 0, err, len);
}

int xrl_daemon_change_runtime(struct xrl_daemon_state *state,
			      struct xrl_policy *next,
			      struct xrl_lpm_key *deleted, size_t n_deleted,
			      char *err, size_t len)
{
	return change(state, next, deleted, n_deleted, err, len);
}

int xrl_daemon_overlay(const struct xrl_daemon_state *state,
		       struct xrl_overlay *ov)
{
	const struct xrl_policy *policy = &state->policy;
	size_t i;

	memset(ov, 0, sizeof(*ov));
	ov->rules = calloc(policy->n_rules ?: 1, sizeof(*ov->rules));
	ov->deleted = calloc(state->n_deleted ?: 1, sizeof(*ov->deleted));
	if (!ov->rules || !ov->deleted) {
		xrl_overlay_free(ov);
		return -ENOMEM;
	}
	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].runtime)
			ov->rules[ov->n_rules++] = policy->rules[i];
	if (state->n_deleted)
		memcpy(ov->deleted, state->deleted,
		       state->n_deleted * sizeof(*ov->deleted));
	ov->n_deleted = state->n_deleted;
	return 0;
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_interfaces(const struct xrl_config *config,
			    const struct xrl_daemon_state *state)
{
	size_t i;

	if (config->n_interfaces != state->started_with.n_interfaces)
		return false;
	for (i = 0; i < config->n_interfaces; i++)
		if (strcmp(config->interfaces[i],
			   state->started_with.interfaces[i]))
			return false;
	return true;
}

/*
 * redis:, sync_interval:, metrics: and interfaces: are read at start
 * only: a file that changes one is refused whole (nothing half-applied),
 * naming it.
 */
static int check_restart_needed(const struct xrl_daemon_state *state,
				const char *path,
				const struct xrl_config *config, char *err,
				size_t len)
{
	const char *field = NULL;

	if (!same_text(config->redis, state->started_with.redis))
		field = "redis";
	else if (config->sync_interval_ms !=
		 state->started_with.sync_interval_ms)
		field = "sync_interval";
	else if (!same_text(config->metrics, state->started_with.metrics))
		field = "metrics";
	else if (!same_interfaces(config, state))
		field = "interfaces";
	if (!field)
		return 0;
	snprintf(err, len, "%s: %s: changed since the daemon started; "
		 "restart xdp-ratelimitd to apply it (nothing was applied)",
		 path, field);
	return -EBUSY;
}

/* A FIFO or a device would block the daemon (or its reader thread), or
 * worse. */
static int check_regular(const char *path, char *err, size_t len)
{
	struct stat st;
	int ret;

	if (stat(path, &st)) {
		ret = -errno;
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s: not a regular file", path);
		return -EINVAL;
	}
	return 0;
}

/* The file a reload reads: @path, or the config file. */
static const char *reload_path(const struct xrl_daemon_state *state,
			       const char *path, char *err, size_t len)
{
	if (!path)
		path = state->config_path;
	if (!path)
		snprintf(err, len, "no policy file to reload");
	return path;
}

void xrl_reload_plan_free(struct xrl_reload_plan *plan)
{
	xrl_config_free(&plan->config);
	xrl_policy_free(&plan->file);
	free(plan->runtime.deleted);
	memset(plan, 0, sizeof(*plan));
}

/* @plan, its config read, checked as a reload checks it, with the
 * overlay @ov on top; freed on error. */
static int plan_config(const struct xrl_daemon_state *state,
		       const struct xrl_overlay *ov,
		       struct xrl_reload_plan *plan, char *err, size_t len)
{
	int ret;

	ret = check_restart_needed(state, plan->path, &plan->config, err, len);
	if (!ret && (ret = xrl_policy_copy(&plan->file, &plan->config.policy)))
		snprintf(err, len, "out of memory");
	if (!ret)
		ret = xrl_overlay_merge(&plan->config.policy, ov, &plan->runtime,
					err, len);
	if (ret)
		xrl_reload_plan_free(plan);
	return ret;
}

int xrl_daemon_plan(const struct xrl_daemon_state *state, const char *path,
		    const char *text, size_t text_len,
		    const struct xrl_overlay *ov, struct xrl_reload_plan *plan,
		    char *err, size_t len)
{
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->path = reload_path(state, path, err, len);
	if (!plan->path)
		return -ENOENT;
	if (text)
		ret = xrl_config_load_string(text, text_len, plan->path,
					     &plan->config, err, len);
	else
		ret = check_regular(plan->path, err, len) ?:
		      xrl_config_load_file(plan->path, &plan->config, err, len);
	if (ret)
		return ret;
	return plan_config(state, ov, plan, err, len);
}

json_t *xrl_daemon_plan_json(const struct xrl_daemon_state *state,
			     const struct xrl_reload_plan *plan)
{
	json_t *report;
	int ret;

	if (!state->dp)
		return NULL;
	report = xrl_plan_json(state->dp, &plan->config.policy, &ret);
	if (!report)
		return NULL;
	json_object_set_new(report, "path", json_string(plan->path));
	json_object_set_new(report, "rules",
			    json_integer(plan->config.policy.n_rules));
	json_object_set_new(report, "runtime",
			    json_string(plan->runtime.summary));
	return report;
}

int xrl_daemon_apply_plan(struct xrl_daemon_state *state,
			  struct xrl_reload_plan *plan, bool save_overlay,
			  char *err, size_t len)
{
	struct xrl_lpm_key *kept = plan->runtime.deleted;
	int ret;

	plan->runtime.deleted = NULL;
	if (save_overlay || plan->runtime.n_dropped)
		ret = xrl_daemon_change_runtime(state, &plan->config.policy,
						kept, plan->runtime.n_deleted,
						err, len);
	else {
		free(kept);
		ret = xrl_daemon_change(state, &plan->config.policy, err,
					len);
	}
	if (!ret) {
		xrl_policy_free(&state->file);
		state->file = plan->file;
		memset(&plan->file, 0, sizeof(plan->file));
	}
	xrl_reload_plan_free(plan);
	return ret;
}

/* Puts @plan (its config read) in force with the runtime changes on
 * top, what it changed in *@report when asked. */
static int reload_plan(struct xrl_daemon_state *state,
		       struct xrl_reload_plan *plan, json_t **report,
		       char *err, size_t len)
{
	struct xrl_overlay ov;
	json_t *changes = NULL;
	int ret;

	ret = xrl_daemon_overlay(state, &ov);
	if (ret) {
		snprintf(err, len, "out of memory");
		xrl_reload_plan_free(plan);
		return ret;
	}
	ret = plan_config(state, &ov, plan, err, len);
	xrl_overlay_free(&ov);
	if (ret)
		return ret;
	snprintf(state->last_reload.runtime, sizeof(state->last_reload.runtime),
		 "%s", plan->runtime.summary);
	/* Before the swap: what it changes against what is in force. */
	if (report)
		changes = xrl_daemon_plan_json(state, plan);
	ret = xrl_daemon_apply_plan(state, plan, false, err, len);
	if (ret)
		json_decref(changes);
	else if (report)
		*report = changes;
	return ret;
}

/* The outcome of a reload, kept for status and /metrics; returns @ret. */
static int record_reload(struct xrl_daemon_state *state, int ret,
			 const char *err)
{
	struct xrl_reload_result *last = &state->last_reload;

	last->at = time(NULL);
	last->ok = !ret;
	snprintf(last->error, sizeof(last->error), "%s", ret ? err : "");
	if (ret)
		last->runtime[0] = '\0';
	/* After the result is known: a change already called it once. */
	if (state->changed)
		state->changed(state);
	return ret;
}

int xrl_daemon_reload(struct xrl_daemon_state *state, const char *path,
		      json_t **report, char *err, size_t len)
{
	struct xrl_reload_plan plan = {};
	int ret;

	state->last_reload.runtime[0] = '\0';
	plan.path = reload_path(state, path, err, len);
	ret = plan.path ? check_regular(plan.path, err, len) : -ENOENT;
	if (!ret)
		ret = xrl_config_load_file(plan.path, &plan.config, err, len);
	if (!ret)
		ret = reload_plan(state, &plan, report, err, len);
	return record_reload(state, ret, err);
}

int xrl_daemon_reload_start(struct xrl_daemon_state *state, const char *path,
			    char *err, size_t len)
{
	int ret;

	if (state->load->running) {
		snprintf(err, len, "a reload of %s is in progress; ask again "
			 "when it ends", state->load->path);
		return -EBUSY;
	}
	state->last_reload.runtime[0] = '\0';
	path = reload_path(state, path, err, len);
	ret = path ? check_regular(path, err, len) : -ENOENT;
	if (ret)
		return record_reload(state, ret, err);
	ret = xrl_file_load_start(state->load, path);
	if (ret) {
		snprintf(err, len, "%s: reading it: %s", path, strerror(-ret));
		return record_reload(state, ret, err);
	}
	return 0;
}

int xrl_daemon_reload_finish(struct xrl_daemon_state *state, json_t **report,
			     char *err, size_t len)
{
	struct xrl_reload_plan plan = { .path = state->load->path };
	int ret;

	ret = xrl_file_load_finish(state->load, &plan.config, err, len);
	if (!ret)
		ret = reload_plan(state, &plan, report, err, len);
	return record_reload(state, ret, err);
}

const char *xrl_daemon_reload_words(const struct xrl_daemon_state *state,
				    char *buf, size_t len)
{
	const char *runtime = state->last_reload.runtime;

	snprintf(buf, len, "%zu rules%s%s%s", state->policy.n_rules,
		 runtime[0] ? " (" : "", runtime, runtime[0] ? ")" : "");
	return buf;
}

int xrl_daemon_save_state(struct xrl_daemon_state *state)
{
	FILE *out;
	int fd, ret = 0;

	if (!state->state_path)
		return 0;
	fd = xrl_state_create_tmp(state->state_path);
	if (fd < 0)
		return fd;
	out = fdopen(fd, "w");
	if (!out) {
		ret = -errno;
		close(fd);
		goto discard;
	}
	ret = xrl_policy_write_yaml(out, &state->policy);
	if (!ret && (fflush(out) || fsync(fd)))
		ret = -errno;
	if (fclose(out) && !ret)
		ret = -errno;
	if (!ret)
		ret = xrl_state_commit(state->state_path);
discard:
	if (ret)
		xrl_state_discard(state->state_path);
	return ret;
}

int xrl_daemon_adopt_state(struct xrl_daemon_state *state, char *err,
			   size_t len)
{
	struct xrl_policy in_force;
	struct xrl_config saved;
	size_t size;
	char *text;
	int ret;

	if (!state->state_path) {
		snprintf(err, len, "no state file");
		return -ENOENT;
	}
	ret = xrl_state_read(state->state_path, &text, &size, err, len);
	if (ret == -ENOENT)
		snprintf(err, len, "no state file");
	if (ret)
		return ret;
	ret = xrl_config_load_string(text, size, state->state_path, &saved,
				     err, len);
	free(text);
	if (ret)
		return ret;
	ret = xrl_policy_read_ids(state->dp, &in_force);
	if (ret) {
		snprintf(err, len, "reading the policy in force: %s",
			 strerror(-ret));
		goto free_saved;
	}
	ret = xrl_policy_carry_ids(&saved.policy, &in_force);
	if (!ret)
		ret = xrl_policy_matches_map(state->dp, &saved.policy);
	xrl_policy_free(&in_force);
	if (ret) {
		snprintf(err, len, "%s is not the policy in force",
			 state->state_path);
		goto free_saved;
	}
	xrl_policy_free(&state->policy);
	state->policy = saved.policy;
	memset(&saved.policy, 0, sizeof(saved.policy));
	if (head_map_id(state->dp, &state->head_map_id))
		state->head_map_id = 0;
free_saved:
	xrl_config_free(&saved);
	return ret;
}

void xrl_daemon_state_free(struct xrl_daemon_state *state)
{
	xrl_policy_free(&state->policy);
	xrl_policy_free(&state->file);
	free(state->deleted);
	state->deleted = NULL;
}


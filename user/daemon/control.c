// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control.c - the daemon's control protocol (docs/PROTOCOL.md) and the
 * one way it changes the running policy (xrl_daemon_change).
 *
 * Requests are parsed with jansson; a request is refused whole when any
 * field is unknown, missing or wrong, before anything is built. This file
 * must never crash or leak on any input: tests/fuzz/fuzz_control.c feeds
 * it arbitrary lines.
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
#include "control.h"
#include "control_cmds.h"
#include "fields.h"
#include "levels.h"
#include "manual_bans.h"
#include "datapath.h"
#include "log.h"
#include "match.h"
#include "notify.h"
#include "overlay.h"
#include "pin.h"
#include "policy.h"
#include "policy_read.h"
#include "policy_map.h"
#include "policy_running.h"
#include "policy_write.h"
#include "rule.h"
#include "stats.h"
#include "units.h"

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
		ret = xrl_overlay_commit(state->overlay_path);
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
		xrl_overlay_discard(state->overlay_path);
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

int xrl_daemon_merge_runtime(struct xrl_daemon_state *state,
			     struct xrl_policy *policy, char *err, size_t len)
{
	struct xrl_rule_spec *rules;
	size_t i, n = 0;
	int ret;

	rules = calloc(state->policy.n_rules ?: 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (i = 0; i < state->policy.n_rules; i++)
		if (state->policy.rules[i].runtime)
			rules[n++] = state->policy.rules[i];
	ret = xrl_overlay_merge(policy, rules, n, state->deleted,
				state->n_deleted, err, len);
	free(rules);
	return ret;
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
 * redis:, sync_interval: and interfaces: are read at start only: a file
 * that changes one is refused whole (nothing half-applied), naming it.
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
	else if (!same_interfaces(config, state))
		field = "interfaces";
	if (!field)
		return 0;
	snprintf(err, len, "%s: %s: changed since the daemon started; "
		 "restart xdp-ratelimitd to apply it (nothing was applied)",
		 path, field);
	return -EBUSY;
}

static int reload_file(struct xrl_daemon_state *state, const char *path,
		       char *err, size_t len)
{
	struct xrl_config config;
	struct stat st;
	int ret;

	if (!path)
		path = state->config_path;
	if (!path) {
		snprintf(err, len, "no policy file to reload");
		return -ENOENT;
	}
	/* A FIFO or a device would block the daemon, or worse. */
	if (stat(path, &st)) {
		ret = -errno;
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s: not a regular file", path);
		return -EINVAL;
	}
	ret = xrl_config_load_file(path, &config, err, len);
	if (ret)
		return ret;
	ret = check_restart_needed(state, path, &config, err, len);
	if (!ret)
		ret = xrl_daemon_merge_runtime(state, &config.policy, err, len);
	if (!ret)
		ret = xrl_daemon_change(state, &config.policy, err, len);
	xrl_config_free(&config);
	return ret;
}

int xrl_daemon_reload(struct xrl_daemon_state *state, const char *path,
		      char *err, size_t len)
{
	struct xrl_reload_result *last = &state->last_reload;
	int ret = reload_file(state, path, err, len);

	last->at = time(NULL);
	last->ok = !ret;
	snprintf(last->error, sizeof(last->error), "%s", ret ? err : "");
	/* After the result is known: a change already called it once. */
	if (state->changed)
		state->changed(state);
	return ret;
}

int xrl_daemon_save_state(struct xrl_daemon_state *state)
{
	char tmp[PATH_MAX];
	FILE *out;
	int fd, ret = 0;

	if (!state->state_path)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", state->state_path) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	out = fdopen(fd, "w");
	if (!out) {
		ret = -errno;
		close(fd);
		goto unlink_tmp;
	}
	ret = xrl_policy_write_yaml(out, &state->policy);
	if (fclose(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, state->state_path))
		ret = -errno;
unlink_tmp:
	if (ret)
		unlink(tmp);
	return ret;
}

int xrl_daemon_adopt_state(struct xrl_daemon_state *state, char *err,
			   size_t len)
{
	struct xrl_policy in_force;
	struct xrl_config saved;
	int ret;

	if (!state->state_path || access(state->state_path, F_OK)) {
		snprintf(err, len, "no state file");
		return -ENOENT;
	}
	ret = xrl_config_load_file(state->state_path, &saved, err, len);
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
	free(state->deleted);
	state->deleted = NULL;
}

/*
 * Requests.
 */

int xrl_control_quantity(json_t *req, const char *field, uint64_t *value,
			 char *err, size_t len)
{
	json_t *item = json_object_get(req, field);
	json_int_t number;
	int ret;

	*value = 0;
	if (!item || json_is_null(item))
		return 0;
	if (json_is_integer(item)) {
		number = json_integer_value(item);
		if (number < 0) {
			snprintf(err, len, "%s: %lld is negative", field,
				 (long long)number);
			return -EINVAL;
		}
		*value = number;
		return 0;
	}
	if (json_is_string(item)) {
		ret = xrl_parse_quantity(json_string_value(item), value);
		if (ret)
			snprintf(err, len, "%s: \"%.64s\" is not a quantity "
				 "(like 1500, 10k, 2.5M, 1G)", field,
				 json_string_value(item));
		return ret ? -EINVAL : 0;
	}
	snprintf(err, len, "%s: must be a number or a quantity like \"10k\"",
		 field);
	return -EINVAL;
}

int xrl_control_string(json_t *req, const char *field, bool required,
		       const char **value, char *err, size_t len)
{
	json_t *item = json_object_get(req, field);

	*value = NULL;
	if (!item) {
		if (required)
			snprintf(err, len, "%s: missing", field);
		return required ? -EINVAL : 0;
	}
	if (!json_is_string(item)) {
		snprintf(err, len, "%s: must be a string", field);
		return -EINVAL;
	}
	*value = json_string_value(item);
	return 0;
}

static json_t *counter_json(const struct xrl_counter *counter)
{
	return json_pack("{s:I, s:I}", "packets", (json_int_t)counter->packets,
			 "bytes", (json_int_t)counter->bytes);
}

static void ports_json(json_t *obj, const char *key, __u16 lo, __u16 hi)
{
	char text[16];

	snprintf(text, sizeof(text), lo == hi ? "%u" : "%u-%u", lo, hi);
	json_object_set_new(obj, key, json_string(text));
}

/* An L4 rule's keys as rule.add takes them, and "match" to show. */
void xrl_control_match_json(json_t *obj, const struct xrl_rule_match *m)
{
	char text[64];

	json_object_set_new(obj, "proto",
			    json_string(xrl_match_proto_name(m->proto)));
	if (m->flags & XRL_MATCH_SPORT)
		ports_json(obj, "sport", m->sport_lo, m->sport_hi);
	if (m->flags & XRL_MATCH_DPORT)
		ports_json(obj, "dport", m->dport_lo, m->dport_hi);
	if (m->flags & XRL_MATCH_SYN)
		json_object_set_new(obj, "tcp_flags", json_string("syn"));
	xrl_match_format(m, text, sizeof(text));
	json_object_set_new(obj, "match", json_string(text));
}

/* The fields of a rule, as rule.list and rule.add show them. */
json_t *xrl_control_rule_json(const struct xrl_daemon_state *state,
			      const struct xrl_rule_spec *rule)
{
	struct xrl_rule_counters counters;
	char cidr[64];
	json_t *obj;

	xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
	obj = json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)rule->id,
			"name", rule->name, "cidr", cidr, "action",
			xrl_action_name(rule->action));
	if (!obj)
		return NULL;
	if (rule->pps) {
		json_object_set_new(obj, "pps", json_integer(rule->pps));
		json_object_set_new(obj, "burst", json_integer(rule->burst));
	}
	if (rule->bps) {
		json_object_set_new(obj, "bps", json_integer(rule->bps));
		json_object_set_new(obj, "burst_bytes",
				    json_integer(rule->burst_bytes));
	}
	json_object_set_new(obj, "scope",
			    json_string(xrl_scope_name(rule->scope)));
	xrl_control_strategy_json(obj, rule);
	if (!xrl_match_is_plain(&rule->match))
		xrl_control_match_json(obj, &rule->match);
	json_object_set_new(obj, "source",
			    json_string(rule->runtime ? "runtime" : "file"));
	xrl_control_ban_json(obj, rule);
	xrl_control_levels_json(obj, rule);
	if (rule->global) {
		json_object_set_new(obj, "global", json_true());
		json_object_set_new(obj, "degraded", json_boolean(
			xrl_budgets_rule_degraded(state->budgets, rule->id)));
	}
	if (state->dp && !xrl_rule_stats_read(state->dp, rule->id, &counters)) {
		json_object_set_new(obj, "passed", counter_json(
			&counters.outcome[XRL_RULE_PASSED]));
		json_object_set_new(obj, "dropped", counter_json(
			&counters.outcome[XRL_RULE_DROPPED]));
		if (rule->ban.ns)
			json_object_set_new(obj, "banned", counter_json(
				&counters.outcome[XRL_RULE_BANNED]));
	}
	return obj;
}

int xrl_control_cidr(const char *text, struct xrl_lpm_key *key, char *err,
		     size_t len)
{
	char ipv4[INET_ADDRSTRLEN + 4];
	int ret = xrl_cidr_parse(text, key);

	if (!ret && xrl_cidr_names_ipv4(text, key, ipv4, sizeof(ipv4))) {
		snprintf(err, len, "cidr: \"%.64s\" is an IPv4 prefix written "
			 "as IPv6, which matches no IPv4 source: write %s",
			 text, ipv4);
		return -EINVAL;
	}
	if (ret == -EINVAL)
		snprintf(err, len, "cidr: \"%.64s\" is not an IPv4 or IPv6 "
			 "address", text);
	else if (ret == -ERANGE)
		snprintf(err, len, "cidr: \"%.64s\" has a bad prefix length",
			 text);
	else if (ret == -EADDRNOTAVAIL)
		snprintf(err, len, "cidr: \"%.64s\" has host bits set", text);
	else if (ret)
		snprintf(err, len, "cidr: \"%.64s\": %s", text, strerror(-ret));
	return ret ? -EINVAL : 0;
}

/* "scope": "source" | "aggregate", "global": true | false */
static int parse_scope(json_t *req, struct xrl_rule_spec *rule, char *err,
		       size_t len)
{
	json_t *global = json_object_get(req, "global");
	const char *scope;
	int ret;

	ret = xrl_control_string(req, "scope", false, &scope, err, len);
	if (ret)
		return ret;
	if (scope && xrl_scope_parse(scope, &rule->scope)) {
		snprintf(err, len, "scope: unknown scope \"%.32s\" (source, "
			 "aggregate)", scope);
		return -EINVAL;
	}
	if (global && !json_is_boolean(global)) {
		snprintf(err, len, "global: must be true or false");
		return -EINVAL;
	}
	rule->global = global && json_is_true(global);
	return 0;
}

/* "interval": "100ms", "window": "1s": durations as text. */
static int parse_duration(json_t *req, const char *field, uint64_t *ns,
			  char *err, size_t len)
{
	const char *text;
	int ret;

	*ns = 0;
	ret = xrl_control_string(req, field, false, &text, err, len);
	if (ret || !text)
		return ret;
	ret = xrl_duration_ns_parse(text, UINT64_MAX, ns);
	if (ret == -EINVAL)
		snprintf(err, len, "%s: \"%.32s\" is not a duration (like "
			 "100ms, 2s, 1m, 500us)", field, text);
	else if (ret || !*ns)
		snprintf(err, len, "%s: \"%.32s\" is out of range", field,
			 text);
	return ret || !*ns ? -EINVAL : 0;
}

/* "strategy" and its values (docs/PROTOCOL.md); xrl_rule_check() judges
 * what fits together. */
static int parse_strategy(json_t *req, struct xrl_rule_spec *rule, char *err,
			  size_t len)
{
	struct xrl_strategy_spec *s = &rule->strategy;
	const char *name;
	int ret;

	ret = xrl_control_string(req, "strategy", false, &name, err, len);
	if (ret)
		return ret;
	if (name && xrl_strategy_parse(name, &s->kind)) {
		snprintf(err, len, "strategy: unknown strategy \"%.32s\" "
			 "(token_bucket, leaky_bucket, sliding_window)", name);
		return -EINVAL;
	}
	ret = parse_duration(req, "interval", &s->interval_ns, err, len);
	if (!ret)
		ret = parse_duration(req, "window", &s->window_ns, err, len);
	if (!ret)
		ret = xrl_control_quantity(req, "limit", &s->limit, err, len);
	return ret;
}

/* The strategy's fields of a rule's JSON (rule list, the overlay, which
 * xrl_control_parse_rule() reads back). */
void xrl_control_strategy_json(json_t *obj, const struct xrl_rule_spec *rule)
{
	const struct xrl_strategy_spec *s = &rule->strategy;
	char text[32];

	json_object_set_new(obj, "strategy",
			    json_string(xrl_strategy_name(s->kind)));
	if (s->interval_ns) {
		xrl_duration_ns_format(s->interval_ns, text, sizeof(text));
		json_object_set_new(obj, "interval", json_string(text));
	}
	if (s->limit)
		json_object_set_new(obj, "limit", json_integer(s->limit));
	if (s->window_ns) {
		xrl_duration_ns_format(s->window_ns, text, sizeof(text));
		json_object_set_new(obj, "window", json_string(text));
	}
}

static int control_ports(const char *field, const char *text, __u16 *lo,
			 __u16 *hi, char *err, size_t len)
{
	int ret = xrl_match_ports_parse(text, lo, hi);

	if (ret == -ERANGE)
		snprintf(err, len, "%s: \"%.32s\": range low end above its "
			 "high end", field, text);
	else if (ret)
		snprintf(err, len, "%s: \"%.32s\" is not a port 0-65535 or a "
			 "range LOW-HIGH", field, text);
	return ret ? -EINVAL : 0;
}

/* "proto", "sport", "dport", "tcp_flags": as the policy file takes them,
 * as strings ("53", "1024-65535"). */
static int parse_match(json_t *req, struct xrl_rule_match *m, char *err,
		       size_t len)
{
	const char *proto, *sport, *dport, *flags;
	int ret;

	ret = xrl_control_string(req, "proto", false, &proto, err, len);
	if (!ret)
		ret = xrl_control_string(req, "sport", false, &sport, err, len);
	if (!ret)
		ret = xrl_control_string(req, "dport", false, &dport, err, len);
	if (!ret)
		ret = xrl_control_string(req, "tcp_flags", false, &flags, err,
					 len);
	if (ret)
		return ret;
	if (proto && xrl_match_proto_parse(proto, &m->proto)) {
		snprintf(err, len, "proto: unknown protocol \"%.32s\" (tcp, "
			 "udp, icmp, icmpv6)", proto);
		return -EINVAL;
	}
	if (sport) {
		m->flags |= XRL_MATCH_SPORT;
		ret = control_ports("sport", sport, &m->sport_lo, &m->sport_hi,
				    err, len);
	}
	if (!ret && dport) {
		m->flags |= XRL_MATCH_DPORT;
		ret = control_ports("dport", dport, &m->dport_lo, &m->dport_hi,
				    err, len);
	}
	if (ret)
		return ret;
	if (flags && xrl_match_flags_parse(flags, &m->flags)) {
		snprintf(err, len, "tcp_flags: unknown flags \"%.32s\" (syn)",
			 flags);
		return -EINVAL;
	}
	return 0;
}

int xrl_control_parse_rule(json_t *req, struct xrl_rule_spec *rule, char *err,
			   size_t len)
{
	const char *cidr, *name, *action;
	int ret;

	memset(rule, 0, sizeof(*rule));
	ret = xrl_control_string(req, "cidr", true, &cidr, err, len);
	if (!ret)
		ret = xrl_control_cidr(cidr, &rule->prefix, err, len);
	if (!ret)
		ret = xrl_control_string(req, "name", false, &name, err, len);
	if (!ret && name)
		ret = xrl_rule_name_check(name, &rule->prefix, err, len);
	if (ret)
		return ret;
	ret = parse_match(req, &rule->match, err, len);
	if (ret)
		return ret;
	if (name)
		snprintf(rule->name, sizeof(rule->name), "%s", name);
	else if (!xrl_match_is_plain(&rule->match))
		xrl_rule_default_name(rule, rule->name, sizeof(rule->name));
	else if (rule->prefix.prefixlen == 0)
		snprintf(rule->name, sizeof(rule->name), "%s",
			 XRL_DEFAULT_RULE_NAME);
	else
		xrl_cidr_format(&rule->prefix, rule->name, sizeof(rule->name));

	ret = xrl_control_string(req, "action", false, &action, err, len);
	if (ret)
		return ret;
	rule->action = XRL_ACTION_LIMIT;
	if (action && xrl_action_parse(action, &rule->action)) {
		snprintf(err, len, "action: unknown action \"%.32s\" (limit, "
			 "monitor, allow, deny)", action);
		return -EINVAL;
	}
	ret = xrl_control_quantity(req, "pps", &rule->pps, err, len);
	if (!ret)
		ret = xrl_control_quantity(req, "burst", &rule->burst, err,
					   len);
	if (!ret)
		ret = xrl_control_quantity(req, "bps", &rule->bps, err, len);
	if (!ret)
		ret = xrl_control_quantity(req, "burst_bytes",
					   &rule->burst_bytes, err, len);
	if (!ret)
		ret = parse_scope(req, rule, err, len);
	if (!ret)
		ret = parse_strategy(req, rule, err, len);
	if (!ret)
		ret = xrl_control_parse_ban(req, rule, err, len);
	if (!ret)
		ret = xrl_control_parse_levels(req, rule, err, len);
	if (!ret)
		ret = xrl_rule_check(rule, err, len);
	return ret;
}

/* The rule of @prefix with L4 match @match (a rule is both). */
static struct xrl_rule_spec *find_prefix(struct xrl_policy *policy,
					 const struct xrl_lpm_key *prefix,
					 const struct xrl_rule_match *match)
{
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].prefix.prefixlen == prefix->prefixlen &&
		    !memcmp(policy->rules[i].prefix.addr, prefix->addr,
			    sizeof(prefix->addr)) &&
		    !xrl_match_compare(&policy->rules[i].match, match))
			return &policy->rules[i];
	return NULL;
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
static int cmd_rule_add(struct xrl_request *req)
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
	ret = xrl_control_parse_rule(req->json, &rule, req->err,
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
	old = find_prefix(&next, &rule.prefix, &rule.match);
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
	ret = change(req->state, &next, deleted, n_deleted, req->err,
		     sizeof(req->err));
	if (ret)
		return ret;
	pr_info("rule.add: %s (%s) %s", cidr, rule.name,
		xrl_action_name(rule.action));
	old = find_prefix(&req->state->policy, &rule.prefix,
			  &rule.match);
	json_object_set_new(req->response, "rule",
			    xrl_control_rule_json(req->state, old));
	return 0;

free_next:
	xrl_policy_free(&next);
	return ret;
no_memory:
	snprintf(req->err, sizeof(req->err), "out of memory");
	return ret;
}

static int cmd_rule_del(struct xrl_request *req)
{
	struct xrl_rule_spec *rule;
	struct xrl_lpm_key *gone, key;
	struct xrl_policy next;
	const char *which;
	size_t n_gone;
	json_t *deleted;
	char cidr[64];
	int ret;

	ret = xrl_control_string(req->json, "rule", true, &which, req->err,
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
		rule = find_prefix(&req->state->policy, &key,
				   &(struct xrl_rule_match){ 0 });
	if (!rule) {
		snprintf(req->err, sizeof(req->err), "no rule is named or has "
			 "the CIDR \"%.64s\"", which);
		return -ENOENT;
	}
	/* Runtime deletions are kept by prefix (overlay.h), which names a
	 * plain rule: an L4 rule of the file is removed in the file. */
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
	deleted = xrl_control_rule_json(req->state, rule);
	xrl_cidr_format(&rule->prefix, cidr, sizeof(cidr));
	ret = xrl_overlay_deleted_with(req->state->deleted,
				       req->state->n_deleted,
				       xrl_match_is_plain(&rule->match) ?
				       &rule->prefix : &(struct xrl_lpm_key){ 0 },
				       xrl_match_is_plain(&rule->match),
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
	ret = change(req->state, &next, gone, n_gone, req->err,
		     sizeof(req->err));
	if (ret)
		goto put_deleted;
	pr_info("rule.del: %s", cidr);
	json_object_set(req->response, "deleted", deleted);
put_deleted:
	json_decref(deleted);
	return ret;
}

static int cmd_rule_list(struct xrl_request *req)
{
	const struct xrl_policy *policy = &req->state->policy;
	json_t *rules = json_array();
	size_t i;

	if (!rules)
		return -ENOMEM;
	for (i = 0; i < policy->n_rules; i++)
		json_array_append_new(rules, xrl_control_rule_json(
			req->state, &policy->rules[i]));
	json_object_set_new(req->response, "rules", rules);
	json_object_set_new(req->response, "v4_prefix",
			    json_integer(policy->v4_prefix));
	json_object_set_new(req->response, "v6_prefix",
			    json_integer(policy->v6_prefix));
	json_object_set_new(req->response, "malformed", json_string(
		policy->malformed == XRL_MALFORMED_DROP ? "drop" : "pass"));
	json_object_set_new(req->response, "vlan_overflow", json_string(
		policy->vlan_overflow == XRL_VLAN_OVERFLOW_PASS ? "pass" :
								  "drop"));
	json_object_set_new(req->response, "ipv4_mapped", json_string(
		policy->ipv4_mapped == XRL_IPV4_MAPPED_IPV6 ? "ipv6" : "drop"));
	json_object_set_new(req->response, "unjudged_fragments", json_string(
		policy->unjudged_fragments == XRL_UNJUDGED_FRAGMENTS_PLAIN ?
		"plain" : "drop"));
	json_object_set_new(req->response, "header_overflow", json_string(
		policy->header_overflow == XRL_HEADER_OVERFLOW_PLAIN ?
		"plain" : "drop"));
	return 0;
}

static int cmd_reload(struct xrl_request *req)
{
	const char *path;
	int ret;

	ret = xrl_control_string(req->json, "path", false, &path, req->err,
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
	ret = xrl_daemon_reload(req->state, path, req->err, sizeof(req->err));
	xrl_notify_status(req->state);
	if (ret)
		return ret;
	path = path ? path : req->state->config_path;
	pr_info("reloaded %s: %zu rules", path, req->state->policy.n_rules);
	json_object_set_new(req->response, "path", json_string(path));
	json_object_set_new(req->response, "rules",
			    json_integer(req->state->policy.n_rules));
	return 0;
}

static int cmd_version(struct xrl_request *req)
{
	json_object_set_new(req->response, "version", json_string(XRL_VERSION));
	json_object_set_new(req->response, "protocol",
			    json_integer(XRL_PROTOCOL_VERSION));
	return 0;
}

static const char *const rule_add_fields[] = {
	"cidr", "name", "action", "pps", "burst", "bps", "burst_bytes",
	"scope", "global", "replace", "strategy", "interval", "limit",
	"window", "ban", "ban_after", "ban_max", "proto", "sport", "dport",
	"tcp_flags", "levels", NULL,
};
static const char *const rule_del_fields[] = { "rule", NULL };
static const char *const reload_fields[] = { "path", NULL };
static const char *const top_fields[] = { "n", NULL };
static const char *const events_fields[] = { "n", "since", NULL };
static const char *const no_fields[] = { NULL };
static const char *const ban_fields[] = { "cidr", "for", NULL };
static const char *const unban_fields[] = { "cidr", NULL };

static const struct xrl_control_command commands[] = {
	{ "rule.add", rule_add_fields, cmd_rule_add, true },
	{ "rule.del", rule_del_fields, cmd_rule_del, true },
	{ "rule.list", no_fields, cmd_rule_list, false },
	{ "ban", ban_fields, xrl_control_ban, true },
	{ "unban", unban_fields, xrl_control_unban, true },
	{ "bans", no_fields, xrl_control_bans, false },
	{ "reload", reload_fields, cmd_reload, true },
	{ "stats", no_fields, xrl_control_stats, false },
	{ "status", no_fields, xrl_control_status, false },
	{ "top", top_fields, xrl_control_top, false },
	{ "events", events_fields, xrl_control_events, false },
	{ "version", no_fields, cmd_version, false },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct xrl_control_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int check_fields(const struct xrl_control_command *cmd, json_t *json,
			char *err, size_t len)
{
	const char *key;
	json_t *value;
	size_t i;

	json_object_foreach(json, key, value) {
		if (!strcmp(key, "cmd"))
			continue;
		for (i = 0; cmd->fields[i]; i++)
			if (!strcmp(cmd->fields[i], key))
				break;
		if (!cmd->fields[i]) {
			snprintf(err, len, "%s: unknown field \"%.64s\"",
				 cmd->name, key);
			return -EINVAL;
		}
	}
	return 0;
}

/* Parses the request and runs its command; @req->err tells why not. */
static int run_request(struct xrl_request *req, const char *line, size_t len)
{
	const struct xrl_control_command *cmd;
	json_error_t error;
	const char *name;
	json_t *cmd_item;
	int ret;

	req->json = json_loadb(line, len, JSON_REJECT_DUPLICATES, &error);
	if (!req->json) {
		snprintf(req->err, sizeof(req->err),
			 "the request is not JSON: %s (column %d)",
			 error.text, error.column);
		return -EINVAL;
	}
	if (!json_is_object(req->json)) {
		snprintf(req->err, sizeof(req->err),
			 "the request must be a JSON object");
		return -EINVAL;
	}
	cmd_item = json_object_get(req->json, "cmd");
	if (!json_is_string(cmd_item)) {
		snprintf(req->err, sizeof(req->err),
			 "the request has no \"cmd\" string");
		return -EINVAL;
	}
	name = json_string_value(cmd_item);
	cmd = find_command(name);
	if (!cmd) {
		snprintf(req->err, sizeof(req->err), "unknown command \"%.32s\""
			 " (rule.add, rule.del, rule.list, reload, stats, "
			 "status, top, version)", name);
		return -EINVAL;
	}
	ret = check_fields(cmd, req->json, req->err, sizeof(req->err));
	if (!ret)
		ret = cmd->run(req);
	if (ret) {
		/* Prefix the command unless it already named itself. */
		char why[sizeof(req->err)];

		if (strncmp(req->err, cmd->name, strlen(cmd->name))) {
			snprintf(why, sizeof(why), "%s", req->err);
			snprintf(req->err, sizeof(req->err), "%s: %.400s",
				 cmd->name, why[0] ? why : strerror(-ret));
		}
		if (cmd->changes)
			xrl_daemon_refused(req->state, req->err);
	}
	return ret;
}

/* Error text may quote a client's bytes cut anywhere: keep it valid
 * UTF-8 for the response by replacing what is not plain ASCII. */
static json_t *ascii_string(char *text)
{
	unsigned char *c;

	for (c = (unsigned char *)text; *c; c++)
		if (*c >= 0x80 || *c < 0x20)
			*c = '?';
	return json_string(text);
}

int xrl_control_handle(struct xrl_daemon_state *state, bool privileged,
		       const char *line, size_t len, char **response)
{
	struct xrl_request req = {
		.state = state,
		.privileged = privileged,
	};
	int ret;

	*response = NULL;
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	req.response = json_pack("{s:b}", "ok", true);
	if (!req.response)
		return -ENOMEM;
	ret = run_request(&req, line, len);
	if (ret) {
		json_object_clear(req.response);
		json_object_set_new(req.response, "ok", json_false());
		json_object_set_new(req.response, "error",
				    ascii_string(req.err));
	}
	*response = json_dumps(req.response,
			       JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(req.response);
	json_decref(req.json);
	return *response ? 0 : -ENOMEM;
}

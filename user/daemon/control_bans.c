// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_bans.c - ban, unban and bans over the control socket; the bans
 * by hand themselves, their file and map: manual_bans.h.
 *
 * A ban is a prefix the program drops before it looks at any rule (an
 * LPM trie checked while the policy head says manual bans exist), so it
 * wins over every rule, a longer allow rule too, and adding or lifting
 * one rebuilds no rule and touches no bucket; only the first ban and the
 * lifting of the last swap the head (the policy's atomic apply), to turn
 * the lookup on and off. Order of a change, so that nothing is
 * acknowledged that was not applied and saved: the new list is written
 * to a temporary file, the map entry is written, the head swapped if
 * need be, then the file renamed into place; a failure at any step
 * undoes the steps before it.
 *
 * Expiry is the program's: a ban holds while its clock (CLOCK_MONOTONIC)
 * is before the entry's end; the daemon lifts an ended ban from the map
 * (which would fill otherwise), the list and the file, at its end by the
 * event loop's timeout (xrl_daemon_expire_bans()) and before each ban.
 * The file keeps the end in wall-clock time, so a restart, hours later,
 * puts back only what is left of each ban.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "bans.h"
#include "cidr.h"
#include "clock.h"
#include "control_cmds.h"
#include "datapath.h"
#include "log.h"
#include "manual_bans.h"
#include "overlay.h"
#include "policy_running.h"
#include "rule_json.h"
#include "state_file.h"
#include "units.h"

static int unstage(const char *path, bool commit)
{
	if (!commit) {
		xrl_state_discard(path);
		return 0;
	}
	return xrl_state_commit(path);
}

/* Turns the program's lookup of bans on or off: a head swap. */
static int set_lookup(struct xrl_daemon_state *state, bool on, char *err,
		      size_t len)
{
	struct xrl_policy next;
	int ret;

	if (state->policy.manual_bans == on)
		return 0;
	ret = xrl_policy_copy(&next, &state->policy);
	if (ret)
		return ret;
	next.manual_bans = on;
	return xrl_daemon_change(state, &next, err, len);
}

/*
 * The whole of a ban change: @v (n entries) becomes the list; the map
 * entry of @changed is written (@value) or, with @value NULL, deleted.
 */
static int change_bans(struct xrl_request *req, struct xrl_manual_ban_entry *v,
		       size_t n, const struct xrl_manual_ban_entry *changed,
		       const struct xrl_manual_ban *value)
{
	struct xrl_daemon_state *state = req->state;
	struct xrl_manual_bans *b = state->bans;
	struct xrl_manual_ban_key key;
	struct xrl_manual_ban old;
	bool had = false;
	size_t old_n;
	int ret, fd;

	if (!state->dp || !b) {
		snprintf(req->err, sizeof(req->err), "no data path to ban on");
		free(v);
		return -ENODEV;
	}
	fd = state->dp->manual_bans_fd;
	if (b->path) {
		ret = xrl_manual_bans_stage(b->path, v, n, req->err, sizeof(req->err));
		if (ret) {
			free(v);
			return ret;
		}
	}
	xrl_manual_ban_key(&changed->prefix, &key);
	had = !bpf_map_lookup_elem(fd, &key, &old);
	ret = value ? bpf_map_update_elem(fd, &key, value, 0) :
		      bpf_map_delete_elem(fd, &key);
	if (ret)
		ret = errno ? -errno : -EIO;
	if (ret == -ENOENT && !value)
		ret = 0;	/* already gone from the map: ended */
	if (ret) {
		snprintf(req->err, sizeof(req->err), "writing the ban: %s",
			 strerror(-ret));
		goto undo_file;
	}
	/* commit() keeps the lookup on while the list has bans: the count
	 * it reads is the new one (put back if the swap fails). */
	old_n = b->n;
	b->n = n;
	ret = set_lookup(state, n > 0, req->err, sizeof(req->err));
	b->n = old_n;
	if (ret)
		goto undo_map;
	if (b->path) {
		ret = unstage(b->path, true);
		if (ret) {
			snprintf(req->err, sizeof(req->err), "saving the bans "
				 "to %s: %s; nothing changed", b->path,
				 strerror(-ret));
			goto undo_map;
		}
	}
	free(b->v);
	b->v = v;
	b->n = n;
	return 0;

undo_map:
	if (had)
		bpf_map_update_elem(fd, &key, &old, 0);
	else
		bpf_map_delete_elem(fd, &key);
undo_file:
	if (b->path)
		unstage(b->path, false);
	free(v);
	return ret;
}

int xrl_daemon_expire_bans(struct xrl_daemon_state *state)
{
	struct xrl_manual_bans *b = state->bans;
	uint64_t now = xrl_manual_bans_now_ms(), next = 0;
	struct xrl_manual_ban_key key;
	size_t i, n = 0, ended;
	char err[512] = "";
	int ret;

	if (!b || !state->dp)
		return -1;
	for (i = 0; i < b->n; i++) {
		if (!xrl_manual_ban_ended(&b->v[i], now)) {
			if (b->v[i].until_ms &&
			    (!next || b->v[i].until_ms < next))
				next = b->v[i].until_ms;
			b->v[n++] = b->v[i];
			continue;
		}
		xrl_manual_ban_key(&b->v[i].prefix, &key);
		if (bpf_map_delete_elem(state->dp->manual_bans_fd, &key) &&
		    errno != ENOENT)
			pr_warn("lifting an ended ban from %s: %s",
				XRL_MAP_MANUAL_BANS, strerror(errno));
	}
	ended = b->n - n;
	b->n = n;
	if (ended) {
		pr_info("%zu ban%s ended, %zu left", ended,
			ended == 1 ? "" : "s", n);
		if (!n && set_lookup(state, false, err, sizeof(err)))
			pr_warn("turning the lookup of bans off: %s", err);
		/* The file may keep an ended ban: loading forgets it. */
		ret = b->path ? xrl_manual_bans_stage(b->path, b->v, n, err,
						      sizeof(err)) : 0;
		if (!ret && b->path)
			ret = xrl_state_commit(b->path);
		if (ret)
			pr_warn("ended bans: %s", ret == -ENOMEM ?
				"out of memory" : err[0] ? err :
				strerror(-ret));
	}
	if (!next)
		return -1;
	return next - now > INT_MAX ? INT_MAX : (int)(next - now);
}

static int ban_prefix(struct xrl_request *req, struct xrl_lpm_key *prefix)
{
	const char *cidr;
	int ret;

	ret = xrl_json_string(req->json, "cidr", true, &cidr, req->err,
				 sizeof(req->err));
	if (!ret)
		ret = xrl_rule_json_cidr(cidr, prefix, req->err,
					 sizeof(req->err));
	/* Every source (::ffff:0:0/96, every IPv4 one, is refused by the
	 * cidr's own reading). */
	if (!ret && prefix->prefixlen == 0) {
		snprintf(req->err, sizeof(req->err), "cidr: \"%.64s\" would "
			 "ban every source of its family", cidr);
		ret = -EINVAL;
	}
	return ret;
}

/* ban: {"cidr": C, "for": "1h"?}; without "for", until unban. */
int xrl_control_ban(struct xrl_request *req)
{
	struct xrl_manual_ban_entry entry = {}, *v;
	struct xrl_manual_bans *b = req->state->bans;
	struct xrl_manual_ban value;
	uint64_t ns = 0, now = xrl_manual_bans_now_ms();
	const char *text;
	size_t n;
	int ret;

	ret = ban_prefix(req, &entry.prefix);
	if (!ret)
		ret = xrl_json_string(req->json, "for", false, &text,
					 req->err, sizeof(req->err));
	if (ret)
		return ret;
	if (text && (xrl_duration_ns_parse(text, XRL_BAN_LIMIT_NS, &ns) ||
		     ns < 1000000)) {
		snprintf(req->err, sizeof(req->err), "for: \"%.32s\" is not a "
			 "duration from 1ms to 30d such as 30s, 10m, 1h or 7d",
			 text);
		return -EINVAL;
	}
	if (!b) {
		snprintf(req->err, sizeof(req->err), "no data path to ban on");
		return -ENODEV;
	}
	/* What ended leaves the map before the count is judged. */
	xrl_daemon_expire_bans(req->state);
	if (b->n >= XRL_MANUAL_BANS) {
		snprintf(req->err, sizeof(req->err), "%d bans already, the "
			 "most there may be", XRL_MANUAL_BANS);
		return -ENOSPC;
	}
	entry.until_ms = ns ? now + ns / 1000000 : 0;
	v = xrl_manual_bans_kept(b, &entry.prefix, 1, &n);
	if (!v)
		return -ENOMEM;
	v[n++] = entry;
	xrl_manual_ban_value(&entry, now, &value);
	ret = change_bans(req, v, n, &entry, &value);
	if (ret)
		return ret;
	json_object_set_new(req->response, "ban",
			    xrl_manual_ban_json(&entry, req->state->dp->manual_bans_fd));
	pr_info("banned %s%s%s", json_string_value(json_object_get(
		req->json, "cidr")), text ? " for " : "", text ? text : "");
	return 0;
}

/* The escalated bans of exactly @prefix lifted: how many, or -errno. */
static int unban_escalated(struct xrl_request *req,
			   const struct xrl_lpm_key *prefix)
{
	int lifted;

	if (!req->state->dp)
		return 0;
	lifted = xrl_escalated_lift(req->state->dp, prefix,
				    xrl_clock_ns(CLOCK_MONOTONIC));
	if (lifted < 0) {
		snprintf(req->err, sizeof(req->err), "lifting an escalated "
			 "ban: %s", strerror(-lifted));
		return lifted;
	}
	json_object_set_new(req->response, "escalated", json_integer(lifted));
	if (lifted)
		pr_info("unbanned %s (escalated, %d rule%s)",
			json_string_value(json_object_get(req->json, "cidr")),
			lifted, lifted == 1 ? "" : "s");
	return lifted;
}

/* unban: {"cidr": C}, a ban in force: by hand, escalated, or both. */
int xrl_control_unban(struct xrl_request *req)
{
	struct xrl_manual_ban_entry entry = {}, *v;
	struct xrl_manual_bans *b = req->state->bans;
	char cidr[64];
	size_t n, before = 0, i;
	uint64_t now = xrl_manual_bans_now_ms();
	int ret, escalated;

	ret = ban_prefix(req, &entry.prefix);
	if (ret)
		return ret;
	escalated = unban_escalated(req, &entry.prefix);
	if (escalated < 0)
		return escalated;
	for (i = 0; b && i < b->n; i++)
		if (!xrl_manual_ban_ended(&b->v[i], now) &&
		    xrl_prefix_equal(&b->v[i].prefix, &entry.prefix))
			before++;
	if (!before && escalated)
		return 0;
	if (!before) {
		xrl_cidr_format(&entry.prefix, cidr, sizeof(cidr));
		snprintf(req->err, sizeof(req->err), "cidr: %s is not banned",
			 cidr);
		return -ENOENT;
	}
	v = xrl_manual_bans_kept(b, &entry.prefix, 0, &n);
	if (!v)
		return -ENOMEM;
	ret = change_bans(req, v, n, &entry, NULL);
	if (!ret)
		pr_info("unbanned %s", json_string_value(json_object_get(
			req->json, "cidr")));
	return ret;
}

struct escalated_list {
	const struct xrl_policy *policy;
	json_t *list;
	uint64_t now_ms, mono_ns;
};

/* An escalated ban as bans lists it: its kind, rule and end. */
static int escalated_json(const struct xrl_escalated_ban *ban, void *ctx)
{
	struct escalated_list *l = ctx;
	const char *rule = "?";
	char cidr[64];
	size_t i;

	for (i = 0; i < l->policy->n_rules; i++)
		if (l->policy->rules[i].id == ban->rule_id)
			rule = l->policy->rules[i].name;
	xrl_cidr_format(&ban->prefix, cidr, sizeof(cidr));
	json_array_append_new(l->list, json_pack(
		"{s:s,s:s,s:s,s:I,s:i}", "cidr", cidr, "kind", "escalated",
		"rule", rule, "until_ms", (json_int_t)(l->now_ms +
		(ban->until_ns - l->mono_ns) / 1000000),
		"escalations", (int)ban->escalations));
	return 0;
}

/* bans: the bans in force, with what each dropped; then the escalated
 * ones (docs/POLICY.md "Escalation"). */
int xrl_control_bans(struct xrl_request *req)
{
	struct xrl_manual_bans *b = req->state->bans;
	int fd = req->state->dp ? req->state->dp->manual_bans_fd : -1;
	uint64_t now = xrl_manual_bans_now_ms();
	json_t *list = json_array();
	struct escalated_list escalated = {
		.policy = &req->state->policy, .list = list, .now_ms = now,
		.mono_ns = xrl_clock_ns(CLOCK_MONOTONIC),
	};
	size_t i;

	for (i = 0; b && i < b->n; i++)
		if (!xrl_manual_ban_ended(&b->v[i], now))
			json_array_append_new(list, xrl_manual_ban_json(&b->v[i], fd));
	if (req->state->dp)
		xrl_escalated_bans(req->state->dp, escalated.mono_ns,
				   escalated_json, &escalated);
	json_object_set_new(req->response, "bans", list);
	json_object_set_new(req->response, "now_ms", json_integer(now));
	return 0;
}

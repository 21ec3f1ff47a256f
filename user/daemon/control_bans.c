// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_bans.c - ban, unban and bans over the control socket, and the
 * file they are kept in (manual_bans.h).
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
 * is before the entry's end. The file keeps the end in wall-clock time,
 * so a restart, hours later, puts back only what is left of each ban.
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
#include "ban.h"
#include "bucket.h"
#include "cidr.h"
#include "clock.h"
#include "control.h"
#include "control_cmds.h"
#include "datapath.h"
#include "log.h"
#include "manual_bans.h"
#include "overlay.h"
#include "policy.h"
#include "policy_running.h"
#include "units.h"

#define BANS_VERSION 1

static uint64_t wall_ms(void)
{
	return xrl_clock_ns(CLOCK_REALTIME) / XRL_NS_PER_MS;
}

static bool is_v4(const struct xrl_lpm_key *p)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	return p->prefixlen >= 96 && !memcmp(p->addr, mapped, sizeof(mapped));
}

/* The program's key of a prefix (include/xrl.h, xrl_manual_ban_key). */
static void ban_key(const struct xrl_lpm_key *p, struct xrl_manual_ban_key *k)
{
	memset(k, 0, sizeof(*k));
	if (is_v4(p)) {
		k->family = XRL_FAMILY_IPV4;
		k->prefixlen = XRL_MANUAL_BAN_HDR_BITS + p->prefixlen - 96;
		memcpy(k->addr, &p->addr[12], 4);
	} else {
		k->family = XRL_FAMILY_IPV6;
		k->prefixlen = XRL_MANUAL_BAN_HDR_BITS + p->prefixlen;
		memcpy(k->addr, p->addr, 16);
	}
}

/* The program's entry: its end on the program's clock. */
static void ban_value(const struct xrl_manual_ban_entry *e, uint64_t now_ms,
		      struct xrl_manual_ban *v)
{
	memset(v, 0, sizeof(*v));
	if (e->until_ms)
		v->until_ns = xrl_clock_ns(CLOCK_MONOTONIC) +
			      (e->until_ms - now_ms) * 1000000ULL;
}

static bool ended(const struct xrl_manual_ban_entry *e, uint64_t now_ms)
{
	return e->until_ms && e->until_ms <= now_ms;
}

void xrl_manual_bans_free(struct xrl_manual_bans *b)
{
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

static int load_entry(json_t *item, struct xrl_manual_ban_entry *e,
		      char *err, size_t len)
{
	json_t *cidr = json_object_get(item, "cidr");
	json_t *until = json_object_get(item, "until_ms");
	char why[256];

	if (!json_is_string(cidr) || (until && !json_is_integer(until)) ||
	    (until && json_integer_value(until) < 0)) {
		snprintf(err, len, "not {\"cidr\": TEXT, \"until_ms\": N}");
		return -EINVAL;
	}
	if (xrl_control_cidr(json_string_value(cidr), &e->prefix, why,
			     sizeof(why))) {
		snprintf(err, len, "%s", why);
		return -EINVAL;
	}
	e->until_ms = until ? json_integer_value(until) : 0;
	return 0;
}

int xrl_manual_bans_load(struct xrl_manual_bans *b, char *err, size_t len)
{
	uint64_t now = wall_ms();
	json_t *root, *list, *item;
	char why[256] = "";
	json_error_t jerr;
	size_t i;
	int ret = 0;

	b->v = NULL;
	b->n = 0;
	if (!b->path || access(b->path, F_OK))
		return 0;
	root = json_load_file(b->path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, len, "%s: %s", b->path, jerr.text);
		return -EINVAL;
	}
	list = json_object_get(root, "bans");
	if (json_integer_value(json_object_get(root, "version")) !=
	    BANS_VERSION || !json_is_array(list)) {
		snprintf(err, len, "%s: not a bans file of version %d",
			 b->path, BANS_VERSION);
		ret = -EINVAL;
		goto put;
	}
	b->v = calloc(json_array_size(list) ?: 1, sizeof(*b->v));
	if (!b->v) {
		ret = -ENOMEM;
		goto put;
	}
	json_array_foreach(list, i, item) {
		ret = load_entry(item, &b->v[b->n], why, sizeof(why));
		if (ret) {
			snprintf(err, len, "%s: bans[%zu]: %s", b->path, i, why);
			xrl_manual_bans_free(b);
			goto put;
		}
		if (!ended(&b->v[b->n], now))
			b->n++;
	}
put:
	json_decref(root);
	return ret;
}

int xrl_manual_bans_install(const struct xrl_manual_bans *b, int map_fd)
{
	struct xrl_manual_ban_key key, next;
	struct xrl_manual_ban value;
	uint64_t now = wall_ms();
	size_t i;

	/* What an earlier run left that the file does not hold goes. */
	while (!bpf_map_get_next_key(map_fd, NULL, &next))
		if (bpf_map_delete_elem(map_fd, &next))
			return -errno;
	for (i = 0; i < b->n; i++) {
		ban_key(&b->v[i].prefix, &key);
		ban_value(&b->v[i], now, &value);
		if (bpf_map_update_elem(map_fd, &key, &value, 0))
			return -errno;
	}
	return 0;
}

static json_t *entry_json(const struct xrl_manual_ban_entry *e, int map_fd)
{
	struct xrl_manual_ban_key key;
	struct xrl_manual_ban value;
	char cidr[64];
	json_t *obj;

	xrl_cidr_format(&e->prefix, cidr, sizeof(cidr));
	obj = json_pack("{s:s}", "cidr", cidr);
	if (obj && e->until_ms)
		json_object_set_new(obj, "until_ms", json_integer(e->until_ms));
	ban_key(&e->prefix, &key);
	if (obj && map_fd >= 0 && !bpf_map_lookup_elem(map_fd, &key, &value))
		json_object_set_new(obj, "packets",
				    json_integer(value.packets));
	return obj;
}

/* Writes @v (n entries) to the temporary file beside @path. */
static int stage(const char *path, const struct xrl_manual_ban_entry *v,
		 size_t n, char *err, size_t len)
{
	json_t *root, *list;
	size_t i;
	int ret;

	root = json_pack("{s:i, s:[]}", "version", BANS_VERSION, "bans");
	if (!root)
		return -ENOMEM;
	list = json_object_get(root, "bans");
	for (i = 0; i < n; i++)
		json_array_append_new(list, entry_json(&v[i], -1));
	ret = xrl_state_stage_json(path, root);
	json_decref(root);
	if (ret)
		snprintf(err, len, "saving the bans to %s: %s; nothing changed",
			 path, strerror(-ret));
	return ret;
}

static int unstage(const char *path, bool commit)
{
	if (!commit) {
		xrl_overlay_discard(path);
		return 0;
	}
	return xrl_overlay_commit(path);
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
		ret = stage(b->path, v, n, req->err, sizeof(req->err));
		if (ret) {
			free(v);
			return ret;
		}
	}
	ban_key(&changed->prefix, &key);
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

static bool same_prefix(const struct xrl_lpm_key *a,
			const struct xrl_lpm_key *b)
{
	return a->prefixlen == b->prefixlen &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* The list without @drop and without bans that ended; NULL: no memory. */
static struct xrl_manual_ban_entry *kept(const struct xrl_manual_bans *b,
					 const struct xrl_lpm_key *drop,
					 size_t extra, size_t *n)
{
	struct xrl_manual_ban_entry *v = calloc(b->n + extra, sizeof(*v));
	uint64_t now = wall_ms();
	size_t i;

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < b->n; i++)
		if (!ended(&b->v[i], now) && !same_prefix(&b->v[i].prefix, drop))
			v[(*n)++] = b->v[i];
	return v;
}

static int ban_prefix(struct xrl_request *req, struct xrl_lpm_key *prefix)
{
	const char *cidr;
	int ret;

	ret = xrl_control_string(req->json, "cidr", true, &cidr, req->err,
				 sizeof(req->err));
	if (!ret)
		ret = xrl_control_cidr(cidr, prefix, req->err,
				       sizeof(req->err));
	if (!ret && (prefix->prefixlen == 0 ||
		     (is_v4(prefix) && prefix->prefixlen == 96))) {
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
	uint64_t ns = 0, now = wall_ms();
	const char *text;
	size_t n;
	int ret;

	ret = ban_prefix(req, &entry.prefix);
	if (!ret)
		ret = xrl_control_string(req->json, "for", false, &text,
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
	if (b->n >= XRL_MANUAL_BANS) {
		snprintf(req->err, sizeof(req->err), "%d bans already, the "
			 "most there may be", XRL_MANUAL_BANS);
		return -ENOSPC;
	}
	entry.until_ms = ns ? now + ns / 1000000 : 0;
	v = kept(b, &entry.prefix, 1, &n);
	if (!v)
		return -ENOMEM;
	v[n++] = entry;
	ban_value(&entry, now, &value);
	ret = change_bans(req, v, n, &entry, &value);
	if (ret)
		return ret;
	json_object_set_new(req->response, "ban",
			    entry_json(&entry, req->state->dp->manual_bans_fd));
	pr_info("banned %s%s%s", json_string_value(json_object_get(
		req->json, "cidr")), text ? " for " : "", text ? text : "");
	return 0;
}

/* unban: {"cidr": C}, a ban in force. */
int xrl_control_unban(struct xrl_request *req)
{
	struct xrl_manual_ban_entry entry = {}, *v;
	struct xrl_manual_bans *b = req->state->bans;
	char cidr[64];
	size_t n, before = 0, i;
	uint64_t now = wall_ms();
	int ret;

	ret = ban_prefix(req, &entry.prefix);
	if (ret)
		return ret;
	for (i = 0; b && i < b->n; i++)
		if (!ended(&b->v[i], now) &&
		    same_prefix(&b->v[i].prefix, &entry.prefix))
			before++;
	if (!before) {
		xrl_cidr_format(&entry.prefix, cidr, sizeof(cidr));
		snprintf(req->err, sizeof(req->err), "cidr: %s is not banned",
			 cidr);
		return -ENOENT;
	}
	v = kept(b, &entry.prefix, 0, &n);
	if (!v)
		return -ENOMEM;
	ret = change_bans(req, v, n, &entry, NULL);
	if (!ret)
		pr_info("unbanned %s", json_string_value(json_object_get(
			req->json, "cidr")));
	return ret;
}

/* bans: the bans in force, with what each dropped. */
int xrl_control_bans(struct xrl_request *req)
{
	struct xrl_manual_bans *b = req->state->bans;
	int fd = req->state->dp ? req->state->dp->manual_bans_fd : -1;
	uint64_t now = wall_ms();
	json_t *list = json_array();
	size_t i;

	for (i = 0; b && i < b->n; i++)
		if (!ended(&b->v[i], now))
			json_array_append_new(list, entry_json(&b->v[i], fd));
	json_object_set_new(req->response, "bans", list);
	json_object_set_new(req->response, "now_ms", json_integer(now));
	return 0;
}

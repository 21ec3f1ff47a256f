// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_report.c - the read-only commands of the control protocol:
 * stats and status (the same JSON as `xdp-ratelimit stats|status --json`,
 * with rule names and the daemon's own state added) and top.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "ban.h"
#include "bans.h"
#include "bucket.h"
#include "budget.h"
#include "cidr.h"
#include "clock.h"
#include "control_cmds.h"
#include "datapath.h"
#include "events.h"
#include "manual_bans.h"
#include "mapwalk.h"
#include "report.h"
#include "rule.h"
#include "stats.h"

static int need_datapath(struct xrl_request *req)
{
	if (req->state->dp)
		return 0;
	snprintf(req->err, sizeof(req->err), "no data path is loaded");
	return -ENODEV;
}

static const struct xrl_rule_spec *rule_by_id(const struct xrl_policy *policy,
					      __u32 id)
{
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].id == id)
			return &policy->rules[i];
	return NULL;
}

/* Adds "name" to each rule of a report's "rules" array. */
static void name_rules(const struct xrl_policy *policy, json_t *rules)
{
	const struct xrl_rule_spec *rule;
	json_t *item;
	size_t i;

	json_array_foreach(rules, i, item) {
		rule = rule_by_id(policy, json_integer_value(
					json_object_get(item, "id")));
		if (rule)
			json_object_set_new(item, "name",
					    json_string(rule->name));
	}
}

int xrl_control_stats(struct xrl_request *req)
{
	struct xrl_stats_report report;
	json_t *json;
	int ret;

	ret = need_datapath(req);
	if (ret)
		return ret;
	ret = xrl_stats_collect(req->state->dp, &report);
	if (ret) {
		snprintf(req->err, sizeof(req->err), "reading the counters: %s",
			 strerror(-ret));
		return ret;
	}
	json = xrl_stats_json(&report);
	xrl_stats_report_free(&report);
	if (!json)
		return -ENOMEM;
	name_rules(&req->state->policy, json_object_get(json, "rules"));
	json_object_update(req->response, json);
	json_decref(json);
	if (req->state->budgets)
		json_object_set_new(req->response, "budgets",
				    xrl_budgets_json(req->state->budgets));
	return 0;
}

/* The last reload of a file, or null when none since the start. */
static json_t *last_reload_json(const struct xrl_reload_result *last)
{
	char stamp[32];
	struct tm tm;

	if (!last->at)
		return json_null();
	gmtime_r(&last->at, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s, s:I, s:b, s:s?}", "at", stamp,
			 "at_s", (json_int_t)last->at, "ok", last->ok,
			 "error", last->ok ? NULL : last->error);
}

static json_t *daemon_json(const struct xrl_daemon_state *state)
{
	json_t *ifaces = json_array();
	size_t i;

	for (i = 0; i < state->n_interfaces; i++)
		json_array_append_new(ifaces,
				      json_string(state->interfaces[i]));
	return json_pack("{s:s, s:I, s:s?, s:s?, s:s?, s:I, s:I, s:I, s:I, "
			 "s:o, s:o}",
		"version", XRL_VERSION,
		"pid", (json_int_t)getpid(),
		"socket", state->socket_path,
		"config", state->config_path,
		"state_file", state->state_path,
		"uptime_s", (json_int_t)(time(NULL) - state->started),
		"policies_applied", (json_int_t)state->n_changes,
		"changes_refused", (json_int_t)state->n_refused,
		"clients", (json_int_t)state->n_clients,
		"interfaces", ifaces,
		"last_reload", last_reload_json(&state->last_reload));
}

int xrl_control_status(struct xrl_request *req)
{
	struct xrl_status_report report;
	json_t *json;
	int ret;

	ret = need_datapath(req);
	if (ret)
		return ret;
	ret = xrl_status_collect(req->state->dp, &report);
	if (ret) {
		snprintf(req->err, sizeof(req->err), "reading the status: %s",
			 strerror(-ret));
		return ret;
	}
	json = xrl_status_json(&report);
	xrl_status_report_free(&report);
	if (!json)
		return -ENOMEM;
	json_object_update(req->response, json);
	json_decref(json);
	json_object_set_new(req->response, "daemon", daemon_json(req->state));
	if (req->state->budgets)
		json_object_set_new(req->response, "budgets",
				    xrl_budgets_json(req->state->budgets));
	return 0;
}

struct top_entry {
	struct xrl_bucket_key key;
	__u32 rule_id;
	bool rebound;	/* its bucket is bound to another rule now */
	bool has_bucket;	/* tat[] is its bucket's (else evicted) */
	__u64 dropped;	/* since its first refusal (struct xrl_offender) */
	__u64 passed;
	__u64 tat[XRL_LIMIT_KINDS];
	__u64 ban_until_ns;	/* the program's clock; 0: never banned */
};

struct top_walk {
	int buckets_fd;
	struct top_entry *entries;
	size_t n, cap;
	/* What the CPUs' tallies hold beside the records (bucket.h). */
	struct xrl_refusal_tally *tallies;
	int n_tallies;
};

/* The source's bucket, for its fill and whether it is still the
 * record's rule's (a bucket bound anew starts a new record). */
static void top_entry_bucket(int buckets_fd, struct top_entry *entry)
{
	struct xrl_bucket bucket;

	if (bpf_map_lookup_elem(buckets_fd, &entry->key, &bucket))
		return;	/* evicted: its counts and ban still stand */
	entry->has_bucket = true;
	entry->rebound = XRL_BUCKET_RULE(bucket.rule_id) != entry->rule_id ||
			 !(bucket.rule_id & XRL_BUCKET_OFFENDER);
	memcpy(entry->tat, bucket.tat, sizeof(bucket.tat));
}

/* Sources are listed from their offender records: only a source that
 * was refused has counts (include/xrl.h). */
static int collect_dropping(const void *key, const void *value, void *ctx)
{
	const struct xrl_bucket_key *k = key;
	const struct xrl_offender *off = value;
	struct top_walk *walk = ctx;
	struct top_entry *grown, *entry;

	/* A level's record is a subnet's (docs/POLICY.md "Levels"): top
	 * lists sources. */
	if (!off->dropped || XRL_TAG_LEVEL(k->tag))
		return 0;
	if (walk->n == walk->cap) {
		walk->cap = walk->cap ? walk->cap * 2 : 256;
		grown = reallocarray(walk->entries, walk->cap, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		walk->entries = grown;
	}
	entry = &walk->entries[walk->n++];
	memset(entry, 0, sizeof(*entry));
	memcpy(&entry->key, key, sizeof(struct xrl_bucket_key));
	entry->rule_id = off->rule_id;
	entry->dropped = off->dropped + xrl_tallied(walk->tallies,
						    walk->n_tallies, k, off);
	entry->passed = off->passed;
	entry->ban_until_ns = off->ban_until_ns;
	top_entry_bucket(walk->buckets_fd, entry);
	return 0;
}

/* Most dropped first; ties in address order, so the list is stable. */
static int by_dropped(const void *a, const void *b)
{
	const struct top_entry *ea = a, *eb = b;

	if (ea->dropped != eb->dropped)
		return ea->dropped < eb->dropped ? 1 : -1;
	return memcmp(&ea->key, &eb->key, sizeof(ea->key));
}

/*
 * How full the source's bucket is (1: a whole burst left, 0: limited),
 * against the rule's first limit; -1 when the rule has no limit or the
 * word was written in other units (a policy change the source has not
 * sent since).
 */
static double bucket_fill(const struct xrl_rule_spec *spec, const __u64 *tat)
{
	struct xrl_bucket_level level;
	struct xrl_rule rule;
	int kind;

	if (!spec || xrl_rule_compile(spec, &rule) || rule.window.limit)
		return -1;	/* a window's count is not in its bucket */
	kind = rule.limit[XRL_LIMIT_PACKETS].interval ? XRL_LIMIT_PACKETS :
							 XRL_LIMIT_BYTES;
	if (!rule.limit[kind].interval || !rule.limit[kind].tolerance)
		return -1;
	xrl_bucket_level(&rule.limit[kind], tat[kind], xrl_clock_ns(CLOCK_MONOTONIC),
			 &level);
	return level.known ? level.fill : -1;
}

static bool prefix_contains(const struct xrl_lpm_key *prefix,
			    const __u8 addr[16])
{
	unsigned bytes = prefix->prefixlen / 8, bits = prefix->prefixlen % 8;

	if (memcmp(prefix->addr, addr, bytes))
		return false;
	return !bits || !((prefix->addr[bytes] ^ addr[bytes]) &
			  (0xff << (8 - bits)));
}

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

static enum xrl_family key_family(const struct xrl_bucket_key *key)
{
	return key->tag & ((1U << XRL_TAG_SPLIT_SHIFT) - 1);
}

/* The source key's prefix length under the keys in force: the program's
 * bucket_key(), where IPv6 sources in ::/96 and ::ffff:0:0/96 keep at
 * least the IPv4 key length. */
static unsigned key_prefixlen(const struct xrl_policy *policy,
			      const struct xrl_bucket_key *key)
{
	static const __u8 zero[12];
	unsigned v4 = 96 + policy->v4_prefix;

	if (key_family(key) == XRL_FAMILY_IPV4)
		return v4;
	if (!memcmp(key->addr, zero, 8) && (!memcmp(key->addr, zero, 12) ||
					    !memcmp(key->addr, v4_mapped, 12)))
		return policy->v6_prefix > v4 ? policy->v6_prefix : v4;
	return policy->v6_prefix;
}

/* A rule of the key's family (the default rule is of both). */
static bool same_family(const struct xrl_lpm_key *prefix,
			const struct xrl_bucket_key *key)
{
	bool v4 = prefix->prefixlen > 96 &&
		  !memcmp(prefix->addr, v4_mapped, sizeof(v4_mapped));

	return !prefix->prefixlen ||
	       v4 == (key_family(key) == XRL_FAMILY_IPV4);
}

/* Whether @prefix and the key subnet @subnet share an address. */
static bool overlaps(const struct xrl_lpm_key *prefix,
		     const struct xrl_lpm_key *subnet)
{
	return prefix->prefixlen <= subnet->prefixlen ?
	       prefix_contains(prefix, subnet->addr) :
	       prefix_contains(subnet, prefix->addr);
}

/*
 * Whether the policy in force judges this bucket: keyed as the keys are
 * now (no host bits past the key length), bound to a rule still there
 * (struct xrl_bucket's rule_id) of the key's family, which is the longest
 * prefix holding the key subnet; or, for a key of a split subnet (its
 * tag names the rule), a rule still in the subnet, which still holds a
 * rule longer than the key. A bucket of a rule gone, of a source a more
 * specific rule now judges, or keyed under another prefix length is
 * state of an older policy: not shown as if current.
 */
static bool judged_now(const struct xrl_policy *policy,
		       const struct top_entry *entry)
{
	const struct xrl_bucket_key *key = &entry->key;
	__u32 split_id = XRL_TAG_SPLIT_ID(key->tag);
	const struct xrl_rule_spec *rule, *other;
	struct xrl_lpm_key keyed = { .prefixlen = key_prefixlen(policy, key) };
	bool longer = false;
	size_t i;

	memcpy(keyed.addr, key->addr, sizeof(keyed.addr));
	for (i = keyed.prefixlen; i < 128; i++)
		if (keyed.addr[i / 8] & (0x80 >> (i % 8)))
			return false;
	if (split_id && split_id - 1 != entry->rule_id)
		return false;
	rule = rule_by_id(policy, entry->rule_id);
	if (!rule || !same_family(&rule->prefix, key) ||
	    !overlaps(&rule->prefix, &keyed))
		return false;
	if (!split_id && rule->prefix.prefixlen > keyed.prefixlen)
		return false;
	for (i = 0; i < policy->n_rules; i++) {
		other = &policy->rules[i];
		if (other == rule || !same_family(&other->prefix, key) ||
		    !overlaps(&other->prefix, &keyed))
			continue;
		if (other->prefix.prefixlen > keyed.prefixlen)
			longer = true;
		else if (!split_id &&
			 other->prefix.prefixlen > rule->prefix.prefixlen)
			return false;	/* a more specific rule holds it */
	}
	if (rule->prefix.prefixlen > keyed.prefixlen)
		longer = true;
	return split_id ? longer : !longer;
}

/* The escalated ban on the prefix of @entry's source by its @rule, as
 * the program judges it (bpf/escalate.h): its prefix in "escalated",
 * and the later of its end and the source's own in *@until. */
static void top_escalated(const struct xrl_datapath *dp,
			  const struct xrl_rule_spec *rule,
			  const struct top_entry *entry, __u64 now,
			  json_t *obj, __u64 *until)
{
	struct xrl_rule compiled = { .id = rule->id };
	struct xrl_escalated_ban ban;
	char cidr[64];

	xrl_rule_escalate_compile(rule, &compiled.escalate);
	if (!dp || xrl_escalated_ban_of(dp, &compiled, &entry->key, now,
					&ban) != 1)
		return;
	xrl_cidr_format(&ban.prefix, cidr, sizeof(cidr));
	json_object_set_new(obj, "escalated", json_string(cidr));
	if ((int64_t)(ban.until_ns - *until) > 0)
		*until = ban.until_ns;
}

static json_t *top_entry_json(const struct xrl_datapath *dp,
			      const struct xrl_policy *policy,
			      const struct top_entry *entry)
{
	struct xrl_lpm_key source = { .prefixlen = policy->v6_prefix };
	const struct xrl_rule_spec *rule;
	char text[64];
	bool banned;
	json_t *obj;
	double fill;
	__u64 now, until;

	memcpy(source.addr, entry->key.addr, sizeof(source.addr));
	source.prefixlen = key_prefixlen(policy, &entry->key);
	xrl_cidr_format(&source, text, sizeof(text));
	rule = rule_by_id(policy, entry->rule_id);
	fill = entry->has_bucket ? bucket_fill(rule, entry->tat) : -1;
	obj = json_pack("{s:s, s:I, s:s?, s:I, s:I, s:o}",
			"source", text,
			"rule_id", (json_int_t)entry->rule_id,
			"rule", rule ? rule->name : NULL,
			"dropped", (json_int_t)entry->dropped,
			"passed", (json_int_t)entry->passed,
			"fill", fill >= 0 ? json_real(fill) : json_null());
	/* Banned as the program judges it: its rule still bans, and the
	 * ban's end is ahead of the program's clock (bpf/bans.h). */
	now = xrl_clock_ns(CLOCK_MONOTONIC);
	until = entry->ban_until_ns;
	if (obj && rule && rule->ban.escalate.after)
		top_escalated(dp, rule, entry, now, obj, &until);
	banned = obj && rule && rule->ban.ns &&
		 (int64_t)(until - now) > 0;
	if (obj)
		json_object_set_new(obj, "banned", json_boolean(banned));
	if (banned)
		json_object_set_new(obj, "ban_left_s", json_real(
			(until - now) / 1e9));
	return obj;
}

/* A ban by hand as a line of top: its prefix, what it dropped, marked
 * banned with no rule (it is looked at before any). */
static json_t *manual_ban_top_json(const struct xrl_manual_ban_entry *e,
				   int map_fd, uint64_t now_ms)
{
	json_t *ban = xrl_manual_ban_json(e, map_fd), *obj;

	if (!ban)
		return NULL;
	obj = json_pack("{s:O, s:n, s:O?, s:i, s:n, s:b, s:b}",
			"source", json_object_get(ban, "cidr"),
			"rule",
			"dropped", json_object_get(ban, "packets") ?:
				   json_integer(0),
			"passed", 0, "fill", "banned", 1, "by_hand", 1);
	if (obj && e->until_ms)
		json_object_set_new(obj, "ban_left_s", json_real(
			e->until_ms > now_ms ? (e->until_ms - now_ms) / 1e3 :
					       0));
	json_decref(ban);
	return obj;
}

static json_int_t dropped_of(json_t *entry)
{
	return json_integer_value(json_object_get(entry, "dropped"));
}

static int by_dropped_json(const void *a, const void *b)
{
	json_int_t da = dropped_of(*(json_t *const *)a),
		   db = dropped_of(*(json_t *const *)b);

	return (da < db) - (da > db);
}

/* The bans by hand in force, most dropping first (free each, then the
 * array). NULL with *@n 0 when there are none. */
static json_t **manual_bans_top(const struct xrl_request *req, size_t *n)
{
	const struct xrl_manual_bans *bans = req->state->bans;
	uint64_t now_ms = xrl_manual_bans_now_ms();
	json_t **v;
	size_t i;

	*n = 0;
	if (!bans || !bans->n)
		return NULL;
	v = calloc(bans->n, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < bans->n; i++) {
		if (xrl_manual_ban_ended(&bans->v[i], now_ms))
			continue;
		v[*n] = manual_ban_top_json(&bans->v[i],
					    req->state->dp->manual_bans_fd,
					    now_ms);
		if (v[*n])
			(*n)++;
	}
	qsort(v, *n, sizeof(*v), by_dropped_json);
	return v;
}

int xrl_control_top(struct xrl_request *req)
{
	json_t *n_item = json_object_get(req->json, "n");
	struct top_walk walk = {};
	json_int_t n = XRL_TOP_DEFAULT;
	size_t stale = 0, n_bans, b = 0;
	json_t *top, **bans;
	size_t i;
	int ret;

	if (n_item) {
		if (!json_is_integer(n_item) ||
		    json_integer_value(n_item) < 1 ||
		    json_integer_value(n_item) > XRL_TOP_MAX) {
			snprintf(req->err, sizeof(req->err), "n: must be an "
				 "integer from 1 to %d", XRL_TOP_MAX);
			return -EINVAL;
		}
		n = json_integer_value(n_item);
	}
	ret = need_datapath(req);
	if (ret)
		return ret;
	walk.buckets_fd = req->state->dp->buckets_fd;
	walk.tallies = xrl_tallies_read(req->state->dp, &walk.n_tallies);
	if (!walk.tallies) {
		ret = -errno;
		snprintf(req->err, sizeof(req->err), "reading the tallies: %s",
			 strerror(errno));
		goto free_walk;
	}
	ret = xrl_map_walk(req->state->dp->offenders_fd,
			   sizeof(struct xrl_bucket_key),
			   sizeof(struct xrl_offender), collect_dropping, &walk);
	if (ret) {
		snprintf(req->err, sizeof(req->err), "reading the offenders: %s",
			 strerror(-ret));
		goto free_walk;
	}
	qsort(walk.entries, walk.n, sizeof(*walk.entries), by_dropped);
	bans = manual_bans_top(req, &n_bans);
	top = json_array();
	/* The two lists merged, most dropping first. */
	for (i = 0; (i < walk.n || b < n_bans) &&
		    json_array_size(top) < (size_t)n;) {
		if (b < n_bans && (i == walk.n || (__u64)dropped_of(bans[b]) >=
						  walk.entries[i].dropped)) {
			json_array_append(top, bans[b++]);
			continue;
		}
		if (walk.entries[i].rebound ||
		    !judged_now(&req->state->policy, &walk.entries[i])) {
			stale++;
			i++;
			continue;
		}
		json_array_append_new(top, top_entry_json(req->state->dp,
							  &req->state->policy,
							  &walk.entries[i++]));
	}
	for (b = 0; b < n_bans; b++)
		json_decref(bans[b]);
	free(bans);
	json_object_set_new(req->response, "top", top);
	/* Buckets of an older policy passed over on the way. */
	json_object_set_new(req->response, "stale_hidden",
			    json_integer((json_int_t)stale));
free_walk:
	free(walk.tallies);
	free(walk.entries);
	return ret;
}

/* An optional integer field from @min to @max; absent leaves *@value. */
static int integer_field(struct xrl_request *req, const char *field,
			 json_int_t min, json_int_t max, json_int_t *value)
{
	json_t *item = json_object_get(req->json, field);

	if (!item)
		return 0;
	if (!json_is_integer(item) || json_integer_value(item) < min ||
	    json_integer_value(item) > max) {
		snprintf(req->err, sizeof(req->err), "%s: must be an integer "
			 "from %lld to %lld", field, (long long)min,
			 (long long)max);
		return -EINVAL;
	}
	*value = json_integer_value(item);
	return 0;
}

int xrl_control_events(struct xrl_request *req)
{
	const struct xrl_event_log *log = req->state->events;
	struct xrl_event_state counters;
	json_int_t n = XRL_EVENTS_KEPT, since = 0;
	int ret, o;

	ret = integer_field(req, "n", 1, XRL_EVENTS_KEPT, &n);
	if (!ret)
		ret = integer_field(req, "since", 0, INT64_MAX, &since);
	if (ret)
		return ret;
	if (!log) {
		snprintf(req->err, sizeof(req->err), "limit events are not "
			 "collected by this daemon");
		return -ENODEV;
	}
	json_object_set_new(req->response, "events",
			    xrl_event_log_json(log, since, n));
	json_object_set_new(req->response, "last_seq",
			    json_integer(log->next_seq - 1));
	if (req->state->dp &&
	    !xrl_event_stats_read(req->state->dp, &counters))
		for (o = 0; o < XRL_EVENT_OUTCOMES; o++)
			json_object_set_new(req->response,
					    xrl_event_outcome_name(o),
					    json_integer(counters.count[o]));
	return 0;
}

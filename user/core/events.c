// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * events.c - limit events, from the program's record to a line of the log
 * and an entry of the recent list (the ring buffer: event_reader.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cidr.h"
#include "clock.h"
#include "events.h"
#include "policy.h"
#include "rule_spec.h"
#include "units.h"

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

/* A key of a whole address is shown as the address, a wider one as CIDR. */
static void source_text(const __u8 addr[16], const struct xrl_policy *policy,
			char *buf, size_t len)
{
	struct xrl_lpm_key key = { .prefixlen = policy->v6_prefix };
	char *slash;

	memcpy(key.addr, addr, sizeof(key.addr));
	if (!memcmp(addr, v4_mapped, sizeof(v4_mapped)))
		key.prefixlen = 96 + policy->v4_prefix;
	xrl_cidr_format(&key, buf, len);
	slash = strrchr(buf, '/');
	if (slash && key.prefixlen == 128)
		*slash = '\0';
}

/* An escalated ban's prefix (its rule's escalate_prefix) as CIDR. */
static void prefix_text(const __u8 addr[16], const struct xrl_rule_spec *rule,
			char *buf, size_t len)
{
	struct xrl_lpm_key key = { 0 };

	if (!rule)
		return;	/* a rule gone since: the address alone */
	memcpy(key.addr, addr, sizeof(key.addr));
	key.prefixlen = rule->ban.escalate.prefix +
			(memcmp(addr, v4_mapped, sizeof(v4_mapped)) ? 0 : 96);
	xrl_cidr_format(&key, buf, len);
}

static const struct xrl_rule_spec *find_rule(const struct xrl_policy *policy,
					     __u32 id)
{
	size_t i;

	for (i = 0; i < policy->n_rules; i++)
		if (policy->rules[i].id == id)
			return &policy->rules[i];
	return NULL;
}

void xrl_event_describe(const struct xrl_limit_event *raw,
			const struct xrl_policy *policy, double wall_time,
			struct xrl_event_record *rec)
{
	const struct xrl_rule_spec *rule = find_rule(policy, raw->rule_id);

	memset(rec, 0, sizeof(*rec));
	rec->raw = *raw;
	rec->wall_time = wall_time;
	rec->action = raw->action & ~XRL_EVENT_ESCALATED;
	rec->escalated = raw->action & XRL_EVENT_ESCALATED;
	source_text(raw->addr, policy, rec->source, sizeof(rec->source));
	if (rec->escalated)
		prefix_text(raw->addr, rule, rec->source, sizeof(rec->source));
	if (rule) {
		snprintf(rec->rule, sizeof(rec->rule), "%s", rule->name);
		rec->limit_pps = rule->pps;
		rec->limit_bps = rule->bps;
	} else {
		snprintf(rec->rule, sizeof(rec->rule), "id-%u", raw->rule_id);
	}
	rec->pps = raw->window_ns ? raw->packets * 1e9 / raw->window_ns : -1;
}

/* 4211 as "4,211": rates are read by eye, during an attack. */
static const char *grouped(uint64_t value, char *buf, size_t len)
{
	char digits[32];
	size_t n, i, out = 0;

	n = snprintf(digits, sizeof(digits), "%llu",
		     (unsigned long long)value);
	for (i = 0; i < n && out + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
	return buf;
}

void xrl_event_format(const struct xrl_event_record *rec, char *buf,
		      size_t len)
{
	char rate[32], limit[32], observed[48] = "";
	const char *verb = rec->action == XRL_ACTION_MONITOR ?
			   "would be limited (monitor)" : "limited";

	if (rec->raw.ban_ns && rec->escalated) {
		xrl_duration_ns_format(rec->raw.ban_ns, rate, sizeof(rate));
		snprintf(buf, len, "prefix %s banned by rule %s for %s "
			 "(escalated: %llu of its sources banned)", rec->source,
			 rec->rule, rate, (unsigned long long)rec->raw.packets);
		return;
	}
	if (rec->raw.ban_ns) {
		xrl_duration_ns_format(rec->raw.ban_ns, rate, sizeof(rate));
		snprintf(buf, len, "source %s banned by rule %s for %s",
			 rec->source, rec->rule, rate);
		return;
	}
	if (rec->pps >= 0)
		snprintf(observed, sizeof(observed), "%s pps ",
			 grouped((uint64_t)(rec->pps + 0.5), rate,
				 sizeof(rate)));
	if (rec->limit_pps)
		snprintf(buf, len, "source %s %s by rule %s: %sover %s pps",
			 rec->source, verb, rec->rule, observed,
			 grouped(rec->limit_pps, limit, sizeof(limit)));
	else if (rec->limit_bps)
		snprintf(buf, len, "source %s %s by rule %s: %sover %s bit/s",
			 rec->source, verb, rec->rule, observed,
			 grouped(rec->limit_bps, limit, sizeof(limit)));
	else
		snprintf(buf, len, "source %s %s by rule %s: %sover its limit",
			 rec->source, verb, rec->rule, observed);
}

json_t *xrl_event_json(const struct xrl_event_record *rec)
{
	char message[256];

	xrl_event_format(rec, message, sizeof(message));
	return json_pack("{s:I, s:f, s:s, s:s, s:I, s:s, s:o, s:I, s:f, "
			 "s:I, s:I, s:s, s:f, s:b}",
			 "seq", (json_int_t)rec->seq,
			 "time", rec->wall_time,
			 "source", rec->source,
			 "rule", rec->rule,
			 "rule_id", (json_int_t)rec->raw.rule_id,
			 "action", rec->action == XRL_ACTION_MONITOR ?
				   "monitor" : "limit",
			 "pps", rec->pps >= 0 ? json_real(rec->pps) :
						json_null(),
			 "packets", (json_int_t)rec->raw.packets,
			 "window_s", rec->raw.window_ns / 1e9,
			 "limit_pps", (json_int_t)rec->limit_pps,
			 "limit_bps", (json_int_t)rec->limit_bps,
			 "message", message,
			 "ban_s", rec->raw.ban_ns / 1e9,
			 "escalated", rec->escalated);
}

int xrl_event_log_init(struct xrl_event_log *log)
{
	memset(log, 0, sizeof(*log));
	log->ring = calloc(XRL_EVENTS_KEPT, sizeof(*log->ring));
	log->next_seq = 1;
	return log->ring ? 0 : -ENOMEM;
}

void xrl_event_log_free(struct xrl_event_log *log)
{
	free(log->ring);
	memset(log, 0, sizeof(*log));
}

uint64_t xrl_event_log_add(struct xrl_event_log *log,
			   const struct xrl_event_record *rec)
{
	struct xrl_event_record *slot;

	slot = &log->ring[log->next_seq % XRL_EVENTS_KEPT];
	*slot = *rec;
	slot->seq = log->next_seq++;
	if (log->n < XRL_EVENTS_KEPT)
		log->n++;
	return slot->seq;
}

json_t *xrl_event_log_json(const struct xrl_event_log *log, uint64_t since,
			   size_t max)
{
	uint64_t first = log->next_seq - log->n, seq;
	json_t *list = json_array();

	if (since + 1 > first)
		first = since + 1;
	if (log->next_seq - first > max)
		first = log->next_seq - max;
	for (seq = first; list && seq < log->next_seq; seq++)
		json_array_append_new(list, xrl_event_json(
				&log->ring[seq % XRL_EVENTS_KEPT]));
	return list;
}

double xrl_monotonic_to_wall(uint64_t monotonic_ns)
{
	double mono = (double)xrl_clock_ns(CLOCK_MONOTONIC);
	double wall = (double)xrl_clock_ns(CLOCK_REALTIME);

	return (wall - (mono - (double)monotonic_ns)) / 1e9;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fields.c - the tables of a policy's keys, and what every reader and
 * writer does with a value of each type (fields.h). The checks that span
 * fields are the rule's (rule.c), so every format judges rules alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cidr.h"
#include "config.h"
#include "fields.h"
#include "limit.h"
#include "match.h"
#include "rule_spec.h"
#include "units.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Where a field's value lives: its offset and its size. */
#define AT(type, member)	.offset = offsetof(type, member), \
				.size = sizeof(((type *)0)->member)
#define RULE(member)		AT(struct xrl_rule_spec, member)
#define LEVEL(member)		AT(struct xrl_level_spec, member)
#define POLICY(member)		AT(struct xrl_config, policy.member)
#define BIT(n)			(1U << (n))

/* ---- words ---------------------------------------------------------- */

static const char *const action_words[] = {
	[XRL_ACTION_LIMIT] = "limit",
	[XRL_ACTION_MONITOR] = "monitor",
	[XRL_ACTION_ALLOW] = "allow",
	[XRL_ACTION_DENY] = "deny",
	NULL
};

static const char *const scope_words[] = {
	[XRL_SCOPE_SOURCE] = "source",
	[XRL_SCOPE_AGGREGATE] = "aggregate",
	NULL
};

static const char *const strategy_words[] = {
	[XRL_STRATEGY_TOKEN_BUCKET] = "token_bucket",
	[XRL_STRATEGY_LEAKY_BUCKET] = "leaky_bucket",
	[XRL_STRATEGY_SLIDING_WINDOW] = "sliding_window",
	NULL
};

static const char *const unknown_words[] = {
	[XRL_UNKNOWN_PREFIX] = "prefix",
	[XRL_UNKNOWN_PASS] = "pass",
	[XRL_UNKNOWN_DROP] = "drop",
	NULL
};

static const char *const malformed_words[] = {
	[XRL_MALFORMED_PASS] = "pass", [XRL_MALFORMED_DROP] = "drop", NULL
};

static const char *const vlan_overflow_words[] = {
	[XRL_VLAN_OVERFLOW_DROP] = "drop", [XRL_VLAN_OVERFLOW_PASS] = "pass",
	NULL
};

static const char *const ipv4_mapped_words[] = {
	[XRL_IPV4_MAPPED_DROP] = "drop", [XRL_IPV4_MAPPED_IPV6] = "ipv6", NULL
};

static const char *const unjudged_fragments_words[] = {
	[XRL_UNJUDGED_FRAGMENTS_DROP] = "drop",
	[XRL_UNJUDGED_FRAGMENTS_PLAIN] = "plain",
	NULL
};

static const char *const header_overflow_words[] = {
	[XRL_HEADER_OVERFLOW_DROP] = "drop",
	[XRL_HEADER_OVERFLOW_PLAIN] = "plain",
	NULL
};

static const char *const blocklist_action_words[] = {
	[XRL_BLOCKLIST_DENY] = "deny", [XRL_BLOCKLIST_MONITOR] = "monitor",
	NULL
};

_Static_assert(ARRAY_SIZE(blocklist_action_words) ==
	       XRL_BLOCKLIST_ACTIONS + 1, "blocklist actions");
_Static_assert(ARRAY_SIZE(action_words) == XRL_ACTION_COUNT + 1, "actions");
_Static_assert(ARRAY_SIZE(scope_words) == XRL_SCOPE_COUNT + 1, "scopes");
_Static_assert(ARRAY_SIZE(strategy_words) == XRL_STRATEGY_COUNT + 1,
	       "strategies");
_Static_assert(ARRAY_SIZE(unknown_words) == XRL_UNKNOWN_COUNT + 1, "unknown");
/* WORD values are enums, read and written as unsigned. */
_Static_assert(sizeof(enum xrl_action) == sizeof(unsigned), "enum size");

/* ---- the tables ----------------------------------------------------- */

#define BAN_EXAMPLES		"30s, 500ms, 10m, 1h or 7d"
#define STRATEGY_EXAMPLES	"100ms, 2s, 1m or 500us"

/* The three ways to give a level's prefix come first (policy_read.c). */
const struct xrl_field xrl_level_fields[] = {
	{ .key = "prefix", .type = XRL_FIELD_NUMBER, LEVEL(prefix),
	  .min = 1, .max = 128,
	  .help = "each subnet of this length (of the rule's family)" },
	{ .key = "ipv4_prefix", .type = XRL_FIELD_NUMBER, LEVEL(prefix),
	  .min = 1, .max = 128, .help = "in default:, an IPv4 level" },
	{ .key = "ipv6_prefix", .type = XRL_FIELD_NUMBER, LEVEL(prefix),
	  .min = 1, .max = 128, .help = "in default:, an IPv6 level" },
	{ .key = "pps", .type = XRL_FIELD_QUANTITY, LEVEL(pps),
	  .min = 1, .max = XRL_RATE_MAX, .help = "packets per second" },
	{ .key = "burst", .type = XRL_FIELD_QUANTITY, LEVEL(burst),
	  .min = 1, .max = XRL_BURST_MAX, .help = "burst in packets" },
	{ .key = "bps", .type = XRL_FIELD_QUANTITY, LEVEL(bps),
	  .min = 1, .max = XRL_RATE_MAX, .help = "bits per second" },
	{ .key = "burst_bytes", .type = XRL_FIELD_QUANTITY, LEVEL(burst_bytes),
	  .min = 1, .max = XRL_BURST_MAX, .help = "burst in bytes" },
	{}
};
const size_t xrl_n_level_fields = ARRAY_SIZE(xrl_level_fields) - 1;

const struct xrl_field xrl_rule_fields[] = {
	{ .key = "name", .type = XRL_FIELD_NAME, RULE(name),
	  .flags = XRL_FIELD_RULE_ONLY | XRL_FIELD_ALWAYS,
	  .option = "name", .arg = "NAME",
	  .help = "rule name (default: the CIDR), unique, 1 to 63 characters" },
	{ .key = "cidr", .type = XRL_FIELD_CIDR, RULE(prefix),
	  .flags = XRL_FIELD_RULE_ONLY | XRL_FIELD_ALWAYS,
	  .help = "the sources it judges: 198.18.0.0/24, fd00::/8, or an "
		  "address (a /32 or /128)" },
	{ .key = "action", .type = XRL_FIELD_WORD, RULE(action),
	  .words = action_words, .flags = XRL_FIELD_ALWAYS, .noun = "action",
	  .option = "action", .arg = "A",
	  .help = "limit (default), monitor, allow or deny" },
	{ .key = "pps", .type = XRL_FIELD_QUANTITY, RULE(pps),
	  .min = 1, .max = XRL_RATE_MAX, .actions = XRL_LIMITED,
	  .strategies = XRL_BUCKETS, .option = "pps", .arg = "R",
	  .help = "packets per second (k/M/G suffixes)" },
	{ .key = "burst", .type = XRL_FIELD_QUANTITY, RULE(burst),
	  .min = 1, .max = XRL_BURST_MAX, .actions = XRL_LIMITED,
	  .strategies = XRL_BUCKETS, .option = "burst", .arg = "B",
	  .help = "burst in packets (with pps)" },
	{ .key = "bps", .type = XRL_FIELD_QUANTITY, RULE(bps),
	  .min = 1, .max = XRL_RATE_MAX, .actions = XRL_LIMITED,
	  .strategies = BIT(XRL_STRATEGY_TOKEN_BUCKET),
	  .option = "bps", .arg = "R",
	  .help = "bits per second (k/M/G suffixes)" },
	{ .key = "burst_bytes", .type = XRL_FIELD_QUANTITY, RULE(burst_bytes),
	  .min = 1, .max = XRL_BURST_MAX, .actions = XRL_LIMITED,
	  .strategies = BIT(XRL_STRATEGY_TOKEN_BUCKET),
	  .option = "burst-bytes", .arg = "B",
	  .help = "burst in bytes (with bps)" },
	{ .key = "scope", .type = XRL_FIELD_WORD, RULE(scope),
	  .words = scope_words, .flags = XRL_FIELD_SHOWN, .noun = "scope",
	  .actions = XRL_LIMITED, .option = "scope", .arg = "S",
	  .help = "source (a budget per source, default) or aggregate (one "
		  "for all)" },
	{ .key = "global", .type = XRL_FIELD_FLAG, RULE(global),
	  .line_offset = offsetof(struct xrl_rule_spec, global_line),
	  .actions = XRL_LIMITED, .option = "global",
	  .help = "an aggregate budget shared by every host through Redis" },
	{ .key = "strategy", .type = XRL_FIELD_WORD, RULE(strategy.kind),
	  .words = strategy_words, .flags = XRL_FIELD_SHOWN,
	  .noun = "strategy", .actions = XRL_LIMITED,
	  .option = "strategy", .arg = "S",
	  .help = "token_bucket (default), leaky_bucket or sliding_window" },
	{ .key = "interval", .type = XRL_FIELD_DURATION,
	  RULE(strategy.interval_ns), .min = 1, .max = XRL_INTERVAL_MAX_NS,
	  .flags = XRL_FIELD_CHECKED, .actions = XRL_LIMITED,
	  .strategies = BIT(XRL_STRATEGY_LEAKY_BUCKET),
	  .option = "interval", .arg = "D",
	  .help = "leaky_bucket: one packet every D (100ms, 500us)",
	  .examples = STRATEGY_EXAMPLES, .range = "must be 1ns to 1h" },
	{ .key = "limit", .type = XRL_FIELD_QUANTITY, RULE(strategy.limit),
	  .min = 1, .max = XRL_WINDOW_LIMIT_MAX, .actions = XRL_LIMITED,
	  .strategies = BIT(XRL_STRATEGY_SLIDING_WINDOW),
	  .option = "limit", .arg = "N",
	  .help = "sliding_window: at most N packets ..." },
	{ .key = "window", .type = XRL_FIELD_DURATION, RULE(strategy.window_ns),
	  .min = XRL_WINDOW_MIN_NS, .max = XRL_WINDOW_MAX_NS,
	  .flags = XRL_FIELD_CHECKED, .actions = XRL_LIMITED,
	  .strategies = BIT(XRL_STRATEGY_SLIDING_WINDOW),
	  .option = "window", .arg = "D",
	  .help = "... in any window of D (1s, 1m)",
	  .examples = STRATEGY_EXAMPLES, .range = "must be 1ms to 1h" },
	{ .key = "ban", .type = XRL_FIELD_DURATION, RULE(ban.ns),
	  .min = 1, .max = XRL_BAN_LIMIT_NS,
	  .actions = BIT(XRL_ACTION_LIMIT), .option = "ban", .arg = "D",
	  .help = "ban a source over the limit this long (30s, 10m, 1h, 7d)",
	  .examples = BAN_EXAMPLES,
	  .zero = "a ban lasts at least 1ms (leave ban: out for none)" },
	{ .key = "ban_after", .type = XRL_FIELD_DURATION, RULE(ban.after_ns),
	  .max = XRL_BAN_LIMIT_NS, .actions = BIT(XRL_ACTION_LIMIT),
	  .option = "ban-after", .arg = "D",
	  .help = "once it has been over the limit this long (default: at "
		  "its first drop)",
	  .examples = BAN_EXAMPLES },
	{ .key = "ban_max", .type = XRL_FIELD_DURATION, RULE(ban.max_ns),
	  .min = 1, .max = XRL_BAN_LIMIT_NS, .actions = BIT(XRL_ACTION_LIMIT),
	  .option = "ban-max", .arg = "D",
	  .help = "a repeat offence doubles the ban up to this (default: 8 "
		  "bans)",
	  .examples = BAN_EXAMPLES, .zero = "at least 1ms" },
	{ .key = "escalate_prefix", .type = XRL_FIELD_NUMBER,
	  RULE(ban.escalate.prefix), .min = 1, .max = 127,
	  .flags = XRL_FIELD_RULE_ONLY, .actions = BIT(XRL_ACTION_LIMIT),
	  .option = "escalate-prefix", .arg = "N",
	  .help = "ban the sources' whole /N (of the rule's family) once "
		  "escalate_after of them are banned" },
	{ .key = "escalate_after", .type = XRL_FIELD_NUMBER,
	  RULE(ban.escalate.after), .min = 2, .max = XRL_ESCALATE_AFTER_MAX,
	  .flags = XRL_FIELD_RULE_ONLY, .actions = BIT(XRL_ACTION_LIMIT),
	  .option = "escalate-after", .arg = "K",
	  .help = "distinct sources of one prefix banned that escalate it "
		  "(2 to 16)" },
	{ .key = "escalate_within", .type = XRL_FIELD_DURATION,
	  RULE(ban.escalate.within_ns), .min = 1, .max = XRL_BAN_LIMIT_NS,
	  .flags = XRL_FIELD_RULE_ONLY, .actions = BIT(XRL_ACTION_LIMIT),
	  .option = "escalate-within", .arg = "D",
	  .help = "counted when banned within this long (10m)",
	  .examples = BAN_EXAMPLES,
	  .zero = "at least 1ms" },
	{ .key = "escalate_ban", .type = XRL_FIELD_DURATION,
	  RULE(ban.escalate.ns), .min = 1, .max = XRL_BAN_LIMIT_NS,
	  .flags = XRL_FIELD_RULE_ONLY, .actions = BIT(XRL_ACTION_LIMIT),
	  .option = "escalate-ban", .arg = "D",
	  .help = "the prefix's ban (1h), doubling on a repeat up to "
		  "ban_max",
	  .examples = BAN_EXAMPLES, .zero = "at least 1ms" },
	{ .key = "levels", .type = XRL_FIELD_LEVELS, RULE(levels),
	  .actions = XRL_LIMITED, .sub = xrl_level_fields,
	  .n_sub = ARRAY_SIZE(xrl_level_fields) - 1, .option = "level", .arg = "L",
	  .help = "and each subnet of the rule's sources together: "
		  "PREFIX:pps=R,burst=B[,bps=R,burst_bytes=B] "
		  "(24:pps=1k,burst=2k; ipv4/24, ipv6/48 in the default rule); "
		  "up to 4 times" },
	{ .key = "proto", .type = XRL_FIELD_PROTO, RULE(match.proto),
	  .flags = XRL_FIELD_RULE_ONLY, .noun = "protocol",
	  .expected = "tcp, udp, icmp or icmpv6",
	  .option = "proto", .arg = "P",
	  .help = "only packets of tcp, udp, icmp or icmpv6 (beside the "
		  "CIDR's plain rule)" },
	{ .key = "sport", .type = XRL_FIELD_PORTS, RULE(match.sport_lo),
	  .bit = XRL_MATCH_SPORT, .flags = XRL_FIELD_RULE_ONLY,
	  .option = "sport", .arg = "PORT",
	  .help = "only from this port or LOW-HIGH (tcp, udp)" },
	{ .key = "dport", .type = XRL_FIELD_PORTS, RULE(match.dport_lo),
	  .bit = XRL_MATCH_DPORT, .flags = XRL_FIELD_RULE_ONLY,
	  .option = "dport", .arg = "PORT",
	  .help = "only to this port or LOW-HIGH (tcp, udp)" },
	{ .key = "tcp_flags", .type = XRL_FIELD_TCP_FLAGS, RULE(match.flags),
	  .bit = XRL_MATCH_SYN, .flags = XRL_FIELD_RULE_ONLY, .noun = "flags",
	  .expected = "syn (SYN without ACK)",
	  .option = "tcp-flags", .arg = "F",
	  .help = "syn: only SYNs without ACK" },
	{}
};
const size_t xrl_n_rule_fields = ARRAY_SIZE(xrl_rule_fields) - 1;

static const struct xrl_field key_fields[] = {
	{ .key = "ipv4_prefix", .type = XRL_FIELD_NUMBER, POLICY(v4_prefix),
	  .min = 1, .max = 32, .flags = XRL_FIELD_ALWAYS,
	  .help = "IPv4 sources in one /N share a bucket (default 32)" },
	{ .key = "ipv6_prefix", .type = XRL_FIELD_NUMBER, POLICY(v6_prefix),
	  .min = 1, .max = 128, .flags = XRL_FIELD_ALWAYS,
	  .help = "IPv6 sources in one /N share a bucket (default 64)" },
};

static const struct xrl_field new_sources_fields[] = {
	{ .key = "pps", .type = XRL_FIELD_QUANTITY, POLICY(new_pps),
	  .min = 1, .max = XRL_RATE_MAX,
	  .help = "buckets given to new sources per second" },
	{ .key = "burst", .type = XRL_FIELD_QUANTITY, POLICY(new_burst),
	  .min = 1, .max = XRL_BURST_MAX, .flags = XRL_FIELD_ALWAYS,
	  .help = "and at once" },
};

#define QUIET_MAX_NS		(86400ULL * 1000000000ULL)
#define EVENTS_PER_SECOND_MAX	1000000

static const struct xrl_field events_fields[] = {
	{ .key = "quiet_period", .type = XRL_FIELD_DURATION,
	  POLICY(event_quiet_ns), .max = QUIET_MAX_NS,
	  .flags = XRL_FIELD_ALWAYS,
	  .help = "at most one event per source this often (default 10s)",
	  .examples = "10s, 500ms, 2m or 1h",
	  .range = "over the maximum 24h" },
	{ .key = "max_per_second", .type = XRL_FIELD_NUMBER,
	  POLICY(events_per_second), .max = EVENTS_PER_SECOND_MAX,
	  .flags = XRL_FIELD_ALWAYS,
	  .help = "events of all sources together (default 100; 0: none)" },
};

#define BLOCKLIST(member)	AT(struct xrl_blocklist_spec, member)

/* Read by blocklist.c: name and file are its own checks. */
const struct xrl_field xrl_blocklist_fields[] = {
	{ .key = "name", .type = XRL_FIELD_TEXT, BLOCKLIST(name),
	  .flags = XRL_FIELD_ALWAYS,
	  .help = "the list's name, unique: 1 to 31 of a-z, 0-9, _ and -" },
	{ .key = "file", .type = XRL_FIELD_TEXT, BLOCKLIST(file),
	  .flags = XRL_FIELD_ALWAYS,
	  .help = "its file, an absolute path: one address or CIDR a line, "
		  "# comments" },
	{ .key = "action", .type = XRL_FIELD_WORD, BLOCKLIST(action),
	  .words = blocklist_action_words, .flags = XRL_FIELD_ALWAYS,
	  .noun = "action", .expected = "deny or monitor",
	  .help = "deny (default: dropped before the rules) or monitor "
		  "(counted, then judged by the rules)" },
	{}
};
const size_t xrl_n_blocklist_fields = ARRAY_SIZE(xrl_blocklist_fields) - 1;

#define WORDS_OF(w)	.type = XRL_FIELD_WORD, .words = w##_words
#define VERDICT(name)	.key = #name, WORDS_OF(name), POLICY(name)

const struct xrl_field xrl_policy_fields[] = {
	{ .key = "keys", .type = XRL_FIELD_MAP, .sub = key_fields,
	  .n_sub = ARRAY_SIZE(key_fields), .flags = XRL_FIELD_ALWAYS,
	  .help = "how sources are grouped into buckets" },
	{ VERDICT(malformed), .flags = XRL_FIELD_ALWAYS | XRL_FIELD_LISTED,
	  .help = "packets the parser cannot read: pass (default) or drop" },
	{ VERDICT(vlan_overflow), .flags = XRL_FIELD_LISTED,
	  .help = "frames of more than 8 VLAN tags: drop (default) or pass" },
	{ VERDICT(ipv4_mapped), .flags = XRL_FIELD_LISTED,
	  .help = "IPv6 sources in ::ffff:0:0/96 or ::/96: drop (default) "
		  "or judge them by ipv6 rules" },
	{ VERDICT(unjudged_fragments), .flags = XRL_FIELD_LISTED,
	  .help = "a later fragment whose first was not judged, at a prefix "
		  "with an L4 rule: drop (default) or judge it by the plain "
		  "rules" },
	{ VERDICT(header_overflow), .flags = XRL_FIELD_LISTED,
	  .help = "an IPv6 packet of more than 8 extension headers, at a "
		  "prefix with an L4 rule: drop (default) or plain" },
	{ .key = "new_sources", .type = XRL_FIELD_MAP,
	  .sub = new_sources_fields, .n_sub = ARRAY_SIZE(new_sources_fields),
	  .help = "{pps, burst}, or off: how fast new sources get a bucket" },
	{ .key = "unknown_sources", WORDS_OF(unknown), POLICY(unknown),
	  .expected = "pass, drop or prefix",
	  .help = "a new source the new_sources budget refuses: prefix "
		  "(default: judged with its /24 or /48), pass or drop" },
	{ .key = "events", .type = XRL_FIELD_MAP, .sub = events_fields,
	  .n_sub = ARRAY_SIZE(events_fields),
	  .help = "{quiet_period, max_per_second}: limit events" },
	{ .key = "blocklists", .type = XRL_FIELD_LIST,
	  .sub = xrl_blocklist_fields,
	  .n_sub = ARRAY_SIZE(xrl_blocklist_fields) - 1,
	  .help = "lists of addresses and CIDRs judged before the rules, "
		  "at most 8 of up to 1048576 entries each" },
	{ .key = "interfaces", .type = XRL_FIELD_LIST,
	  .flags = XRL_FIELD_DAEMON,
	  .help = "the interfaces the daemon attaches to (at most 32)" },
	{ .key = "default", .type = XRL_FIELD_MAP, .sub = xrl_rule_fields,
	  .flags = XRL_FIELD_ALWAYS,
	  .help = "the rule of every source no rule matches" },
	{ .key = "rules", .type = XRL_FIELD_LIST, .sub = xrl_rule_fields,
	  .flags = XRL_FIELD_ALWAYS,
	  .help = "the rules, at most 1048575" },
	{ .key = "redis", .type = XRL_FIELD_TEXT, .flags = XRL_FIELD_DAEMON,
	  .help = "HOST:PORT of the Redis that global budgets are shared "
		  "through" },
	{ .key = "sync_interval", .type = XRL_FIELD_DURATION,
	  .min = XRL_SYNC_INTERVAL_MIN_MS * 1000000ULL,
	  .max = XRL_SYNC_INTERVAL_MAX_MS * 1000000ULL,
	  .flags = XRL_FIELD_DAEMON,
	  .help = "how often the daemon re-splits aggregate budgets (default "
		  "100ms; a number alone is ms)" },
	{ .key = "metrics", .type = XRL_FIELD_TEXT, .flags = XRL_FIELD_DAEMON,
	  .help = "ADDR:PORT the daemon serves /metrics and /healthz on "
		  "(127.0.0.1:9101, [::1]:9101)" },
	{}
};
const size_t xrl_n_policy_fields = ARRAY_SIZE(xrl_policy_fields) - 1;

const struct xrl_field *xrl_field_find(const struct xrl_field *table,
				       size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}

const struct xrl_field *xrl_rule_field_of_option(const char *option)
{
	size_t i;

	for (i = 0; i < xrl_n_rule_fields; i++)
		if (xrl_rule_fields[i].option &&
		    !strcmp(xrl_rule_fields[i].option, option))
			return &xrl_rule_fields[i];
	return NULL;
}

/* ---- values --------------------------------------------------------- */

static void *value_at(const struct xrl_field *f, const void *obj)
{
	return (char *)obj + f->offset;
}

static uint64_t number_at(const struct xrl_field *f, const void *obj)
{
	const void *p = value_at(f, obj);

	switch (f->size) {
	case sizeof(uint8_t):
		return *(const uint8_t *)p;
	case sizeof(uint32_t):
		return *(const uint32_t *)p;
	default:
		return *(const uint64_t *)p;
	}
}

static void set_number(const struct xrl_field *f, void *obj, uint64_t value)
{
	void *p = value_at(f, obj);

	switch (f->size) {
	case sizeof(uint8_t):
		*(uint8_t *)p = (uint8_t)value;
		break;
	case sizeof(uint32_t):
		*(uint32_t *)p = (uint32_t)value;
		break;
	default:
		*(uint64_t *)p = value;
	}
}

void xrl_field_set_value(const struct xrl_field *f, void *obj,
			 uint64_t value)
{
	if (f->type == XRL_FIELD_FLAG)
		*(bool *)value_at(f, obj) = value != 0;
	else
		set_number(f, obj, value);
}

/* The match a PORTS or TCP_FLAGS field is part of. */
static struct xrl_rule_match *match_of(const void *obj)
{
	return &((struct xrl_rule_spec *)obj)->match;
}

uint64_t xrl_field_value(const struct xrl_field *f, const void *obj)
{
	if (f->type == XRL_FIELD_FLAG)
		return *(const bool *)value_at(f, obj);
	return number_at(f, obj);
}

bool xrl_field_is_set(const struct xrl_field *f, const void *obj, bool json)
{
	if (f->flags & XRL_FIELD_ALWAYS || (json && f->flags & XRL_FIELD_SHOWN))
		return true;
	switch (f->type) {
	case XRL_FIELD_LEVELS:
		return ((const struct xrl_rule_spec *)obj)->n_levels > 0;
	case XRL_FIELD_PORTS:
	case XRL_FIELD_TCP_FLAGS:
		return match_of(obj)->flags & f->bit;
	case XRL_FIELD_FLAG:
	case XRL_FIELD_WORD:
	case XRL_FIELD_NUMBER:
	case XRL_FIELD_QUANTITY:
	case XRL_FIELD_DURATION:
	case XRL_FIELD_PROTO:
		return xrl_field_value(f, obj) != 0;
	default:
		return true;
	}
}

static int value_in(const char *const *words, const char *text,
		    unsigned *value);

static const char *word_of(const struct xrl_field *f, unsigned value)
{
	unsigned i;

	for (i = 0; f->words[i]; i++)
		if (i == value)
			return f->words[i];
	return "?";
}

void xrl_field_format(const struct xrl_field *f, const void *obj, char *buf,
		      size_t len)
{
	const __u16 *ports = value_at(f, obj);

	switch (f->type) {
	case XRL_FIELD_NAME:
		snprintf(buf, len, "%s", (const char *)value_at(f, obj));
		break;
	case XRL_FIELD_CIDR:
		xrl_cidr_format(value_at(f, obj), buf, len);
		break;
	case XRL_FIELD_WORD:
		snprintf(buf, len, "%s", word_of(f, number_at(f, obj)));
		break;
	case XRL_FIELD_FLAG:
		snprintf(buf, len, "%s", xrl_field_value(f, obj) ? "true" :
			 "false");
		break;
	case XRL_FIELD_QUANTITY:
		xrl_format_quantity(number_at(f, obj), buf, len);
		break;
	case XRL_FIELD_DURATION:
		xrl_duration_ns_format(number_at(f, obj), buf, len);
		break;
	case XRL_FIELD_PROTO:
		snprintf(buf, len, "%s",
			 xrl_match_proto_name((__u8)number_at(f, obj)));
		break;
	case XRL_FIELD_PORTS:
		snprintf(buf, len, ports[0] == ports[1] ? "%u" : "%u-%u",
			 ports[0], ports[1]);
		break;
	case XRL_FIELD_TCP_FLAGS:
		snprintf(buf, len, "syn");
		break;
	default:
		snprintf(buf, len, "%" PRIu64, number_at(f, obj));
	}
}

/* ---- refusals ------------------------------------------------------- */

#define SHOWN_MAX	64	/* bytes of a refused value quoted */

/*
 * A refusal in @style: the file's words alone ("not a whole number"), or
 * the socket's after the key ("pps: \"1.5\" is not a quantity ...").
 */
static int refuse(const struct xrl_field *f, enum xrl_field_style style,
		  char *why, size_t len, const char *file, const char *socket)
{
	if (style == XRL_STYLE_FILE)
		snprintf(why, len, "%s", file);
	else
		snprintf(why, len, "%s: %s", f->key, socket);
	return -EINVAL;
}

/* "\"TEXT\" WORDS" into @buf, for the socket's refusals. */
static const char *quoted(char *buf, size_t len, const char *text,
			  const char *words)
{
	snprintf(buf, len, "\"%.*s\" %s", SHOWN_MAX, text, words);
	return buf;
}

/* Both wordings the same after the value: "... is WORDS". */
static int refuse_is(const struct xrl_field *f, const char *text,
		     enum xrl_field_style style, char *why, size_t len,
		     const char *words)
{
	char is[160], socket[256];

	snprintf(is, sizeof(is), "is %s", words);
	return refuse(f, style, why, len, words,
		      quoted(socket, sizeof(socket), text, is));
}

/* "a, b or c" of a WORD field's words (@last before the last one). */
static void word_list(const struct xrl_field *f, const char *last, char *buf,
		      size_t len)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; f->words[i] && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s",
				 !i ? "" : f->words[i + 1] ? ", " : last,
				 f->words[i]);
}

/* A word not among @f's: "unknown NOUN, expected a, b or c" (or "must be
 * a or b" for a setting), "unknown NOUN \"x\" (a, b, c)" on the socket. */
static int refuse_word(const struct xrl_field *f, const char *text,
		       enum xrl_field_style style, char *why, size_t len,
		       const char *file_list, const char *socket_list)
{
	char file[200], socket[256];

	if (f->noun)
		snprintf(file, sizeof(file), "unknown %s, expected %s",
			 f->noun, file_list);
	else
		snprintf(file, sizeof(file), "must be %s", file_list);
	snprintf(socket, sizeof(socket), "unknown %s \"%.*s\" (%s)",
		 f->noun ? f->noun : f->key, SHOWN_MAX, text, socket_list);
	return refuse(f, style, why, len, file, socket);
}

/* ---- parsing, by type ----------------------------------------------- */

static int parse_word(const struct xrl_field *f, const char *text, void *obj,
		      enum xrl_field_style style, char *why, size_t len)
{
	char file_list[128], socket_list[128];
	unsigned value;

	if (!value_in(f->words, text, &value)) {
		set_number(f, obj, value);
		return 0;
	}
	word_list(f, " or ", file_list, sizeof(file_list));
	word_list(f, ", ", socket_list, sizeof(socket_list));
	return refuse_word(f, text, style, why, len,
			   f->expected ? f->expected : file_list, socket_list);
}

static int parse_flag(const struct xrl_field *f, const char *text, void *obj,
		      enum xrl_field_style style, char *why, size_t len)
{
	bool *value = value_at(f, obj);

	if (strcmp(text, "true") && strcmp(text, "false"))
		return refuse(f, style, why, len, "must be true or false",
			      "must be true or false");
	*value = !strcmp(text, "true");
	return 0;
}

static int parse_number(const struct xrl_field *f, const char *text,
			void *obj, enum xrl_field_style style, char *why,
			size_t len)
{
	unsigned long long n = 0;
	char bounds[64], socket[160];
	const char *p;

	for (p = text; *p >= '0' && *p <= '9' && n <= f->max; p++)
		n = n * 10 + (unsigned)(*p - '0');
	if (p != text && !*p && n >= f->min && n <= f->max) {
		set_number(f, obj, n);
		return 0;
	}
	snprintf(bounds, sizeof(bounds), "must be %" PRIu64 " to %" PRIu64,
		 f->min, f->max);
	return refuse(f, style, why, len, bounds,
		      quoted(socket, sizeof(socket), text, bounds));
}

/* The socket's quantities are bounded by the rule check (0 is "none"). */
static int parse_quantity(const struct xrl_field *f, const char *text,
			  void *obj, enum xrl_field_style style, char *why,
			  size_t len)
{
	char over[64];
	uint64_t value;
	int ret = xrl_parse_quantity(text, &value);

	if (style == XRL_STYLE_SOCKET && ret)
		return refuse_is(f, text, style, why, len, "not a quantity "
				 "(like 1500, 10k, 2.5M, 1G)");
	if (style == XRL_STYLE_SOCKET)
		goto set;
	snprintf(over, sizeof(over), "over the maximum %" PRIu64, f->max);
	if (ret == -EDOM)
		return refuse_is(f, text, style, why, len,
				 "not a whole number");
	if (ret == -ERANGE || (!ret && value > f->max))
		return refuse_is(f, text, style, why, len, over);
	if (ret)
		return refuse_is(f, text, style, why, len, "not a number with "
				 "an optional k, M or G");
	if (value < f->min)
		return refuse_is(f, text, style, why, len,
				 "must be at least 1");
set:
	set_number(f, obj, value);
	return 0;
}

/*
 * A refused 0 has words of its own (@zero), or is out of range; a value
 * out of range says @range, or the maximum. The socket leaves the maximum
 * of a CHECKED field to the rule check.
 */
static int parse_duration(const struct xrl_field *f, const char *text,
			  void *obj, enum xrl_field_style style, char *why,
			  size_t len)
{
	bool socket = style == XRL_STYLE_SOCKET;
	uint64_t max = socket && f->flags & XRL_FIELD_CHECKED ? UINT64_MAX :
		       f->max;
	char words[160], shown[32];
	uint64_t ns;
	int ret = xrl_duration_ns_parse(text, max, &ns);

	if (ret == -EINVAL) {
		snprintf(words, sizeof(words), "not a duration such as %s",
			 f->examples);
		return refuse_is(f, text, style, why, len, words);
	}
	if (!ret && ns >= f->min && ns <= max) {
		set_number(f, obj, ns);
		return 0;
	}
	if (!ret && !ns && f->zero)
		return refuse(f, style, why, len, f->zero, f->zero);
	if (socket && !ret && ns < f->min)
		return refuse_is(f, text, style, why, len, "out of range");
	if (f->range && !socket)
		return refuse_is(f, text, style, why, len, f->range);
	xrl_duration_ns_format(f->max, shown, sizeof(shown));
	snprintf(words, sizeof(words), "over the maximum %s", shown);
	return refuse_is(f, text, style, why, len, words);
}

static int parse_cidr(const struct xrl_field *f, const char *text, void *obj,
		      enum xrl_field_style style, char *why, size_t len)
{
	struct xrl_lpm_key *key = value_at(f, obj);
	char ipv4[64], file[160], socket[256];
	int ret = xrl_cidr_parse(text, key);

	if (ret == -ERANGE)
		return refuse(f, style, why, len, "prefix length out of range "
			      "(0-32 for IPv4, 0-128 for IPv6)",
			      quoted(socket, sizeof(socket), text,
				     "has a bad prefix length"));
	if (ret == -EADDRNOTAVAIL)
		return refuse(f, style, why, len, "host bits set after the "
			      "prefix length",
			      quoted(socket, sizeof(socket), text,
				     "has host bits set"));
	if (ret)
		return refuse(f, style, why, len, "not an IPv4 or IPv6 address "
			      "or prefix",
			      quoted(socket, sizeof(socket), text,
				     "is not an IPv4 or IPv6 address"));
	if (!xrl_cidr_names_ipv4(text, key, ipv4, sizeof(ipv4)))
		return 0;
	snprintf(file, sizeof(file), "an IPv4 prefix written as IPv6, which "
		 "matches no IPv4 source: write %s", ipv4);
	return refuse_is(f, text, style, why, len, file);
}

static int parse_proto(const struct xrl_field *f, const char *text, void *obj,
		       enum xrl_field_style style, char *why, size_t len)
{
	__u8 proto;

	if (!xrl_match_proto_parse(text, &proto)) {
		set_number(f, obj, proto);
		return 0;
	}
	return refuse_word(f, text, style, why, len, f->expected,
			   "tcp, udp, icmp, icmpv6");
}

/* A PORTS field sets its range and the match's bit for it. */
static int parse_ports(const struct xrl_field *f, const char *text, void *obj,
		       enum xrl_field_style style, char *why, size_t len)
{
	__u16 *range = value_at(f, obj);
	char socket[256];
	int ret = xrl_match_ports_parse(text, &range[0], &range[1]);

	match_of(obj)->flags |= f->bit;
	snprintf(socket, sizeof(socket), "\"%.*s\": range low end above its "
		 "high end", SHOWN_MAX, text);
	if (ret == -ERANGE)
		return refuse(f, style, why, len, "range low end above its "
			      "high end", socket);
	if (ret)
		return refuse_is(f, text, style, why, len, "not a port 0-65535 "
				 "or a range LOW-HIGH");
	return 0;
}

static int parse_tcp_flags(const struct xrl_field *f, const char *text,
			   void *obj, enum xrl_field_style style, char *why,
			   size_t len)
{
	if (!xrl_match_flags_parse(text, &match_of(obj)->flags))
		return 0;
	return refuse_word(f, text, style, why, len, f->expected, "syn");
}

int xrl_field_parse(const struct xrl_field *f, const char *text, void *obj,
		    enum xrl_field_style style, char *why, size_t len)
{
	switch (f->type) {
	case XRL_FIELD_CIDR:
		return parse_cidr(f, text, obj, style, why, len);
	case XRL_FIELD_WORD:
		return parse_word(f, text, obj, style, why, len);
	case XRL_FIELD_FLAG:
		return parse_flag(f, text, obj, style, why, len);
	case XRL_FIELD_NUMBER:
		return parse_number(f, text, obj, style, why, len);
	case XRL_FIELD_QUANTITY:
		return parse_quantity(f, text, obj, style, why, len);
	case XRL_FIELD_DURATION:
		return parse_duration(f, text, obj, style, why, len);
	case XRL_FIELD_PROTO:
		return parse_proto(f, text, obj, style, why, len);
	case XRL_FIELD_PORTS:
		return parse_ports(f, text, obj, style, why, len);
	case XRL_FIELD_TCP_FLAGS:
		return parse_tcp_flags(f, text, obj, style, why, len);
	default:
		/* NAME, and the types each reader reads its own way. */
		snprintf(why, len, "%s: not a single value", f->key);
		return -EINVAL;
	}
}

/* ---- the words of WORD fields, by name ------------------------------ */

static const char *name_in(const char *const *words, unsigned count,
			   unsigned value)
{
	return value < count ? words[value] : "?";
}

static int value_in(const char *const *words, const char *text,
		    unsigned *value)
{
	unsigned i;

	for (i = 0; words[i]; i++) {
		if (!strcmp(text, words[i])) {
			*value = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *xrl_action_name(enum xrl_action action)
{
	return name_in(action_words, XRL_ACTION_COUNT, action);
}

int xrl_action_parse(const char *text, enum xrl_action *action)
{
	return value_in(action_words, text, (unsigned *)action);
}

const char *xrl_scope_name(enum xrl_scope scope)
{
	return name_in(scope_words, XRL_SCOPE_COUNT, scope);
}

int xrl_scope_parse(const char *text, enum xrl_scope *scope)
{
	return value_in(scope_words, text, (unsigned *)scope);
}

const char *xrl_strategy_name(enum xrl_strategy strategy)
{
	return name_in(strategy_words, XRL_STRATEGY_COUNT, strategy);
}

int xrl_strategy_parse(const char *text, enum xrl_strategy *strategy)
{
	return value_in(strategy_words, text, (unsigned *)strategy);
}

const char *xrl_unknown_name(enum xrl_unknown_verdict verdict)
{
	return name_in(unknown_words, XRL_UNKNOWN_COUNT, verdict);
}

int xrl_unknown_parse(const char *text, enum xrl_unknown_verdict *verdict)
{
	return value_in(unknown_words, text, (unsigned *)verdict);
}

const char *xrl_blocklist_action_name(enum xrl_blocklist_action action)
{
	return name_in(blocklist_action_words, XRL_BLOCKLIST_ACTIONS, action);
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rule_spec.h - a rule in memory, as the policy file and the control
 * socket describe it: what every part of the core reads and writes. Its
 * keys: fields.h; its checks and compiled form: rule.h.
 */
#ifndef XRL_RULE_SPEC_H
#define XRL_RULE_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include "xrl.h"

#define XRL_RULE_NAME_MAX	64
#define XRL_DEFAULT_RULE_NAME	"default"

/* Bans: the longest a ban may be, and ban_max unless set (ban * 8). */
#define XRL_BAN_LIMIT_NS	(30ULL * 86400 * 1000000000ULL)
#define XRL_BAN_MAX_FACTOR	8

/* Bounds of the strategy's values. */
#define XRL_INTERVAL_MAX_NS	(3600ULL * 1000000000ULL)	/* 1h */
#define XRL_WINDOW_MIN_NS	1000000ULL			/* 1ms */
#define XRL_WINDOW_MAX_NS	XRL_INTERVAL_MAX_NS		/* 1h */

/*
 * How a rule's limit is meant (docs/POLICY.md "strategy"; strategy.c).
 * A token bucket uses pps/burst and bps/burst_bytes; a leaky bucket a
 * pace, interval_ns or pps, with burst 1 unless set; a sliding window
 * limit packets in any window_ns.
 */
struct xrl_strategy_spec {
	enum xrl_strategy kind;
	uint64_t interval_ns;		/* leaky_bucket: "interval:", or 0 */
	uint64_t limit;			/* sliding_window: packets ... */
	uint64_t window_ns;		/* ... in any window this long */
};

/*
 * A level of a rule (docs/POLICY.md "Levels"; include/xrl.h, struct
 * xrl_rule_levels): the rule's sources masked to @prefix bits of
 * @family share one more bucket, of its own limits.
 */
struct xrl_level_spec {
	enum xrl_family family;		/* XRL_FAMILY_IPV4 or _IPV6 */
	unsigned prefix;		/* length within the family */
	uint64_t pps, burst;		/* 0: no packet limit */
	uint64_t bps, burst_bytes;	/* 0: no bit-rate limit */
	int line;			/* in the policy file, or 0 */
};

struct xrl_rule_spec {
	char name[XRL_RULE_NAME_MAX];
	struct xrl_lpm_key prefix;	/* IPv4-mapped; prefixlen 0: default */
	uint32_t id;			/* key of xrl_rule_stats, < XRL_RULE_IDS */
	enum xrl_action action;
	uint64_t pps, burst;		/* 0: no packet limit */
	uint64_t bps, burst_bytes;	/* 0: no bit-rate limit */
	enum xrl_scope scope;		/* per source, or one for the rule */
	bool global;			/* aggregate shared across hosts */
	int line;			/* line in the policy file, or 0 */
	int global_line;		/* line of its "global:", or 0 */
	bool runtime;			/* added through the control socket */
	struct xrl_strategy_spec strategy;
	struct xrl_rule_spec_ban {	/* ban:, ban_after:, ban_max: */
		uint64_t ns;		/* 0: no bans */
		uint64_t after_ns;
		uint64_t max_ns;	/* 0: XRL_BAN_MAX_FACTOR * ns */
		/* escalate_*: a subnet's bans (docs/POLICY.md
		 * "Escalation"); after 0: none. */
		struct xrl_rule_spec_escalate {
			unsigned prefix;	/* within the rule's family */
			unsigned after;		/* distinct sources banned */
			uint64_t within_ns;	/* ... within this long */
			uint64_t ns;		/* the prefix's ban */
		} escalate;
	} ban;
	struct xrl_rule_match match;	/* L4 keys; all 0: plain (no next) */
	struct xrl_level_spec levels[XRL_LEVELS_MAX];	/* levels: */
	unsigned n_levels;
};

#endif

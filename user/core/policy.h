/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy.h - a rule set in memory: built (from a YAML file, or from
 * control commands) and checked whole. How it becomes the data path's:
 * policy_map.h.
 */
#ifndef XRL_POLICY_H
#define XRL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xrl.h"

#define XRL_RULE_NAME_MAX	64
#define XRL_DEFAULT_RULE_NAME	"default"

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
	uint32_t id;			/* index into xrl_rule_stats */
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
	} ban;
	struct xrl_rule_match match;	/* L4 keys; all 0: plain (no next) */
	struct xrl_level_spec levels[XRL_LEVELS_MAX];	/* levels: */
	unsigned n_levels;
};

/* Bans: the longest a ban may be, and ban_max unless set (ban * 8). */
#define XRL_BAN_LIMIT_NS	(30ULL * 86400 * 1000000000ULL)
#define XRL_BAN_MAX_FACTOR	8

struct xrl_policy {
	uint32_t v4_prefix;		/* source key prefix for IPv4: 1..32 */
	uint32_t v6_prefix;		/* and for IPv6: 1..128 */
	enum xrl_malformed_verdict malformed;
	enum xrl_vlan_overflow_verdict vlan_overflow;	/* vlan_overflow: */
	enum xrl_ipv4_mapped_verdict ipv4_mapped;	/* ipv4_mapped: */
	/* unjudged_fragments:, header_overflow: */
	enum xrl_unjudged_fragments_verdict unjudged_fragments;
	enum xrl_header_overflow_verdict header_overflow;
	/* New-source budget (new_sources:): both 0 for the default derived
	 * from the table size, or off for no budget at all. */
	uint64_t new_pps, new_burst;
	bool new_sources_off;
	enum xrl_unknown_verdict unknown;	/* unknown_sources: */
	/* events: quiet period of a source, and the global cap (0: no
	 * events at all). */
	uint64_t event_quiet_ns;
	uint64_t events_per_second;
	bool manual_bans;	/* the daemon's: xrl_manual_bans in use */
	struct xrl_rule_spec *rules;	/* rules[0] is the default rule */
	size_t n_rules;
	size_t cap_rules;
};

/* A policy of just a default rule that allows all, /32 and /64 keys. */
int xrl_policy_init(struct xrl_policy *policy);
void xrl_policy_free(struct xrl_policy *policy);

/* Appends a copy of @rule (its id is assigned). -EEXIST for a prefix
 * and L4 match already in the policy, -EMLINK for a prefix that holds
 * XRL_MATCH_CHAIN_MAX rules already, -ENOSPC past XRL_MAX_RULES. */
int xrl_policy_add(struct xrl_policy *policy, const struct xrl_rule_spec *rule);

/*
 * Appends @n rules as n calls of xrl_policy_add would (same ids), in
 * O(n log n) rather than O(n^2), for whole files. All or nothing: -EEXIST
 * with *@clash the index of the first rule whose prefix and L4 match an
 * earlier rule (of the policy or of @rules) has, or -EMLINK with the
 * first past XRL_MATCH_CHAIN_MAX at its prefix; -ENOSPC past
 * XRL_MAX_RULES.
 */
int xrl_policy_add_many(struct xrl_policy *policy,
			const struct xrl_rule_spec *rules, size_t n,
			size_t *clash);

/* Removes the rule of that name or CIDR text. -ENOENT when none. */
int xrl_policy_del(struct xrl_policy *policy, const char *name_or_cidr);

/* Finds a rule by name or CIDR text, or NULL. */
struct xrl_rule_spec *xrl_policy_find(struct xrl_policy *policy,
				      const char *name_or_cidr);

/*
 * Parses "198.18.0.0/15", "fd00::/8", "198.18.0.1" (a /32) or
 * "fd00::1" (a /128) into an IPv4-mapped LPM key. -EINVAL for text that is
 * no address, -ERANGE for a bad length, -EADDRNOTAVAIL for host bits set.
 */
int xrl_cidr_parse(const char *text, struct xrl_lpm_key *key);
/*
 * True when @text, parsed into @key, is an IPv6 prefix of IPv4-mapped
 * (::ffff:0:0/96) or IPv4-compatible (::/96) addresses other than just
 * :: and ::1: a rule that would never match the IPv4 sources it names
 * (the data path keeps IPv6 sources apart). Writes the IPv4 prefix meant
 * into @ipv4.
 */
bool xrl_cidr_names_ipv4(const char *text, const struct xrl_lpm_key *key,
			 char *ipv4, size_t len);
/* IPv4, IPv6, or ANY for the default rule (/0). */
enum xrl_family xrl_prefix_family(const struct xrl_lpm_key *prefix);
/* Writes a key back as CIDR text ("0.0.0.0/0" style for the default). */
void xrl_cidr_format(const struct xrl_lpm_key *key, char *buf, size_t len);

/*
 * Checks a rule's name: it is shown, logged and written to YAML, so 1 to
 * XRL_RULE_NAME_MAX - 1 printable bytes, and never the CIDR of a prefix
 * other than @prefix (names and CIDRs both find rules). On error returns
 * -EINVAL and writes "name: what is wrong" into @err.
 */
int xrl_rule_name_check(const char *name, const struct xrl_lpm_key *prefix,
			char *err, size_t len);

/*
 * Checks one rule: an action, and for limit/monitor at least one limit
 * with a non-zero burst, each compilable. On error returns -EINVAL and
 * writes "field: what is wrong" into @err.
 */
int xrl_rule_check(const struct xrl_rule_spec *rule, char *err, size_t len);

/* The ban_max of a rule: its own, or ban * XRL_BAN_MAX_FACTOR (at most
 * XRL_BAN_LIMIT_NS). */
uint64_t xrl_rule_ban_max(const struct xrl_rule_spec *rule);

/*
 * Levels (levels.c). xrl_levels_check() is xrl_rule_check()'s part: the
 * rule may have levels (limit or monitor, scope source, no sliding
 * window), each of its family, no shorter than the rule's prefix, no two
 * alike, with limits that compile. xrl_levels_check_keys() the policy's
 * part: each level shorter than its family's source key (@v4_prefix,
 * @v6_prefix). -EINVAL with "levels[i].field: what is wrong" in @err.
 */
int xrl_levels_check(const struct xrl_rule_spec *rule, char *err, size_t len);
int xrl_levels_check_keys(const struct xrl_rule_spec *rule, unsigned v4_prefix,
			  unsigned v6_prefix, char *err, size_t len);
/* The rule's levels as the data path takes them: @out (in the rule's
 * value) and each level's limits. */
int xrl_levels_compile(const struct xrl_rule_spec *rule,
		       struct xrl_rule_levels *out,
		       struct xrl_limits limits[XRL_LEVELS_MAX]);
/*
 * A level as text, for the control socket and the CLI: "24:pps=1k,burst=2k"
 * (PREFIX:KEY=VALUE,... with the keys of the policy file's level and its
 * quantities), the prefix of the rule's family, or "ipv4/24", "ipv6/48"
 * (the only way in the default rule, @rule_family XRL_FAMILY_ANY). -EINVAL
 * with "levels[@index].field: what is wrong" in @err; the ranges are
 * xrl_levels_check()'s. Formatted back the same way, parsing back to the
 * same level.
 */
int xrl_level_parse(const char *text, unsigned index,
		    enum xrl_family rule_family, struct xrl_level_spec *level,
		    char *err, size_t len);
void xrl_level_format(const struct xrl_level_spec *level,
		      enum xrl_family rule_family, char *buf, size_t len);
/* Whether two rules have the same levels. */
bool xrl_levels_equal(const struct xrl_rule_spec *a,
		      const struct xrl_rule_spec *b);

/* Compiles a checked rule into the map value. */
int xrl_rule_compile(const struct xrl_rule_spec *rule, struct xrl_rule *out);

/* Builds the settings map value of a policy for a data path whose bucket
 * table holds @max_sources, on @n_cpus CPUs (the budget is split). */
void xrl_policy_settings(const struct xrl_policy *policy, __u32 max_sources,
			 unsigned n_cpus, struct xrl_settings *out);

/* The new-source budget a policy gets on a table of @max_sources: its
 * own, or the default (XRL_TURNOVER_S, XRL_BURST_DIVISOR in xrl.h).
 * Both 0 when it is off. */
void xrl_new_sources_budget(const struct xrl_policy *policy,
			    __u32 max_sources, uint64_t *pps, uint64_t *burst);

/* "prefix", "pass", "drop"; parse returns -EINVAL for other text. */
const char *xrl_unknown_name(enum xrl_unknown_verdict verdict);
int xrl_unknown_parse(const char *text, enum xrl_unknown_verdict *verdict);

const char *xrl_action_name(enum xrl_action action);
/* "source", "aggregate"; parse returns -EINVAL for other text. */
const char *xrl_scope_name(enum xrl_scope scope);
int xrl_scope_parse(const char *text, enum xrl_scope *scope);
int xrl_action_parse(const char *text, enum xrl_action *action);

/*
 * Strategies (strategy.c). Names: "token_bucket", "leaky_bucket",
 * "sliding_window"; parse returns -EINVAL for other text.
 */
const char *xrl_strategy_name(enum xrl_strategy strategy);
int xrl_strategy_parse(const char *text, enum xrl_strategy *strategy);

/* Bounds of the strategy's values. */
#define XRL_INTERVAL_MAX_NS	(3600ULL * 1000000000ULL)	/* 1h */
#define XRL_WINDOW_MIN_NS	1000000ULL			/* 1ms */
#define XRL_WINDOW_MAX_NS	XRL_INTERVAL_MAX_NS		/* 1h */


/*
 * The strategy's checks of xrl_rule_check(): keys that do not fit the
 * strategy, missing ones (for limit and monitor rules, @limited) and
 * ranges. -EINVAL with "field: what is wrong" in @err.
 */
int xrl_strategy_check(const struct xrl_rule_spec *rule, bool limited,
		       char *err, size_t len);
/* The strategy's part of xrl_rule_compile(): the packet limit of a
 * leaky bucket or of a sliding window's fallback, and out->window. */
int xrl_strategy_compile(const struct xrl_rule_spec *rule,
			 struct xrl_rule *out);

/*
 * Changing the running policy (policy_running.c).
 */

/* A deep copy of @src into @dst (uninitialised). 0 or -ENOMEM. */
int xrl_policy_copy(struct xrl_policy *dst, const struct xrl_policy *src);

/* Pointers to the rules of @policy sorted by prefix (free() it), for
 * xrl_policy_find_sorted; NULL when out of memory. */
const struct xrl_rule_spec **xrl_policy_sorted(const struct xrl_policy *policy);
/* The rule of exactly @prefix and @match (its next not compared) among
 * @n sorted ones, or NULL. */
const struct xrl_rule_spec *
xrl_policy_find_sorted(const struct xrl_rule_spec **sorted, size_t n,
		       const struct xrl_lpm_key *prefix,
		       const struct xrl_rule_match *match);

/*
 * Where new rule ids come from: the lowest id never handed out (ids are
 * not reused while the data path may hold counters or buckets for them),
 * and whether the ids wrapped past the limit (the data path's rule
 * capacity, at most XRL_MAX_RULES) since the data path was
 * loaded (then a new id may have been used before, and its state must be
 * wiped before a rule gets it).
 */
struct xrl_id_mark {
	uint32_t next_id;	/* 1 on a fresh data path */
	uint32_t limit;		/* ids are below it; 0: XRL_MAX_RULES */
	bool wrapped;
};

/*
 * Gives every rule of @next whose prefix is in @running the id it holds
 * there (a rule is its prefix: the default rule keeps 0), so the buckets
 * and counters (keyed by rule id) stay with the rules that persist, and
 * every other rule a new id from @mark on, skipping ids either policy
 * holds; @mark moves past the ids taken. With @fresh (n_rules entries),
 * marks which rules got a new id. 0, -ENOMEM or -ENOSPC.
 */
int xrl_policy_assign_ids(struct xrl_policy *next,
			  const struct xrl_policy *running,
			  struct xrl_id_mark *mark, bool *fresh);

/* The same with new ids above the highest one of @running: for policies
 * held in memory only (a data path keeps its mark, policy_map.h). */
int xrl_policy_carry_ids(struct xrl_policy *next,
			 const struct xrl_policy *running);

#endif

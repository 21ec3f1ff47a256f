/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy.h - a rule set in memory: built (from a YAML file, or from
 * control commands) and checked whole, and the settings of the data path
 * it makes. How it becomes the data path's: policy_map.h.
 */
#ifndef XRL_POLICY_H
#define XRL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rule_spec.h"
#include "xrl.h"

/* A list of blocklists: (name, file, action), read by blocklist.h. */
#define XRL_BLOCKLIST_NAME_MAX	XRL_BLOCKLIST_NAME_LEN	/* with the NUL */
#define XRL_BLOCKLIST_FILE_MAX	256	/* with the NUL */

struct xrl_blocklist_spec {
	char name[XRL_BLOCKLIST_NAME_MAX];	/* [a-z0-9_-], unique */
	char file[XRL_BLOCKLIST_FILE_MAX];	/* an absolute path */
	enum xrl_blocklist_action action;
	int line;				/* of the policy file, or 0 */
};

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
	/* blocklists:, in the order looked up. Their files are read again
	 * when the policy is applied with @blocklists_read set (a policy
	 * file read: reload, attach); otherwise a list of the same name,
	 * file and action keeps the trie in force. */
	struct xrl_blocklist_spec blocklists[XRL_BLOCKLISTS_MAX];
	size_t n_blocklists;
	bool blocklists_read;
	/* Their tries built already (the daemon's reload thread), owned
	 * here: fds, -1 for a list of no entries. Not copied. */
	bool blocklists_built;
	int blocklist_fds[XRL_BLOCKLISTS_MAX];
	struct xrl_rule_spec *rules;	/* rules[0] is the default rule */
	size_t n_rules;
	size_t cap_rules;
};

/* A policy of just a default rule that allows all, /32 and /64 keys. */
int xrl_policy_init(struct xrl_policy *policy);
void xrl_policy_free(struct xrl_policy *policy);
/* Once @policy is in force: its tries built are the data path's now (the
 * fds closed), and a later apply of it keeps the lists in force. */
void xrl_policy_blocklists_applied(struct xrl_policy *policy);

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

/* The rule of exactly @prefix and L4 match @match (a rule is both), or
 * NULL. */
struct xrl_rule_spec *xrl_policy_find_match(struct xrl_policy *policy,
					    const struct xrl_lpm_key *prefix,
					    const struct xrl_rule_match *match);

/* Builds the settings map value of a policy for a data path whose bucket
 * table holds @max_sources, on @n_cpus CPUs (the budget is split). */
void xrl_policy_settings(const struct xrl_policy *policy, __u32 max_sources,
			 unsigned n_cpus, struct xrl_settings *out);

/* The new-source budget a policy gets on a table of @max_sources: its
 * own, or the default (XRL_TURNOVER_S, XRL_BURST_DIVISOR in xrl.h).
 * Both 0 when it is off. */
void xrl_new_sources_budget(const struct xrl_policy *policy,
			    __u32 max_sources, uint64_t *pps, uint64_t *burst);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_map.h - a policy in the data path: applied in one step (its
 * rules are built into the slot no packet reads, rulemaps.h, then a new
 * head naming them, with the policy's settings, is swapped in with a
 * single update: include/xrl.h), read back, compared.
 */
#ifndef XRL_POLICY_MAP_H
#define XRL_POLICY_MAP_H

#include <stddef.h>
#include "policy.h"

struct xrl_datapath;

/*
 * Makes @policy the data path's in one step. Nothing changes when it
 * fails (returns -errno, @err says why). One writer at a time: the pin
 * directory's lock, or the one process that loaded the data path.
 */
int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len);

/*
 * The two halves of xrl_policy_apply() (without the aggregate shares),
 * apart so that a test can stop between them as a killed daemon would.
 * Stage writes the rules into the slot the head in force does not name
 * and builds the new head: nothing a packet reads changes. Commit swaps
 * the head in (the switch) and re-pins the maps in force. Unstage closes
 * what stage made (the maps live on while in force).
 */
struct xrl_staged_policy {
	int rules_fd;	/* classifier */
	int table_fd;	/* rule table */
	int head_fd;
	__u32 slot;
};

int xrl_policy_stage(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     struct xrl_staged_policy *staged, char *err, size_t len);
int xrl_policy_commit(struct xrl_datapath *dp,
		      const struct xrl_staged_policy *staged, char *err,
		      size_t len);
void xrl_policy_unstage(struct xrl_staged_policy *staged);

/*
 * Reads back the rules map in force: prefixes, ids and actions (no
 * rates, no names beyond the CIDR text) and the key prefix lengths; enough
 * to carry ids over when the full policy is not known. 0 or -errno.
 */
int xrl_policy_read_ids(const struct xrl_datapath *dp, struct xrl_policy *out);

/*
 * How many rules in force limit or monitor packets per second (the
 * limits generic mode can only approximate: bpf/parse.h), or -errno.
 */
int xrl_policy_count_pps_rules(const struct xrl_datapath *dp);

/*
 * 0 when the data path holds exactly @policy compiled (every rule, no
 * other, and its settings); -ESTALE when not, -errno on failure.
 */
int xrl_policy_matches_map(const struct xrl_datapath *dp,
			   const struct xrl_policy *policy);

/* What applying a policy would change, rule by rule (by prefix). */
enum xrl_rule_change {
	XRL_RULE_ADDED,		/* a prefix not in force */
	XRL_RULE_REMOVED,	/* in force, not in the policy */
	XRL_RULE_CHANGED,	/* action, limits or scope differ */
};

/* @next is the policy's rule (NULL when removed), @in_force the map's
 * value (NULL when added). */
typedef void (*xrl_rule_change_fn)(enum xrl_rule_change change,
				   const struct xrl_lpm_key *prefix,
				   const struct xrl_rule_spec *next,
				   const struct xrl_rule *in_force, void *ctx);

struct xrl_policy_diff {
	size_t in_force;	/* rules in force */
	size_t added, removed, changed, same;
	/* Settings that differ: keys:, malformed:, vlan_overflow:,
	 * ipv4_mapped:, unjudged_fragments:, header_overflow:,
	 * new_sources:, unknown_sources:, events:. */
	bool keys, malformed, vlan_overflow, ipv4_mapped, unjudged_fragments,
	     header_overflow, new_sources, unknown, events;
};

/*
 * Compares @next with the policy in force, calling @fn for each rule
 * that applying it would add, remove or change (ids aside: they are
 * carried over by prefix). Reads only. 0 or -errno.
 */
int xrl_policy_diff(const struct xrl_datapath *dp,
		    const struct xrl_policy *next, xrl_rule_change_fn fn,
		    void *ctx, struct xrl_policy_diff *diff);

/*
 * Gives @next its rule ids as the data path sees them: a rule whose
 * prefix is in @running (NULL: the policy in force, read back from the
 * maps) keeps its id, every other one gets an id never handed out since
 * the data path was loaded (the mark is pinned beside the maps, shared by
 * the daemon and the CLI). Should the ids have wrapped, a reused id's
 * counters, shares and buckets are wiped first. Touches nothing in force.
 * 0, or -errno with @err.
 */
int xrl_policy_take_ids(const struct xrl_datapath *dp, struct xrl_policy *next,
			const struct xrl_policy *running, char *err,
			size_t len);

/* A new id mark map (fd): from 1, or for pins adopted without one
 * (@adopted) above the ids in force, marked wrapped. -errno on failure. */
int xrl_id_map_create(const struct xrl_datapath *adopted);

#endif

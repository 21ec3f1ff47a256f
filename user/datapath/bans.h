/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bans.h - the program's ban records and its map of bans by hand, read
 * from userspace.
 */
#ifndef XRL_DATAPATH_BANS_H
#define XRL_DATAPATH_BANS_H

#include <stdbool.h>
#include <linux/types.h>
#include "xrl.h"

struct xrl_datapath;
struct xrl_lpm_key;

/*
 * Sources whose ban record says they are banned at @now_ns (the
 * program's clock: CLOCK_MONOTONIC, xrl_clock_ns(CLOCK_MONOTONIC)) into *@n.
 * A ban record is its source's last; a rule that since lost its ban: no
 * longer enforced, still counted until it ends. 0 or -errno.
 */
int xrl_bans_active(const struct xrl_datapath *dp, __u64 now_ns, __u64 *n);

/* How full the map of bans by hand (xrl_manual_bans) is: its entries,
 * ended or not, and its max_entries, the most there may be. 0 or
 * -errno. */
struct xrl_manual_bans_fill {
	__u64 entries;
	__u32 max_entries;
};
int xrl_manual_bans_fill(const struct xrl_datapath *dp,
			 struct xrl_manual_bans_fill *fill);

/* The program's key of a ban by hand on @prefix (as xrl_cidr_parse()
 * gives it). */
void xrl_manual_ban_key(const struct xrl_lpm_key *prefix,
			struct xrl_manual_ban_key *key);

/*
 * The ban by hand the program finds for @source (a host, as
 * xrl_cidr_parse() gives it): the longest prefix of the map that holds
 * it, in *@prefix and *@ban. 1 when it holds at @now_ns (the program's
 * clock) and drops the source; 0 when it ended or there is none (*@prefix
 * then untouched); -errno.
 */
int xrl_manual_ban_of(const struct xrl_datapath *dp,
		      const struct xrl_lpm_key *source, __u64 now_ns,
		      struct xrl_lpm_key *prefix, struct xrl_manual_ban *ban);

/* Bans by hand that hold at @now_ns into *@n. 0 or -errno. */
int xrl_manual_bans_active(const struct xrl_datapath *dp, __u64 now_ns,
			   __u64 *n);

/*
 * Escalated bans in force at @now_ns (bpf/escalate.h): @fn is called
 * with each (its prefix as xrl_cidr_parse() gives one, its rule, its end
 * on the program's clock); the walk stops at its first non-zero return.
 * 0 or -errno.
 */
struct xrl_escalated_ban {
	struct xrl_lpm_key prefix;
	__u32 rule_id;
	__u32 escalations;	/* of the prefix by the rule, this one too */
	__u64 until_ns;
};
int xrl_escalated_bans(const struct xrl_datapath *dp, __u64 now_ns,
		       int (*fn)(const struct xrl_escalated_ban *ban,
				 void *ctx),
		       void *ctx);

/* The escalated ban of @rule on the prefix of the source @key (its
 * bucket key) into *@ban: 1 when it holds at @now_ns, 0 when none, or
 * -errno. */
int xrl_escalated_ban_of(const struct xrl_datapath *dp,
			 const struct xrl_rule *rule,
			 const struct xrl_bucket_key *key, __u64 now_ns,
			 struct xrl_escalated_ban *ban);

/* Lifts the escalated bans of exactly @prefix (by any rule) at @now_ns,
 * keeping their length for a next repeat: how many, or -errno. */
int xrl_escalated_lift(const struct xrl_datapath *dp,
		       const struct xrl_lpm_key *prefix, __u64 now_ns);

#endif

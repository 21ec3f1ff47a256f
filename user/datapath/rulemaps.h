/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rulemaps.h - the rules of a policy as the data path holds them: the
 * classifier (exact prefixes in a hash map, per family) and the rule
 * table (by id), built fresh for each policy in the rules slot that the
 * policy head puts in force. Layout and why: include/xrl.h,
 * bpf/classify.h.
 */
#ifndef XRL_RULEMAPS_H
#define XRL_RULEMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include "compiled.h"
#include "xrl.h"

struct xrl_datapath;
struct xrl_policy;

/*
 * Compiles @policy (checked, ids carried) for this data path as
 * generation "in force + 1", each rule keeping the "since" of its id
 * when the rules in force give its id the same rule (read back once when
 * this process did not install them). 0, or -errno with @err.
 */
int xrl_rules_compile(struct xrl_datapath *dp, const struct xrl_policy *policy,
		      struct xrl_compiled *out, char *err, size_t len);

/*
 * Writes the classifier and the table of @compiled (xrl_rules_compile())
 * into rules slot @slot (one the head in force does not name:
 * policy_map.c), and returns new fds of both. What the data path reads
 * does not change: the policy head that names the slot puts them in
 * force. -errno on failure, @err says why.
 */
int xrl_rules_stage(struct xrl_datapath *dp, const struct xrl_compiled *compiled,
		    __u32 slot, int *rules_fd, int *table_fd, char *err,
		    size_t len);

/*
 * Calls @fn for each rule of the classifier in force (the default rule
 * as /0) until it returns non-zero, which it returns; else 0 or -errno.
 */
int xrl_rules_walk(const struct xrl_datapath *dp,
		   int (*fn)(const struct xrl_lpm_key *prefix,
			     const struct xrl_rule *rule, void *ctx),
		   void *ctx);

/* What a classification met besides the rule (xrl_rules_classify()). */
struct xrl_classified {
	bool split;	/* the bucket key names the rule */
	/* The protocols of the L4 rules met on the way to the rule that
	 * judges the source's other traffic: packets of these whose L4
	 * header cannot be read are judged as docs/POLICY.md "Fragments
	 * and header chains" says, not by that rule. */
	__u8 l4_protos[4];
	unsigned n_l4_protos;
};

struct xrl_l4_packet;

/*
 * The rule in force that judges the source @addr (IPv4-mapped for IPv4),
 * as the program's classify() finds it for @packet's L4 header (NULL: a
 * packet no L4 rule matches),
 * its prefix, whether the source's key subnet (@addr masked to @key_len
 * bits of its family) is split by a longer rule or an L4 rule (the
 * program then keys its bucket by the rule: include/xrl.h, struct
 * xrl_bucket_key), and the L4 rules met. 0, -ENOENT before the first
 * policy or without a default rule, -errno.
 */
int xrl_rules_classify(const struct xrl_datapath *dp, const __u8 addr[16],
		       unsigned key_len, const struct xrl_l4_packet *packet,
		       struct xrl_rule *rule, struct xrl_lpm_key *prefix,
		       struct xrl_classified *how);

/* What this process knows of the rules it installed (see rulemaps.c). */
void xrl_rules_forget(struct xrl_datapath *dp);

/* The rule capacity of the data path: the most rules a policy holds. */
__u32 xrl_rules_capacity(const struct xrl_datapath *dp);
/* Rule ids are below this (max_entries of xrl_rule_spill): twice the
 * capacity, so that the policy going out never leaves the one coming in
 * short of ids (include/xrl.h). */
__u32 xrl_rule_id_limit(const struct xrl_datapath *dp);
/* The id limit of a data path loaded for @max_rules rules. */
__u32 xrl_rule_ids_for(__u32 max_rules);
/*
 * Deletes the per-rule counters of every id but those of the rules this
 * process installed last: called once they are in force, it forgets the
 * counters of the rules gone out (and of a policy staged and never put
 * in force). 0 or -errno.
 */
int xrl_rule_counters_sweep(const struct xrl_datapath *dp);
/* The classifier entry of level @level of rule @rule_id in force: its
 * limits (include/xrl.h, struct xrl_rule_levels). 0 or -errno. */
int xrl_rules_level(const struct xrl_datapath *dp, __u32 rule_id,
		    unsigned level, struct xrl_rule *out);
/* A new fd of the rule table in force (close it), or -errno. */
int xrl_rules_table_open(const struct xrl_datapath *dp);
/* The prefix length (IPv4-mapped: an IPv4 /n is 96 + n) of level @level
 * of the rule of id @rule_id in the rule table @table_fd. 0, -ENOENT or
 * -errno. */
int xrl_rules_level_len(int table_fd, __u32 rule_id, unsigned level,
			unsigned *len);

#endif

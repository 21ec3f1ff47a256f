/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blocklists.h - the blocklists' tries (include/xrl.h, "Blocklist
 * feeds"): built from a list file read (blocklist.h), staged with a
 * policy in the slot its head will name, or swapped in alone; read back
 * for status and /metrics.
 */
#ifndef XRL_DP_BLOCKLISTS_H
#define XRL_DP_BLOCKLISTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "blocklist.h"
#include "datapath.h"

/*
 * A new trie holding @e's keys, sized to them (never empty: @e->n >= 1),
 * loaded by batches where the kernel takes them, else one by one. Its
 * fd, or -errno with one line in @err.
 */
int xrl_blocklist_trie(const struct xrl_blocklist_entries *e, char *err,
		       size_t len);

/* The list file @spec names, read and made a trie: *@fd (-1 for a list
 * of no entries), *@n its entries. 0 or -errno with @err. */
int xrl_blocklist_build(const struct xrl_blocklist_spec *spec, int *fd,
			size_t *n, char *err, size_t len);

/* The tries of every list of @policy, built ahead of its apply (off the
 * daemon's control loop): @policy->blocklist_fds, blocklists_built. 0,
 * or -errno with "blocklists: NAME: ..." in @err and none built. */
int xrl_blocklists_build(struct xrl_policy *policy, char *err, size_t len);

/*
 * The lists of @policy into rules slot @slot (no head in force names it):
 * read from their files when @policy->blocklists_read, else the tries in
 * force at the same index (a copy of the running policy holds its lists
 * in order). Their hits start at 0; the slot's other entries are
 * emptied. 0 or -errno with @err.
 */
int xrl_blocklists_stage(const struct xrl_datapath *dp,
			 const struct xrl_policy *policy, __u32 slot,
			 char *err, size_t len);

/* Empties rules slot @slot's lists (after a swap away from it, or a
 * staging undone). */
void xrl_blocklists_clear(const struct xrl_datapath *dp, __u32 slot);

/*
 * Puts the trie @fd (-1: none, an empty list) in force as list @index
 * of the policy in force, in one update: a packet sees the old trie or
 * this one. 0 or -errno with @err.
 */
int xrl_blocklist_swap(const struct xrl_datapath *dp, size_t index, int fd,
		       char *err, size_t len);

/* One list in force, as status and /metrics show it. */
struct xrl_blocklist_report {
	char name[XRL_BLOCKLIST_NAME_LEN];
	enum xrl_blocklist_action action;
	__u64 entries;		/* prefixes in its trie */
	struct xrl_counter hits;	/* summed over CPUs */
};

/* The lists of the policy in force into @out (XRL_BLOCKLISTS_MAX);
 * their number, or -errno. */
int xrl_blocklists_read(const struct xrl_datapath *dp,
			struct xrl_blocklist_report *out);

/* A list of the policy in force that holds a source. */
struct xrl_blocklist_hold {
	__u32 index;		/* its place among the policy's lists */
	char name[XRL_BLOCKLIST_NAME_LEN];
	enum xrl_blocklist_action action;
	/* The widest of its prefixes that holds the source: an entry of
	 * the list (a trie answers only whether one does). */
	struct xrl_lpm_key prefix;
};

/*
 * The lists of @head (the policy head in force) that hold @source (an
 * address, IPv4-mapped), looked up as the program looks (bpf/blocklists.h
 * blocklist_verdict()): in order, and no further than the first deny
 * list that holds it, the last of them then. Into @out
 * (XRL_BLOCKLISTS_MAX); their number, or -errno.
 */
int xrl_blocklists_holding(const struct xrl_datapath *dp,
			   const struct xrl_policy_head *head,
			   const struct xrl_lpm_key *source,
			   struct xrl_blocklist_hold *out);

#endif

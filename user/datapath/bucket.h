/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bucket.h - a source as the program sees it, read from userspace: the
 * rule that judges it (the program's classification, on the classifier
 * in force: rulemaps.c), its bucket key, and how full its bucket is.
 *
 * The key and the debt are the program's bucket_key()
 * (bpf/xdp_ratelimit.bpf.c) and limit_debt() (bpf/gcra.h) in userspace:
 * this is the one place to change with them.
 */
#ifndef XRL_BUCKET_H
#define XRL_BUCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xrl.h"
#include "rulemaps.h"

struct xrl_datapath;

/*
 * The key of the source @addr (IPv4-mapped for IPv4): masked to the
 * source prefix of @settings in its family, as the program makes it;
 * @split_id is the rule id + 1 of a split key subnet, else 0.
 */
void xrl_bucket_key_make(const struct xrl_settings *settings,
			 const __u8 addr[16], __u32 split_id,
			 struct xrl_bucket_key *key);

/* The prefix length (IPv4-mapped) a bucket key's address covers. */
unsigned xrl_bucket_key_prefixlen(const struct xrl_settings *settings,
				  const struct xrl_bucket_key *key);

/*
 * The rule in force that judges @addr's packets with @packet's L4 header
 * (NULL: one no L4 rule takes), its prefix (*@prefix), and what the
 * classification met (*@how: whether the bucket key names the rule, the
 * L4 rules on the way). 0, -ENOENT when no rule does (no policy), -errno.
 */
int xrl_rule_of(const struct xrl_datapath *dp,
		const struct xrl_settings *settings, const __u8 addr[16],
		const struct xrl_l4_packet *packet, struct xrl_rule *rule,
		struct xrl_lpm_key *prefix, struct xrl_classified *how);

/* A limit's level in a bucket's word at @now_ns. */
struct xrl_bucket_level {
	bool known;	/* false: the word was written in other units (a
			 * policy changed it and no packet came since) */
	double tokens;	/* packets (or bytes) that would pass at once */
	double burst;	/* at most */
	double fill;	/* tokens / burst: 1 full, 0 limited */
	__u64 full_in_ns;	/* until it is full again */
};

/* The key of level @level's bucket (of @rule, in force) for the
 * source @addr (IPv4-mapped): the program's (bpf/levels.h). */
void xrl_level_key_make(const __u8 addr[16], const struct xrl_rule *rule,
			unsigned level, struct xrl_bucket_key *key);

/* @limit must be set (interval != 0). */
void xrl_bucket_level(const struct xrl_limit *limit, __u64 tat_word,
		      __u64 now_ns, struct xrl_bucket_level *out);

/*
 * Deletes the buckets of every source in @prefix (IPv4-mapped), of any
 * rule, and the bucket whose source prefix holds @prefix when @prefix
 * is narrower than the keys; and the buckets of rules' levels whose
 * whole subnet lies in @prefix. @family other than XRL_FAMILY_ANY keeps
 * to its sources (0.0.0.0/0 is the same key as ::/0). *@n_deleted
 * counts them. 0 or -errno.
 */
int xrl_buckets_forget(const struct xrl_datapath *dp,
		       const struct xrl_lpm_key *prefix, enum xrl_family family,
		       size_t *n_deleted);

/*
 * The offender record (struct xrl_offender) of the source whose bucket
 * under @key is @bucket: its counts since its first refusal, its ban.
 * 0; -ENOENT when it has none (never refused under its rule, or the LRU
 * evicted the record), -errno.
 */
int xrl_offender_of(const struct xrl_datapath *dp,
		    const struct xrl_bucket_key *key,
		    const struct xrl_bucket *bucket, struct xrl_offender *out);

/*
 * The offender record under @key, whoever's it is, with the refusals
 * the CPUs' tallies hold for it (struct xrl_refusal_tally) in its
 * dropped count. 0, -ENOENT, -errno.
 */
int xrl_offender_read(const struct xrl_datapath *dp,
		      const struct xrl_bucket_key *key,
		      struct xrl_offender *out);

/* Every CPU's tally, for a walk of the records to add with
 * xrl_tallied(): an array of *@n to free(); NULL with errno. */
struct xrl_refusal_tally *xrl_tallies_read(const struct xrl_datapath *dp,
					   int *n);

/* The refusals of the record @off of @key that @tallies (@n) hold. */
__u64 xrl_tallied(const struct xrl_refusal_tally *tallies, int n,
		  const struct xrl_bucket_key *key,
		  const struct xrl_offender *off);

#endif

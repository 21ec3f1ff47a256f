/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * offenders.h - what a source that was refused keeps besides its bucket:
 * its passed and dropped counts, the mark its limit events are measured
 * from, the ban in force. Design: include/xrl.h (struct xrl_offender).
 *
 * Why apart from the bucket: most tracked sources are never refused, and
 * these 48 bytes per bucket were most of a source's cost. A bucket's
 * XRL_BUCKET_OFFENDER flag says a record was made, so a source never
 * refused costs no lookup here, and one predictable branch.
 */
#ifndef XRL_OFFENDERS_H
#define XRL_OFFENDERS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "bans.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_OFFENDER_SOURCES);	/* set at load time */
	__type(key, struct xrl_bucket_key);
	__type(value, struct xrl_offender);
} xrl_offenders SEC(".maps");

/* A new record is written whole here, then inserted: not on the stack,
 * and never seen half made by another CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_offender);
} xrl_offender_scratch SEC(".maps");

/* The bucket's flags word (the low half of its binding). */
static __always_inline __u32 bucket_flags(const struct xrl_bucket *b)
{
	return *(volatile const __u32 *)&b->rule_id & XRL_BUCKET_FLAGS;
}

/* The record of @key if its bucket says it has one, else NULL. */
static __always_inline struct xrl_offender *
offender_of(const struct xrl_bucket_key *key, const struct xrl_bucket *b)
{
	if (!(bucket_flags(b) & XRL_BUCKET_OFFENDER))
		return NULL;
	return bpf_map_lookup_elem(&xrl_offenders, key);
}

/*
 * Whether the source is banned under @rule at @now: from its record, or
 * when the LRU evicted that, from its ban record (bpf/bans.h).
 */
static __noinline bool offender_banned(const struct xrl_bucket_key *key,
				       const struct xrl_offender *off,
				       const struct xrl_rule *rule, __u64 now)
{
	if (!key || !rule)
		return false;
	if (off)
		return off->ban_until_ns && ban_active(off->ban_until_ns, now);
	return ban_recorded(key, rule, now) != 0;
}

/* A record of another rule (or of a deleted one whose id came back)
 * counts for this one from now, as a new one would. */
static __always_inline bool offender_stale(const struct xrl_offender *off,
					   const struct xrl_rule *rule)
{
	return off->rule_id != rule->id ||
	       (__s32)(off->gen - rule->since) < 0;
}

/* Fills the per-CPU scratch with the record a first refusal makes; a
 * ban in force is taken over from the ban record (@with_ban: the rule
 * may ban). */
static __always_inline struct xrl_offender *
offender_fresh(const struct xrl_bucket_key *key, const struct xrl_bucket *b,
	       const struct xrl_rule *rule, __u64 now, bool with_ban)
{
	struct xrl_offender *fresh;
	__u32 zero = 0;

	fresh = bpf_map_lookup_elem(&xrl_offender_scratch, &zero);
	if (!fresh)
		return NULL;
	fresh->passed = 0;
	fresh->dropped = 0;
	fresh->mark_ns = (now & ~XRL_MARK_BITS) |
			 (bucket_flags(b) & XRL_BUCKET_PASSED ?
			  XRL_MARK_PASSED : 0);
	fresh->mark_passed = 0;
	fresh->mark_dropped = 0;
	fresh->ban_until_ns = with_ban && rule->ban.duration_ns ?
			      ban_of_record(key, rule, now) : 0;
	fresh->rule_id = rule->id;
	fresh->gen = rule->gen;
	return fresh;
}

/*
 * The record of a source refused under @rule (@off: the one its bucket
 * led to, or NULL), made if it has none, or none of this rule; flags the
 * bucket. NULL only when the kernel made none (the refusal then goes
 * uncounted, its verdict does not change). Two CPUs making one record
 * share the entry one of them inserted. Inlined in its two callers, so
 * neither chain gets a frame more (Linux 6.1 counts 512 bytes for all).
 */
static __always_inline struct xrl_offender *
offender_get(const struct xrl_bucket_key *key, struct xrl_bucket *b,
	     struct xrl_offender *off, const struct xrl_rule *rule, __u64 now,
	     bool with_ban)
{
	struct xrl_offender *fresh;

	if (off && !offender_stale(off, rule))
		return off;
	/* Evicted, or never made, or the bucket was bound anew: a record
	 * still there of this rule goes on counting. */
	off = bpf_map_lookup_elem(&xrl_offenders, key);
	if (!off || offender_stale(off, rule)) {
		fresh = offender_fresh(key, b, rule, now, with_ban);
		if (!fresh)
			return NULL;
		bpf_map_update_elem(&xrl_offenders, key, fresh,
				    off ? BPF_ANY : BPF_NOEXIST);
		off = bpf_map_lookup_elem(&xrl_offenders, key);
		if (!off)
			return NULL;
	}
	if (!(bucket_flags(b) & XRL_BUCKET_OFFENDER))
		__sync_fetch_and_or(&b->rule_id, XRL_BUCKET_OFFENDER);
	return off;
}

/* offender_get() for a source's own refusal (judge_counted()). */
static __noinline struct xrl_offender *
offender_open(const struct xrl_bucket_key *key, struct xrl_bucket *b,
	      struct xrl_offender *off, const struct xrl_rule *rule, __u64 now)
{
	if (!key || !b || !rule)
		return NULL;
	return offender_get(key, b, off, rule, now, true);
}

/* An admitted packet: counted in the record, or, until the source has
 * one, only flagged once in its bucket (the first refusal reports). */
static __always_inline void offender_passed(struct xrl_bucket *b,
					    struct xrl_offender *off)
{
	if (off)
		__sync_fetch_and_add(&off->passed, 1);
	else if (!(bucket_flags(b) & XRL_BUCKET_PASSED))
		__sync_fetch_and_or(&b->rule_id, XRL_BUCKET_PASSED);
}

#endif /* XRL_OFFENDERS_H */

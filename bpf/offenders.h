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

/* This CPU's tally of a hot offender's refusals (struct
 * xrl_refusal_tally): read by userspace with the records. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_refusal_tally);
} xrl_tally SEC(".maps");

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

static __always_inline struct xrl_refusal_tally *cpu_tally(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xrl_tally, &zero);
}

/* The binding word of @b with its flags clear: what a tally names. */
static __always_inline __u64 tally_binding(const struct xrl_bucket *b)
{
	return *(volatile const __u64 *)&b->rule_id &
	       ~(__u64)XRL_BUCKET_FLAGS;
}

static __always_inline bool tally_same_key(const struct xrl_refusal_tally *t,
					   const struct xrl_bucket_key *key)
{
	const __u32 *a = (const __u32 *)&t->key, *b = (const __u32 *)key;

	_Static_assert(sizeof(*key) == 20, "five words");
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) |
		 (a[3] ^ b[3]) | (a[4] ^ b[4]));
}

/* Whether a refusal of @key's source in @b at @now is only tallied. */
static __always_inline bool tally_holds(const struct xrl_refusal_tally *t,
					const struct xrl_bucket_key *key,
					const struct xrl_bucket *b, __u64 now)
{
	return (__s64)(t->until_ns - now) > 0 && t->dropped < XRL_TALLY_MAX &&
	       t->binding == tally_binding(b) && tally_same_key(t, key);
}

/*
 * What the tally holds that the record @off (of the source a refusal
 * just took the whole path for) should count: the tally's refusals if
 * they are that record's, else 0 once they are added to their own
 * record (evicted or rebound since: forgotten, as its counts are).
 */
static __always_inline __u64 tally_carried(struct xrl_refusal_tally *t,
					   const struct xrl_bucket_key *key,
					   const struct xrl_offender *off)
{
	struct xrl_offender *other;
	__u64 held = t->dropped;

	if (!held)
		return 0;
	t->dropped = 0;
	if (tally_same_key(t, key))
		return off->rule_id == t->rule_id && off->gen == t->gen ?
		       held : 0;
	other = bpf_map_lookup_elem(&xrl_offenders, &t->key);
	if (other && other->rule_id == t->rule_id && other->gen == t->gen)
		__sync_fetch_and_add(&other->dropped, held);
	return 0;
}

/* Starts a tally of @key's refusals in @b, counted by @off, at @now
 * (after what the tally held is carried). */
static __always_inline void tally_start(struct xrl_refusal_tally *t,
					const struct xrl_bucket_key *key,
					const struct xrl_bucket *b,
					const struct xrl_offender *off,
					__u64 now)
{
	__builtin_memcpy(&t->key, key, sizeof(t->key));
	t->rule_id = off->rule_id;
	t->gen = off->gen;
	t->binding = tally_binding(b);
	t->until_ns = now + XRL_TALLY_NS;
}

/* An admitted packet: counted in the record, or, until the source has
 * one, only flagged once in its bucket (the first refusal reports). A
 * pass of an offender ends this CPU's tally: the next refusal takes the
 * whole path, which reports the source limited again. */
static __always_inline void offender_passed(struct xrl_bucket *b,
					    struct xrl_offender *off)
{
	struct xrl_refusal_tally *t;

	if (off) {
		__sync_fetch_and_add(&off->passed, 1);
		t = cpu_tally();
		if (t)
			t->until_ns = 0;
	} else if (!(bucket_flags(b) & XRL_BUCKET_PASSED)) {
		__sync_fetch_and_or(&b->rule_id, XRL_BUCKET_PASSED);
	}
}

#endif /* XRL_OFFENDERS_H */

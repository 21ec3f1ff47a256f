/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * levels.h - the levels of a rule (include/xrl.h, struct
 * xrl_rule_levels; docs/POLICY.md "Levels"): one more bucket per source
 * masked to each level's prefix, all of which must admit the packet.
 *
 * Included by xdp_ratelimit.bpf.c after rebind() and the clock, which
 * level buckets use as a source's own bucket does.
 */
#ifndef XRL_LEVELS_H
#define XRL_LEVELS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "classify.h"
#include "floods.h"
#include "gcra.h"

/*
 * What judge_levels() works with, per CPU rather than on its stack: its
 * frame is in the deepest call chain (main, judge_limited, judge_levels,
 * bucket_take, and the take's bpf_loop() callback), whose frames
 * together the verifier holds to 512 bytes. XDP does not nest on a CPU.
 * What the levels took of the packet is kept by the keys of their
 * buckets, looked up again to give it back when a later level refuses
 * (a pointer stored in a map is no pointer to the verifier).
 */
struct level_scratch {
	struct xrl_bucket_key key[XRL_LEVELS_MAX];	/* level buckets' */
	struct xrl_rule_key rule_key;	/* of a level's limits */
	__u8 taken[XRL_LEVELS_MAX];	/* bucket_take()'s charge; 0: none */
	__u8 fallback[XRL_LEVELS_MAX];	/* 1: charged to a prefix bucket */
	__u8 refused;	/* the level + 1 whose bucket refused; 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct level_scratch);
} xrl_level_scratch SEC(".maps");

/* The classifier entry of level @i of rule @id: the level's limits. */
static __always_inline const struct xrl_rule *
level_rule(void *rules, struct level_scratch *w, __u32 id, __u32 i)
{
	__builtin_memset(&w->rule_key, 0, sizeof(w->rule_key));
	w->rule_key.family = XRL_KEY_LEVEL;
	w->rule_key.prefixlen = i;
	w->rule_key.addr[0] = id;
	return bpf_map_lookup_elem(rules, &w->rule_key);
}

/*
 * A rule's levels, copied per CPU from the classifier the first time a
 * packet of that rule meets them under a policy: a packet then pays for
 * its level buckets only, not for a classifier lookup per level. What a
 * slot holds never changes while in force (a swap writes the other
 * slot), so a copy tagged with the rule's id and generation and with
 * the head generation it was made under is exact while that head is in
 * force; under the next head it is made again (a swap that changes
 * only numbers keeps the rule's generation). Direct-mapped by rule
 * id: up to LEVEL_CACHE_WAYS rules with levels hot on a CPU keep their
 * copies; more share them, each rule's next packet copying its own back.
 */
#define LEVEL_CACHE_WAYS	16

struct level_cache {
	__u64 binding;	/* binding_of() the rule copied; 0: none (gen >= 1) */
	__u32 have;	/* bit i: level[i] was in the classifier */
	__u32 checked;	/* head generation it was copied under */
	struct xrl_rule level[XRL_LEVELS_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LEVEL_CACHE_WAYS);
	__type(key, __u32);
	__type(value, struct level_cache);
} xrl_level_cache SEC(".maps");

/* The levels of @rule, as the slot in force of this packet holds them:
 * the CPU's copy, made again when it is another rule's or generation's;
 * NULL never but for the verifier. */
static __always_inline struct level_cache *
rule_levels(const struct source *s, struct level_scratch *w,
	    const struct xrl_rule *rule)
{
	__u64 binding = binding_of(rule->id, rule->gen);
	__u32 way = rule->id & (LEVEL_CACHE_WAYS - 1), slot = s->q.slot, i;
	const struct xrl_rule *level;
	struct level_cache *c;
	void *rules;

	c = bpf_map_lookup_elem(&xrl_level_cache, &way);
	if (!c)
		return NULL;
	if (c->binding == binding && c->checked == s->q.gen)
		return c;
	rules = bpf_map_lookup_elem(&xrl_policy, &slot);
	if (!rules)
		return NULL;
	c->have = 0;
#pragma unroll
	for (i = 0; i < XRL_LEVELS_MAX; i++) {
		if (i >= rule->levels.count)
			continue;
		/* Written by userspace with the rule, in the same slot. */
		level = level_rule(rules, w, rule->id, i);
		if (!level)
			continue;
		__builtin_memcpy(&c->level[i], level, sizeof(*level));
		c->have |= 1U << i;
	}
	c->binding = binding;
	c->checked = s->q.gen;
	return c;
}

/* The key of level @i's bucket for the source @src of @family. */
static __always_inline void level_key(struct xrl_bucket_key *key,
				      const __u32 src[4], __u32 family,
				      const struct xrl_rule *rule, __u32 i,
				      __u32 prefix)
{
	mask_source((__u32 *)key->addr, src, prefix,
		    family == XRL_FAMILY_IPV4 ? 96 : 0);
	key->tag = XRL_LEVEL_TAG(family, rule->id, i);
}

/* Inserted for a level's new bucket: rebind() binds it (a fresh one is
 * reset whatever its binding), so nothing of it is on the stack. */
static const struct xrl_bucket level_fresh;

/*
 * The bucket of a level the source has none of yet: made when the
 * new-source budget has an insert left, as a source's own; NULL when
 * the budget refuses or the kernel made none.
 */
static __always_inline struct xrl_bucket *
level_insert(const struct xrl_bucket_key *key,
	     const struct xrl_settings *settings, __u64 now)
{
	if (!new_source_admitted(settings, now)) {
		count_table(XRL_TABLE_REFUSED);
		return NULL;
	}
	if (!bpf_map_update_elem(&xrl_buckets, key, &level_fresh, BPF_NOEXIST))
		count_table(XRL_TABLE_INSERT);
	return bpf_map_lookup_elem(&xrl_buckets, key);
}

/* Gives back what the levels before @upto took of the packet (a
 * refusal: the levels' buckets are looked up again, by their keys). */
static __always_inline void levels_give_back(struct level_scratch *w,
					     struct level_cache *c,
					     bool ipv4, __u32 upto,
					     const struct wire_cost *cost)
{
	const struct xrl_rule *level;
	struct xrl_bucket *bucket;
	__u32 i;

#pragma unroll
	for (i = 0; i < XRL_LEVELS_MAX; i++) {
		if (i >= upto || w->taken[i] <= TAKEN)
			continue;
		level = &c->level[i];
		if (w->fallback[i])
			bucket = prefix_bucket(&w->key[i], ipv4, level->id |
					       (i + 1) << XRL_TAG_LEVEL_SHIFT);
		else
			bucket = bpf_map_lookup_elem(&xrl_buckets, &w->key[i]);
		if (bucket)
			bucket_give_back(bucket, &level->limits, w->taken[i],
					 cost->packets, cost->bytes);
	}
}

/*
 * One level's judgement of the packet: 1 admitted (its charge in
 * *@taken), 0 refused. A level without a bucket that the budget refuses
 * one is judged by unknown_sources: drop refuses, pass skips the level,
 * prefix takes from a fallback bucket of the level's own limits (keyed
 * apart from the rule's by the level).
 */
static __always_inline int level_take(const struct xrl_bucket_key *key,
				      bool ipv4, __u32 i,
				      const struct xrl_rule *level,
				      const struct xrl_settings *settings,
				      const struct wire_cost *cost, __u64 now,
				      struct level_scratch *w)
{
	struct xrl_bucket *bucket;
	bool fallback = false;
	int taken;

	bucket = bpf_map_lookup_elem(&xrl_buckets, key);
	if (!bucket)
		bucket = level_insert(key, settings, now);
	if (bucket) {
		rebind(bucket, level);
	} else {
		/* Refused an insert: judged as unknown_sources says,
		 * counted as a source's fallback is (REFUSED = PASS + DROP). */
		fallback = true;
		if (settings->unknown_verdict == XRL_UNKNOWN_PREFIX)
			bucket = prefix_bucket(key, ipv4, level->id |
					       (i + 1) << XRL_TAG_LEVEL_SHIFT);
	}
	taken = bucket ? bucket_take(bucket, &level->limits, now,
				     cost->packets, cost->bytes) :
		settings->unknown_verdict == XRL_UNKNOWN_PASS;
	if (fallback)
		count_table(taken ? XRL_TABLE_FALLBACK_PASS :
				    XRL_TABLE_FALLBACK_DROP);
	else if (!taken)
		w->refused = i + 1;	/* counted by level_refusal_count() */
	w->taken[i] = taken;
	w->fallback[i] = fallback;
	return taken != 0;
}

/*
 * Whether every level of @rule for the source's family admits the
 * packet: 1 or 0. A level that refuses consumes nothing from the others:
 * what the levels before it took is given back (the caller gives back
 * the source's own bucket). A global function, verified once for its
 * callers (a known source, a new one, a refused one judged by the
 * fallback), which check rule->levels.count first: a rule without
 * levels pays that one branch.
 */
__noinline int judge_levels(const struct xrl_settings *settings,
			    const struct xrl_rule *rule, __u64 now)
{
	const struct source *s = this_packet();
	const struct xrl_rule *level;
	struct level_scratch *w;
	struct level_cache *c;
	bool ipv4, ipv6_level;
	__u32 i, zero = 0;

	if (!s || !settings || !rule)
		return 1;	/* never (a global function's check) */
	w = bpf_map_lookup_elem(&xrl_level_scratch, &zero);
	if (!w)
		return 1;	/* never: a per-CPU entry */
	c = rule_levels(s, w, rule);
	if (!c)
		return 1;	/* never: the head's slot, a per-CPU entry */
	ipv4 = s->q.family == XRL_FAMILY_IPV4;
	/* Nothing taken yet: a level skipped below keeps no charge of an
	 * earlier packet's. */
	__builtin_memset(w->taken, 0, sizeof(w->taken));
	w->refused = 0;
#pragma unroll
	for (i = 0; i < XRL_LEVELS_MAX; i++) {
		if (i >= rule->levels.count)
			continue;
		ipv6_level = rule->levels.ipv6 & (1U << i);
		if (ipv6_level == ipv4)
			continue;	/* the other family's */
		if (!(c->have & (1U << i)))
			continue;
		level = &c->level[i];
		level_key(&w->key[i], s->q.addr, s->q.family, rule, i,
			  rule->levels.prefix[i]);
		if (!level_take(&w->key[i], ipv4, i, level, settings,
				&s->cost, now, w)) {
			levels_give_back(w, c, ipv4, i, &s->cost);
			return 0;
		}
	}
	return 1;
}

/*
 * Counts the refusal judge_levels() just made for @rule in the refusing
 * level bucket's own offender record, for `explain` to show a level's
 * refusals. Called by the source's judge after the levels, not from
 * them: a frame less in their chain, the deepest (Linux 6.1 holds all
 * frames of a chain to 512 bytes).
 */
static __noinline void level_refusal_count(const struct xrl_rule *rule,
					   __u64 now)
{
	const struct source *s = this_packet();
	struct xrl_bucket_key *key;
	const struct xrl_rule *level;
	struct level_scratch *w;
	struct xrl_offender *off;
	struct level_cache *c;
	struct xrl_bucket *b;
	__u32 i, zero = 0;

	if (!s || !rule)
		return;
	w = bpf_map_lookup_elem(&xrl_level_scratch, &zero);
	if (!w || !w->refused || w->refused > XRL_LEVELS_MAX)
		return;
	i = (w->refused - 1) & (XRL_LEVELS_MAX - 1);
	/* The copy judge_levels() just used (or made again). */
	c = rule_levels(s, w, rule);
	if (!c || !(c->have & (1U << i)))
		return;
	level = &c->level[i];
	key = &w->key[i];
	b = bpf_map_lookup_elem(&xrl_buckets, key);
	if (!b)
		return;
	/* A level never bans: no ban record to read. */
	off = offender_get(key, b, offender_of(key, b), level, now, false);
	if (off)
		__sync_fetch_and_add(&off->dropped, 1);
}

#endif /* XRL_LEVELS_H */

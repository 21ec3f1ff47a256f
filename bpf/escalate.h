/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * escalate.h - bans escalated to a subnet (include/xrl.h, struct
 * xrl_rule_escalate; docs/POLICY.md "Escalation"): once @after distinct
 * sources of one prefix have been banned by a rule within @within_ns,
 * the whole prefix is banned.
 *
 * Decided here, in the data path, at the ban that makes the count: the
 * prefix is banned from the K-th source's ban start on, with no delay
 * and whether or not a daemon runs. The record of a prefix
 * (struct xrl_escalation) keeps one mark per distinct source banned
 * (its address and its latest ban start): a source banned again moves
 * its own mark, so it counts once however often it re-offends, and a
 * mark older than @within_ns counts no more. Up to XRL_ESCALATE_AFTER_MAX
 * marks, so one bounded, unrolled walk finds the source's mark, the
 * oldest one to reuse and the count.
 *
 * Races: two CPUs banning two sources of one prefix at once may write
 * one mark (one of the bans is then not counted: escalation comes one
 * ban later); the prefix ban itself is one compare-and-swap on until_ns,
 * so only one CPU starts and counts it.
 *
 * Included by xdp_ratelimit.bpf.c after bans.h and classify.h.
 */
#ifndef XRL_ESCALATE_H
#define XRL_ESCALATE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "bans.h"
#include "classify.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_ESCALATE_PREFIXES);
	__type(key, struct xrl_escalation_key);
	__type(value, struct xrl_escalation);
} xrl_escalations SEC(".maps");

/*
 * The latest end of any escalated ban started (the program's clock), 0
 * while none ever was: until then, and after it, no prefix is banned,
 * so a rule with escalate_ skips its lookup (one load of a global: a
 * rule with escalation costs nothing until one of its prefixes is
 * banned; a lifted ban leaves it, which costs lookups, never a ban).
 */
__u64 xrl_escalation_horizon_ns;

/* Whether an escalated ban may hold at @now (one load). */
static __always_inline bool escalations_in_force(__u64 now)
{
	return ban_active(*(volatile __u64 *)&xrl_escalation_horizon_ns, now);
}

/* Moves the horizon to @end when later: a few compare-and-swaps, as two
 * escalations of one instant race for it (the later end wins). */
static __always_inline void escalation_horizon(__u64 end)
{
	__u64 old;
	int i;

#pragma unroll
	for (i = 0; i < 4; i++) {
		old = *(volatile __u64 *)&xrl_escalation_horizon_ns;
		if (old && (__s64)(end - old) <= 0)
			return;
		if (__sync_val_compare_and_swap(&xrl_escalation_horizon_ns,
						old, end) == old)
			return;
	}
}

/* A prefix's first record: not on the stack (384 bytes of marks). */
static const struct xrl_escalation escalation_fresh;

/* The key of the prefix of @rule that the source @addr (a bucket key's
 * layout: IPv4 in the last word) of @family falls in. */
static __always_inline void escalation_key(struct xrl_escalation_key *ek,
					   const __u32 addr[4], __u32 family,
					   const struct xrl_rule *rule)
{
	__u32 prefix = rule->escalate.prefix;

	mask_source((__u32 *)ek->addr, addr, prefix,
		    family == XRL_FAMILY_IPV4 ? 96 : 0);
	ek->rule_id = rule->id;
	ek->family = (__u8)family;
	ek->prefixlen = (__u8)prefix;
	ek->zero = 0;
}

/* The family of a source's key (a rule of scope source's). */
static __always_inline __u32 key_family(const struct xrl_bucket_key *key)
{
	return key->tag & 0xff;
}

/*
 * Whether the prefix of the source @key is under an escalated ban of
 * @rule at @now. Only for rules with escalate: one lookup. Global
 * functions, this and escalation_ban_started(): verified once, not once
 * per path of their callers (the hot path's).
 */
__noinline int escalated(const struct xrl_bucket_key *key,
			 const struct xrl_rule *rule, __u64 now)
{
	struct xrl_escalation_key ek;
	struct xrl_escalation *e;

	if (!key || !rule)
		return 0;
	escalation_key(&ek, (const __u32 *)key->addr, key_family(key), rule);
	e = bpf_map_lookup_elem(&xrl_escalations, &ek);
	return e && ban_active(e->until_ns, now);
}

static __always_inline bool mark_of(const struct xrl_escalation_mark *m,
				    const __u8 *addr)
{
	const __u64 *a = (const __u64 *)m->addr, *b = (const __u64 *)addr;

	return a[0] == b[0] && a[1] == b[1];
}

/*
 * Marks the ban of the source @key in @e at @now: its own mark if it has
 * one, else the oldest; returns how many distinct sources have a mark
 * within @within_ns (it included).
 */
static __always_inline __u32 escalation_mark(struct xrl_escalation *e,
					     const struct xrl_bucket_key *key,
					     __u64 within_ns, __u64 now)
{
	__u32 i, slot = 0, own = XRL_ESCALATE_AFTER_MAX, count = 1;
	__u64 oldest = ~0ULL, at;

#pragma unroll
	for (i = 0; i < XRL_ESCALATE_AFTER_MAX; i++) {
		at = e->marks[i].banned_ns;
		if (at && mark_of(&e->marks[i], key->addr)) {
			own = i;
			continue;
		}
		/* Bit 0 is the mark's, not the time's (see below). */
		if (at && now - (at & ~1ULL) < within_ns)
			count++;
		if (!at || at < oldest) {
			oldest = at;
			slot = i;
		}
	}
	if (own < XRL_ESCALATE_AFTER_MAX)
		slot = own;
	slot &= XRL_ESCALATE_AFTER_MAX - 1;
	__builtin_memcpy(e->marks[slot].addr, key->addr, sizeof(key->addr));
	e->marks[slot].banned_ns = now | 1;	/* never 0: 0 is free */
	return count;
}

/* Bans the prefix of @e at @now, unless another CPU just did (1 when
 * this call did); the marks are cleared, so a next escalation takes
 * @after new bans. */
static __always_inline int escalation_start(struct xrl_escalation *e,
					     const struct xrl_rule *rule,
					     __u64 now)
{
	const struct xrl_rule_escalate *esc = &rule->escalate;
	struct xrl_rule_ban policy = {
		.duration_ns = esc->duration_ns,
		.max_ns = rule->ban.max_ns > esc->duration_ns ?
			  rule->ban.max_ns : esc->duration_ns,
	};
	struct xrl_ban last = {
		.until_ns = e->until_ns,
		.duration_ns = e->duration_ns,
	};
	struct xrl_ban_counters *counters;
	__u64 until = e->until_ns, length;
	__u32 zero = 0, i;
	bool repeat;

	length = ban_length(&last, &policy, now, &repeat);
	if (__sync_val_compare_and_swap(&e->until_ns, until,
					now + length) != until)
		return 0;
	e->duration_ns = length;
	e->escalations++;
	escalation_horizon(now + length);
#pragma unroll
	for (i = 0; i < XRL_ESCALATE_AFTER_MAX; i++)
		e->marks[i].banned_ns = 0;
	counters = bpf_map_lookup_elem(&xrl_ban_stats, &zero);
	if (counters)
		counters->escalated++;
	return 1;
}

/*
 * A ban of the source @key by @rule (with escalate) started at @now:
 * marked in its prefix's record, and the prefix banned when it makes
 * @after distinct sources within @within_ns: 1 when this call banned it
 * (for report_escalation()), else 0.
 */
__noinline int escalation_ban_started(const struct xrl_bucket_key *key,
				      const struct xrl_rule *rule, __u64 now)
{
	struct xrl_escalation_key ek;
	struct xrl_escalation *e;
	__u32 count;

	if (!key || !rule)
		return 0;
	escalation_key(&ek, (const __u32 *)key->addr, key_family(key), rule);
	e = bpf_map_lookup_elem(&xrl_escalations, &ek);
	if (!e) {
		bpf_map_update_elem(&xrl_escalations, &ek, &escalation_fresh,
				    BPF_NOEXIST);
		e = bpf_map_lookup_elem(&xrl_escalations, &ek);
		if (!e)
			return 0;
	}
	if (ban_active(e->until_ns, now))
		return 0;
	count = escalation_mark(e, key, rule->escalate.within_ns, now);
	if (count < rule->escalate.after)
		return 0;
	return escalation_start(e, rule, now);
}

/* The prefix of the source @key was just banned by @rule: its event
 * (the record looked up again: only at an escalation). Not in the
 * global function: the settings are in a map it may not be given. */
static __always_inline void report_escalation(const struct xrl_bucket_key *key,
					      const struct xrl_rule *rule,
					      const struct xrl_settings *settings,
					      __u64 now)
{
	struct xrl_escalation_key ek;
	struct xrl_escalation *e;

	if (!settings->events.interval)
		return;
	escalation_key(&ek, (const __u32 *)key->addr, key_family(key), rule);
	e = bpf_map_lookup_elem(&xrl_escalations, &ek);
	if (e)
		report_ban_event(ek.addr, rule, rule->action |
				 XRL_EVENT_ESCALATED, rule->escalate.after,
				 settings, now, e->duration_ns);
}

#endif /* XRL_ESCALATE_H */

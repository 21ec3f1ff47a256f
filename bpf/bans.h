/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bans.h - the penalty box: a source that keeps exceeding a rule with a
 * ban (struct xrl_rule_ban) is dropped unjudged for a while, longer when
 * it comes back. Design: include/xrl.h (struct xrl_ban).
 *
 * Where the state lives, and why: the ban in force is one word of the
 * source's offender record (struct xrl_offender, ban_until_ns), which a
 * source that was ever refused has and its bucket flags, so a banned
 * packet is dropped after one lookup past its bucket, before any GCRA
 * work, and a source never refused pays one predictable branch on its
 * bucket's flags. The record that outlives a ban (how long the last one
 * was, when the offence began) sits in its own LRU map, touched on drops
 * of ban rules only, and holds the ban's end too, so a bucket or an
 * offender record the LRU evicts does not forget that its source is
 * banned (a new bucket or offender record takes the ban over from it).
 *
 * Races: two CPUs ending one offence at once race for the ban with one
 * compare-and-swap on the record's until_ns; the winner counts it, sets
 * the offender record and reports it. The run bookkeeping (over_since_ns,
 * last_drop_ns) is plain stores: two drops racing there can only move
 * the start of an offence by the gap between them.
 */
#ifndef XRL_BANS_H
#define XRL_BANS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "events.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_BAN_SOURCES);
	__type(key, struct xrl_bucket_key);
	__type(value, struct xrl_ban);
} xrl_bans SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_ban_counters);
} xrl_ban_stats SEC(".maps");

/* True while a ban ending at @until holds at @now (the clock may wrap). */
static __always_inline bool ban_active(__u64 until, __u64 now)
{
	return until && (__s64)(until - now) > 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XRL_MANUAL_BANS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xrl_manual_ban_key);
	__type(value, struct xrl_manual_ban);
} xrl_manual_bans SEC(".maps");

/*
 * True when a manual ban (include/xrl.h) covers the source @addr (the
 * parser's layout) at @now: its packet is then dropped, counted by the
 * ban.
 */
static __always_inline bool manual_banned(const __u32 *addr, __u32 family,
					  __u64 now)
{
	struct xrl_manual_ban_key key = { .family = (__u8)family };
	struct xrl_manual_ban *ban;
	__u32 *words = (__u32 *)key.addr;

	if (!addr)
		return false;
	if (family == XRL_FAMILY_IPV4) {
		key.prefixlen = XRL_MANUAL_BAN_HDR_BITS + 32;
		__builtin_memcpy(words, &addr[3], 4);
	} else {
		key.prefixlen = XRL_MANUAL_BAN_HDR_BITS + 128;
		__builtin_memcpy(words, addr, 16);
	}
	ban = bpf_map_lookup_elem(&xrl_manual_bans, &key);
	if (!ban || (ban->until_ns && !ban_active(ban->until_ns, now)))
		return false;
	__sync_fetch_and_add(&ban->packets, 1);
	return true;
}

/* The record a source's first offence starts from: not on the stack,
 * whose every byte the deepest call chain needs (512 for all frames). */
static const struct xrl_ban ban_fresh;

/*
 * The end of the ban the record of @key holds for @rule, or 0: for a
 * source getting a new bucket or offender record (its old one evicted
 * while it was banned).
 */
static __always_inline __u64 ban_of_record(const struct xrl_bucket_key *key,
					    const struct xrl_rule *rule,
					    __u64 now)
{
	struct xrl_ban *ban;
	__u64 until;

	ban = bpf_map_lookup_elem(&xrl_bans, key);
	if (!ban || ban->rule_id != rule->id)
		return 0;
	until = ban->until_ns;
	return ban_active(until, now) ? until : 0;
}

/* ban_of_record() as a subprogram, for the paths with frames to spare;
 * the deepest chains inline it (Linux 6.1 counts each frame). */
static __noinline __u64 ban_recorded(const struct xrl_bucket_key *key,
				     const struct xrl_rule *rule, __u64 now)
{
	if (!key || !rule)
		return 0;
	return ban_of_record(key, rule, now);
}

/* The length of a ban starting at @now after the one of @ban. */
static __always_inline __u64 ban_length(const struct xrl_ban *ban,
					const struct xrl_rule_ban *rule,
					__u64 now, bool *repeat)
{
	__u64 last = ban->duration_ns, length;

	*repeat = last && ban->until_ns && now - ban->until_ns < rule->max_ns;
	if (!*repeat)
		return rule->duration_ns;
	length = last > rule->max_ns / 2 ? rule->max_ns : last * 2;
	return length < rule->duration_ns ? rule->duration_ns : length;
}

/* A ban of @addr started: an event (under the same global cap as limit
 * events); @action: the rule's, and XRL_EVENT_ESCALATED for a prefix's,
 * whose @packets are the sources whose bans escalated it. */
static __always_inline void report_ban_event(const __u8 *addr,
					     const struct xrl_rule *rule,
					     __u32 action, __u64 packets,
					     const struct xrl_settings *settings,
					     __u64 now, __u64 length)
{
	struct xrl_event_state *state;
	struct xrl_limit_event *event;
	__u32 zero = 0;

	if (!settings->events.interval)
		return;
	state = bpf_map_lookup_elem(&xrl_event_state, &zero);
	if (!state)
		return;
	if (!event_admitted(state, &settings->events, now)) {
		state->count[XRL_EVENT_SUPPRESSED]++;
		return;
	}
	event = bpf_ringbuf_reserve(&xrl_events, sizeof(*event), 0);
	if (!event) {
		state->count[XRL_EVENT_LOST]++;
		return;
	}
	__builtin_memcpy(event->addr, addr, sizeof(event->addr));
	event->rule_id = rule->id;
	event->action = action;
	event->time_ns = now;
	event->packets = packets;
	event->window_ns = 0;
	event->ban_ns = length;
	bpf_ringbuf_submit(event, 0);
	state->count[XRL_EVENT_SENT]++;
}

/* A source's ban started: its event. */
static __always_inline void report_ban(const struct xrl_bucket_key *key,
				       const struct xrl_rule *rule,
				       const struct xrl_settings *settings,
				       __u64 now, __u64 length)
{
	report_ban_event(key->addr, rule, rule->action, 0, settings, now,
			 length);
}

/* Starts a ban of the source of @ban unless another CPU just did:
 * whether this call started it. */
static __always_inline bool ban_start(const struct xrl_bucket_key *key,
				      struct xrl_offender *off,
				      struct xrl_ban *ban,
				      const struct xrl_rule *rule,
				      const struct xrl_settings *settings,
				      __u64 now)
{
	__u64 until = ban->until_ns, length;
	struct xrl_ban_counters *counters;
	__u32 zero = 0;
	bool repeat;

	if (ban_active(until, now))
		return false;
	length = ban_length(ban, &rule->ban, now, &repeat);
	if (__sync_val_compare_and_swap(&ban->until_ns, until,
					now + length) != until)
		return false;
	ban->duration_ns = length;
	ban->last_drop_ns = 0;	/* the offence is over; a new one starts */
	ban->bans++;
	off->ban_until_ns = now + length;
	counters = bpf_map_lookup_elem(&xrl_ban_stats, &zero);
	if (counters) {
		counters->started++;
		if (repeat)
			counters->repeats++;
	}
	report_ban(key, rule, settings, now, length);
	return true;
}

/*
 * A drop under a rule with a ban: the source's offence goes on (or
 * starts), and bans it once it has lasted the rule's after_ns: whether
 * a ban started (for bpf/escalate.h). A static subprogram, not a global
 * one: the settings are in a map the program may not write, which a
 * global function's argument must allow.
 */
static __noinline bool ban_offence(const struct xrl_bucket_key *key,
				   struct xrl_offender *off,
				   const struct xrl_rule *rule,
				   const struct xrl_settings *settings,
				   __u64 now)
{
	struct xrl_ban *ban;
	__u64 last;

	ban = bpf_map_lookup_elem(&xrl_bans, key);
	if (!ban) {
		/* Its rule id is set below, as for another rule's record. */
		bpf_map_update_elem(&xrl_bans, key, &ban_fresh, BPF_NOEXIST);
		ban = bpf_map_lookup_elem(&xrl_bans, key);
		if (!ban)
			return false;
	}
	if (ban->rule_id != rule->id) {
		/* Another rule's record: its offences are not this one's. */
		ban->rule_id = rule->id;
		ban->until_ns = 0;
		ban->duration_ns = 0;
		ban->last_drop_ns = 0;
	}
	last = ban->last_drop_ns;
	if (!last || (__s64)(now - last) > (__s64)XRL_BAN_RUN_GAP_NS)
		ban->over_since_ns = now;
	ban->last_drop_ns = now | 1;	/* never 0 while an offence is open */
	if (now - ban->over_since_ns < rule->ban.after_ns)
		return false;
	return ban_start(key, off, ban, rule, settings, now);
}

#endif /* XRL_BANS_H */

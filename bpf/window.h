/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * window.h - sliding windows: at most n packets admitted in any window,
 * kept per source as counters of sub-windows (struct xrl_window_state,
 * semantics and bound in include/xrl.h, "Strategies").
 *
 * Across CPUs: a packet is charged by one atomic add on the counter of
 * its sub-window, and judged by the count that add found plus the other
 * sub-windows of the window; over n, the charge is taken back. A counter
 * only ever overstates what was admitted (a charge in transit), never
 * understates it, so no CPU admits past n; and the first charge ever
 * taken back is one that found n admitted already, so at one instant
 * exactly n pass (tests/bpf/test_window.c). A sub-window's slot is
 * reset to the current sub-window by compare-and-swap, so two CPUs
 * entering a new sub-window reset it once.
 */
#ifndef XRL_WINDOW_H
#define XRL_WINDOW_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"

#define READ_ONCE_U64(x)	(*(volatile const __u64 *)&(x))
#define EPOCH_MASK	((1ULL << XRL_WINDOW_EPOCH_BITS) - 1)
/* Attempts at making a slot current before the packet is refused (each
 * lost one is another CPU resetting the same slot, which makes it so). */
#define ROTATE_ATTEMPTS	4

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_WINDOW_SOURCES);	/* set at load time */
	__type(key, struct xrl_bucket_key);
	__type(value, struct xrl_window_state);
} xrl_windows SEC(".maps");

/* Where a fresh state is built: off the stack, which the call chain of a
 * new source's first packet already uses much of. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_window_state);
} xrl_window_scratch SEC(".maps");

static __always_inline __u64 window_epoch(__u64 word)
{
	return word >> XRL_WINDOW_COUNT_BITS;
}

/* How far sub-window @epoch lies ahead of @e, modulo 2^40. */
static __always_inline __u64 epoch_ahead(__u64 epoch, __u64 e)
{
	return (epoch - e) & EPOCH_MASK;
}

/*
 * The admissions the word counts for a window ending in sub-window @e:
 * its own when it holds one of the XRL_WINDOW_SUBS before @e, or a later
 * one; else none (stale). A later one means another CPU read the clock
 * after ours and moved on to sub-window e + k, reusing the slot of
 * e - XRL_WINDOW_SUBS - 1 + k: our packet is then judged by the window
 * ending in e + k (which it is in, and which it is charged to, as e is
 * in it), never by a window missing a sub-window.
 */
static __always_inline __u64 slot_count(__u64 word, __u64 e)
{
	__u64 ahead = epoch_ahead(window_epoch(word), e - XRL_WINDOW_SUBS);

	if (ahead < XRL_WINDOW_SUBS + XRL_WINDOW_SLOTS)
		return word & XRL_WINDOW_COUNT_MASK;
	return 0;
}

/* Makes @word count sub-window @e; false when it holds a later one. */
static __always_inline bool slot_make_current(__u64 *word, __u64 e)
{
	__u64 old;
	int i;

	for (i = 0; i < ROTATE_ATTEMPTS; i++) {
		old = READ_ONCE_U64(*word);
		if (window_epoch(old) == e)
			return true;
		if (epoch_ahead(window_epoch(old), e) < XRL_WINDOW_SLOTS)
			return false;
		__sync_val_compare_and_swap(word, old,
					    e << XRL_WINDOW_COUNT_BITS);
	}
	return window_epoch(READ_ONCE_U64(*word)) == e;
}

/* Takes back @cost charged to sub-window @e's word. Had the slot moved
 * on to a later sub-window meanwhile, the take-back is undone: the later
 * count must not lose what it never got. */
static __always_inline void slot_give_back(__u64 *word, __u64 e, __u64 cost)
{
	__u64 old = __sync_fetch_and_add(word, -cost);

	if (window_epoch(old) != e)
		__sync_fetch_and_add(word, cost);
}

/*
 * Admits @cost packets at @now_ns when the window then holds at most
 * @w->limit admitted ones; charges them to the current sub-window.
 */
static __always_inline bool window_take(struct xrl_window_state *st,
					const struct xrl_rule_window *w,
					__u64 now_ns, __u64 cost)
{
	__u64 e, old, sum, *word;
	int j;

	if (!w->sub_ns || cost > w->limit)
		return false;
	e = (now_ns / w->sub_ns) & EPOCH_MASK;
	word = &st->slot[e % XRL_WINDOW_SLOTS];
	if (!slot_make_current(word, e))
		return false;
	old = __sync_fetch_and_add(word, cost);
	if (window_epoch(old) != e) {
		slot_give_back(word, e, cost);
		return false;
	}
	sum = (old & XRL_WINDOW_COUNT_MASK) + cost;
	for (j = 1; j < XRL_WINDOW_SLOTS; j++)
		sum += slot_count(READ_ONCE_U64(st->slot[(e - j) %
							 XRL_WINDOW_SLOTS]), e);
	if (sum > w->limit) {
		slot_give_back(word, e, cost);
		return false;
	}
	return true;
}

/*
 * The window state of @key for @rule, made when missing or counted for
 * another rule or width. A source whose bucket admitted within the last
 * window (its state was evicted, or its rule changed) starts with a full
 * window, so that losing state never admits more than n in a window:
 * at worst such a source waits one window more.
 */
static __always_inline struct xrl_window_state *
window_state(const struct xrl_bucket_key *key, const struct xrl_rule *rule,
	     const struct xrl_bucket *bucket, __u64 now_ns)
{
	const struct xrl_rule_window *w = &rule->window;
	struct xrl_window_state *st, *fresh;
	__u32 zero = 0;
	__u64 e;
	int i;

	if (!key || !rule || !bucket || !w->sub_ns)
		return NULL;
	st = bpf_map_lookup_elem(&xrl_windows, key);
	if (st && st->sub_ns == w->sub_ns && st->rule_id == rule->id &&
	    st->since == rule->since)
		return st;
	fresh = bpf_map_lookup_elem(&xrl_window_scratch, &zero);
	if (!fresh)
		return NULL;
	for (i = 0; i < XRL_WINDOW_SLOTS; i++)
		fresh->slot[i] = 0;
	fresh->sub_ns = w->sub_ns;
	fresh->rule_id = rule->id;
	fresh->since = rule->since;
	if ((bucket->rule_id & XRL_BUCKET_PASSED) &&
	    (__s64)(now_ns - bucket->last_seen_ns) <
	    (__s64)(w->window_ns + w->sub_ns)) {
		e = (now_ns / w->sub_ns) & EPOCH_MASK;
		fresh->slot[e % XRL_WINDOW_SLOTS] =
			e << XRL_WINDOW_COUNT_BITS | w->limit;
	}
	bpf_map_update_elem(&xrl_windows, key, fresh,
			    st ? BPF_ANY : BPF_NOEXIST);
	return bpf_map_lookup_elem(&xrl_windows, key);
}

#endif /* XRL_WINDOW_H */

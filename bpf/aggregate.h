/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * aggregate.h - rules of scope aggregate: one budget for everything the
 * rule matches, enforced per CPU with the share userspace gave this CPU,
 * then by the pool all CPUs share (design, and the bound on what all of
 * them admit: struct xrl_agg_share in include/xrl.h). Only such rules
 * reach this code; source-scope rules never touch these maps.
 */
#ifndef XRL_AGGREGATE_H
#define XRL_AGGREGATE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "gcra.h"

/*
 * Not preallocated, both: an entry per aggregate rule in force, made by
 * userspace with its shares (user/datapath/aggregate.c), so per-CPU
 * memory follows the aggregate rules there are, not XRL_AGG_MAP_ENTRIES
 * times the CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XRL_AGG_MAP_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xrl_agg_share);
} xrl_agg_shares SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XRL_AGG_MAP_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xrl_agg_state);
} xrl_agg_state SEC(".maps");

/* The pool of each rule: one bucket for every CPU, as a source's is. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XRL_MAX_AGGREGATES);
	__type(key, __u32);
	__type(value, struct xrl_bucket);
} xrl_agg_pool SEC(".maps");

/*
 * A fresh pool bucket and state: off the stack, as the deepest call chain
 * (judge_aggregate(), pool_take(), bucket_take(), its loop) has little
 * room: Linux 6.1 counts a bpf_loop() callback's frame as a call's.
 */
struct agg_scratch {
	struct xrl_bucket fresh;
	struct xrl_agg_state fresh_state;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agg_scratch);
} xrl_agg_scratch SEC(".maps");

/*
 * This CPU's state of the rule: made by userspace with the rule's shares;
 * else on its first packet (an insert from the program sets this CPU's
 * value and zeroes the others').
 */
static __always_inline struct xrl_agg_state *agg_state(__u32 rule_id)
{
	struct xrl_agg_state *state;
	struct agg_scratch *scratch;
	__u32 zero = 0;

	state = bpf_map_lookup_elem(&xrl_agg_state, &rule_id);
	if (state)
		return state;
	scratch = bpf_map_lookup_elem(&xrl_agg_scratch, &zero);
	if (!scratch)
		return NULL;
	__builtin_memset(&scratch->fresh_state, 0,
			 sizeof(scratch->fresh_state));
	bpf_map_update_elem(&xrl_agg_state, &rule_id, &scratch->fresh_state,
			    BPF_NOEXIST);
	return bpf_map_lookup_elem(&xrl_agg_state, &rule_id);
}

/*
 * The debt bound: a TAT that owes more than @lim tolerates (written
 * under an earlier, smaller share: a floor share's one packet can be
 * most of a second) is moved to owe exactly the tolerance. The next
 * packet then waits at most one interval of the share in force, and what
 * is forgiven is at most the earlier share's tolerance, once per
 * re-split. @word is returned unchanged when within the tolerance.
 */
static __always_inline __u64 agg_bound_debt(__u64 word,
					    const struct xrl_limit *lim,
					    __u64 now_ns, __s64 idle_ns)
{
	if (!lim->interval ||
	    limit_debt(word, lim, now_ns, idle_ns) <= lim->tolerance)
		return word;
	return tat_pack(to_units(now_ns, lim->shift) + lim->tolerance,
			lim->shift);
}

/*
 * Takes @packets packets of @bytes in all (struct wire_cost) from this
 * CPU's share; true when every limit admits them. Per CPU, so a plain
 * read-modify-write (XDP runs with migration disabled and does not nest
 * on a CPU): no compare-and-swap. Not inlined: its spills would sit in
 * judge_aggregate()'s frame, which is in the deepest call chain.
 */
static __noinline bool agg_take(struct xrl_agg_state *state,
				const struct xrl_agg_share *share,
				__u64 now_ns, __u64 packets, __u64 bytes)
{
	const struct xrl_limit *pkt = &share->limit[XRL_LIMIT_PACKETS];
	const struct xrl_limit *byte = &share->limit[XRL_LIMIT_BYTES];
	__s64 idle_ns = now_ns - state->last_seen_ns;
	__u64 pkt_new = 0, byte_new = 0;

	state->tat[XRL_LIMIT_PACKETS] = agg_bound_debt(
		state->tat[XRL_LIMIT_PACKETS], pkt, now_ns, idle_ns);
	state->tat[XRL_LIMIT_BYTES] = agg_bound_debt(
		state->tat[XRL_LIMIT_BYTES], byte, now_ns, idle_ns);
	if (pkt->interval) {
		pkt_new = limit_admit(state->tat[XRL_LIMIT_PACKETS], pkt,
				      now_ns, idle_ns, pkt->interval * packets);
		if (!pkt_new)
			return false;
	}
	if (byte->interval) {
		byte_new = limit_admit(state->tat[XRL_LIMIT_BYTES], byte,
				       now_ns, idle_ns,
				       byte->interval * bytes);
		if (!byte_new)
			return false;
	}
	state->tat[XRL_LIMIT_PACKETS] = pkt_new;
	state->tat[XRL_LIMIT_BYTES] = byte_new;
	state->last_seen_ns = now_ns;
	return true;
}


/* The debt bound on the shared word: one attempt, as losing the race
 * means another CPU just wrote a TAT of the limit in force. */
static __always_inline void pool_bound_debt(__u64 *word,
					    const struct xrl_limit *lim,
					    __u64 now_ns, __s64 idle_ns)
{
	__u64 old = *(volatile __u64 *)word;
	__u64 bounded = agg_bound_debt(old, lim, now_ns, idle_ns);

	if (bounded != old)
		__sync_val_compare_and_swap(word, old, bounded);
}

/*
 * Takes @packets packets of @bytes from the rule's pool, a bucket shared
 * by every CPU (compare-and-swap, bpf/gcra.h). Written only when it
 * admits, so its cache line moves at most at the pool's rate whatever
 * the flood.
 */

static __always_inline struct xrl_bucket *agg_pool(__u32 rule_id,
						   struct agg_scratch *scratch)
{
	struct xrl_bucket *pool;

	pool = bpf_map_lookup_elem(&xrl_agg_pool, &rule_id);
	if (pool)
		return pool;
	__builtin_memset(&scratch->fresh, 0, sizeof(scratch->fresh));
	bpf_map_update_elem(&xrl_agg_pool, &rule_id, &scratch->fresh,
			    BPF_NOEXIST);
	return bpf_map_lookup_elem(&xrl_agg_pool, &rule_id);
}

static __noinline bool pool_take(__u32 rule_id,
				 const struct xrl_agg_share *share,
				 __u64 now_ns, __u64 packets, __u64 bytes)
{
	struct agg_scratch *scratch;
	struct xrl_bucket *pool;
	__u32 zero = 0;
	__s64 idle_ns;
	int k;

	if (!share->pool[XRL_LIMIT_PACKETS].interval &&
	    !share->pool[XRL_LIMIT_BYTES].interval)
		return false;	/* the daemon gave it all to the CPUs */
	scratch = bpf_map_lookup_elem(&xrl_agg_scratch, &zero);
	if (!scratch)
		return false;
	pool = agg_pool(rule_id, scratch);
	if (!pool)
		return false;
	idle_ns = now_ns - pool->last_seen_ns;
	for (k = 0; k < XRL_LIMIT_KINDS; k++)
		pool_bound_debt(&pool->tat[k], &share->pool[k], now_ns,
				idle_ns);
	return bucket_take(pool, &share->pool_limits, now_ns, packets,
			   bytes) != 0;
}

/*
 * Whether an aggregate rule admits the packet; -1 when the rule has no
 * share or state on this CPU (only if userspace wrote none or the kernel
 * could not allocate: the caller fails open and counts it).
 */
static __always_inline int agg_admitted(const struct xrl_rule *rule,
					__u64 now_ns, __u64 packets,
					__u64 bytes)
{
	const struct xrl_agg_share *share;
	struct xrl_agg_state *state;
	__u32 id = rule->id;
	bool admitted;

	share = bpf_map_lookup_elem(&xrl_agg_shares, &id);
	state = agg_state(id);
	if (!share || !state)
		return -1;
	state->arrived += packets;
	admitted = agg_take(state, share, now_ns, packets, bytes) ||
		   pool_take(id, share, now_ns, packets, bytes);
	if (admitted)
		state->passed += packets;
	return admitted;
}

#endif /* XRL_AGGREGATE_H */

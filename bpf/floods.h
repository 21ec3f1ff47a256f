/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * floods.h - what a packet from a source without a bucket goes through:
 * the per-CPU new-source budget that bounds inserts (and so evictions),
 * and the prefix fallback that judges a refused source without an
 * insert. Only reached on a bucket miss: the known-source path never
 * touches these maps. Design and defaults: include/xrl.h, README.
 */
#ifndef XRL_FLOODS_H
#define XRL_FLOODS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xrl.h"
#include "gcra.h"

/*
 * Seed of the prefix hash, drawn at load time so that an attacker cannot
 * aim a flood at the fallback bucket of a chosen prefix.
 */
const volatile __u64 prefix_hash_seed = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_new_source_budget);
} xrl_new_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_TABLE_STATS_SLOTS);	/* include/xrl.h */
	__type(key, __u32);
	__type(value, struct xrl_table_counters);
} xrl_table_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_PREFIX_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_bucket);
} xrl_prefix_buckets SEC(".maps");

static __always_inline void count_table(enum xrl_table_event event)
{
	struct xrl_table_counters *counters;
	__u32 zero = 0;

	counters = bpf_map_lookup_elem(&xrl_table_stats, &zero);
	if (counters && event < XRL_TABLE_EVENTS)
		counters->events[event]++;
}

/*
 * Takes one insert from this CPU's share of the budget. Per CPU, so a
 * plain read-modify-write: XDP runs with migration disabled and the
 * program does not nest on a CPU.
 */
static __always_inline bool new_source_admitted(const struct xrl_settings *s,
						__u64 now_ns)
{
	const struct xrl_limit *lim = &s->new_sources;
	struct xrl_new_source_budget *budget;
	__u32 zero = 0;
	__u64 word;

	if (!lim->interval)
		return true;	/* new_sources: off */
	budget = bpf_map_lookup_elem(&xrl_new_budget, &zero);
	if (!budget)
		return false;
	word = limit_admit(budget->tat, lim, now_ns,
			   now_ns - budget->last_seen_ns, lim->interval);
	if (!word)
		return false;
	budget->tat = word;
	budget->last_seen_ns = now_ns;
	return true;
}

/* The murmur3 64-bit finaliser: every input bit moves every output bit. */
static __always_inline __u64 mix64(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/*
 * The fallback bucket of @key's prefix: the source (already masked to
 * the configured key length) cut to /24 or /48, hashed with the rule id
 * and the family.
 */
static __always_inline struct xrl_bucket *
prefix_bucket(const struct xrl_bucket_key *key, bool ipv4, __u32 rule_id)
{
	const __u32 *addr = (const __u32 *)key->addr;
	__u64 high, low;
	__u32 slot;

	if (ipv4) {
		high = 0;
		low = addr[3] & bpf_htonl(~0U << (32 - XRL_UNKNOWN_V4_PREFIX));
	} else {
		high = addr[0];
		low = addr[1] &
		      bpf_htonl(~0U << (64 - XRL_UNKNOWN_V6_PREFIX));
	}
	high = mix64(prefix_hash_seed ^ (high << 32 | rule_id));
	slot = mix64(high ^ low ^ (ipv4 ? 1 : 0)) >>
	       (64 - XRL_PREFIX_SLOT_BITS);
	return bpf_map_lookup_elem(&xrl_prefix_buckets, &slot);
}

#endif /* XRL_FLOODS_H */

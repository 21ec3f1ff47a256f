/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blocklists.h - blocklist feeds (policy key blocklists:): a source held
 * by a deny list is dropped before any rule, one held by a monitor list
 * is counted and judged on. Layout and swaps: include/xrl.h ("Blocklist
 * feeds").
 *
 * Why tries of their own rather than rules: a list is 10^5 to 10^6
 * prefixes fed from outside, replaced whole and often; as rules they
 * would spend rule ids and counters, and a list swap would be a policy
 * swap. A trie per list, behind a map of maps, is swapped by one update
 * that the kernel makes visible to a packet whole (the old trie or the
 * new one), and costs nothing while the settings count no list.
 */
#ifndef XRL_BLOCKLISTS_H
#define XRL_BLOCKLISTS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "packet.h"

/* The template: a trie of any size may stand in for it (an LPM trie's
 * max_entries is not compared), its flags must be the same. */
struct xrl_blocklist_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct xrl_lpm_key));
	__uint(value_size, sizeof(struct xrl_blocklist_value));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XRL_BLOCKLIST_SLOTS);
	__type(key, __u32);
	__array(values, struct xrl_blocklist_map);
} xrl_blocklists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_BLOCKLIST_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_counter);
} xrl_block_hits SEC(".maps");

/* The verdict of a source no deny list holds. */
#define BLOCKLIST_UNLISTED	(-1)

/*
 * Looks the source of @s up in each list of the policy in force, in
 * order: XDP_DROP (counted as blocklisted) at the first deny list that
 * holds it, else BLOCKLIST_UNLISTED, every list that holds it counted.
 * Inlined in a subprogram beside the judging chain (source_blocklisted(),
 * as source_banned()), so its key is not on the main frame.
 */
static __always_inline int blocklist_verdict(const struct source *s,
					const struct xrl_settings *settings)
{
	struct xrl_lpm_key key = { .prefixlen = 128 };
	struct xrl_counter *hits;
	__u32 base, index, i;
	void *list;

	if (!s || !settings)
		return BLOCKLIST_UNLISTED;
	__builtin_memcpy(key.addr, s->q.addr, sizeof(key.addr));
	base = (s->q.slot & 1) * XRL_BLOCKLISTS_MAX;
	for (i = 0; i < XRL_BLOCKLISTS_MAX; i++) {
		if (i >= settings->blocklists)
			break;
		index = base + i;
		list = bpf_map_lookup_elem(&xrl_blocklists, &index);
		if (!list || !bpf_map_lookup_elem(list, &key))
			continue;
		hits = bpf_map_lookup_elem(&xrl_block_hits, &index);
		if (hits) {
			hits->packets++;
			hits->bytes += s->cost.frame_len;
		}
		if (settings->blocklist_action[i] == XRL_BLOCKLIST_DENY)
			return XDP_DROP;
	}
	return BLOCKLIST_UNLISTED;
}

_Static_assert(XRL_POLICY_SLOTS == 2, "a rules slot is one bit");

#endif /* XRL_BLOCKLISTS_H */

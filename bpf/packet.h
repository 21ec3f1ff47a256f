/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * packet.h - what the program knows of the packet it is judging: its
 * source (the bucket key, the address to classify), what it costs, and
 * what its L4 header says.
 *
 * Kept per CPU in a map (XDP does not nest on a CPU) rather than on a
 * stack, for two reasons. The frames of the judging call chain must fit
 * the verifier's 512 bytes together, and this is most of what they would
 * hold. And a key in a map value is what every kernel's map helpers take:
 * Linux 6.1 takes a key only from the stack, the packet or a map, never
 * from a global function's pointer argument, so the global functions of
 * the judging chain look the packet up themselves (this_packet()) instead
 * of being handed it.
 */
#ifndef XRL_PACKET_H
#define XRL_PACKET_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "parse.h"
#include "l4.h"

/* What a classification asks: the source (as parsed, unmasked), of
 * which family, in the rules slot of the policy in force (and that
 * policy's generation). */
struct classify_query {
	__u32 addr[4];
	__u32 family;
	__u32 slot;
	__u32 gen;	/* of the policy head in force */
};

/* The state of classify()'s walk (bpf/classify.h). */
struct classify_walk {
	struct xrl_rule_key key;	/* the prefix looked up */
	__u64 lengths[3];	/* the family's prefix lengths not yet tried */
	__u32 offset;		/* IPv4: 96 (the last word); IPv6: 0 */
	__u32 found_len;	/* of the rule found */
	__u32 found;		/* its id + 1; 0: none yet */
	__u32 len;		/* the length of this step */
	__u8 l4_seen;		/* an L4 rule was looked at */
	__u8 unjudged;		/* l4_chain() said L4_CHAIN_UNJUDGED */
	__u16 reserved;
};

struct source {
	struct xrl_bucket_key key;	/* of its bucket */
	struct classify_query q;
	struct wire_cost cost;
	struct l4_info l4;		/* what classify() read of it */
	struct classify_walk walk;
	__u64 now;	/* the clock as its bucket was judged: read once */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct source);
} xrl_packet SEC(".maps");

/* The packet this CPU is judging; NULL never (a per-CPU array's entry). */
static __always_inline struct source *this_packet(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xrl_packet, &zero);
}

#endif /* XRL_PACKET_H */

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * classify.h - the rules of a policy and how a source finds its rule.
 *
 * Two inner maps per policy, built fresh by userspace in the rules slot
 * the policy head in force does not name, then put in force with the
 * head (include/xrl.h, "How a policy is installed"): the classifier (a
 * hash map of exact prefixes, one lookup per prefix length the policy
 * holds, longest first) and the rule table (an array by rule id, for the
 * hot path: a source whose bucket names a rule of the policy in force is
 * judged by one lookup by id). Every rule carries its policy generation:
 * a table rule is used only when its generation is the one the bucket
 * was classified under. Layout: include/xrl.h.
 */
#ifndef XRL_CLASSIFY_H
#define XRL_CLASSIFY_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xrl.h"
#include "features.h"

/*
 * Sizes rather than types: libbpf 1.1 cannot size an inner map's BTF
 * struct types; userspace creates the inner maps with BTF of their own.
 */
/* Preallocated: a policy's entries are all inserted at once, from the
 * map's own pool rather than by one allocation each. */
struct xrl_classifier_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct xrl_rule_key));
	__uint(value_size, sizeof(struct xrl_rule));
};

/* Both indexed by the rules slot of the policy head in force. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XRL_POLICY_SLOTS);
	__type(key, __u32);
	__array(values, struct xrl_classifier_map);
} xrl_policy SEC(".maps");

/*
 * A hash by rule id, sized by userspace to the policy it holds (a hash
 * inner map may differ from its template in size, an array may not
 * without BPF_F_INNER_MAP): a table costs what its rules do, whatever
 * the rule capacity and however the ids are spread over their space.
 */
struct xrl_table_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct xrl_rule));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XRL_POLICY_SLOTS);
	__type(key, __u32);
	__array(values, struct xrl_table_map);
} xrl_rule_table SEC(".maps");

/*
 * BTF anchors: userspace creates the inner maps with these types from
 * this program's BTF (user/lib/policy.c), so that bpftool shows the
 * policy with field names. The program itself never reads them.
 */
struct xrl_rule_key xrl_btf_rule_key;
struct xrl_rule xrl_btf_rule;

/* The L4 match reads the rule tables above. */
#include "l4.h"
#include "packet.h"

/* The rule of id @id in the table of rules slot @slot, or NULL. */
static __always_inline const struct xrl_rule *table_rule(__u32 slot, __u32 id)
{
	void *table;

	table = bpf_map_lookup_elem(&xrl_rule_table, &slot);
	if (!table)
		return NULL;
	return bpf_map_lookup_elem(table, &id);
}

/*
 * xrl_masks[n]: the mask of an IPv6-layout address of n leading bits,
 * word by word in network order (an IPv4 /n is the layout's /96 + n:
 * the ::ffff: words stay whole). A table rather than arithmetic: masking
 * by one bounded index has no branch for the verifier to follow, in the
 * walk's callback it would otherwise explore once per length and word.
 */
#define MASK_CLAMP(b)	((b) >= 32 ? 32 : (b) <= 0 ? 0 : (b))
#define MASK_BITS(b)	((__u32)(0xffffffff00000000ULL >> MASK_CLAMP(b)))
#define MASK_ROW(n)	{ __bpf_constant_htonl(MASK_BITS(n)),		\
			  __bpf_constant_htonl(MASK_BITS((n) - 32)),	\
			  __bpf_constant_htonl(MASK_BITS((n) - 64)),	\
			  __bpf_constant_htonl(MASK_BITS((n) - 96)) }
#define MASK_ROWS4(n)	MASK_ROW(n), MASK_ROW((n) + 1), MASK_ROW((n) + 2), \
			MASK_ROW((n) + 3)
#define MASK_ROWS16(n)	MASK_ROWS4(n), MASK_ROWS4((n) + 4),		\
			MASK_ROWS4((n) + 8), MASK_ROWS4((n) + 12)
#define MASK_ROWS64(n)	MASK_ROWS16(n), MASK_ROWS16((n) + 16),		\
			MASK_ROWS16((n) + 32), MASK_ROWS16((n) + 48)

static const __u32 xrl_masks[129][4] = {
	MASK_ROWS64(0), MASK_ROWS64(64), MASK_ROW(128)
};

/* @src masked to @len bits of its family (@offset: 96 for IPv4, whose
 * address is the last word, else 0) into @dst. */
static __always_inline void mask_source(__u32 dst[4], const __u32 src[4],
					__u32 len, __u32 offset)
{
	const __u32 *mask;
	__u32 n = len + offset;

	if (n > 128)
		n = 128;
	mask = xrl_masks[n];
	dst[0] = src[0] & mask[0];
	dst[1] = src[1] & mask[1];
	dst[2] = src[2] & mask[2];
	dst[3] = src[3] & mask[3];
}

/* The rule of a classifier entry that takes the packet: the entry's
 * own when plain (one branch, for policies without L4 rules), else the
 * first of its chain that matches (bpf/l4.h), or NULL (and w->unjudged
 * when the packet's L4 header cannot tell). */
static __always_inline const struct xrl_rule *
entry_rule(struct source *p, const struct xrl_rule *rule)
{
	struct classify_walk *w = &p->walk;
	int picked;

	if (!rule || !rule->match.proto)
		return rule;
	picked = l4_chain(rule->id, p->q.slot, &p->l4, &w->l4_seen);
	if (picked == L4_CHAIN_UNJUDGED)
		w->unjudged = 1;
	if (picked <= 0)
		return NULL;
	return table_rule(p->q.slot, picked - 1);
}

/* The index of the highest bit set in @x (not 0): no such instruction. */
static __always_inline __u32 highest_bit(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) {
		x >>= 32;
		n += 32;
	}
	if (x >> 16) {
		x >>= 16;
		n += 16;
	}
	if (x >> 8) {
		x >>= 8;
		n += 8;
	}
	if (x >> 4) {
		x >>= 4;
		n += 4;
	}
	if (x >> 2) {
		x >>= 2;
		n += 2;
	}
	return n + (x >> 1);
}

/*
 * The longest length left in @lengths, taken out of it; 0 when none is
 * left. A policy holds a few lengths (a blocklist of /32s and /24s: two),
 * so the walk costs one step per length it holds, not one per length
 * there could be (129 for IPv6).
 */
static __always_inline __u32 take_longest(__u64 lengths[3])
{
	__u32 bit;
	int w;

#pragma unroll
	for (w = 2; w >= 0; w--) {
		if (!lengths[w])
			continue;
		bit = highest_bit(lengths[w]);
		lengths[w] &= ~(1ULL << bit);
		return w * 64 + bit;
	}
	return 0;
}

/*
 * One length of the walk (a bpf_loop() callback, or a step of
 * classify_walk()), longest first: 1 when the walk is over. Its state is
 * the packet's (struct classify_walk), not a stack's: read back from a
 * map it is the same to the verifier after every step whatever the
 * step found, so the steps of a walk it checks one by one (without
 * bpf_loop()) do not multiply.
 */
static __always_inline int classify_one_length(void)
{
	struct source *p = this_packet();
	const struct xrl_rule *rule;
	struct classify_walk *w;
	__u32 len, slot;
	void *rules;

	if (!p)
		return 1;	/* never: a per-CPU array's entry */
	w = &p->walk;
	/* Through the map too: take_longest()'s paths end in lengths of as
	 * many ranges, which would each be walked on. */
	w->len = take_longest(w->lengths);
	len = *(volatile __u32 *)&w->len;
	if (len == 0 || len > 128)
		return 1;
	slot = p->q.slot;
	rules = bpf_map_lookup_elem(&xrl_policy, &slot);
	if (!rules)
		return 1;	/* never: the slot in force */
	w->key.prefixlen = len;
	mask_source(w->key.addr, p->q.addr, len, w->offset);
	rule = entry_rule(p, bpf_map_lookup_elem(rules, &w->key));
	if (w->unjudged)
		return 1;
	if (!rule)
		return 0;
	w->found = rule->id + 1;
	w->found_len = len;
	return 1;
}

/* What classify() says beside the rule (its *@how), and is asked. */
#define CLASSIFY_SPLIT		0x1	/* the source's key is split */
#define CLASSIFY_L4		0x2	/* an L4 rule was looked at */
#define CLASSIFY_UNJUDGED	0x4	/* an L4 rule could be the packet's,
					 * its header cannot tell: l4->state
					 * says why (no rule is returned) */
#define CLASSIFY_PLAIN		0x8	/* asked: judge as if no L4 rule could
					 * read the packet's header */

/* A step as bpf_loop()'s callback. */
static long classify_step(__u32 i, void *unused)
{
	return classify_one_length();
}

/*
 * A step as a global function, checked once: the walk without
 * bpf_loop() (bpf/features.h) is then a loop of calls, which the
 * verifier walks in a few instructions per step rather than a step's
 * whole body 129 times.
 */
__noinline int classify_length(void)
{
	return classify_one_length();
}

static __always_inline void classify_walk(__u32 steps)
{
	__u32 i;

	for (i = 0; i < steps && i < 129; i++)
		if (classify_length())
			break;
}

/*
 * The rule of the packet's source (this_packet()) in the classifier of
 * its rules slot: the longest prefix with a rule that takes the packet
 * (@ctx, read into the packet's l4 for L4 rules only), or the default
 * rule; its id + 1, or 0 when the packet is unjudged or no policy is
 * installed. l4.how says whether the source's key subnet (the source
 * masked to @key_len bits) holds a rule longer than the key, or an L4
 * rule was looked at (CLASSIFY_SPLIT), and whether the packet is
 * unjudged; asked CLASSIFY_PLAIN there, no packet is. A global function,
 * checked once on its own rather than once per state of each caller:
 * the walk is most of the program.
 */
__noinline int classify(struct xdp_md *ctx, __u32 key_len)
{
	struct source *p = this_packet();
	const struct xrl_policy_meta *meta;
	const struct xrl_rule *rule;
	struct classify_walk *w;
	struct l4_info *l4;
	__u32 slot, family;
	bool ipv4, plain;
	void *rules;

	if (!p)
		return 0;	/* never: a per-CPU array's entry */
	l4 = &p->l4;
	w = &p->walk;
	slot = p->q.slot;
	family = p->q.family;
	ipv4 = family == XRL_FAMILY_IPV4;
	plain = l4->how & CLASSIFY_PLAIN;
	l4->how = 0;
	rules = bpf_map_lookup_elem(&xrl_policy, &slot);
	if (!rules)
		return 0;
	__builtin_memset(w, 0, sizeof(*w));
	w->key.family = XRL_KEY_META;
	meta = bpf_map_lookup_elem(rules, &w->key);
	if (!meta)
		return 0;
	if (meta->long_rules & XRL_META_L4) {
		parse_l4(ctx, l4);
		if (plain && l4->state != L4_READ)
			l4->state = L4_UNREAD;
	} else {
		l4->state = L4_UNREAD;
		l4->first = 0;
	}
	l4->how = 0;	/* parse_l4() cleared it too */
	if (ipv4) {
		w->lengths[0] = meta->v4_lengths;
		w->offset = 96;
	} else {
		w->lengths[0] = meta->v6_lengths[0];
		w->lengths[1] = meta->v6_lengths[1];
		w->lengths[2] = meta->v6_lengths[2];
	}
	w->key.family = family;
	/* One step per length held, and one that finds none left; none
	 * when no length is held (a policy of the default rule alone). */
	if (!(w->lengths[0] | w->lengths[1] | w->lengths[2]))
		;
	else if (have_bpf_loop)
		bpf_loop(ipv4 ? 33 : 129, classify_step, NULL, 0);
	else
		classify_walk(ipv4 ? 33 : 129);
	rule = w->found ? table_rule(slot, w->found - 1) : NULL;
	if (!rule && !w->unjudged) {
		__builtin_memset(&w->key, 0, sizeof(w->key));
		rule = entry_rule(p, bpf_map_lookup_elem(rules, &w->key));
	}
	if (w->l4_seen)
		l4->how |= CLASSIFY_L4;
	if (w->unjudged) {
		l4->how |= CLASSIFY_UNJUDGED | CLASSIFY_SPLIT;
		return 0;
	}
	if (!rule)
		return 0;
	if (w->found_len > key_len || w->l4_seen) {
		l4->how |= CLASSIFY_SPLIT;
	} else if (meta->long_rules & (ipv4 ? 1 : 2)) {
		/* A shorter rule matched: is a longer one in the subnet? */
		w->key.family = XRL_KEY_SPLIT | family;
		w->key.prefixlen = key_len;
		mask_source(w->key.addr, p->q.addr, key_len, w->offset);
		if (bpf_map_lookup_elem(rules, &w->key))
			l4->how |= CLASSIFY_SPLIT;
	}
	return rule->id + 1;
}

#endif /* XRL_CLASSIFY_H */

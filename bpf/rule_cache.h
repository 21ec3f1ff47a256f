/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rule_cache.h - the rules a CPU's known sources are bound to, copied per
 * CPU (xrl_rule_cache), so that the hot path finds a source's rule by an
 * index into a per-CPU array (a lookup the verifier inlines) rather than
 * by a lookup of the rule table in force (an inner hash map: a helper
 * call and a hash per packet).
 *
 * What a slot's table holds never changes once in force: every swap
 * stages new maps, with the new generation in every rule, and the head
 * names that generation (struct xrl_policy_head.gen). So a copy tagged
 * with its rule's id and generation is the rule in force for exactly as
 * long as the head names that generation, and a bucket bound under
 * another generation is classified again, as before. Direct-mapped by
 * rule id: the rules of up to RULE_CACHE_WAYS busy ids keep their
 * copies; rules sharing a way copy theirs back on their next packet.
 *
 * Included by xdp_ratelimit.bpf.c after binding_of().
 */
#ifndef XRL_RULE_CACHE_H
#define XRL_RULE_CACHE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "classify.h"

#define RULE_CACHE_WAYS	64	/* a power of two */

struct rule_cache {
	__u64 binding;	/* binding_of() the rule copied; 0: none (gen >= 1) */
	struct xrl_rule rule;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RULE_CACHE_WAYS);
	__type(key, __u32);
	__type(value, struct rule_cache);
} xrl_rule_cache SEC(".maps");

/*
 * The rule of id @id and generation @gen in the table of slot @slot, the
 * one in force under generation @gen_in_force; NULL when the generations
 * differ or the table has no such rule (the source is classified again).
 * A subprogram: its key's stack slot is not in the entry's frame, which
 * is in the deepest call chain (6.1 holds the chain to 512 bytes).
 */
static __noinline const struct xrl_rule *
known_rule(__u32 slot, __u32 gen_in_force, __u32 id, __u32 gen)
{
	__u32 way = id & (RULE_CACHE_WAYS - 1);
	const struct xrl_rule *rule;
	struct rule_cache *copy;

	if (gen != gen_in_force)
		return NULL;
	copy = bpf_map_lookup_elem(&xrl_rule_cache, &way);
	if (copy && copy->binding == binding_of(id, gen))
		return &copy->rule;
	rule = table_rule(slot, id);
	if (!rule || rule->gen != gen || !copy)
		return rule && rule->gen == gen ? rule : NULL;
	copy->rule = *rule;
	copy->binding = binding_of(id, gen);
	return &copy->rule;
}

#endif /* XRL_RULE_CACHE_H */

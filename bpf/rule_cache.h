/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rule_cache.h - the rules a CPU's known sources are bound to, copied per
 * CPU (xrl_rule_cache), so that the hot path finds a source's rule by an
 * index into a per-CPU array (a lookup the verifier inlines) rather than
 * by a lookup of the rule table in force (an inner hash map: a helper
 * call and a hash per packet).
 *
 * What a slot's table holds never changes while in force: a swap
 * writes the slot the head does not name, and every head has a
 * generation of its own (struct xrl_policy_head.gen). So a copy tagged
 * with its rule's id and generation, made under the head in force, is
 * the rule in force for as long as that head is; under the next head
 * the first packet reads the table again (a swap that changes only a
 * rule's numbers keeps its generation and its buckets' bindings; one
 * that reshapes the policy gives every rule a new one, and every bucket
 * is classified again). Direct-mapped by
 * rule id: the rules of up to XRL_RULE_CACHE_WAYS busy ids keep their
 * copies; rules sharing a way copy theirs back on their next packet.
 *
 * A way also holds the counters of the rule copied there (its claim:
 * id and since, which outlive a swap that keeps the rule), so that its
 * packets pay no lookup of its counters entry; include/xrl.h, struct
 * xrl_rule_copy, says how they go back and how a reader reads them.
 *
 * Included by xdp_ratelimit.bpf.c after binding_of() and rule_stats_of().
 */
#ifndef XRL_RULE_CACHE_H
#define XRL_RULE_CACHE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "classify.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_RULE_CACHE_WAYS);
	__type(key, __u32);
	__type(value, struct xrl_rule_copy);
} xrl_rule_cache SEC(".maps");

/* What a way's claim holds for @rule's counters. */
static __always_inline __u64 claim_of(const struct xrl_rule *rule)
{
	return (__u64)rule->since << 32 | (rule->id + 1);
}

/*
 * The way's counters go to @rule (include/xrl.h, struct xrl_rule_copy):
 * those of the rule that held them back to its counters entry
 * (kept a swap after the rule leaves the policy, which a rule back as it
 * was finds at the same since), unless the table of slot @slot holds
 * another rule of that id (its own since: userspace zeroed the entry for
 * it, and the counts leave with the rule they were), then @rule's copied
 * from its own entry (none: the way holds no counters, and @rule's
 * packets count in its entry as before). head and tail are
 * written by a fetching add and an exchange, which every JIT orders
 * around the stores between them.
 */
static __always_inline void claim_counters(struct xrl_rule_copy *copy,
					   __u32 slot,
					   const struct xrl_rule *rule)
{
	struct xrl_rule_counters *stats;
	const struct xrl_rule *held;
	__u64 claim = copy->claim;
	__u32 id = (__u32)claim - 1;
	__u64 n;

	n = __sync_fetch_and_add(&copy->head, 1);
	if (claim) {
		held = table_rule(slot, id);
		stats = !held || held->since == (__u32)(claim >> 32) ?
			rule_stats_of(&id) : NULL;
		if (stats)
			*stats = copy->counts;
	}
	stats = rule_stats_of(&rule->id);
	if (stats) {
		copy->counts = *stats;
		copy->claim = claim_of(rule);
	} else {
		copy->claim = 0;
	}
	__sync_lock_test_and_set(&copy->tail, n + 1);
}

/*
 * The rule of id @id and generation @gen in the table of slot @slot, in
 * force under head generation @gen_in_force; NULL when the table holds
 * no such rule (the source is classified again). The copy is trusted
 * only under the head it was copied under: a swap that changes only a
 * rule's numbers keeps its generation (user/core/compiled.c, rules_gen),
 * so the first packet under each new head reads the table once more.
 * A subprogram: its key's stack slot is not in the entry's frame, which
 * is in the deepest call chain (6.1 holds the chain to 512 bytes).
 */
static __noinline const struct xrl_rule *
known_rule(__u32 slot, __u32 gen_in_force, __u32 id, __u32 gen)
{
	__u32 way = id & (XRL_RULE_CACHE_WAYS - 1);
	const struct xrl_rule *rule;
	struct xrl_rule_copy *copy;

	copy = bpf_map_lookup_elem(&xrl_rule_cache, &way);
	if (copy && copy->binding == binding_of(id, gen) &&
	    copy->checked == gen_in_force)
		return &copy->rule;
	rule = table_rule(slot, id);
	if (!rule || rule->gen != gen || !copy)
		return rule && rule->gen == gen ? rule : NULL;
	if (copy->claim != claim_of(rule))
		claim_counters(copy, slot, rule);
	copy->rule = *rule;
	copy->binding = binding_of(id, gen);
	copy->checked = gen_in_force;
	return &copy->rule;
}

/*
 * The counters on this CPU of the rule of id @id and since @since: its
 * way's while they are its (a packet of a rule whose copy is there pays
 * no hash lookup), else its counters entry (NULL: none made;
 * the packet is not counted). A subprogram of scalars: its keys are on
 * its own stack (6.1 takes no key from a global function's argument),
 * off the frame of the judging chain.
 */
static __noinline struct xrl_rule_counters *rule_counters(__u32 id,
							 __u32 since)
{
	__u32 way = id & (XRL_RULE_CACHE_WAYS - 1);
	struct xrl_rule_copy *copy;

	copy = bpf_map_lookup_elem(&xrl_rule_cache, &way);
	if (copy && copy->claim == ((__u64)since << 32 | (id + 1)))
		return &copy->counts;
	return rule_stats_of(&id);
}

#endif /* XRL_RULE_CACHE_H */

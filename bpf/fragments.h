/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fragments.h - the verdict of a fragmented packet's first fragment,
 * kept for its later fragments (include/xrl.h, struct xrl_frag; docs/
 * POLICY.md "Fragments and header chains").
 *
 * Only packets at prefixes with an L4 rule of their protocol come here
 * (classify() says when): elsewhere no rule reads past the IP header,
 * and a fragment is a packet of its source like any other.
 */
#ifndef XRL_FRAGMENTS_H
#define XRL_FRAGMENTS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xrl.h"
#include "parse.h"
#include "classify.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_FRAG_FLOWS);
	__type(key, struct xrl_frag_key);
	__type(value, struct xrl_frag);
} xrl_frags SEC(".maps");

/*
 * Keeps the verdict @verdict that @rule gave a first fragment (@l4)
 * under the head of generation @gen for the flow's later fragments. A
 * subprogram of its own: only first fragments at L4 prefixes pay for it.
 */
static __noinline void frag_remember(struct l4_info *l4,
				     const struct xrl_rule *rule, int verdict,
				     __u32 gen)
{
	struct xrl_frag flow = {};

	if (!rule)
		return;
	flow.rule_id = rule->id;
	flow.gen = gen;
	flow.verdict = verdict == XDP_PASS ? XDP_PASS : XDP_DROP;
	flow.bytes = l4->frag_len;
	bpf_map_update_elem(&xrl_frags, &l4->flow, &flow, BPF_ANY);
}

/*
 * The rule a later fragment (@l4) of rules slot @slot follows: the one
 * that judged its flow's first fragment, when the map holds the flow,
 * its first fragment was judged under the head in force (of generation
 * @gen: a swap forgets every flow, whatever it changed), and the flow
 * has carried no more than the largest IP packet. NULL otherwise: the
 * fragment is unjudged.
 * *@dropped says the first fragment was dropped.
 *
 * The bytes are added only while under the bound, so many CPUs together
 * overshoot it by at most one fragment each and the count never wraps.
 */
static __always_inline const struct xrl_rule *
frag_flow_rule(__u32 slot, __u32 gen, struct l4_info *l4, bool *dropped)
{
	const struct xrl_rule *rule;
	struct xrl_frag *flow;
	__u32 bytes;

	*dropped = false;
	flow = bpf_map_lookup_elem(&xrl_frags, &l4->flow);
	if (!flow)
		return NULL;
	if (flow->gen != gen)
		return NULL;
	rule = table_rule(slot, flow->rule_id);
	if (!rule)
		return NULL;
	if (*(volatile __u32 *)&flow->bytes > XRL_FRAG_BYTES_MAX)
		return NULL;
	bytes = __sync_fetch_and_add(&flow->bytes, l4->frag_len);
	if (bytes + l4->frag_len > XRL_FRAG_BYTES_MAX)
		return NULL;
	*dropped = flow->verdict != XDP_PASS;
	return rule;
}

#endif /* XRL_FRAGMENTS_H */

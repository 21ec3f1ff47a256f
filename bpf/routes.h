/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * routes.h - the last L4 flow each CPU classified, and its rule: a
 * packet of that flow again goes straight to its bucket, without the
 * classifier walk (bpf/classify.h) or its prefix's L4 chain (bpf/l4.h).
 *
 * What an L4 rule decides for a packet whose L4 header was read whole
 * (L4_READ, no fragment) depends on the source address, the protocol,
 * the ports and SYN, and the policy's shape, nothing else: the route
 * holds those and the rule they gave, with the rule's generation, so a
 * reshaped policy (which moves every rule's generation) makes it stale,
 * and a swap of numbers only leaves it to the same rule, read anew.
 * Only a limit or monitor rule of scope source is routed, the rules
 * whose packets pay for the walk most: a flood of one flow judged by
 * its bucket. One entry per CPU, not a table: a flood of random ports
 * costs a route no insert and evicts nothing, and a CPU's next flow of
 * another source simply takes the entry over.
 */
#ifndef XRL_ROUTES_H
#define XRL_ROUTES_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "classify.h"
#include "packet.h"

struct flow_route {
	__u32 addr[4];		/* the source, whole */
	__u32 family;		/* 0: no route */
	__u16 sport, dport;	/* host order, as struct l4_info */
	__u8 proto, syn;
	__u16 reserved;
	__u32 rule_id;
	__u32 gen;		/* the rule's, when routed */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct flow_route);
} xrl_route SEC(".maps");

static __always_inline struct flow_route *cpu_route(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xrl_route, &zero);
}

static __always_inline bool route_same_source(const struct flow_route *r,
					      const struct source *s)
{
	return r->family == s->q.family &&
	       !((r->addr[0] ^ s->q.addr[0]) | (r->addr[1] ^ s->q.addr[1]) |
		 (r->addr[2] ^ s->q.addr[2]) | (r->addr[3] ^ s->q.addr[3]));
}

static __always_inline bool route_same_flow(const struct flow_route *r,
					    const struct l4_info *l4)
{
	return l4->state == L4_READ && !l4->first && r->proto == l4->proto &&
	       r->syn == l4->syn && r->sport == l4->sport &&
	       r->dport == l4->dport;
}

/*
 * Whether the packet of this CPU's routed source (route_same_source())
 * is of the routed flow: its L4 header read whole and the same. A global
 * function: its L4 parse is checked once.
 */
__noinline int routed_flow(struct xdp_md *ctx)
{
	struct source *s = this_packet();
	struct flow_route *r = cpu_route();

	if (!s || !r)
		return 0;
	parse_l4(ctx, &s->l4);
	return route_same_flow(r, &s->l4);
}

/*
 * Remembers the flow of the packet just classified to @rule (@how:
 * classify()'s), when its classification was L4 (its key split for an
 * L4 rule looked at) and the header was read whole.
 */
static __always_inline void route_remember(const struct source *s,
					   const struct xrl_rule *rule,
					   __u32 how)
{
	const struct l4_info *l4 = &s->l4;
	struct flow_route *r;

	if (!rule || (how & (CLASSIFY_UNJUDGED | CLASSIFY_PLAIN)) ||
	    (how & (CLASSIFY_L4 | CLASSIFY_SPLIT)) !=
	    (CLASSIFY_L4 | CLASSIFY_SPLIT) ||
	    l4->state != L4_READ || l4->first)
		return;
	if ((rule->action != XRL_ACTION_LIMIT &&
	     rule->action != XRL_ACTION_MONITOR) ||
	    rule->scope != XRL_SCOPE_SOURCE)
		return;
	r = cpu_route();
	if (!r)
		return;
	__builtin_memcpy(r->addr, s->q.addr, sizeof(r->addr));
	r->family = s->q.family;
	r->sport = l4->sport;
	r->dport = l4->dport;
	r->proto = l4->proto;
	r->syn = l4->syn;
	r->rule_id = rule->id;
	r->gen = rule->gen;
}

#endif /* XRL_ROUTES_H */

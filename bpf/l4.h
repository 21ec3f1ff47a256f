/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * l4.h - the L4 match of rules (include/xrl.h, struct xrl_rule_match):
 * what a packet's L4 header says, and which rule of a prefix's chain
 * takes the packet.
 *
 * Read only on the classified path of a policy with L4 rules (its meta
 * says so): a policy without them never reads past the IP header.
 *
 * What an L4 rule can match (docs/POLICY.md "Protocols and ports"): a
 * packet whose L4 header lies whole inside the frame and the IP packet,
 * after at most L4_EXT_MAX IPv6 extension headers. A non-first fragment
 * carries no L4 header, and a truncated one cannot be trusted: neither
 * matches any L4 rule, so each is judged by the plain rule of the prefix
 * or a shorter one, as the source's other traffic is. A first fragment
 * carries its ports and is matched by them.
 */
#ifndef XRL_L4_H
#define XRL_L4_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xrl.h"
#include "parse.h"

/* IPv6 extension headers followed before the L4 header; past them the
 * header counts as unreadable. */
#define L4_EXT_MAX	8
/* IPv4 fragment offset (the MF and DF bits aside). */
#define L4_IPV4_OFFSET	0x1fff
/* The L4 header must start within this many bytes of the IP header. */
#define L4_OFFSET_MAX	2048

struct l4_info {
	__u16 sport;	/* host order */
	__u16 dport;
	__u8 proto;
	__u8 read;	/* 1: the L4 header was read whole */
	__u8 syn;	/* TCP SYN without ACK */
	__u8 reserved;
};

/* The fixed header an L4 rule looks at: ports, flags, ICMP's type. */
static __always_inline __u32 l4_min_len(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return sizeof(struct tcphdr);
	case IPPROTO_UDP:
		return sizeof(struct udphdr);
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return 4;	/* type, code, checksum */
	default:
		return 0;
	}
}

/* IPv6 fragment header (struct frag_hdr is not in the UAPI headers). */
struct l4_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset in 8-byte units, then flags */
	__be32 identification;
};

/*
 * Walks IPv6 extension headers from @off (bytes from @ip6) on; returns
 * the offset of the L4 header and sets *@proto, or -1 when the walk ends
 * in something no L4 rule can match (a non-first fragment, too many or
 * truncated headers).
 */
static __always_inline int ipv6_l4_offset(void *ip6, void *end, __u8 *proto)
{
	__u32 off = sizeof(struct ipv6hdr), len;
	struct ipv6_opt_hdr *opt;
	struct l4_frag_hdr *frag;
	int i;

	for (i = 0; i < L4_EXT_MAX; i++) {
		if (off > L4_OFFSET_MAX)
			return -1;
		switch (*proto) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
		case IPPROTO_AH:
			opt = ip6 + off;
			if ((void *)(opt + 1) > end)
				return -1;
			len = *proto == IPPROTO_AH ? (opt->hdrlen + 2) * 4 :
						     (opt->hdrlen + 1) * 8;
			*proto = opt->nexthdr;
			off += len;
			break;
		case IPPROTO_FRAGMENT:
			frag = ip6 + off;
			if ((void *)(frag + 1) > end)
				return -1;
			*proto = frag->nexthdr;
			if (frag->frag_off & bpf_htons(0xfff8))
				return -1;	/* not the first fragment */
			off += sizeof(*frag);
			break;
		default:
			return off;
		}
	}
	return -1;
}

/* Reads the L4 header at @off of the IP packet at @l3 (@l3_len bytes). */
static __always_inline void read_l4(void *l3, void *end, __u32 off,
				    __u32 l3_len, struct l4_info *l4)
{
	__u32 need = l4_min_len(l4->proto);
	struct tcphdr *tcp;
	struct udphdr *udp;

	if (!need || off > L4_OFFSET_MAX || off + need > l3_len)
		return;
	tcp = l3 + off;
	if (l3 + off + need > end)
		return;
	if (l4->proto == IPPROTO_TCP) {
		if ((void *)(tcp + 1) > end)
			return;
		l4->sport = bpf_ntohs(tcp->source);
		l4->dport = bpf_ntohs(tcp->dest);
		l4->syn = tcp->syn && !tcp->ack;
	} else if (l4->proto == IPPROTO_UDP) {
		udp = l3 + off;
		if ((void *)(udp + 1) > end)
			return;
		l4->sport = bpf_ntohs(udp->source);
		l4->dport = bpf_ntohs(udp->dest);
	}
	l4->read = 1;
}

/*
 * What the frame's L4 header says. The frame was parsed whole before
 * (parse_source(): a well-formed IPv4 or IPv6 packet), so only the L4
 * part is new; the headers before it are walked again rather than kept,
 * since a packet pointer does not survive the subprogram calls between.
 * A global function, checked once on its own. Returns l4->read.
 */
__noinline int parse_l4(struct xdp_md *ctx, struct l4_info *l4)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct l3_info l3;
	__u32 src[4];
	__be16 proto;
	struct iphdr *ip;
	void *l3_start;
	int off;

	if (!l4)
		return 0;
	__builtin_memset(l4, 0, sizeof(*l4));
	if (parse_ethernet(&c, &proto) != PARSE_NONIP)
		return 0;
	l3_start = c.pos;
	if (proto == bpf_htons(ETH_P_IP)) {
		if (parse_ipv4(&c, src, &l3) != PARSE_IPV4)
			return 0;
		ip = l3_start;
		if ((void *)(ip + 1) > c.end)
			return 0;
		l4->proto = l3.proto;
		if (ip->frag_off & bpf_htons(L4_IPV4_OFFSET))
			return 0;		/* not the first fragment */
		off = l3.hdr_len;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ipv6(&c, src, &l3) == PARSE_MALFORMED)
			return 0;
		l4->proto = l3.proto;
		off = ipv6_l4_offset(l3_start, c.end, &l4->proto);
		if (off < 0)
			return 0;
	} else {
		return 0;
	}
	read_l4(l3_start, c.end, off, l3.len, l4);
	return l4->read;
}

static __always_inline bool l4_matches(const struct xrl_rule_match *m,
				       const struct l4_info *l4)
{
	if (!l4->read || m->proto != l4->proto)
		return false;
	if ((m->flags & XRL_MATCH_SYN) && !l4->syn)
		return false;
	if ((m->flags & XRL_MATCH_SPORT) &&
	    (l4->sport < m->sport_lo || l4->sport > m->sport_hi))
		return false;
	if ((m->flags & XRL_MATCH_DPORT) &&
	    (l4->dport < m->dport_lo || l4->dport > m->dport_hi))
		return false;
	return true;
}

/*
 * The rule of a prefix's chain that takes the packet: @rule (the
 * chain's first, from the classifier) or one after it in the rule table
 * @table, in policy order with the plain rule last; NULL when none does
 * (the walk goes on to shorter prefixes). *@l4_seen is set when an L4
 * rule was looked at, matching or not: then packets of the source may
 * get different rules, and its key is split.
 */
/*
 * Which rule of a prefix's chain takes the packet: the chain's first
 * (id @head_id), or one after it, in policy order with the plain rule
 * last, in the rule table of rules slot @slot. Returns that rule's id + 1,
 * or 0 when none does (the walk goes on to shorter prefixes). *@l4_seen
 * is set when an L4 rule was looked at, matching or not: then packets of
 * the source may get different rules, and its key is split.
 *
 * A global function: the verifier checks it once, on its own, rather
 * than once per state of the prefix walk that calls it.
 */
__noinline int l4_chain(__u32 head_id, __u32 slot, const struct l4_info *l4,
			__u8 *l4_seen)
{
	const struct xrl_rule *rule;
	__u32 i, id = head_id;
	void *table;

	if (!l4 || !l4_seen)
		return 0;
	table = bpf_map_lookup_elem(&xrl_rule_table, &slot);
	if (!table)
		return 0;
	for (i = 0; i < XRL_MATCH_CHAIN_MAX; i++) {
		rule = bpf_map_lookup_elem(table, &id);
		if (!rule)
			return 0;
		if (!rule->match.proto)
			return id + 1;
		*l4_seen = 1;
		if (l4_matches(&rule->match, l4))
			return id + 1;
		if (!rule->match.next)
			return 0;
		id = rule->match.next - 1;
	}
	return 0;
}

#endif /* XRL_L4_H */

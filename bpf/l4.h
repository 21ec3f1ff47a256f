/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * l4.h - the L4 match of rules (include/xrl.h, struct xrl_rule_match):
 * what a packet's L4 header says, and which rule of a prefix's chain
 * takes the packet.
 *
 * Read only on the classified path of a policy with L4 rules (its meta
 * says so): a policy without them never reads past the IP header.
 *
 * Fail closed (docs/POLICY.md "Fragments and header chains"): a packet
 * whose L4 header cannot be read, at a prefix with an L4 rule of its
 * protocol, is never judged as if that rule did not exist. A later
 * fragment follows the verdict its flow's first fragment got (bpf/
 * fragments.h); a first fragment too short for the fields a rule reads
 * (a "tiny fragment", RFC 1858) and a chain of extension headers longer
 * than the parser follows get verdicts of their own. The chain's
 * answer for such a packet is L4_CHAIN_UNJUDGED.
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

/*
 * IPv6 extension headers followed before the L4 header (the ones Linux
 * walks: hop-by-hop, routing, destination options, AH, fragment). A
 * packet with exactly this many is read; one with more is L4_OVERFLOW.
 */
#define L4_EXT_MAX	XRL_L4_EXT_MAX
/* IPv4 fragment offset (the MF and DF bits aside), and MF. */
#define L4_IPV4_OFFSET	0x1fff
#define L4_IPV4_MF	0x2000
/* IPv6 fragment header: offset in 8-byte units in the top 13 bits, M. */
#define L4_IPV6_OFFSET	0xfff8
#define L4_IPV6_MF	0x0001
/* The L4 header must start within this many bytes of the IP header;
 * past it the chain counts as too long (L4_OVERFLOW). */
#define L4_OFFSET_MAX	2048
/* A fragment at this offset (8-byte units) rewrites a TCP header's
 * flags on reassembly (RFC 1858, the overlapping-fragment attack). */
#define L4_TCP_OVERLAP_OFFSET	1

/* What the packet's L4 part let the program read (struct l4_info). */
enum l4_state {
	L4_UNREAD = 0,	/* no L4 header a rule reads: another protocol
			 * (ESP included), or a whole packet cut short,
			 * which Linux does not deliver */
	L4_READ,	/* read whole */
	L4_LATER,	/* a non-first fragment: no L4 header */
	L4_TINY,	/* a first fragment that ends inside the L4 header,
			 * or a TCP fragment at offset 8 bytes */
	L4_OVERFLOW,	/* more extension headers than L4_EXT_MAX, or the
			 * L4 header past L4_OFFSET_MAX */
};

/* What the classification of a packet read of it (part of the packet,
 * bpf/packet.h). */
struct l4_info {
	__u16 sport;	/* host order */
	__u16 dport;
	__u8 proto;	/* the L4 protocol; 0: unknown (L4_OVERFLOW, or an
			 * extension header behind a later fragment's
			 * fragment header): then every L4 rule could be
			 * the packet's */
	__u8 state;	/* enum l4_state */
	__u8 syn;	/* TCP SYN without ACK */
	__u8 first;	/* a fragment at offset 0 with more to follow */
	__u32 frag_len;	/* a fragment's bytes after the IP header(s) */
	__u32 how;	/* classify()'s CLASSIFY_* (bpf/classify.h) */
	__u32 walked;	/* ipv6_l4_offset(): bytes of headers so far */
	struct xrl_frag_key flow;	/* a fragment's (struct xrl_frag) */
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

/* The headers Linux walks as IPv6 extension headers (ipv6_ext_hdr()),
 * NONE aside: nothing follows it. */
static __always_inline bool is_ipv6_ext(__u8 proto)
{
	return proto == IPPROTO_HOPOPTS || proto == IPPROTO_ROUTING ||
	       proto == IPPROTO_DSTOPTS || proto == IPPROTO_AH ||
	       proto == IPPROTO_FRAGMENT;
}

/* IPv6 fragment header (struct frag_hdr is not in the UAPI headers). */
struct l4_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset in 8-byte units, then flags */
	__be32 identification;
};

/* AH (RFC 4302): its length is in 4-byte units, less 2. */
struct l4_ah_hdr {
	__u8 nexthdr;
	__u8 hdrlen;
};

/*
 * A fragment: @offset in 8-byte units, @more set when fragments follow,
 * @proto what the fragment header (or IPv4's protocol) names. Fills the
 * fragment fields of @l4 and returns true when the walk stops here (a
 * later fragment, never a header to read past).
 */
static __always_inline bool l4_fragment(struct l4_info *l4, __u32 offset,
					bool more, __u32 id, __u8 proto)
{
	l4->flow.id = id;
	if (!offset) {
		l4->first = more;
		return false;
	}
	/* What a later fragment's header names is its flow's first
	 * fragmentable header: the L4 protocol, unless an extension header
	 * comes first (then any L4 rule could be the packet's). */
	l4->proto = is_ipv6_ext(proto) ? 0 : proto;
	l4->state = offset == L4_TCP_OVERLAP_OFFSET &&
		    proto == IPPROTO_TCP ? L4_TINY : L4_LATER;
	return true;
}

/* What one step of the extension header walk found. */
enum ext_step {
	EXT_MORE,	/* an extension header, walked: go on */
	EXT_L4,		/* the L4 header, at l4->walked */
	EXT_NONE,	/* nothing to read: l4->state says why */
};

/*
 * One step of ipv6_l4_offset(). The offset and protocol come from @l4 (a
 * map value), not from registers: read back, they are any number to the
 * verifier, bounded by the check that follows, so the paths of one step
 * (an option header, AH, a first fragment) meet in one state instead of
 * multiplying step after step.
 */
static __always_inline enum ext_step ext_step(void *ip6, void *end,
					      struct l4_info *l4)
{
	__u32 off = *(volatile __u32 *)&l4->walked, frag;
	__u8 proto = *(volatile __u8 *)&l4->proto;
	struct ipv6_opt_hdr *opt;
	struct l4_frag_hdr *fh;

	if (!is_ipv6_ext(proto))
		return EXT_L4;
	if (off > L4_OFFSET_MAX) {
		l4->proto = 0;
		l4->state = L4_OVERFLOW;
		return EXT_NONE;
	}
	opt = ip6 + off;
	if ((void *)(opt + 1) > end)
		return EXT_NONE;	/* cut short: Linux drops it */
	if (proto == IPPROTO_FRAGMENT) {
		fh = ip6 + off;
		if ((void *)(fh + 1) > end)
			return EXT_NONE;
		frag = bpf_ntohs(fh->frag_off);
		if (l4_fragment(l4, frag >> 3, frag & L4_IPV6_MF,
				bpf_ntohl(fh->identification), fh->nexthdr))
			return EXT_NONE;
		off += sizeof(*fh);
	} else {
		off += proto == IPPROTO_AH ? (opt->hdrlen + 2) * 4 :
					     (opt->hdrlen + 1) * 8;
	}
	l4->proto = opt->nexthdr;
	l4->walked = off;
	return EXT_MORE;
}

/*
 * Walks IPv6 extension headers from the fixed header on; returns the
 * offset of the L4 header with l4->proto set, or -1 with l4->state saying
 * why there is none to read (L4_LATER, L4_TINY, L4_OVERFLOW; L4_UNREAD
 * for a header cut short by the frame's end, which Linux drops): at most
 * L4_EXT_MAX headers, then one more step that may only find the L4
 * header. Steps written out rather than a loop: clang lays such a loop
 * out with a fall-through into its head, a back-edge Linux 6.1's
 * verifier refuses.
 */
static __always_inline int ipv6_l4_offset(void *ip6, void *end,
					  struct l4_info *l4)
{
	enum ext_step step = EXT_MORE;
	int i;

	l4->walked = sizeof(struct ipv6hdr);
#pragma unroll
	for (i = 0; i < L4_EXT_MAX; i++)
		if (step == EXT_MORE)
			step = ext_step(ip6, end, l4);
	if (step == EXT_MORE && is_ipv6_ext(l4->proto)) {
		l4->proto = 0;
		l4->state = L4_OVERFLOW;
		return -1;
	}
	return step == EXT_NONE ? -1 : (int)l4->walked;
}

/* Reads the L4 header at @off of the IP packet at @l3 (@l3_len bytes):
 * L4_READ, or for a first fragment that ends inside it, L4_TINY. */
static __always_inline void read_l4(void *l3, void *end, __u32 off,
				    __u32 l3_len, struct l4_info *l4)
{
	__u32 need = l4_min_len(l4->proto);
	struct tcphdr *tcp;
	struct udphdr *udp;

	if (!need)
		return;
	if (off > L4_OFFSET_MAX) {
		l4->state = L4_OVERFLOW;
		return;
	}
	if (off + need > l3_len || l3 + off + need > end) {
		if (l4->first)
			l4->state = L4_TINY;
		return;
	}
	tcp = l3 + off;
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
	l4->state = L4_READ;
}

/*
 * IPv4's L4 offset: past the header and, as Linux does for IPsec, an
 * AH; -1 with l4->state set for a later fragment, or an AH too deep or
 * cut short.
 */
static __always_inline int ipv4_l4_offset(struct iphdr *ip, void *end,
					  __u32 hdr_len, struct l4_info *l4)
{
	__u32 frag = bpf_ntohs(ip->frag_off);
	struct l4_ah_hdr *ah;

	if (l4_fragment(l4, frag & L4_IPV4_OFFSET, frag & L4_IPV4_MF,
			bpf_ntohs(ip->id), ip->protocol))
		return -1;
	if (l4->proto != IPPROTO_AH)
		return hdr_len;
	ah = (void *)ip + hdr_len;
	if ((void *)(ah + 1) > end)
		return -1;
	l4->proto = ah->nexthdr;
	if (l4->proto == IPPROTO_AH) {
		l4->proto = 0;
		l4->state = L4_OVERFLOW;
		return -1;
	}
	return hdr_len + (ah->hdrlen + 2) * 4;
}

/*
 * What the frame's L4 header says. The frame was parsed whole before
 * (parse_source(): a well-formed IPv4 or IPv6 packet), so only the L4
 * part is new; the headers before it are walked again rather than kept,
 * since a packet pointer does not survive the subprogram calls between.
 * A global function, checked once on its own. Returns l4->state.
 */
__noinline int parse_l4(struct xdp_md *ctx, struct l4_info *l4)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct ipv6hdr *ip6;
	struct l3_info l3;
	struct iphdr *ip;
	__u32 src[4];
	__be16 proto;
	void *l3_start;
	int off;

	if (!l4)
		return L4_UNREAD;
	__builtin_memset(l4, 0, sizeof(*l4));
	if (parse_ethernet(&c, &proto) != PARSE_NONIP)
		return L4_UNREAD;
	l3_start = c.pos;
	if (proto == bpf_htons(ETH_P_IP)) {
		ip = l3_start;
		if (parse_ipv4(&c, src, &l3) != PARSE_IPV4 ||
		    (void *)(ip + 1) > c.end)
			return L4_UNREAD;
		l4->proto = l3.proto;
		off = ipv4_l4_offset(ip, c.end, l3.hdr_len, l4);
		l4->flow.family = XRL_FAMILY_IPV4;
		l4->flow.proto = ip->protocol;
		l4->flow.dst[2] = bpf_htonl(0xffff);
		l4->flow.dst[3] = ip->daddr;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = l3_start;
		if (parse_ipv6(&c, src, &l3) == PARSE_MALFORMED ||
		    (void *)(ip6 + 1) > c.end)
			return L4_UNREAD;
		l4->proto = l3.proto;
		off = ipv6_l4_offset(ip6, c.end, l4);
		l4->flow.family = XRL_FAMILY_IPV6;
		__builtin_memcpy(l4->flow.dst, &ip6->daddr, 16);
	} else {
		return L4_UNREAD;
	}
	__builtin_memcpy(l4->flow.src, src, 16);
	if (off >= 0) {
		l4->frag_len = l3.len > off ? l3.len - off : 0;
		read_l4(l3_start, c.end, off, l3.len, l4);
	} else if (l4->state == L4_LATER || l4->state == L4_TINY) {
		/* A later fragment's bytes, for its flow's bound: the IP
		 * packet less its fixed header (an overstatement by its
		 * extension headers only makes the bound stricter). */
		l4->frag_len = l3.len - l3.hdr_len;
	}
	return l4->state;
}

static __always_inline bool l4_matches(const struct xrl_rule_match *m,
				       const struct l4_info *l4)
{
	if (l4->state != L4_READ || m->proto != l4->proto)
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

/* Whether @m could be the rule of a packet whose L4 header was not read
 * (a later or tiny fragment, an over-long chain): of its protocol, or of
 * any when the protocol is unknown. */
static __always_inline bool l4_unjudged(const struct xrl_rule_match *m,
					const struct l4_info *l4)
{
	if (l4->state != L4_LATER && l4->state != L4_TINY &&
	    l4->state != L4_OVERFLOW)
		return false;
	return !l4->proto || m->proto == l4->proto;
}

/* l4_chain()'s answer when the chain has a rule the packet could belong
 * to but cannot be matched against (struct l4_info.state). */
#define L4_CHAIN_UNJUDGED	(-1)

/*
 * Which rule of a prefix's chain takes the packet: the chain's first
 * (id @head_id), or one after it, in policy order with the plain rule
 * last, in the rule table of rules slot @slot. Returns that rule's id + 1,
 * 0 when none does (the walk goes on to shorter prefixes), or
 * L4_CHAIN_UNJUDGED when an L4 rule before the plain one could be the
 * packet's but its header cannot tell (l4_unjudged()). *@l4_seen is set
 * when an L4 rule was looked at, matching or not: then packets of the
 * source may get different rules, and its key is split.
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
		if (l4_unjudged(&rule->match, l4))
			return L4_CHAIN_UNJUDGED;
		if (l4_matches(&rule->match, l4))
			return id + 1;
		if (!rule->match.next)
			return 0;
		id = rule->match.next - 1;
	}
	return 0;
}

#endif /* XRL_L4_H */

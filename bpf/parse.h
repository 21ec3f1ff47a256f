/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * parse.h - header parsing for the XDP program.
 *
 * Contract: every read is preceded by a bounds check against the end of
 * the frame; a parser either advances the cursor past a whole header or
 * reports the frame malformed. The result is the source address as an
 * IPv4-mapped or native IPv6 address (four 32-bit words, network order),
 * and what the frame costs in wire packets and bytes (struct wire_cost).
 *
 * Nothing Linux would deliver is reported as non-IP: VLAN tags are
 * followed as deep as Linux strips them (VLAN_MAX_TAGS, then
 * PARSE_VLAN_OVERFLOW), and an IPv6 source that names an IPv4 address
 * is reported apart (PARSE_IPV4_MAPPED) so it never passes as IPv4.
 */
#ifndef XRL_PARSE_H
#define XRL_PARSE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/*
 * 802.1Q and 802.1ad tags followed, VID 0 (priority tags) included:
 * Linux strips one tag after the other, so a frame still tagged after
 * these is not non-IP but too deep to read (PARSE_VLAN_OVERFLOW).
 */
#define VLAN_MAX_TAGS	8

/* The largest IP packet of a normal frame. Longer ones are aggregates
 * (generic mode sees GRO/GSO skbs) or jumbo frames: only they pay for
 * asking the device its MTU. */
#define WIRE_L3_NORMAL	ETH_DATA_LEN

/* An IPv4 length field cannot tell more; past it BIG TCP writes 0. */
#define IPV4_LEN_MAX	0xffff

enum parse_result {
	PARSE_IPV4,
	PARSE_IPV6,
	PARSE_NONIP,
	PARSE_MALFORMED,
	PARSE_VLAN_OVERFLOW,	/* more than VLAN_MAX_TAGS tags */
	PARSE_IPV4_MAPPED,	/* IPv6 from ::ffff:0:0/96 or ::/96 */
};

/*
 * What a frame stands for on the wire: 1 packet of its own length, or
 * for an aggregate the segments it was made of (an estimate, see
 * wire_estimate()). Limits charge packets and bytes; counters count the
 * frame as the program saw it.
 */
struct wire_cost {
	__u64 packets;
	__u64 bytes;
	__u64 frame_len;
};

struct cursor {
	void *pos;
	void *end;
};

/* Where the IP packet lies, for the aggregate estimate. */
struct l3_info {
	void *l4;	/* right after the IP header */
	__u32 len;	/* the IP packet, header included */
	__u32 hdr_len;	/* the IP header */
	__u8 proto;	/* what follows the IP header */
};

/* struct vlan_hdr of the kernel is not in the UAPI headers. */
struct vlan_tag {
	__be16 tci;
	__be16 inner_proto;
};

static __always_inline bool is_vlan_proto(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) ||
	       proto == bpf_htons(ETH_P_8021AD);
}

/* Leaves the cursor after the Ethernet header and any VLAN tags. */
static __always_inline enum parse_result parse_ethernet(struct cursor *c,
							 __be16 *proto)
{
	struct ethhdr *eth = c->pos;
	struct vlan_tag *tag;
	int i;

	if ((void *)(eth + 1) > c->end)
		return PARSE_MALFORMED;
	*proto = eth->h_proto;
	c->pos = eth + 1;

#pragma unroll
	for (i = 0; i < VLAN_MAX_TAGS; i++) {
		if (!is_vlan_proto(*proto))
			return PARSE_NONIP;
		tag = c->pos;
		if ((void *)(tag + 1) > c->end)
			return PARSE_MALFORMED;
		*proto = tag->inner_proto;
		c->pos = tag + 1;
	}
	return is_vlan_proto(*proto) ? PARSE_VLAN_OVERFLOW : PARSE_NONIP;
}

/*
 * tot_len 0 is how IPv4 BIG TCP (GRO aggregates over 64 KiB) says "the
 * rest of the frame"; the kernel then takes the length from the skb
 * (iph_totlen()), and so do we, for TCP frames too long for the field.
 */
static __always_inline __u64 ipv4_length(const struct iphdr *ip,
					  __u64 available)
{
	__u64 total_len = bpf_ntohs(ip->tot_len);

	if (total_len == 0 && available > IPV4_LEN_MAX &&
	    ip->protocol == IPPROTO_TCP)
		return available;
	return total_len;
}

static __always_inline enum parse_result parse_ipv4(struct cursor *c,
						     __u32 src[4],
						     struct l3_info *l3)
{
	struct iphdr *ip = c->pos;
	__u64 available = c->end - c->pos;
	__u64 header_len, total_len;

	if ((void *)(ip + 1) > c->end)
		return PARSE_MALFORMED;
	header_len = ip->ihl * 4;
	total_len = ipv4_length(ip, available);
	if (ip->version != 4 || ip->ihl < 5 || header_len > available ||
	    total_len < header_len || total_len > available)
		return PARSE_MALFORMED;

	l3->l4 = c->pos + header_len;
	l3->len = total_len;
	l3->hdr_len = header_len;
	l3->proto = ip->protocol;
	src[0] = 0;
	src[1] = 0;
	src[2] = bpf_htonl(0xffff);
	src[3] = ip->saddr;
	return PARSE_IPV4;
}

/*
 * An IPv6 source in ::ffff:0:0/96 (IPv4-mapped) or ::/96 other than ::
 * and ::1 (IPv4-compatible): never a real source on the wire (RFC 4291
 * 2.5.5), and one that would otherwise be read as the IPv4 address it
 * names.
 */
static __always_inline bool is_ipv4_mapped(const __u32 src[4])
{
	if (src[0] || src[1])
		return false;
	if (src[2] == bpf_htonl(0xffff))
		return true;
	return !src[2] && src[3] && src[3] != bpf_htonl(1);
}

static __always_inline enum parse_result parse_ipv6(struct cursor *c,
						     __u32 src[4],
						     struct l3_info *l3)
{
	struct ipv6hdr *ip6 = c->pos;
	__u64 available = c->end - c->pos;
	__u64 total_len;

	if ((void *)(ip6 + 1) > c->end)
		return PARSE_MALFORMED;
	total_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	if (ip6->version != 6 || total_len > available)
		return PARSE_MALFORMED;

	/* Payload length 0: a jumbogram or IPv6 BIG TCP, the whole frame. */
	l3->l4 = ip6 + 1;
	l3->len = ip6->payload_len ? total_len : available;
	l3->hdr_len = sizeof(*ip6);
	l3->proto = ip6->nexthdr;
	__builtin_memcpy(src, &ip6->saddr, 16);
	return is_ipv4_mapped(src) ? PARSE_IPV4_MAPPED : PARSE_IPV6;
}

/* The TCP or UDP header length of an aggregate, 0 for others. */
static __always_inline __u32 l4_header_len(const struct l3_info *l3,
					   void *end)
{
	struct tcphdr *tcp = l3->l4;

	if (l3->proto == IPPROTO_UDP)
		return sizeof(struct udphdr);
	if (l3->proto != IPPROTO_TCP || (void *)(tcp + 1) > end)
		return 0;
	return tcp->doff * 4;
}

/*
 * The wire packets of a frame longer than the device's MTU: in generic
 * mode, a GRO/GSO aggregate. Each segment carried the same L2, IP and
 * L4 headers and at most MTU - headers of payload, so
 *
 *   segments >= ceil(payload / (MTU - IP and L4 header length)),
 *
 * exact when the sender's MSS is the path maximum; a smaller MSS (or
 * IPv6 extension headers, not counted) means more segments than that,
 * so the estimate is a lower bound. Bytes are those segments with their
 * headers. bpf_check_mtu() leaves the device MTU in mtu even when it
 * reports the frame over it.
 */
static __always_inline void wire_estimate(struct xdp_md *ctx,
					  const struct l3_info *l3,
					  __u64 l2_len, void *end,
					  struct wire_cost *cost)
{
	__u32 mtu = 0, hdr_len;
	__u64 mss, segments;

	if (bpf_check_mtu(ctx, 0, &mtu, 0, 0) < 0 || l3->len <= mtu)
		return;
	hdr_len = l3->hdr_len + l4_header_len(l3, end);
	if (mtu <= hdr_len || l3->len <= hdr_len)
		return;
	mss = mtu - hdr_len;
	segments = (l3->len - hdr_len + mss - 1) / mss;
	cost->packets = segments;
	cost->bytes = l2_len + l3->len + (segments - 1) * (l2_len + hdr_len);
}

/*
 * Finds the source address of an IPv4 or IPv6 frame and what it costs
 * on the wire.
 */
static __always_inline enum parse_result parse_source(struct xdp_md *ctx,
						       __u32 src[4],
						       struct wire_cost *cost)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct l3_info l3;
	enum parse_result res;
	__u64 l2_len;
	__be16 proto;

	cost->packets = 1;
	cost->bytes = c.end - c.pos;
	cost->frame_len = cost->bytes;
	res = parse_ethernet(&c, &proto);
	if (res != PARSE_NONIP)
		return res;
	l2_len = c.pos - (void *)(long)ctx->data;
	if (proto == bpf_htons(ETH_P_IP))
		res = parse_ipv4(&c, src, &l3);
	else if (proto == bpf_htons(ETH_P_IPV6))
		res = parse_ipv6(&c, src, &l3);
	else
		return PARSE_NONIP;
	if (res != PARSE_MALFORMED && l3.len > WIRE_L3_NORMAL)
		wire_estimate(ctx, &l3, l2_len, c.end, cost);
	return res;
}

#endif /* XRL_PARSE_H */

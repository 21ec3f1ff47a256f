/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * parse.h - header parsing for the XDP program.
 *
 * Contract: every read is preceded by a bounds check against the end of
 * the frame; a parser either advances the cursor past a whole header or
 * reports the frame malformed. The result is the source address as an
 * IPv4-mapped or native IPv6 address (four 32-bit words, network order).
 */
#ifndef XRL_PARSE_H
#define XRL_PARSE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define VLAN_MAX_TAGS	2	/* 802.1Q, and QinQ (802.1ad outer tag) */

enum parse_result {
	PARSE_IPV4,
	PARSE_IPV6,
	PARSE_NONIP,
	PARSE_MALFORMED,
};

struct cursor {
	void *pos;
	void *end;
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
			break;
		tag = c->pos;
		if ((void *)(tag + 1) > c->end)
			return PARSE_MALFORMED;
		*proto = tag->inner_proto;
		c->pos = tag + 1;
	}
	return PARSE_NONIP;
}

static __always_inline enum parse_result parse_ipv4(struct cursor *c,
						     __u32 src[4])
{
	struct iphdr *ip = c->pos;
	__u64 available = c->end - c->pos;
	__u32 header_len, total_len;

	if ((void *)(ip + 1) > c->end)
		return PARSE_MALFORMED;
	header_len = ip->ihl * 4;
	total_len = bpf_ntohs(ip->tot_len);
	if (ip->version != 4 || ip->ihl < 5 || header_len > available ||
	    total_len < header_len || total_len > available)
		return PARSE_MALFORMED;

	src[0] = 0;
	src[1] = 0;
	src[2] = bpf_htonl(0xffff);
	src[3] = ip->saddr;
	return PARSE_IPV4;
}

static __always_inline enum parse_result parse_ipv6(struct cursor *c,
						     __u32 src[4])
{
	struct ipv6hdr *ip6 = c->pos;
	__u64 available = c->end - c->pos;

	if ((void *)(ip6 + 1) > c->end)
		return PARSE_MALFORMED;
	if (ip6->version != 6 ||
	    sizeof(*ip6) + bpf_ntohs(ip6->payload_len) > available)
		return PARSE_MALFORMED;

	__builtin_memcpy(src, &ip6->saddr, 16);
	return PARSE_IPV6;
}

/* Finds the source address of an IPv4 or IPv6 frame. */
static __always_inline enum parse_result parse_source(struct xdp_md *ctx,
						       __u32 src[4])
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	enum parse_result res;
	__be16 proto;

	res = parse_ethernet(&c, &proto);
	if (res == PARSE_MALFORMED)
		return res;
	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(&c, src);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(&c, src);
	return PARSE_NONIP;
}

#endif /* XRL_PARSE_H */

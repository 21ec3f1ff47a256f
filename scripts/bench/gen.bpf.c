// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gen.bpf.c - the traffic generator of the veth benchmark. Run through
 * BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES on the sending veth:
 * each frame gets the next source address and leaves with XDP_TX towards
 * the receiving peer. Live frames recycle their pages without copying
 * the input again, so every field that depends on the source is made
 * consistent with it each time: the IPv4 header checksum recomputed, the
 * IPv6 UDP checksum updated for the word that changed.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bench.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 n_sources = 1;
__u32 next_source;

static __always_inline __u16 ipv4_checksum(struct iphdr *ip)
{
	__u16 *word = (__u16 *)ip;
	__u32 sum = 0;
	int i;

	ip->check = 0;
#pragma unroll
	for (i = 0; i < (int)(sizeof(*ip) / 2); i++)
		sum += word[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* RFC 1624: the checksum after one 32-bit word changed from @from to @to. */
static __always_inline __u16 checksum_replace(__u16 check, __u32 from, __u32 to)
{
	__u32 sum = (__u16)~check;

	sum += (__u16)~(from & 0xffff) + (__u16)~(from >> 16);
	sum += (to & 0xffff) + (to >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (__u16)~sum;
	return sum ? sum : 0xffff;	/* 0 would mean "no checksum" */
}

SEC("xdp")
int bench_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6;
	struct udphdr *udp;
	struct iphdr *ip;
	__u32 n = next_source, word;

	next_source = n + 1 >= n_sources ? 0 : n + 1;
	if ((void *)(eth + 1) > end)
		return XDP_ABORTED;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return XDP_ABORTED;
		ip->saddr = bpf_htonl(BENCH_V4_BASE + 1 + n);
		ip->check = ipv4_checksum(ip);
	} else {
		ip6 = (void *)(eth + 1);
		udp = (void *)(ip6 + 1);
		if ((void *)(udp + 1) > end)
			return XDP_ABORTED;
		word = bpf_htonl(n);
		udp->check = checksum_replace(udp->check,
					      ip6->saddr.in6_u.u6_addr32[1], word);
		ip6->saddr.in6_u.u6_addr32[1] = word;
	}
	return XDP_TX;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_flood.bpf.c - TEST ONLY, never attached: presents a spoofed flood
 * to the limiter through BPF_PROG_TEST_RUN. Each repeat gives the IPv6
 * frame the next source address, fd00:0:X:Y:: with X:Y = n * 2654435761
 * (a bijection on 32 bits: a million repeats are a million distinct /64
 * sources, spread over 65536 /48s), then tail-calls the program in slot
 * 0 of flood_target. Crafting each frame in userspace would cost one
 * syscall per packet.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u32 next_source;	/* set by the test; counts up with every repeat */
__u32 source_span;	/* when set, sources 1..span, again and again */

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} flood_target SEC(".maps");

SEC("xdp")
int test_flood(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	__u32 n = next_source++;

	if (source_span)
		n = 1 + n % source_span;

	if ((void *)(ip6 + 1) > end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return XDP_ABORTED;
	ip6->saddr.in6_u.u6_addr32[1] = bpf_htonl(n * 2654435761U);
	bpf_tail_call(ctx, &flood_target, 0);
	return XDP_ABORTED;	/* no program in the slot */
}

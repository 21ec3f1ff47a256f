// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * wrap.bpf.c - drives a program over many sources in one test run: gives
 * each repeat of BPF_PROG_TEST_RUN the next source address, then
 * tail-calls the program under test (slot 0 of bench_target). Crafting
 * each frame in userspace would cost a syscall per packet; this costs a
 * few ns, paid alike by the reference and the limiter.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bench.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Sources to rotate over; 0: never repeat one (always-new sources). */
const volatile __u32 n_sources = 1;
__u32 next_source;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_target SEC(".maps");

static __always_inline __u32 take_source(void)
{
	__u32 n = next_source;

	next_source = n_sources && n + 1 >= n_sources ? 0 : n + 1;
	return n;
}

SEC("xdp")
int bench_wrap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6;
	struct iphdr *ip;
	__u32 n = take_source();

	if ((void *)(eth + 1) > end)
		return XDP_ABORTED;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return XDP_ABORTED;
		ip->saddr = bpf_htonl(BENCH_V4_BASE + 1 + n);
	} else {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return XDP_ABORTED;
		ip6->saddr.in6_u.u6_addr32[1] = bpf_htonl(n);
	}
	bpf_tail_call(ctx, &bench_target, 0);
	return XDP_ABORTED;	/* no program in the slot */
}

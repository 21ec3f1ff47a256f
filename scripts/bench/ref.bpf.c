// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ref.bpf.c - the reference the limiter is measured against: the least
 * any per-source limiter must do. Parse Ethernet and IPv4 or IPv6, read
 * the clock, look the source up in an LRU hash and update its GCRA time
 * in place (insert on first sight). No VLANs, no policy, no counters, no
 * atomics: everything the limiter does beyond this is its overhead.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bench.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The coarse clock variant, for the clock trade-off. */
const volatile bool use_coarse_clock = false;
/* No clock read: a time that never moves, loaded as the limiter's test
 * clock is (bpf/clock.h), to compare the limiter's test-clock variants
 * with (scripts/bench/eliminate --clockless). */
const volatile bool use_frozen_clock = false;
volatile __u64 frozen_clock_ns = 1000000000;
/* 1000 packets per second, burst 100: what the limiter's rule says. */
const volatile __u64 interval_ns = 1000000;
const volatile __u64 tolerance_ns = 100000000;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1048576);	/* set at load time */
	__type(key, struct bench_ref_key);
	__type(value, struct bench_ref_state);
} ref_buckets SEC(".maps");

static __always_inline __u64 now_ns(void)
{
	if (use_frozen_clock)
		return frozen_clock_ns;
	if (use_coarse_clock)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

static __always_inline int source_key(struct xdp_md *ctx,
				      struct bench_ref_key *key)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6;
	struct iphdr *ip;

	if ((void *)(eth + 1) > end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return -1;
		key->addr[2] = bpf_htonl(0xffff);
		key->addr[3] = ip->saddr;
		return 0;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(key->addr, &ip6->saddr, sizeof(key->addr));
		return 0;
	}
	return -1;
}

SEC("xdp")
int bench_ref(struct xdp_md *ctx)
{
	struct bench_ref_key key = {};
	struct bench_ref_state *state;
	__u64 now, tat;

	if (source_key(ctx, &key))
		return XDP_PASS;
	now = now_ns();
	state = bpf_map_lookup_elem(&ref_buckets, &key);
	if (!state) {
		struct bench_ref_state fresh = { .tat_ns = now + interval_ns };

		bpf_map_update_elem(&ref_buckets, &key, &fresh, BPF_NOEXIST);
		return XDP_PASS;
	}
	tat = state->tat_ns > now ? state->tat_ns : now;
	if (tat + interval_ns - now > tolerance_ns)
		return XDP_DROP;
	state->tat_ns = tat + interval_ns;
	return XDP_PASS;
}

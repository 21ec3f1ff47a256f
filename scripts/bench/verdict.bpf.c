// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* verdict.bpf.c - programs that only return a verdict: the floor. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int bench_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp")
int bench_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

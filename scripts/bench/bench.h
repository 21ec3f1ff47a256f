/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench.h - what the benchmark's own BPF programs and their driver share.
 * The limiter's structures stay in include/xrl.h; nothing here is used by
 * the product.
 */
#ifndef XRL_BENCH_H
#define XRL_BENCH_H

#include <linux/types.h>

/*
 * Source addresses the benchmarks use (the network rule allows only
 * 198.18.0.0/15 and fd00::/8). More sources than an IPv4 /15 holds are
 * IPv6: fd00:0:NNNN:NNNN::1, the 32-bit source number in the second
 * word, so that every number is a /64 of its own (the limiter's default
 * IPv6 key).
 */
#define BENCH_V4_BASE		0xc6120000u	/* 198.18.0.0 */
#define BENCH_V4_RULES		131072u		/* addresses of the /15 */
#define BENCH_V6_WORD0		0xfd000000u	/* fd00:0000: */

/* Key and value of the reference program's map. */
struct bench_ref_key {
	__u32 addr[4];	/* IPv6, or IPv4-mapped IPv6, network order */
};

struct bench_ref_state {
	__u64 tat_ns;	/* GCRA theoretical arrival time */
};

#endif

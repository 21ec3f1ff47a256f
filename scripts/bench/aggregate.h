/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_BENCH_AGGREGATE_H
#define XRL_BENCH_AGGREGATE_H

/* xrl-bench aggregate: per-CPU aggregate budget vs one shared CAS
 * bucket, ns/packet on one CPU and on two at once. 0 or -errno. */
int bench_aggregate(int argc, char **argv);

#endif

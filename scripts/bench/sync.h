/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_BENCH_SYNC_H
#define XRL_BENCH_SYNC_H

/* xrl-bench sync [--quick] [--rows sync,cost]: the cost of one
 * global-budget sync. */
int bench_sync(int argc, char **argv);

#endif

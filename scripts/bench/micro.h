/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_BENCH_MICRO_H
#define XRL_BENCH_MICRO_H

/* xrl-bench micro: prints the microbenchmark rows. 0 or -errno. */
int bench_micro(int argc, char **argv);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_BENCH_COARSE_CLOCK_H
#define XRL_BENCH_COARSE_CLOCK_H

/* xrl-bench clock: coarse clock accuracy by simulation. 0 or -errno. */
int bench_clock(int argc, char **argv);

#endif

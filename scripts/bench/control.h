/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_BENCH_CONTROL_H
#define XRL_BENCH_CONTROL_H

/* xrl-bench control: policy swap timings. 0 or -errno. */
int bench_control(int argc, char **argv);

/* xrl-bench blocklist: loading a list of 1,048,576 prefixes. */
int bench_blocklist(int argc, char **argv);

#endif

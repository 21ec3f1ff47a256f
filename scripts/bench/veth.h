/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef XRL_BENCH_VETH_H
#define XRL_BENCH_VETH_H

/* xrl-bench attach / gen (see veth.c). 0 or -errno. */
int bench_attach(int argc, char **argv);
int bench_gen(int argc, char **argv);

#endif

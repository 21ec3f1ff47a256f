/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * features.h - load-time switches for what the kernel offers, set by
 * userspace through the skeleton before the program is loaded
 * (user/datapath/kernel.c), so that the verifier prunes the branch that
 * is off and never sees a helper the kernel lacks.
 */
#ifndef XRL_FEATURES_H
#define XRL_FEATURES_H

#include <stdbool.h>

/*
 * bpf_loop() (Linux 5.17): the loops of the classifier walk and of a
 * bucket's retries are callbacks the verifier checks once. Without it
 * (Linux 5.15, Ubuntu 22.04's), bounded loops that it walks step by step.
 */
const volatile bool have_bpf_loop = true;

/*
 * bpf_xdp_load_bytes() (Linux 5.18): a capture copies a frame's bytes
 * with it, whatever the driver's layout. Without it (5.15), a bounded
 * loop copies what the linear part holds.
 */
const volatile bool have_xdp_load_bytes = true;

#endif /* XRL_FEATURES_H */

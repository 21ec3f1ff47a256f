/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kernel.h - what the running kernel offers the program: the features
 * that set its floor, each with the Linux version that brought it, and
 * bpf_loop(), used where present (bpf/features.h).
 */
#ifndef XRL_KERNEL_H
#define XRL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

/* The oldest Linux the program is made for (README, "Requirements"). */
#define XRL_KERNEL_FLOOR	"5.15"

/* Turns bpf_loop() (and bpf_xdp_load_bytes()) off where the kernel has
 * it: "1" in the environment loads the variant Linux 5.15 runs, for
 * testing it on newer kernels. */
#define XRL_ENV_NO_BPF_LOOP	"XDP_RATELIMIT_NO_BPF_LOOP"

/*
 * When the kernel lacks a feature of the floor: writes one line naming
 * it and the version that brought it into @buf and returns true.
 */
bool xrl_kernel_lacks(char *buf, size_t len);

/* Whether the program is to use bpf_loop(): the kernel has it, and the
 * environment does not turn it off. */
bool xrl_kernel_bpf_loop(void);
/* Whether a capture copies frames with bpf_xdp_load_bytes() (Linux
 * 5.18): the kernel has it, and the environment does not turn it off. */
bool xrl_kernel_xdp_load_bytes(void);

#endif

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * kernel.c - the kernel's features, probed with libbpf (each probe loads
 * a tiny program of the XDP type that calls the helper).
 *
 * The floor: helpers stand for what came with them, which the program
 * uses as well: bpf_check_mtu() came in 5.12 with the atomic fetch and
 * compare-and-swap instructions the buckets are taken with; callbacks
 * (BPF_PSEUDO_FUNC, which bpf_loop()'s callbacks are even where the
 * program does not call it) in 5.13 with bpf_for_each_map_elem().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "kernel.h"

struct floor_feature {
	enum bpf_func_id helper;
	const char *what;	/* as the refusal names it */
	const char *since;	/* the Linux version that brought it */
};

static const struct floor_feature floor_features[] = {
	{ BPF_FUNC_check_mtu,
	  "the bpf_check_mtu() helper and atomic compare-and-swap", "5.12" },
	{ BPF_FUNC_for_each_map_elem,
	  "BPF callback functions (bpf_for_each_map_elem())", "5.13" },
};

static bool has_helper(enum bpf_func_id helper)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, helper, NULL) == 1;
}

bool xrl_kernel_lacks(char *buf, size_t len)
{
	struct utsname uts;
	size_t i;

	for (i = 0; i < sizeof(floor_features) / sizeof(floor_features[0]);
	     i++) {
		if (has_helper(floor_features[i].helper))
			continue;
		if (uname(&uts))
			strcpy(uts.release, "?");
		snprintf(buf, len, "Linux %s lacks %s (Linux %s): xdp-ratelimit "
			 "needs Linux " XRL_KERNEL_FLOOR " or later", uts.release,
			 floor_features[i].what, floor_features[i].since);
		return true;
	}
	return false;
}

/* The 5.15 variant asked for by the environment (XRL_ENV_NO_BPF_LOOP). */
static bool variant_5_15(void)
{
	const char *off = getenv(XRL_ENV_NO_BPF_LOOP);

	return off && !strcmp(off, "1");
}

bool xrl_kernel_bpf_loop(void)
{
	return !variant_5_15() && has_helper(BPF_FUNC_loop);
}

bool xrl_kernel_xdp_load_bytes(void)
{
	return !variant_5_15() && has_helper(BPF_FUNC_xdp_load_bytes);
}

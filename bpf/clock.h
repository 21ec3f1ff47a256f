/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * clock.h - the program's one seam for time.
 *
 * Tests drive time through test_clock_ns (a load-time switch: when off,
 * in production, the verifier prunes the branch, so it costs nothing).
 * The clock is read once per packet; only a refusal reads it again
 * (clock_after(), bpf/gcra.h).
 */
#ifndef XRL_CLOCK_H
#define XRL_CLOCK_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile bool use_test_clock = false;
volatile __u64 test_clock_ns;
/* What a second reading of the test clock finds, 0: the first's. A test
 * makes a CPU held between two readings with it. */
volatile __u64 test_clock_later_ns;

static __always_inline __u64 now_ns(void)
{
	if (use_test_clock)
		return test_clock_ns;
	return bpf_ktime_get_ns();
}

/*
 * The time now, read after whatever the caller read since @earlier was
 * (a word of shared state): at least @earlier. On the test clock, where
 * time moves only when a test says: test_clock_later_ns, or @earlier.
 */
static __always_inline __u64 clock_after(__u64 earlier)
{
	__u64 later;

	if (use_test_clock)
		later = test_clock_later_ns;
	else
		later = bpf_ktime_get_ns();
	return later > earlier ? later : earlier;
}

#endif /* XRL_CLOCK_H */

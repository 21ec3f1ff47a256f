/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * common.h - what the benchmark commands share: timing, medians, the
 * table rows they print.
 */
#ifndef XRL_BENCH_COMMON_H
#define XRL_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#define NS_PER_S	1000000000ULL
#define NS_PER_MS	1000000ULL

/* Monotonic time in ns. */
uint64_t bench_now_ns(void);

/* CPU time of the calling thread in ns, kernel time included. */
uint64_t bench_thread_cpu_ns(void);

/* Median of @n values (sorts them). */
double bench_median(double *values, int n);

/*
 * One BPF_PROG_TEST_RUN of @prog_fd over @data, @repeat times. Stores
 * the kernel's time per repeat in @ns (it excludes the time the run was
 * preempted). Returns 0 or -errno.
 */
int bench_test_run(int prog_fd, const void *data, size_t len, __u32 repeat,
		   double *ns, __u32 *retval);

/* Keeps this thread on one CPU; returns 0 or -errno. */
int bench_pin_cpu(int cpu);

/*
 * Prints one row of the results table (markdown): what was measured,
 * the case, the figure, its ratio, the target and whether it was met.
 * Empty strings leave a cell blank.
 */
void bench_row(const char *bench, const char *name, const char *value,
	       const char *ratio, const char *target, const char *result);

/* "met" or "MISSED" for a figure that must stay at or below @limit. */
const char *bench_verdict(double value, double limit);

/*
 * The spread of repeated measurements: their median, least and greatest.
 * A goal is judged on the median alone; a spread that has values on both
 * sides of the goal is said to straddle it.
 */
struct bench_spread {
	double median, min, max;
	int n;
};

/* The spread of @n values (@values is left as it was). */
void bench_spread_of(const double *values, int n, struct bench_spread *out);

/* "1.42 (1.38-1.47)" with @decimals decimals, or "1.42" for one value. */
void bench_spread_fmt(char *buf, size_t len, const struct bench_spread *s,
		      int decimals);

/*
 * "met" or "**MISSED**" by the median against @limit (at most), with
 * "(spread straddles the goal)" when the least value is at or below it
 * and the greatest above it.
 */
const char *bench_spread_verdict(const struct bench_spread *s, double limit);

/* Whether @name is one of the comma-separated names of @list. */
bool bench_listed(const char *list, const char *name);

/* Progress messages, on stderr so that stdout holds only the table. */
void bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

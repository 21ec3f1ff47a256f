// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "common.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *values, int n)
{
	qsort(values, n, sizeof(*values), compare_doubles);
	if (n % 2)
		return values[n / 2];
	return (values[n / 2 - 1] + values[n / 2]) / 2;
}

int bench_test_run(int prog_fd, const void *data, size_t len, __u32 repeat,
		   double *ns, __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = data,
		.data_size_in = len,
		.repeat = repeat,
	);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	/*
	 * The kernel reports whole ns per repeat, rounded down; +0.5 centres
	 * the estimate so that ratios of small figures are not biased.
	 */
	if (ns)
		*ns = opts.duration + 0.5;
	if (retval)
		*retval = opts.retval;
	return 0;
}

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void bench_row(const char *bench, const char *name, const char *value,
	       const char *ratio, const char *target, const char *result)
{
	printf("| %s | %s | %s | %s | %s | %s |\n", bench, name, value, ratio,
	       target, result);
	fflush(stdout);
}

const char *bench_verdict(double value, double limit)
{
	return value <= limit ? "met" : "**MISSED**";
}

void bench_spread_of(const double *values, int n, struct bench_spread *out)
{
	double sorted[n > 0 ? n : 1];
	int i;

	memcpy(sorted, values, n * sizeof(*values));
	out->median = n ? bench_median(sorted, n) : 0;
	out->min = out->max = n ? sorted[0] : 0;
	for (i = 1; i < n; i++) {
		if (sorted[i] < out->min)
			out->min = sorted[i];
		if (sorted[i] > out->max)
			out->max = sorted[i];
	}
	out->n = n;
}

void bench_spread_fmt(char *buf, size_t len, const struct bench_spread *s,
		      int decimals)
{
	if (s->n > 1)
		snprintf(buf, len, "%.*f (%.*f\u2013%.*f)", decimals, s->median,
			 decimals, s->min, decimals, s->max);
	else
		snprintf(buf, len, "%.*f", decimals, s->median);
}

const char *bench_spread_verdict(const struct bench_spread *s, double limit)
{
	bool straddles = s->min <= limit && s->max > limit;

	if (s->median <= limit)
		return straddles ? "met (spread straddles the goal)" : "met";
	return straddles ? "**MISSED** (spread straddles the goal)" :
			   "**MISSED**";
}

bool bench_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *at;

	for (at = strstr(list, name); at; at = strstr(at + 1, name))
		if ((at == list || at[-1] == ',') && (!at[n] || at[n] == ','))
			return true;
	return false;
}

void bench_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

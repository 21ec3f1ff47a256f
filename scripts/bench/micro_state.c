// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * micro_state.c - rows of what the limiter holds and what reading it
 * costs: memory per source, the status read-out (micro.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "mapwalk.h"
#include "memory.h"
#include "micro.h"
#include "ref.skel.h"
#include "report.h"
#include "rules.h"

#define GOAL_BYTES	120.0
#define GOAL_BYTES_TEXT	"120"

/* Kernel memory of a map, as the kernel accounts it (fdinfo memlock). */
int micro_map_memlock(int fd, unsigned long long *memlock,
		      unsigned long long *max_entries)
{
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	*memlock = *max_entries = 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "memlock: %llu", memlock);
		sscanf(line, "max_entries: %llu", max_entries);
	}
	fclose(f);
	return *memlock && *max_entries ? 0 : -ENODATA;
}

/*
 * Bytes per tracked source of the bucket map, filled with the rotating
 * sources by the benchmarks before it. An LRU hash allocates all its
 * entries when created, so this is also what a full table costs.
 */
int micro_memory(struct micro *m)
{
	unsigned long long memlock, entries, ref_memlock, ref_entries;
	unsigned long long off_memlock, off_entries;
	char name[128], value[96], ratio[32];
	int ret;

	ret = micro_map_memlock(m->dp.buckets_fd, &memlock, &entries);
	if (!ret)
		ret = micro_map_memlock(m->dp.offenders_fd, &off_memlock,
					&off_entries);
	if (!ret)
		ret = micro_map_memlock(bpf_map__fd(m->ref->maps.ref_buckets),
					&ref_memlock, &ref_entries);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "reference map (LRU hash, %llu entries)",
		 ref_entries);
	snprintf(value, sizeof(value), "%.0f bytes/source (%.1f MiB)",
		 (double)ref_memlock / ref_entries, ref_memlock / 1048576.0);
	bench_row("memory", name, value, "1.00", "", "");
	snprintf(name, sizeof(name), "limiter %s (LRU hash, %llu entries)",
		 XRL_MAP_BUCKETS, entries);
	snprintf(value, sizeof(value), "%.0f bytes/source (%.1f MiB)",
		 (double)memlock / entries, memlock / 1048576.0);
	snprintf(ratio, sizeof(ratio), "%.2f",
		 ((double)memlock / entries) / ((double)ref_memlock / ref_entries));
	/* In whole bytes: the map's own header, spread over its entries,
	 * is a fraction of one. */
	bench_row("memory", name, value, ratio,
		  "<= " GOAL_BYTES_TEXT " bytes/source (issues 11, 23)",
		  bench_verdict((double)(memlock / entries), GOAL_BYTES));
	/* What only refused sources get an entry of (include/xrl.h,
	 * struct xrl_offender): a bound of its own, not per source. */
	snprintf(name, sizeof(name), "limiter %s (LRU hash, %llu entries)",
		 XRL_MAP_OFFENDERS, off_entries);
	snprintf(value, sizeof(value), "%.0f bytes/offender (%.1f MiB)",
		 (double)off_memlock / off_entries, off_memlock / 1048576.0);
	bench_row("memory", name, value, "", "", "");
	snprintf(name, sizeof(name), "limiter, both maps per source (%llu)",
		 entries);
	snprintf(value, sizeof(value), "%.1f bytes/source",
		 (double)(memlock + off_memlock) / entries);
	bench_row("memory", name, value, "", "", "");
	return 0;
}

/*
 * Kernel memory with 1,000 rules in force (issue 23): the total and the
 * part kept once per possible CPU here, and what the same settings take
 * at 64 and 128 CPUs (memory.h's formula). Goal: at most 1 MiB per CPU
 * besides the per-source table, whatever the CPU count.
 */
int micro_cpu_memory(struct micro *m)
{
	static const unsigned cpus_at[] = { 0, 64, 128 };
	struct xrl_memory_report *report;
	char name[128], value[96];
	double per_cpu;
	unsigned cpus;
	size_t i;
	int ret;

	ret = bench_apply_rules(&m->dp, 1000, false);
	if (ret)
		return ret;
	report = malloc(sizeof(*report));
	if (!report)
		return -ENOMEM;
	ret = xrl_memory_collect(&m->dp, report);
	if (ret)
		goto out;
	per_cpu = (double)report->per_cpu / report->cpus;
	for (i = 0; i < sizeof(cpus_at) / sizeof(cpus_at[0]); i++) {
		cpus = cpus_at[i] ? cpus_at[i] : report->cpus;
		snprintf(name, sizeof(name), "1,000 rules, kernel memory at %u "
			 "CPUs%s", cpus, cpus_at[i] ? "" : " (this machine)");
		snprintf(value, sizeof(value), "%.1f MiB, %.0f KiB per CPU",
			 xrl_memory_at_cpus(report, cpus) / 1048576.0,
			 per_cpu / 1024);
		bench_row("memory", name, value, "",
			  "<= 1 MiB per CPU (issue 23)",
			  bench_verdict(per_cpu, 1048576.0));
	}
out:
	free(report);
	return ret;
}

static int count_entry(const void *key, const void *value, void *ctx)
{
	(*(long *)ctx)++;
	return 0;
}

/* Reads every bucket with BPF_MAP_LOOKUP_BATCH; returns how many. */
static long read_batched(int fd)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct xrl_bucket_key *keys;
	struct xrl_bucket *values;
	__u32 batch_key, count;
	const __u32 chunk = 8192;
	bool first = true;
	long total = 0;
	int ret;

	keys = calloc(chunk, sizeof(*keys));
	values = calloc(chunk, sizeof(*values));
	if (!keys || !values) {
		total = -ENOMEM;
		goto free_arrays;
	}
	for (;;) {
		count = chunk;
		ret = bpf_map_lookup_batch(fd, first ? NULL : &batch_key,
					   &batch_key, keys, values, &count,
					   &opts);
		if (ret && errno != ENOENT) {
			total = -errno;
			break;
		}
		total += count;
		first = false;
		if (ret)
			break;	/* ENOENT: that was the last batch */
	}
free_arrays:
	free(values);
	free(keys);
	return total;
}

/*
 * What the daemon's `stats` and `top` cost with the table full of the
 * 1,000,000 rotating sources, timed at the library calls they make (the
 * daemon adds a JSON encoding and a socket round trip), and a batched
 * read of the same table for comparison.
 */
int micro_readout(struct micro *m)
{
	struct xrl_stats_report report;
	char value[96];
	uint64_t start;
	long walked = 0, batched;
	int ret;

	start = bench_now_ns();
	ret = xrl_stats_collect(&m->dp, &report);
	if (ret)
		return ret;
	snprintf(value, sizeof(value), "%.0f ms (%ld tracked sources)",
		 (bench_now_ns() - start) / 1e6, report.table.occupancy);
	xrl_stats_report_free(&report);
	bench_row("control plane", "stats: xrl_stats_collect, full table",
		  value, "", "", "");

	/* top lists the offender records (include/xrl.h), a bucket looked
	 * up for each; a full bucket table walked is the bound before. */
	start = bench_now_ns();
	ret = xrl_map_walk(m->dp.offenders_fd, sizeof(struct xrl_bucket_key),
			   sizeof(struct xrl_offender), count_entry, &walked);
	if (ret)
		return ret;
	snprintf(value, sizeof(value), "%.0f ms (%ld offender records)",
		 (bench_now_ns() - start) / 1e6, walked);
	bench_row("control plane", "top: xrl_map_walk of the offender "
		  "records", value, "", "", "");

	walked = 0;
	start = bench_now_ns();
	ret = xrl_map_walk(m->dp.buckets_fd, sizeof(struct xrl_bucket_key),
			   sizeof(struct xrl_bucket), count_entry, &walked);
	if (ret)
		return ret;
	snprintf(value, sizeof(value), "%.0f ms (%ld buckets)",
		 (bench_now_ns() - start) / 1e6, walked);
	bench_row("control plane", "xrl_map_walk of the buckets with "
		  "values, full table", value, "", "", "");

	start = bench_now_ns();
	batched = read_batched(m->dp.buckets_fd);
	if (batched < 0)
		return batched;
	snprintf(value, sizeof(value), "%.0f ms (%ld buckets)",
		 (bench_now_ns() - start) / 1e6, batched);
	bench_row("control plane", "for comparison: the same read with "
		  "bpf_map_lookup_batch", value, "", "", "");
	return 0;
}

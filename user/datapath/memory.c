// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * memory.c - what the data path's maps cost the kernel (memory.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "clock.h"
#include "datapath.h"
#include "mapwalk.h"
#include "memory.h"
#include "units.h"

/* The kernel's own figure for the map @fd: the "memlock:" line of its
 * fdinfo (what bpftool prints as bytes_memlock); 0 when unreadable. */
static __u64 fd_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long memlock = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &memlock) == 1)
			break;
	fclose(f);
	return memlock;
}

static bool is_per_cpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

__u64 xrl_map_per_cpu_bytes(__u32 type, __u32 value_size, __u32 max_entries,
			    unsigned cpus)
{
	if (!is_per_cpu(type))
		return 0;
	return (__u64)max_entries * ((value_size + 7) & ~7U) * cpus;
}

static bool listed(const struct xrl_memory_report *report, __u32 id)
{
	size_t i;

	for (i = 0; i < report->n_maps; i++)
		if (report->maps[i].id == id)
			return true;
	return false;
}

static int add_map_fd(struct xrl_memory_report *report, int fd);

/* The inner maps an array of maps holds now, each slot's. */
static int add_inner_maps(struct xrl_memory_report *report, int outer_fd,
			  __u32 slots)
{
	__u32 slot, id;
	int fd, ret;

	for (slot = 0; slot < slots; slot++) {
		if (bpf_map_lookup_elem(outer_fd, &slot, &id))
			continue;	/* an empty slot */
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;	/* swapped out in between */
		ret = add_map_fd(report, fd);
		close(fd);
		if (ret)
			return ret;
	}
	return 0;
}

/* The entries the per-CPU part is charged for: all of them when
 * preallocated, else (BPF_F_NO_PREALLOC: the rule counters, the
 * aggregates' maps) the ones it holds. Counted for per-CPU maps only:
 * the kernel's figure covers the rest, and a count costs a walk. */
static __u32 entries_held(int fd, const struct bpf_map_info *info)
{
	/* A walk reads every hash bucket, held or not (a quarter of a
	 * millisecond for the rule counters' 262,144): a daemon answering
	 * status back to back counts each map once a second. */
	static struct { __u32 id, entries; __u64 at_ns; } counted[4];
	__u64 now = xrl_clock_ns(CLOCK_MONOTONIC);
	size_t i, oldest = 0;
	long n;

	if (!(info->map_flags & BPF_F_NO_PREALLOC) || !is_per_cpu(info->type))
		return info->max_entries;
	for (i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		if (counted[i].id == info->id &&
		    now - counted[i].at_ns < XRL_NS_PER_S)
			return counted[i].entries;
		if (counted[i].at_ns < counted[oldest].at_ns)
			oldest = i;
	}
	n = xrl_map_count(fd, info->key_size);
	if (n < 0)
		return info->max_entries;
	counted[oldest].id = info->id;
	counted[oldest].entries = (__u32)n;
	counted[oldest].at_ns = now;
	return (__u32)n;
}

static int add_map_fd(struct xrl_memory_report *report, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct xrl_map_memory *m;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (listed(report, info.id))
		return 0;
	if (report->n_maps == XRL_MEMORY_MAPS_MAX)
		return -E2BIG;
	m = &report->maps[report->n_maps++];
	m->id = info.id;
	snprintf(m->name, sizeof(m->name), "%s", info.name);
	m->type = info.type;
	m->value_size = info.value_size;
	m->max_entries = info.max_entries;
	m->entries = entries_held(fd, &info);
	m->memlock = fd_memlock(fd);
	m->per_cpu = xrl_map_per_cpu_bytes(info.type, info.value_size,
					   m->entries, report->cpus);
	if (m->per_cpu > m->memlock)	/* an older kernel's figure */
		m->per_cpu = m->memlock;
	report->total += m->memlock;
	report->per_cpu += m->per_cpu;
	if (info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS)
		return add_inner_maps(report, fd, info.max_entries);
	return 0;
}

static int by_memlock(const void *a, const void *b)
{
	const struct xrl_map_memory *x = a, *y = b;

	if (x->memlock != y->memlock)
		return x->memlock < y->memlock ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * A daemon answering status back to back reads the maps' memory once a
 * second: thirty-odd maps cost a fdinfo read and two lookups each, most
 * of a status's CPU. The report of the last second, by program id.
 */
static struct {
	__u32 prog_id;
	__u64 at_ns;
	struct xrl_memory_report report;
} last;

static int collect(const struct xrl_datapath *dp,
		   struct xrl_memory_report *report);

int xrl_memory_collect(const struct xrl_datapath *dp,
		       struct xrl_memory_report *report)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	__u64 now = xrl_clock_ns(CLOCK_MONOTONIC);
	int ret;

	if (bpf_obj_get_info_by_fd(dp->prog_fd, &info, &len))
		return -errno;
	if (last.prog_id == info.id && now - last.at_ns < XRL_NS_PER_S) {
		*report = last.report;
		return 0;
	}
	ret = collect(dp, report);
	if (!ret) {
		last.prog_id = info.id;
		last.at_ns = now;
		last.report = *report;
	}
	return ret;
}

static int collect(const struct xrl_datapath *dp,
		   struct xrl_memory_report *report)
{
	__u32 ids[XRL_MEMORY_MAPS_MAX], i;
	struct bpf_prog_info info = {
		.nr_map_ids = XRL_MEMORY_MAPS_MAX,
		.map_ids = (__u64)(unsigned long)ids,
	};
	__u32 len = sizeof(info);
	int fd, ret = 0;

	memset(report, 0, sizeof(*report));
	report->cpus = xrl_datapath_cpus();
	if (bpf_obj_get_info_by_fd(dp->prog_fd, &info, &len))
		return -errno;
	if (info.nr_map_ids > XRL_MEMORY_MAPS_MAX)
		return -E2BIG;
	for (i = 0; !ret && i < info.nr_map_ids; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			return -errno;
		ret = add_map_fd(report, fd);
		close(fd);
	}
	qsort(report->maps, report->n_maps, sizeof(report->maps[0]),
	      by_memlock);
	return ret;
}

__u64 xrl_memory_at_cpus(const struct xrl_memory_report *report,
			 unsigned cpus)
{
	__u64 once = report->total - report->per_cpu;

	return once + report->per_cpu / report->cpus * cpus;
}

__u64 xrl_memory_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	return pages > 0 && page > 0 ? (__u64)pages * (__u64)page : 0;
}

int xrl_memory_limit_parse(const char *text, __u64 *limit)
{
	uint64_t bytes;

	if (xrl_parse_bytes(text, xrl_memory_ram(), &bytes) || !bytes)
		return -EINVAL;
	*limit = bytes;
	return 0;
}

__u64 xrl_memory_limit_default(void)
{
	__u64 limit = 0;

	xrl_memory_limit_parse(XRL_MEMORY_LIMIT_DEFAULT, &limit);
	return limit;
}

/* The setting that sizes a map, for the refusal to name. */
static const char *sized_by(const char *map)
{
	static const struct { const char *map, *option; } sizes[] = {
		{ "xrl_buckets", "--max-sources" },
		{ "xrl_windows", "--max-sources" },
		{ "xrl_offenders", "--max-sources" },
	};
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(map, sizes[i].map))
			return sizes[i].option;
	return NULL;
}

int xrl_memory_check(const struct xrl_datapath *dp, __u64 limit, char *err,
		     size_t len)
{
	struct xrl_memory_report *report;
	char total[32], cap[32], size[32];
	const char *option;
	int ret;

	if (!limit)
		return 0;
	report = malloc(sizeof(*report));
	if (!report)
		return -ENOMEM;
	ret = xrl_memory_collect(dp, report);
	if (ret) {
		snprintf(err, len, "reading the maps' memory: %s",
			 strerror(-ret));
		goto out;
	}
	if (report->total <= limit || !report->n_maps)
		goto out;
	xrl_format_bytes(report->total, total, sizeof(total));
	xrl_format_bytes(limit, cap, sizeof(cap));
	xrl_format_bytes(report->maps[0].memlock, size, sizeof(size));
	option = sized_by(report->maps[0].name);
	snprintf(err, len, "the maps would take %s, over --memory-limit %s; "
		 "the largest: %s, %s%s%s", total, cap, report->maps[0].name,
		 size, option ? ", sized by " : "", option ? option : "");
	ret = -EFBIG;
out:
	free(report);
	return ret;
}

/* ---- for a person, and as JSON --------------------------------------- */

/* The machines an operator sizes for. */
static const unsigned cpus_shown[] = { 64, 128 };

/* Maps under this are summed in one line of the text (all are in the
 * JSON): the dozen small ones would bury the few that matter. */
#define MEMORY_LINE_MIN		(64 * 1024)

static const char *type_name(__u32 type)
{
	const char *name = libbpf_bpf_map_type_str(type);

	return name ? name : "?";
}

void xrl_memory_print(FILE *out, const struct xrl_memory_report *report)
{
	char total[32], at[2][32], size[32], shape[40];
	__u64 small = 0;
	size_t i, n_small = 0;

	xrl_format_bytes(report->total, total, sizeof(total));
	for (i = 0; i < 2; i++)
		xrl_format_bytes(xrl_memory_at_cpus(report, cpus_shown[i]),
				 at[i], sizeof(at[i]));
	fprintf(out, "memory:     %s in %zu maps on %u possible CPUs (at %u: "
		"%s, at %u: %s)\n", total, report->n_maps, report->cpus,
		cpus_shown[0], at[0], cpus_shown[1], at[1]);
	for (i = 0; i < report->n_maps; i++) {
		const struct xrl_map_memory *m = &report->maps[i];

		if (m->memlock < MEMORY_LINE_MIN) {
			small += m->memlock;
			n_small++;
			continue;
		}
		xrl_format_bytes(m->memlock, size, sizeof(size));
		snprintf(shape, sizeof(shape), "%u x %u B", m->entries,
			 m->value_size);
		fprintf(out, "  %-16s %-14s %-18s %10s%s\n", m->name,
			type_name(m->type), shape, size,
			m->per_cpu ? "  per CPU" : "");
	}
	if (n_small) {
		xrl_format_bytes(small, size, sizeof(size));
		snprintf(shape, sizeof(shape), "%zu maps under 64 KiB", n_small);
		fprintf(out, "  %-50s %10s\n", shape, size);
	}
}

json_t *xrl_memory_json(const struct xrl_memory_report *report)
{
	json_t *maps = json_array(), *at = json_object();
	size_t i;

	for (i = 0; i < report->n_maps; i++) {
		const struct xrl_map_memory *m = &report->maps[i];

		json_array_append_new(maps, json_pack(
			"{s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:I}", "name", m->name,
			"id", (json_int_t)m->id, "type", type_name(m->type),
			"max_entries", (json_int_t)m->max_entries,
			"entries", (json_int_t)m->entries,
			"value_size", (json_int_t)m->value_size,
			"bytes", (json_int_t)m->memlock,
			"per_cpu_bytes", (json_int_t)m->per_cpu));
	}
	for (i = 0; i < 2; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%u", cpus_shown[i]);
		json_object_set_new(at, key, json_integer((json_int_t)
			xrl_memory_at_cpus(report, cpus_shown[i])));
	}
	return json_pack("{s:I, s:I, s:I, s:o, s:o}",
			 "bytes", (json_int_t)report->total,
			 "per_cpu_bytes", (json_int_t)report->per_cpu,
			 "possible_cpus", (json_int_t)report->cpus,
			 "at_cpus", at, "maps", maps);
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * memory.h - what the data path's maps cost the kernel: each map the
 * program uses (and the inner maps of its maps of maps, those of every
 * slot), with the kernel's own figure (memlock, as bpftool's
 * bytes_memlock), and what of it grows with the CPU count, so that the
 * cost on a bigger machine can be told before it is paid.
 */
#ifndef XRL_MEMORY_H
#define XRL_MEMORY_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include <linux/types.h>

struct xrl_datapath;

#define XRL_MEMORY_MAPS_MAX	64

struct xrl_map_memory {
	__u32 id;
	char name[16];		/* BPF_OBJ_NAME_LEN */
	__u32 type;		/* enum bpf_map_type */
	__u32 value_size;
	__u32 max_entries;
	/* What its per-CPU part is sized by: max_entries, or for a per-CPU
	 * map not preallocated the entries it holds now. */
	__u32 entries;
	__u64 memlock;		/* the kernel's figure, bytes */
	__u64 per_cpu;		/* of it, the values kept once per CPU */
};

struct xrl_memory_report {
	struct xrl_map_memory maps[XRL_MEMORY_MAPS_MAX];	/* largest first */
	size_t n_maps;
	__u64 total;		/* of memlock */
	__u64 per_cpu;		/* of per_cpu */
	unsigned cpus;		/* possible CPUs, which per-CPU maps hold */
};

/* Reads what each map of @dp costs; 0 or -errno. */
int xrl_memory_collect(const struct xrl_datapath *dp,
		       struct xrl_memory_report *report);

/* The total @report's maps would take on a machine of @cpus possible
 * CPUs (the per-CPU values scaled, the rest as it is). */
__u64 xrl_memory_at_cpus(const struct xrl_memory_report *report,
			 unsigned cpus);

/* The per-CPU part of a map of @type, @value_size and @max_entries on
 * @cpus CPUs, as the kernel allocates it (values rounded up to 8 bytes);
 * 0 for a map kept once. */
__u64 xrl_map_per_cpu_bytes(__u32 type, __u32 value_size, __u32 max_entries,
			    unsigned cpus);

/* The default of --memory-limit: what a newly loaded data path's maps
 * may take, of the machine's memory (units.h, xrl_parse_bytes()). */
#define XRL_MEMORY_LIMIT_DEFAULT	"25%"
/* --memory-limit's help, the same in both programs. */
#define XRL_MEMORY_LIMIT_HELP \
	"refuse to load maps taking more (512M, 2G, or a share of the " \
	"machine's memory such as " XRL_MEMORY_LIMIT_DEFAULT ", the default)"

/* The machine's memory, bytes. */
__u64 xrl_memory_ram(void);

/* --memory-limit's SIZE ("512M", "2G", "25%" of the machine's memory)
 * into @limit: 0 or -EINVAL. */
int xrl_memory_limit_parse(const char *text, __u64 *limit);

/* XRL_MEMORY_LIMIT_DEFAULT of this machine, bytes. */
__u64 xrl_memory_limit_default(void);

/*
 * Whether the maps of @dp (just loaded) fit in @limit bytes (0: any): 0,
 * or -EFBIG with one line in @err naming the total, the limit and the
 * largest map with the setting that sizes it.
 */
int xrl_memory_check(const struct xrl_datapath *dp, __u64 limit, char *err,
		     size_t len);

/* status's lines: the total, and each map over 64 KiB, largest first. */
void xrl_memory_print(FILE *out, const struct xrl_memory_report *report);
json_t *xrl_memory_json(const struct xrl_memory_report *report);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * loader.h - the data path (datapath.h) loaded, pinned under the pin
 * directory, adopted from it, and closed.
 */
#ifndef XRL_LOADER_H
#define XRL_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "datapath.h"

struct xrl_load_opts {
	__u32 max_sources;	/* bucket map size; 0: XRL_DEFAULT_SOURCES */
	__u32 max_rules;	/* rule capacity; 0: XRL_DEFAULT_RULES */
	__u32 rule_stats_first;	/* xrl_rule_stats entries; 0:
				 * XRL_RULE_STATS_FIRST (tests: fewer) */
	bool test_clock;	/* time from test_clock_ns (tests only) */
	__u64 hash_seed;	/* of the prefix fallback; 0: random */
	__u64 memory_limit;	/* the maps' at most, bytes; 0: any
				 * (xrl_datapath_adopt_or_load(), memory.h) */
};

/* The offender records (include/xrl.h, struct xrl_offender) a table of
 * @max_sources gets: one per XRL_OFFENDER_SHARE, at least
 * XRL_OFFENDER_MIN or every source if fewer. */
__u32 xrl_offender_entries(__u32 max_sources);

/*
 * Loads the program and its maps, with default settings (/32 and /64
 * keys, malformed frames passed) and a policy of one default rule that
 * allows everything. Returns 0 or -errno.
 */
int xrl_datapath_load(struct xrl_datapath *dp, const struct xrl_load_opts *opts);

struct bpf_object;

/*
 * The program's object opened again from the bytes built in, not loaded,
 * each map the loaded program uses (.rodata and .bss among them: the
 * same settings, seed and test clock) set as its own: what libxdp loads
 * as an extension of its dispatcher (dispatcher.h). NULL with errno set;
 * -ESTALE when the loaded program uses a map this build does not have
 * (it was pinned by another build).
 */
struct bpf_object *xrl_datapath_open_again(const struct xrl_datapath *dp);

/* Whether a program is pinned under @dir (to adopt). */
bool xrl_datapath_pinned(const char *dir);

/* Pins program and maps under @dir (created if needed). */
int xrl_datapath_pin(struct xrl_datapath *dp, const char *dir);

/* Adopts a program and maps pinned under @dir. -ENOENT when none are. */
int xrl_datapath_open_pinned(struct xrl_datapath *dp, const char *dir);

/* Removes the pins made by xrl_datapath_pin (not the links). */
int xrl_datapath_unpin(struct xrl_datapath *dp);

void xrl_datapath_close(struct xrl_datapath *dp);

/* Sets the test clock (only when loaded with test_clock). */
void xrl_datapath_set_time(struct xrl_datapath *dp, __u64 now_ns);

/* On the test clock: what a second reading of the clock in one packet
 * finds (0: the first reading), as on a CPU held between the two. */
void xrl_datapath_set_later_time(struct xrl_datapath *dp, __u64 later_ns);

/* The names the data path pins under its directory (its program and maps,
 * then the maps in force, for bpftool), into @names; how many there are
 * (more than @max: only the first @max). */
size_t xrl_datapath_pin_names(const char **names, size_t max);

#endif

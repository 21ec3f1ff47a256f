/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * datapath.h - the loaded XDP program and its maps, whether this process
 * loaded them or adopted them from the pin directory.
 */
#ifndef XRL_DATAPATH_H
#define XRL_DATAPATH_H

#include <limits.h>
#include <stdbool.h>
#include <linux/types.h>

struct xdp_ratelimit_bpf;
struct xrl_policy_head;
struct xrl_settings;
struct xrl_rules_known;

struct xrl_datapath {
	struct xdp_ratelimit_bpf *skel;	/* NULL when adopted from pins */
	int prog_fd;
	int policy_fd;		/* classifier of the rules in force */
	int rule_table_fd;	/* the same rules by id */
	int buckets_fd;
	int stats_fd;
	int rule_stats_fd;
	int settings_fd;
	int table_stats_fd;
	int agg_shares_fd;	/* per-CPU shares of aggregate rules */
	int agg_state_fd;	/* per-CPU buckets and demand of those */
	int agg_pool_fd;	/* the bucket all CPUs share, per rule */
	int events_fd;		/* ring buffer of limit events */
	int event_state_fd;	/* per-CPU event cap and counters */
	int ids_fd;		/* the rule id mark (policy_map.h) */
	int bans_fd;		/* ban records of sources (bpf/bans.h) */
	int ban_stats_fd;	/* per-CPU bans started */
	int manual_bans_fd;	/* the daemon's bans by prefix (LPM trie) */
	/* Sources tracked, as counted by someone who keeps counting (the
	 * daemon's counter thread; < 0 until its first count), so that a
	 * report does not read the whole bucket table; NULL: count it. */
	const long *sources_count;
	__u32 btf_id;		/* BTF of the program, for inner maps */
	char pin_dir[PATH_MAX];	/* empty when not pinned */
	struct xrl_rules_known *known;	/* rulemaps.c */
};

struct xrl_load_opts {
	__u32 max_sources;	/* bucket map size; 0: XRL_DEFAULT_SOURCES */
	__u32 max_rules;	/* rule capacity; 0: XRL_DEFAULT_RULES */
	bool test_clock;	/* time from test_clock_ns (tests only) */
	__u64 hash_seed;	/* of the prefix fallback; 0: random */
};

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

/* Pins program and maps under @dir (created if needed). */
int xrl_datapath_pin(struct xrl_datapath *dp, const char *dir);

/* Whether a program is pinned under @dir (to adopt). */
bool xrl_datapath_pinned(const char *dir);

/* Adopts a program and maps pinned under @dir. -ENOENT when none are. */
int xrl_datapath_open_pinned(struct xrl_datapath *dp, const char *dir);

/* Removes the pins made by xrl_datapath_pin (not the links). */
int xrl_datapath_unpin(struct xrl_datapath *dp);

void xrl_datapath_close(struct xrl_datapath *dp);

/*
 * The policy in force, as the program reads it (include/xrl.h, "How a
 * policy is installed"): a new fd of its head map and of the classifier
 * (hash) map its head names, or -errno (-ENOENT before the first policy).
 */
int xrl_datapath_head_fd(const struct xrl_datapath *dp);
int xrl_datapath_rules_fd(const struct xrl_datapath *dp);

/* The head in force, or its settings alone. 0 or -errno. */
int xrl_datapath_head(const struct xrl_datapath *dp,
		      struct xrl_policy_head *out);
int xrl_datapath_settings(const struct xrl_datapath *dp,
			  struct xrl_settings *out);

/* Size of the bucket table (max_entries of xrl_buckets), or 0. */
__u32 xrl_datapath_max_sources(const struct xrl_datapath *dp);

/* CPUs the per-CPU budgets are split over: the possible CPUs (at least 1). */
unsigned xrl_datapath_cpus(void);

/* Sets the test clock (only when loaded with test_clock). */
void xrl_datapath_set_time(struct xrl_datapath *dp, __u64 now_ns);

/* On the test clock: what a second reading of the clock in one packet
 * finds (0: the first reading), as on a CPU held between the two. */
void xrl_datapath_set_later_time(struct xrl_datapath *dp, __u64 later_ns);

/* Routes libbpf's messages through xrl_log (warnings as warnings, the
 * rest as debug). */
void xrl_log_libbpf(void);

/* While @on, every message of theirs is a debug line (a probe's
 * refusals are its answer, not warnings); off, as before. */
void xrl_log_libbpf_quiet(bool on);

#endif

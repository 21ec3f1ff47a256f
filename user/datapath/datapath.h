/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * datapath.h - the loaded XDP program and its maps, whether this process
 * loaded them or adopted them from the pin directory, and what it is: its
 * table size, the CPUs its budgets are split over, the policy in force
 * (datapath.c). Loading, pinning and adopting it: loader.h.
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
	int rule_stats_fd;	/* counters of the first ids made */
	int rule_spill_fd;	/* the rest (include/xrl.h) */
	int settings_fd;
	int table_stats_fd;
	int agg_shares_fd;	/* per-CPU shares of aggregate rules */
	int agg_state_fd;	/* per-CPU buckets and demand of those */
	int agg_pool_fd;	/* the bucket all CPUs share, per rule */
	int events_fd;		/* ring buffer of limit events */
	int event_state_fd;	/* per-CPU event cap and counters */
	int ids_fd;		/* the rule id mark (policy_map.h) */
	int bans_fd;		/* ban records of sources (bpf/bans.h) */
	int offenders_fd;	/* refused sources' counts (bpf/offenders.h) */
	int tally_fd;		/* per-CPU tallies of those (include/xrl.h) */
	/* per-CPU copies of rules and their counters (include/xrl.h,
	 * struct xrl_rule_copy): not pinned, found through the program
	 * when adopted (loader.c); -1 for a program without them */
	int rule_cache_fd;
	int ban_stats_fd;	/* per-CPU bans started */
	int manual_bans_fd;	/* the daemon's bans by prefix (LPM trie) */
	int blocklists_fd;	/* the blocklists' tries (blocklist.h) */
	int block_hits_fd;	/* per-CPU hits of each */
	/* A capture's settings, ring and per-CPU state (bpf/capture.h);
	 * -1 when adopted from pins made before them. */
	int capture_fd;
	int capture_rb_fd;
	int capture_st_fd;
	int escalations_fd;	/* subnets' bans (bpf/escalate.h) */
	/* Sources tracked, as counted by someone who keeps counting (the
	 * daemon's counter thread; < 0 until its first count), so that a
	 * report does not read the whole bucket table; NULL: count it. */
	const long *sources_count;
	__u32 btf_id;		/* BTF of the program, for inner maps */
	char pin_dir[PATH_MAX];	/* empty when not pinned */
	struct xrl_rules_known *known;	/* rulemaps.c */
};

/*
 * The policy in force, as the program reads it (include/xrl.h, "How a
 * policy is installed"): a new fd of its head map and of the classifier
 * (hash) map its head names, or -errno (-ENOENT before the first policy).
 */
int xrl_datapath_head_fd(const struct xrl_datapath *dp);
int xrl_datapath_rules_fd(const struct xrl_datapath *dp);

/* A new fd of the map in slot @slot of the map of maps @outer_fd, or
 * -errno (-ENOENT: an empty slot). */
int xrl_datapath_inner_fd(int outer_fd, __u32 slot);

/* The head in force, or its settings alone. 0 or -errno. */
int xrl_datapath_head(const struct xrl_datapath *dp,
		      struct xrl_policy_head *out);
int xrl_datapath_settings(const struct xrl_datapath *dp,
			  struct xrl_settings *out);

/* Size of the bucket table (max_entries of xrl_buckets), or 0. */
__u32 xrl_datapath_max_sources(const struct xrl_datapath *dp);

/* CPUs the per-CPU budgets are split over: the possible CPUs (at least 1). */
unsigned xrl_datapath_cpus(void);

/*
 * bpf_map_update_elem() for the maps not preallocated (per-rule counters,
 * aggregate shares and state): an entry's per-CPU memory is made by the
 * kernel in the background when an update finds none at hand (-ENOMEM,
 * common when thousands are added at once), so the update is retried
 * for up to 2 s. 0 or -errno.
 */
int xrl_map_update(int fd, const void *key, const void *value, __u64 flags);

/* Routes libbpf's messages through xrl_log (warnings as warnings, the
 * rest as debug). */
void xrl_log_libbpf(void);

/* While @on, every message of theirs is a debug line (a probe's
 * refusals are its answer, not warnings); off, as before. */
void xrl_log_libbpf_quiet(bool on);

#endif

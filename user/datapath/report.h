/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * report.h - what `status` and `stats` show, collected from the pinned
 * maps and links, formatted as text or as one JSON object (jansson). The
 * JSON schemas are documented in docs/OPERATIONS.md, "JSON output".
 */
#ifndef XRL_REPORT_H
#define XRL_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include <net/if.h>
#include "attach.h"
#include "bans.h"
#include "blocklists.h"
#include "dispatcher.h"
#include "memory.h"
#include "xrl.h"

struct xrl_datapath;

struct xrl_rule_report {
	struct xrl_lpm_key prefix;
	struct xrl_rule rule;
	struct xrl_rule_counters counters;
};

/* The bucket table under pressure: new-source budget and fallback. */
struct xrl_table_report {
	struct xrl_table_counters counters;
	long occupancy;		/* entries of xrl_buckets, counted */
	__u64 evictions;	/* inserts - occupancy: nothing else deletes */
	__u32 max_sources;
	struct xrl_settings settings;	/* budget and unknown_sources */
};

struct xrl_stats_report {
	struct xrl_counter totals[XRL_VERDICT_COUNT];
	struct xrl_table_report table;
	struct xrl_event_state events;	/* limit event counters */
	struct xrl_rule_report *rules;	/* sorted by rule id */
	size_t n_rules;
};

/* Reads the counters and the rules in force. 0 or -errno. */
int xrl_stats_collect(const struct xrl_datapath *dp,
		      struct xrl_stats_report *report);
void xrl_stats_report_free(struct xrl_stats_report *report);
json_t *xrl_stats_json(const struct xrl_stats_report *report);
void xrl_stats_print(FILE *out, const struct xrl_stats_report *report);

/*
 * One line of `stats --watch`: packets per second of each verdict
 * between two reads of the counters @seconds apart (and the header line
 * above it when @header).
 */
void xrl_stats_rates_print(FILE *out,
			   const struct xrl_counter before[XRL_VERDICT_COUNT],
			   const struct xrl_counter after[XRL_VERDICT_COUNT],
			   double seconds, bool header);

struct xrl_iface_report {
	char name[IF_NAMESIZE];
	/* Alone: its pinned link. Chained: link_id 0, prog_id the pinned
	 * extension's, ifindex the name's in this netns (0: none here). */
	struct xrl_link_state link;
	bool chained;		/* in libxdp's dispatcher (chain_<name>) */
	/* From bpf_xdp_query: only known for interfaces in this netns. */
	enum xrl_xdp_mode mode;
	bool found;
	/* Chained and found: the dispatcher's programs, ours among them. */
	struct xrl_chain chain;
};

struct xrl_map_report {
	const char *name;
	__u32 id;
	__u32 max_entries;
};

#define XRL_REPORT_MAPS 9

struct xrl_status_report {
	char pin_dir[PATH_MAX];
	__u32 prog_id;
	char prog_name[16];
	struct xrl_iface_report *ifaces;
	size_t n_ifaces;
	struct xrl_map_report maps[XRL_REPORT_MAPS];
	long tracked_sources;
	__u32 max_sources;
	struct xrl_manual_bans_fill manual_bans;
	struct xrl_blocklist_report blocklists[XRL_BLOCKLISTS_MAX];
	size_t n_blocklists;
	struct xrl_settings settings;
	struct xrl_stats_report stats;
	struct xrl_memory_report memory;
};

int xrl_status_collect(const struct xrl_datapath *dp,
		       struct xrl_status_report *report);
void xrl_status_report_free(struct xrl_status_report *report);
json_t *xrl_status_json(const struct xrl_status_report *report);
void xrl_status_print(FILE *out, const struct xrl_status_report *report);

/* Prints @json as one line (compact) or indented, with a newline;
 * consumes the reference. 0 or -errno. */
int xrl_json_print(FILE *out, json_t *json, bool pretty);

#endif

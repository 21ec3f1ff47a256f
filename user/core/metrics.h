/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * metrics.h - the limiter's counters in the Prometheus text exposition
 * format (version 0.0.4): collected from the maps into a struct
 * xrl_metrics, then written out by a function that needs no root and no
 * map, so that tests check the text itself.
 */
#ifndef XRL_METRICS_H
#define XRL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "xrl.h"

#define XRL_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct xrl_metrics_rule {
	const char *name;	/* label value; NULL: "id-N" */
	__u32 id;
	bool monitor;		/* drops are would-drops: verdict="would_drop" */
	bool escalates;		/* has escalate_: escalated_bans written */
	__u64 escalated_bans;	/* its prefixes under escalated bans */
	struct xrl_rule_counters counters;
};

/* A blocklist in force (bpf/blocklists.h), by name. */
struct xrl_metrics_blocklist {
	char name[XRL_BLOCKLIST_NAME_LEN];
	__u64 entries;
	struct xrl_counter hits;
};

/*
 * Families written after the built-in ones, for features that keep
 * their own state (global budgets' sync_degraded{rule=...}): write them
 * with xrl_metrics_family() and xrl_metrics_sample().
 */
typedef void (*xrl_metrics_extra_fn)(FILE *out, void *ctx);

struct xrl_metrics {
	struct xrl_counter totals[XRL_VERDICT_COUNT];
	struct xrl_metrics_rule *rules;
	size_t n_rules;
	struct xrl_table_counters table;
	__u64 forgotten;		/* buckets userspace deleted */
	__u64 evictions;		/* inserts - tracked sources */
	struct xrl_event_state events;	/* limit event counters */
	struct xrl_ban_counters bans;	/* bans started (bpf/bans.h) */
	__u64 active_bans;		/* ban records and bans by hand in
					 * force */
	__u64 escalated_bans;		/* prefixes under escalated bans */
	__u64 manual_bans;		/* entries of xrl_manual_bans */
	__u32 manual_bans_capacity;	/* its max_entries */
	struct xrl_metrics_blocklist blocklists[XRL_BLOCKLISTS_MAX];
	size_t n_blocklists;
	long tracked_sources;		/* < 0: not known, not written */
	__u32 capacity;			/* max_entries of the bucket map */
	bool have_policy;		/* the two below are known */
	__u64 generation;		/* policies applied by the daemon */
	double reload_time;		/* when, seconds since the epoch */
	bool have_last_reload;		/* a file was reloaded since start */
	bool last_reload_ok;		/* it was applied (not refused) */
	double last_reload_time;	/* when it was tried */
	xrl_metrics_extra_fn extra;
	void *extra_ctx;
};

/* Writes the whole exposition of @m. 0 or -errno (a write error). */
int xrl_metrics_write(FILE *out, const struct xrl_metrics *m);

/* The exposition as one malloc'ed string (*@len bytes). 0 or -ENOMEM. */
int xrl_metrics_format(const struct xrl_metrics *m, char **text, size_t *len);

/* "# HELP" and "# TYPE" lines of a family; @type "counter" or "gauge". */
void xrl_metrics_family(FILE *out, const char *name, const char *type,
			const char *help);

/*
 * One sample line. @labels holds name, value pairs and ends with NULL
 * (NULL itself for none); values are escaped as the format requires.
 */
void xrl_metrics_sample(FILE *out, const char *name,
			const char *const *labels, double value);
void xrl_metrics_sample_u64(FILE *out, const char *name,
			    const char *const *labels, uint64_t value);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * global.h - global budgets (global: true): an aggregate rule's budget
 * shared by every node of a fleet through Redis.
 *
 * Every sync each node runs one Lua script per global rule (EVALSHA; the
 * script is loaded once and again on NOSCRIPT) that records the node's
 * demand for the rule (packets per second that arrived over the last
 * interval) under a key that expires after XRL_GLOBAL_TTL_WINDOWS
 * intervals, and returns the demand of every node still live. The node's
 * part of the budget is its weight in xrl_share_split() over those
 * demands (the same floor as for CPUs), so every node computes its part
 * from the same vector. Keys are hash-tagged by rule, xrl:{NAME}:..., so
 * a script touches one Redis Cluster slot.
 *
 * Calls are bounded by a timeout (connect and command, default 50 ms).
 * On a failure the circuit breaker opens: the node keeps its last part
 * for the grace period, then falls back to the budget / the last known
 * node count; it tries Redis again only after the cool-off, with a single
 * probe, and closes on success.
 */
#ifndef XRL_GLOBAL_H
#define XRL_GLOBAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct xrl_budgets;
struct xrl_global;

#define XRL_GLOBAL_TIMEOUT_MS	50
#define XRL_GLOBAL_COOLOFF_MS	5000
#define XRL_GLOBAL_GRACE_MS	1000
#define XRL_GLOBAL_TTL_WINDOWS	3
#define XRL_NODE_NAME_MAX	64

struct xrl_global_opts {
	const char *host;
	uint16_t port;
	const char *node;		/* this node's name */
	uint64_t timeout_ms;		/* 0: XRL_GLOBAL_TIMEOUT_MS */
	uint64_t cooloff_ms;		/* 0: XRL_GLOBAL_COOLOFF_MS */
	uint64_t grace_ms;		/* 0: XRL_GLOBAL_GRACE_MS */
	uint64_t ttl_ms;		/* of a node's demand; 0:
					 * XRL_GLOBAL_TTL_WINDOWS intervals */
};

/* What status, stats and the log show. */
struct xrl_global_status {
	bool degraded;			/* the breaker is open */
	time_t degraded_since;		/* wall clock, when it opened */
	char reason[160];		/* why it opened */
	uint64_t syncs, failures;	/* exchanges made, and failed */
	char node[XRL_NODE_NAME_MAX];
	char address[280];		/* HOST:PORT */
};

/* NULL with errno set on failure (no connection is made here). */
struct xrl_global *xrl_global_new(const struct xrl_global_opts *opts);
void xrl_global_free(struct xrl_global *g);

void xrl_global_status(const struct xrl_global *g,
		       struct xrl_global_status *out);

/* Follows the engine's rules after a policy change (sets their local
 * budget to what this node holds). */
void xrl_global_follow(struct xrl_global *g, struct xrl_budgets *b,
		       uint64_t now_ns);

/* One exchange with Redis for every global rule of @b (or, breaker open,
 * the degraded parts). 0, or -errno when the exchange failed. */
int xrl_global_sync(struct xrl_global *g, struct xrl_budgets *b,
		    uint64_t now_ns);

#endif

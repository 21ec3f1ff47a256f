/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * global.h - global budgets (global: true): an aggregate rule's budget
 * shared by every node of a fleet through Redis or Redis Cluster.
 *
 * Every sync each node runs the sync script once per global rule, all of
 * them pipelined: one round trip per Redis node, whatever the number of
 * rules. The script records the node's demand for the rule (packets per
 * second that arrived over the last interval) as a field of one hash per
 * rule, xrl:{NAME}:demand, with an expiry (Redis's own clock) of
 * XRL_GLOBAL_TTL_WINDOWS intervals, and returns the demand of every node
 * still live. The node's part of the budget is its weight in
 * xrl_share_split() over those demands (the same floor as for CPUs), so
 * every node computes its part from the same vector. One key per rule,
 * hash-tagged: a rule lives in one Redis Cluster slot, and a slot
 * migration moves all of it at once.
 *
 * Redis Cluster: the slot map comes from CLUSTER SLOTS (asked of the
 * configured address), one connection per master; a MOVED reply updates
 * the map (and the whole map is read again after the sync), an ASK reply
 * is followed once with ASKING; the rule is retried in the same sync, so
 * a migrated slot costs no sync. A plain Redis answers CLUSTER SLOTS with
 * an error and is used for every slot.
 *
 * Every reply is a stranger's input: types, counts (at most
 * XRL_GLOBAL_MAX_NODES nodes), lengths, numbers and redirect targets are
 * checked, and a reply that is not what the script returns fails the
 * rule, never the daemon. Calls are bounded by a timeout (connect, and
 * a deadline for each reply however its bytes trickle in; default
 * 50 ms), and our reader refuses, before allocating, arrays and strings
 * longer than any reply we accept (hiredis 0.14 believes any count).
 *
 * Degraded state is per rule: a rule whose exchange failed
 * XRL_GLOBAL_MISSES times in a row is degraded; it keeps its last part
 * for the grace period (from its first miss), then falls back to the
 * budget / the nodes it last saw. A Redis node that failed as often (no
 * answer, timeout) has a circuit breaker: it is left alone for the
 * cool-off, then probed once.
 * A rule that comes back does not take more than its part of the nodes
 * it saw before the failure until the others had a TTL to rejoin.
 *
 * Identity: each daemon writes a random instance id beside its demand;
 * seeing its own name written by another instance in two exchanges in a
 * row means two daemons share one name: the rule is degraded with that
 * reason (status, /metrics, the log) and takes half of the name's part.
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
/*
 * Missed exchanges in a row before a rule is degraded (and a Redis node's
 * breaker opens): one slow reply on a loaded host costs nothing, the rule
 * keeps its last part (the grace period counts from the first miss).
 */
#define XRL_GLOBAL_MISSES	3
/* What one rule's script may cost Redis before its reply times out. */
#define XRL_GLOBAL_SCRIPT_US	500
#define XRL_NODE_NAME_MAX	64
#define XRL_GLOBAL_MAX_NODES	1024	/* sharing one rule */
#define XRL_REDIS_MAX_MASTERS	64	/* connections of one daemon */
#define XRL_GLOBAL_MAX_REPLY	(2 * XRL_GLOBAL_MAX_NODES + 1)

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
	bool degraded;			/* some global rule is */
	time_t degraded_since;		/* wall clock, the first such rule's */
	char reason[160];		/* and why */
	uint64_t syncs, failures;	/* exchanges made, and failed */
	uint64_t moved, asked;		/* redirects followed */
	bool cluster;			/* the address is a Redis Cluster */
	unsigned masters;		/* Redis nodes connected to */
	char node[XRL_NODE_NAME_MAX];
	char address[280];		/* HOST:PORT */
};

/* NULL with errno set on failure (no connection is made here). */
struct xrl_global *xrl_global_new(const struct xrl_global_opts *opts);
void xrl_global_free(struct xrl_global *g);

/* As of the last sync. */
void xrl_global_status(const struct xrl_global *g,
		       struct xrl_global_status *out);

/* Follows the engine's rules after a policy change (sets their local
 * budget to what this node holds). */
void xrl_global_follow(struct xrl_global *g, struct xrl_budgets *b,
		       uint64_t now_ns);

/* One exchange with Redis for every global rule of @b (the degraded ones
 * get their fallback parts). 0, or -EIO while any global rule is
 * degraded. */
int xrl_global_sync(struct xrl_global *g, struct xrl_budgets *b,
		    uint64_t now_ns);

/* The cluster key slot of @key (CRC16 of its hash tag, mod 16384). */
unsigned xrl_redis_key_slot(const char *key, size_t len);

#endif

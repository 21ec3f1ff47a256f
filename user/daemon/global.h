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
 * The exchange goes through redis_cluster.h, over a Redis or a Redis
 * Cluster. Every reply is a stranger's input: types, counts (at most
 * XRL_GLOBAL_MAX_NODES nodes), lengths and numbers are checked, and a
 * reply that is not what the script returns fails the rule, never the
 * daemon. Calls are bounded by a timeout (default 50 ms).
 *
 * The engine (budget.h) and this side share nothing but the exchange:
 * the engine hands in each global rule's name and this node's demand,
 * and reads back its part of the budget; each rule's history (misses,
 * degraded since, rejoining) is kept here.
 *
 * Degraded state is per rule: a rule whose exchange failed
 * XRL_GLOBAL_MISSES times in a row is degraded; it keeps its last part
 * for the grace period (from its first miss), then falls back to the
 * budget / the nodes it last saw. A Redis node that failed as often (no
 * answer, timeout) has a circuit breaker (redis_cluster.h).
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
#include <stddef.h>
#include <stdint.h>
#include <time.h>

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
#define XRL_NODE_NAME_MAX	64
#define XRL_GLOBAL_MAX_NODES	1024	/* sharing one rule */
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

/* One global rule in an exchange: in, its name and this node's demand;
 * out, this node's part of its budget and the rule's state. */
struct xrl_global_rule {
	uint32_t id;
	const char *name;		/* its key: xrl:{NAME}:demand */
	uint64_t demand_pps;		/* this node's, last interval */
	uint64_t part, of;		/* out: part / of of the budget */
	uint32_t node_weight;		/* out: of XRL_SHARE_ONE, from Redis */
	uint32_t nodes;			/* out: live nodes, last exchange */
	bool degraded;			/* out */
	char reason[160];		/* out: why degraded */
};

/* After a policy change: the parts of the global rules @rules (@n) now
 * are, carried from the rules of the same ids. 0 or -ENOMEM. */
int xrl_global_follow(struct xrl_global *g, struct xrl_global_rule *rules,
		      size_t n, uint64_t now_ns);

/* One exchange with Redis for every rule of @rules (the degraded ones get
 * their fallback parts); demand lives XRL_GLOBAL_TTL_WINDOWS times
 * @interval_ns. 0, -ENOMEM, or -EIO while any global rule is degraded. */
int xrl_global_sync(struct xrl_global *g, struct xrl_global_rule *rules,
		    size_t n, uint64_t interval_ns, uint64_t now_ns);

#endif

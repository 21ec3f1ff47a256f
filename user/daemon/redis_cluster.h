/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * redis_cluster.h - one Lua script run on many keys of a Redis or a Redis
 * Cluster, pipelined: one round trip per Redis node, whatever the number
 * of keys. What global budgets exchange through it: global.h.
 *
 * Redis Cluster: the slot map comes from CLUSTER SLOTS (asked of the
 * configured address), one connection per master; a MOVED reply updates
 * the map (and the whole map is read again after the run), an ASK reply
 * is followed once with ASKING; a key is retried in the same run, so a
 * migrated slot costs nothing. A plain Redis answers CLUSTER SLOTS with
 * an error and is used for every slot. The script is loaded on each
 * connection, and again after NOSCRIPT (Redis restarted or flushed).
 *
 * Every reply is a stranger's input: redirect targets and the slot map
 * are checked, our reader refuses, before allocating, arrays and strings
 * longer than any reply we accept (hiredis 0.14 believes any count), and
 * calls are bounded by a timeout (connect, and a deadline for each reply
 * however its bytes trickle in). A Redis node that failed
 * XRL_REDIS_MISSES times in a row (no answer, timeout) has its breaker
 * opened: it is left alone for the cool-off, then probed once.
 */
#ifndef XRL_REDIS_CLUSTER_H
#define XRL_REDIS_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <hiredis/hiredis.h>

#define XRL_REDIS_MAX_MASTERS	64	/* connections of one client */
#define XRL_REDIS_MISSES	3	/* failed round trips in a row before
					 * a node's breaker opens */
#define XRL_REDIS_ARGS_MAX	8	/* ARGV of the script */
/* What one key's script may cost Redis before its reply times out. */
#define XRL_REDIS_SCRIPT_US	500

struct xrl_redis;

struct xrl_redis_opts {
	const char *host;		/* the configured node (a seed) */
	uint16_t port;
	const char *script;		/* the Lua script run on each key */
	uint64_t timeout_ms;		/* connect and each reply */
	uint64_t cooloff_ms;		/* an open breaker's */
	const char *breaker_note;	/* what an open breaker means, for
					 * its log line */
};

/* One run of the script on one key: KEYS[1] and ARGV, in; out: done, or
 * failed and why. The rest is the client's during the run. */
struct xrl_redis_job {
	const char *key;
	const char *args[XRL_REDIS_ARGS_MAX];
	unsigned n_args;
	bool done, failed;
	char why[160];
	/* the client's */
	unsigned slot;
	int target;			/* node index */
	bool asking;			/* ASK: send ASKING first */
};

/*
 * What the caller makes of a reply of the script (redirects and NOSCRIPT
 * are the client's): 0, or -EPROTO with @job->why set.
 */
typedef int (*xrl_redis_reply_fn)(struct xrl_redis_job *job,
				  const redisReply *reply, void *ctx);

struct xrl_redis_status {
	bool cluster;			/* the address is a Redis Cluster */
	unsigned masters;		/* Redis nodes connected to */
	uint64_t moved, asked;		/* redirects followed */
	char address[280];		/* HOST:PORT of the seed */
};

/* NULL with errno set on failure (no connection is made here). */
struct xrl_redis *xrl_redis_new(const struct xrl_redis_opts *opts);
void xrl_redis_free(struct xrl_redis *r);

/*
 * Runs the script on the key of each of @n @jobs, each on its slot's
 * master, all masters' pipelines sent before any reply is read; every
 * reply that is the script's goes to @reply. @now_ns is the caller's
 * clock (CLOCK_MONOTONIC) for the breakers.
 */
void xrl_redis_run(struct xrl_redis *r, struct xrl_redis_job *jobs, size_t n,
		   xrl_redis_reply_fn reply, void *ctx, uint64_t now_ns);

void xrl_redis_status(const struct xrl_redis *r, struct xrl_redis_status *out);

/* The cluster key slot of @key (CRC16 of its hash tag, mod 16384). */
unsigned xrl_redis_key_slot(const char *key, size_t len);

#endif

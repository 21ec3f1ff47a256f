// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * redis_cluster.c - one script run on many keys of a Redis or a Redis
 * Cluster, pipelined, with a breaker per Redis node (redis_cluster.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include "clock.h"
#include "log.h"
#include "redis_cluster.h"

#define MS		1000000ULL
#define N_SLOTS		16384
#define NO_OWNER	0xffff
#define REDIRECTS	2	/* MOVED/ASK followed per key per run */
#define NOTE_MAX	160

/* One Redis node (the configured one, or a cluster master). */
struct redis_node {
	char host[256];
	uint16_t port;
	redisContext *ctx;
	bool open;			/* its breaker */
	unsigned misses;		/* failed round trips in a row */
	uint64_t retry_at_ns;
	char reason[160];		/* why it opened */
};

struct xrl_redis {
	struct timeval timeout;
	uint64_t cooloff_ns;
	char *script;			/* loaded on each connection */
	char sha[48];			/* of @script */
	char breaker_note[NOTE_MAX];
	bool cluster;			/* CLUSTER SLOTS answered */
	bool map_known, map_stale;
	uint16_t owner[N_SLOTS];	/* index in @nodes; NO_OWNER: seed */
	struct redis_node nodes[XRL_REDIS_MAX_MASTERS];	/* [0]: the seed */
	size_t n_nodes;
	uint64_t moved, asked;
};

struct xrl_redis *xrl_redis_new(const struct xrl_redis_opts *opts)
{
	struct xrl_redis *r;

	if (!opts->host || !opts->script ||
	    strlen(opts->host) >= sizeof(r->nodes[0].host)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->script = strdup(opts->script);
	if (!r->script) {
		free(r);
		return NULL;
	}
	snprintf(r->nodes[0].host, sizeof(r->nodes[0].host), "%s", opts->host);
	r->nodes[0].port = opts->port;
	r->n_nodes = 1;
	r->timeout.tv_sec = (time_t)(opts->timeout_ms / 1000);
	r->timeout.tv_usec = (suseconds_t)(opts->timeout_ms % 1000 * 1000);
	r->cooloff_ns = opts->cooloff_ms * MS;
	snprintf(r->breaker_note, sizeof(r->breaker_note), "%s",
		 opts->breaker_note ? opts->breaker_note : "breaker open");
	memset(r->owner, 0xff, sizeof(r->owner));
	return r;
}

static void disconnect(struct redis_node *n)
{
	if (n->ctx)
		redisFree(n->ctx);
	n->ctx = NULL;
}

/* ---- slots ------------------------------------------------------------ */

/* CRC16-CCITT (XModem), as the Redis Cluster specification defines it. */
static uint16_t crc16(const char *buf, size_t len)
{
	uint16_t crc = 0;
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		crc ^= (uint16_t)(unsigned char)buf[i] << 8;
		for (bit = 0; bit < 8; bit++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc;
}

unsigned xrl_redis_key_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;

	if (open) {
		close = memchr(open + 1, '}', len - (open + 1 - key));
		if (close && close > open + 1)
			return crc16(open + 1, close - open - 1) % N_SLOTS;
	}
	return crc16(key, len) % N_SLOTS;
}

/* The index of node HOST:PORT, added if new; -ENOSPC past the maximum. */
static int node_index(struct xrl_redis *r, const char *host, size_t len,
		      uint16_t port)
{
	size_t i;

	if (!len || len >= sizeof(r->nodes[0].host))
		return -EPROTO;
	for (i = 0; i < r->n_nodes; i++)
		if (r->nodes[i].port == port &&
		    strlen(r->nodes[i].host) == len &&
		    !memcmp(r->nodes[i].host, host, len))
			return (int)i;
	if (r->n_nodes == XRL_REDIS_MAX_MASTERS)
		return -ENOSPC;
	memset(&r->nodes[i], 0, sizeof(r->nodes[i]));
	memcpy(r->nodes[i].host, host, len);
	r->nodes[i].port = port;
	r->n_nodes++;
	return (int)i;
}

static bool is_int(const redisReply *r, long long lo, long long hi)
{
	return r->type == REDIS_REPLY_INTEGER && r->integer >= lo &&
	       r->integer <= hi;
}

/*
 * Reads a CLUSTER SLOTS reply (asked of node @from) into the slot map:
 * [[start, end, [host, port, ...], replicas...], ...]. Anything else
 * leaves the map as it was and returns -EPROTO.
 */
static int read_slot_map(struct xrl_redis *r, const redisReply *reply,
			 int from)
{
	uint16_t owner[N_SLOTS];
	const redisReply *range, *master;
	const char *host;
	size_t i, len;
	long long s;
	int k;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements > N_SLOTS)
		return -EPROTO;
	memset(owner, 0xff, sizeof(owner));
	for (i = 0; i < reply->elements; i++) {
		range = reply->element[i];
		if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
		    !is_int(range->element[0], 0, N_SLOTS - 1) ||
		    !is_int(range->element[1], range->element[0]->integer,
			    N_SLOTS - 1))
			return -EPROTO;
		master = range->element[2];
		if (master->type != REDIS_REPLY_ARRAY ||
		    master->elements < 2 ||
		    master->element[0]->type != REDIS_REPLY_STRING ||
		    !is_int(master->element[1], 1, 65535))
			return -EPROTO;
		host = master->element[0]->str;
		len = master->element[0]->len;
		if (!len || (len == 1 && host[0] == '?')) {
			/* "this node's address as you reached it" */
			host = r->nodes[from].host;
			len = strlen(host);
		}
		k = node_index(r, host, len,
			       (uint16_t)master->element[1]->integer);
		if (k < 0)
			return k;
		for (s = range->element[0]->integer;
		     s <= range->element[1]->integer; s++)
			owner[s] = (uint16_t)k;
	}
	memcpy(r->owner, owner, sizeof(owner));
	return 0;
}

/* ---- talking to one node -------------------------------------------- */

/*
 * hiredis 0.14 believes any count a reply announces: "*2147483647" makes
 * it allocate 16 GB of pointers and walk them. Our reader refuses, before
 * allocating, arrays longer than any reply we accept (CLUSTER SLOTS has
 * at most one range per slot) and strings longer than a host or a name;
 * the reply then fails as out of memory, which fails the rule.
 */
#define MAX_ARRAY	N_SLOTS
#define MAX_STRING	4096

static redisReplyObjectFunctions *hiredis_functions;

static void *guarded_array(const redisReadTask *task, int elements)
{
	if (elements < 0 || elements > MAX_ARRAY)
		return NULL;
	return hiredis_functions->createArray(task, elements);
}

static void *guarded_string(const redisReadTask *task, char *str, size_t len)
{
	if (len > MAX_STRING)
		return NULL;
	return hiredis_functions->createString(task, str, len);
}

static void guard_reader(redisReader *reader)
{
	static redisReplyObjectFunctions guarded;

	if (!hiredis_functions) {
		hiredis_functions = reader->fn;
		guarded = *reader->fn;
		guarded.createArray = guarded_array;
		guarded.createString = guarded_string;
	}
	reader->fn = &guarded;
}

/* Why the connection failed, into @buf (returned). */
static const char *io_error(redisContext *ctx, char *buf, size_t len)
{
	if (ctx->err == REDIS_ERR_IO && (errno == EAGAIN ||
					 errno == EWOULDBLOCK))
		snprintf(buf, len, "timed out");
	else
		snprintf(buf, len, "%s", ctx->errstr[0] ? ctx->errstr :
			 "no reply");
	return buf;
}

/* A failed round trip; the breaker opens at the XRL_REDIS_MISSES-th in a
 * row (or at once when it was open: the probe failed). */
static void open_breaker(struct xrl_redis *r, struct redis_node *n,
			 uint64_t now_ns, const char *why)
{
	disconnect(n);
	if (!n->open && ++n->misses < XRL_REDIS_MISSES)
		return;	/* tried again at the next sync */
	n->retry_at_ns = now_ns + r->cooloff_ns;
	if (n->open) {
		pr_warn("redis %s:%u: probe failed: %s; next try in %llu ms",
			n->host, n->port, why,
			(unsigned long long)(r->cooloff_ns / MS));
		return;
	}
	n->open = true;
	snprintf(n->reason, sizeof(n->reason), "%s", why);
	pr_warn("redis %s:%u: %s: %s; next try in %llu ms", n->host, n->port,
		why, r->breaker_note, (unsigned long long)(r->cooloff_ns / MS));
}

static void close_breaker(struct redis_node *n)
{
	n->misses = 0;
	if (!n->open)
		return;
	n->open = false;
	n->reason[0] = '\0';
	pr_info("redis %s:%u: reachable again", n->host, n->port);
}

/*
 * A reply by @deadline_ns (CLOCK_MONOTONIC), however slowly its bytes
 * trickle in: each read is bounded by the socket's timeout, the whole by
 * the deadline (a server sending a byte every 40 ms would otherwise hold
 * the daemon as long as it likes).
 */
static int get_reply(redisContext *ctx, redisReply **out, uint64_t deadline_ns)
{
	void *reply = NULL;

	if (redisGetReplyFromReader(ctx, &reply) != REDIS_OK)
		return REDIS_ERR;
	while (!reply) {
		uint64_t now = xrl_clock_ns(CLOCK_MONOTONIC), left;
		struct timeval tv;

		if (now >= deadline_ns) {
			ctx->err = REDIS_ERR_IO;
			snprintf(ctx->errstr, sizeof(ctx->errstr), "timed out");
			errno = EAGAIN;
			return REDIS_ERR;
		}
		/* This read waits no longer than the deadline allows. */
		left = deadline_ns - now;
		tv.tv_sec = (time_t)(left / 1000000000ULL);
		tv.tv_usec = (suseconds_t)(left % 1000000000ULL / 1000) ?: 1;
		if (redisSetTimeout(ctx, tv) != REDIS_OK ||
		    redisBufferRead(ctx) != REDIS_OK ||
		    redisGetReplyFromReader(ctx, &reply) != REDIS_OK)
			return REDIS_ERR;
	}
	*out = reply;
	return REDIS_OK;
}

static uint64_t timeout_ns(const struct xrl_redis *r)
{
	return (uint64_t)r->timeout.tv_sec * 1000000000ULL +
	       (uint64_t)r->timeout.tv_usec * 1000ULL;
}

static int flush(redisContext *ctx)
{
	int done = 0;

	do {
		if (redisBufferWrite(ctx, &done) == REDIS_ERR)
			return -EIO;
	} while (!done);
	return 0;
}

/* One command, answered within the timeout, or NULL with @why. */
static redisReply *call(struct xrl_redis *r, struct redis_node *n, char *why,
			size_t len, const char *fmt, ...)
{
	redisReply *reply = NULL;
	va_list ap;

	va_start(ap, fmt);
	redisvAppendCommand(n->ctx, fmt, ap);
	va_end(ap);
	if (flush(n->ctx) ||
	    get_reply(n->ctx, &reply,
		      xrl_clock_ns(CLOCK_MONOTONIC) + timeout_ns(r))) {
		io_error(n->ctx, why, len);
		return NULL;
	}
	return reply;
}

/*
 * Asks node @k for the slot map. A Redis without cluster support answers
 * with an error: every slot is then the configured node's.
 */
static int ask_slots(struct xrl_redis *r, int k, char *why, size_t len)
{
	redisReply *reply = call(r, &r->nodes[k], why, len, "CLUSTER SLOTS");
	int ret = 0;

	if (!reply)
		return -EIO;
	if (reply->type == REDIS_REPLY_ERROR && !r->cluster) {
		r->map_known = true;	/* a plain Redis */
	} else if (reply->type == REDIS_REPLY_ERROR) {
		snprintf(why, len, "CLUSTER SLOTS: %.100s", reply->str);
		ret = -EPROTO;
	} else if (read_slot_map(r, reply, k)) {
		snprintf(why, len, "CLUSTER SLOTS: unexpected reply");
		ret = -EPROTO;
	} else {
		r->cluster = r->map_known = true;
		r->map_stale = false;
	}
	freeReplyObject(reply);
	return ret;
}

/*
 * Connects to node @k and loads the script; the seed's first connection
 * also asks CLUSTER SLOTS. 0, or -errno with @why.
 */
static int connect_node(struct xrl_redis *r, int k, char *why, size_t len)
{
	struct redis_node *n = &r->nodes[k];
	redisReply *reply;
	int ret = 0;

	n->ctx = redisConnectWithTimeout(n->host, n->port, r->timeout);
	if (!n->ctx || n->ctx->err) {
		snprintf(why, len, "connecting: %s",
			 n->ctx ? n->ctx->errstr : "out of memory");
		goto fail;
	}
	if (redisSetTimeout(n->ctx, r->timeout) != REDIS_OK) {
		snprintf(why, len, "setting the timeout: %s", n->ctx->errstr);
		goto fail;
	}
	guard_reader(n->ctx->reader);
	reply = call(r, n, why, len, "SCRIPT LOAD %s", r->script);
	if (!reply)
		goto fail;
	if (reply->type != REDIS_REPLY_STRING || reply->len != 40) {
		snprintf(why, len, "SCRIPT LOAD: unexpected reply%s%.80s",
			 reply->type == REDIS_REPLY_ERROR ? ": " : "",
			 reply->type == REDIS_REPLY_ERROR ? reply->str : "");
		freeReplyObject(reply);
		goto fail;
	}
	snprintf(r->sha, sizeof(r->sha), "%s", reply->str);
	freeReplyObject(reply);
	if (k == 0 && !r->map_known)
		ret = ask_slots(r, 0, why, len);
	return ret;
fail:
	disconnect(n);
	return -EIO;
}

/* Whether node @k may be talked to now: connected, or connected for its
 * breaker's probe. Rules it cannot serve fail with the reason. */
static bool reachable(struct xrl_redis *r, int k, uint64_t now_ns,
		      char *why, size_t len)
{
	struct redis_node *n = &r->nodes[k];

	if (n->ctx)
		return true;
	if (n->open && now_ns < n->retry_at_ns) {
		snprintf(why, len, "%s", n->reason);
		return false;	/* cooling off: left alone */
	}
	if (!connect_node(r, k, why, len))
		return true;
	open_breaker(r, n, now_ns, why);
	return false;
}

/* ---- one run ----------------------------------------------------------- */

/* "host:port" of a MOVED or ASK reply (the host may hold colons). */
static int redirect_target(struct xrl_redis *r, const char *text,
			   unsigned *slot)
{
	const char *space, *colon;
	char *end;
	unsigned long s, port;

	s = strtoul(text, &end, 10);
	if (end == text || *end != ' ' || s >= N_SLOTS)
		return -EPROTO;
	space = end + 1;
	colon = strrchr(space, ':');
	if (!colon)
		return -EPROTO;
	port = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || *end || !port || port > 65535)
		return -EPROTO;
	*slot = (unsigned)s;
	return node_index(r, space, (size_t)(colon - space), (uint16_t)port);
}

enum verdict { X_DONE, X_RETRY, X_FAILED };

/* What a reply means for @job: a redirect, NOSCRIPT (sets @reload), an
 * error, or the script's reply, which is the caller's to read. */
static enum verdict judge(struct xrl_redis *r, struct xrl_redis_job *job,
			  const redisReply *reply, xrl_redis_reply_fn read,
			  void *ctx, bool *reload)
{
	unsigned slot;
	int k;

	if (reply->type != REDIS_REPLY_ERROR)
		return read(job, reply, ctx) ? X_FAILED : X_DONE;
	if (!strncmp(reply->str, "MOVED ", 6) ||
	    !strncmp(reply->str, "ASK ", 4)) {
		bool moved = reply->str[0] == 'M';

		k = redirect_target(r, reply->str + (moved ? 6 : 4), &slot);
		if (k < 0 || slot != job->slot) {
			snprintf(job->why, sizeof(job->why), "bad redirect: "
				 "%.100s", reply->str);
			return X_FAILED;
		}
		if (moved) {
			r->owner[slot] = (uint16_t)k;
			r->map_stale = true;
			r->moved++;
		} else {
			r->asked++;
		}
		job->target = k;
		job->asking = !moved;
		snprintf(job->why, sizeof(job->why), "redirected too often: "
			 "%.100s", reply->str);
		return X_RETRY;
	}
	if (!strncmp(reply->str, "NOSCRIPT", 8)) {
		*reload = true;	/* Redis restarted or flushed */
		snprintf(job->why, sizeof(job->why), "%.100s", reply->str);
		return X_RETRY;
	}
	snprintf(job->why, sizeof(job->why), "error reply: %.100s",
		 reply->str);
	return X_FAILED;
}

static void append(struct xrl_redis *r, struct redis_node *n,
		   const struct xrl_redis_job *job)
{
	const char *argv[4 + XRL_REDIS_ARGS_MAX] = {
		"EVALSHA", r->sha, "1", job->key,
	};
	unsigned i;

	for (i = 0; i < job->n_args && i < XRL_REDIS_ARGS_MAX; i++)
		argv[4 + i] = job->args[i];
	if (job->asking)
		redisAppendCommand(n->ctx, "ASKING");
	redisAppendCommandArgv(n->ctx, 4 + (int)i, argv, NULL);
}

/*
 * Redis answers a pipeline when it has run all of it: its replies are
 * due within the timeout plus XRL_REDIS_SCRIPT_US for each script in it
 * (1,000 rules: 50 ms + 500 ms at most, on the daemon's event loop).
 */
static uint64_t pipeline_deadline(const struct xrl_redis *r,
				  const struct xrl_redis_job *xs, size_t n, int k)
{
	uint64_t ns = timeout_ns(r);
	size_t i;

	for (i = 0; i < n; i++)
		if (!xs[i].done && !xs[i].failed && xs[i].target == k)
			ns += XRL_REDIS_SCRIPT_US * 1000ULL;
	return xrl_clock_ns(CLOCK_MONOTONIC) + ns;
}

/*
 * One round: every pending exchange is sent to its node, all nodes'
 * pipelines flushed before any reply is read (one round trip, nodes in
 * parallel), then the replies judged in order.
 */
static void round_trip(struct xrl_redis *r, struct xrl_redis_job *xs, size_t n,
		       xrl_redis_reply_fn read, void *ctx, uint64_t now_ns)
{
	bool used[XRL_REDIS_MAX_MASTERS] = { false };
	char why[160];
	redisReply *reply;
	size_t i, k;

	for (k = 0; k < r->n_nodes; k++) {
		for (i = 0; i < n; i++)
			if (!xs[i].done && !xs[i].failed &&
			    xs[i].target == (int)k)
				break;
		if (i == n)
			continue;
		if (!reachable(r, (int)k, now_ns, why, sizeof(why))) {
			for (; i < n; i++)
				if (!xs[i].done && xs[i].target == (int)k) {
					xs[i].failed = true;
					snprintf(xs[i].why, sizeof(xs[i].why),
						 "%s", why);
				}
			continue;
		}
		for (; i < n; i++)
			if (!xs[i].done && !xs[i].failed &&
			    xs[i].target == (int)k)
				append(r, &r->nodes[k], &xs[i]);
		used[k] = !flush(r->nodes[k].ctx);
		if (!used[k]) {
			io_error(r->nodes[k].ctx, why, sizeof(why));
			open_breaker(r, &r->nodes[k], now_ns, why);
		}
	}
	for (k = 0; k < r->n_nodes; k++) {
		struct redis_node *node = &r->nodes[k];
		bool reload = false, broken = false;
		uint64_t deadline;

		if (!used[k])
			continue;
		deadline = pipeline_deadline(r, xs, n, (int)k);
		for (i = 0; i < n; i++) {
			struct xrl_redis_job *x = &xs[i];
			bool asking = x->asking;

			if (x->done || x->failed || x->target != (int)k)
				continue;
			if (broken) {
				x->failed = true;
				snprintf(x->why, sizeof(x->why), "%s", why);
				continue;
			}
			if (asking && get_reply(node->ctx, &reply,
						deadline) == REDIS_OK)
				freeReplyObject(reply);	/* +OK of ASKING */
			if (get_reply(node->ctx, &reply, deadline) !=
			    REDIS_OK) {
				io_error(node->ctx, why, sizeof(why));
				broken = true;
				x->failed = true;
				snprintf(x->why, sizeof(x->why), "%s", why);
				continue;
			}
			switch (judge(r, x, reply, read, ctx, &reload)) {
			case X_DONE:
				x->done = true;
				break;
			case X_FAILED:
				x->failed = true;
				break;
			case X_RETRY:
				break;	/* judge() set where to, and how */
			}
			freeReplyObject(reply);
		}
		if (broken) {
			open_breaker(r, node, now_ns, why);
			continue;
		}
		close_breaker(node);
		if (reload && !broken)
			disconnect(node);	/* loads it on reconnecting */
	}
}

/* MOVED: the cluster changed; read the whole map for the next run from a
 * node that answered. */
static void refresh_map(struct xrl_redis *r)
{
	char why[160];
	size_t i;

	for (i = 0; i < r->n_nodes && r->map_stale; i++)
		if (r->nodes[i].ctx)
			ask_slots(r, (int)i, why, sizeof(why));
}

void xrl_redis_run(struct xrl_redis *r, struct xrl_redis_job *jobs, size_t n,
		   xrl_redis_reply_fn read, void *ctx, uint64_t now_ns)
{
	char why[160];
	size_t i;
	int round;

	if (!n)
		return;
	/* The map first: the seed tells whether it is a cluster at all. */
	if (!r->map_known && reachable(r, 0, now_ns, why, sizeof(why)) &&
	    !r->map_known && ask_slots(r, 0, why, sizeof(why)))
		open_breaker(r, &r->nodes[0], now_ns, why);
	for (i = 0; i < n; i++) {
		jobs[i].slot = xrl_redis_key_slot(jobs[i].key,
						  strlen(jobs[i].key));
		jobs[i].target = r->owner[jobs[i].slot] == NO_OWNER ? 0 :
				 r->owner[jobs[i].slot];
		jobs[i].asking = jobs[i].done = jobs[i].failed = false;
		jobs[i].why[0] = '\0';
	}
	for (round = 0; round <= REDIRECTS; round++)
		round_trip(r, jobs, n, read, ctx, now_ns);
	if (r->map_stale)
		refresh_map(r);
}

void xrl_redis_status(const struct xrl_redis *r, struct xrl_redis_status *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->cluster = r->cluster;
	out->moved = r->moved;
	out->asked = r->asked;
	for (i = 0; i < r->n_nodes; i++)
		out->masters += r->nodes[i].ctx != NULL;
	snprintf(out->address, sizeof(out->address), "%s:%u", r->nodes[0].host,
		 r->nodes[0].port);
}

void xrl_redis_free(struct xrl_redis *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_nodes; i++)
		disconnect(&r->nodes[i]);
	free(r->script);
	free(r);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * global.c - global budgets through Redis, with a circuit breaker
 * (design: global.h; README "Scopes and global budgets").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <hiredis/hiredis.h>
#include "budget.h"
#include "global.h"
#include "log.h"

/*
 * KEYS[1]  xrl:{rule}:nodes   set of the nodes that reported
 * ARGV[1]  xrl:{rule}:node:   prefix of each node's demand key
 * ARGV[2]  this node's name, ARGV[3] its demand (pps), ARGV[4] TTL in ms
 * Returns { node, demand, node, demand, ... } of the live nodes; a node
 * whose key expired is dropped from the set. The per-node keys share the
 * rule's hash tag, so they lie in the slot of KEYS[1].
 */
static const char sync_script[] =
	"redis.call('SET', ARGV[1] .. ARGV[2], ARGV[3], 'PX', ARGV[4])\n"
	"redis.call('SADD', KEYS[1], ARGV[2])\n"
	"redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) * 4)\n"
	"local out = {}\n"
	"for _, node in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"
	"  local demand = redis.call('GET', ARGV[1] .. node)\n"
	"  if demand then\n"
	"    out[#out + 1] = node\n"
	"    out[#out + 1] = demand\n"
	"  else\n"
	"    redis.call('SREM', KEYS[1], node)\n"
	"  end\n"
	"end\n"
	"return out\n";

struct xrl_global {
	char host[256];
	uint16_t port;
	char node[XRL_NODE_NAME_MAX];
	struct timeval timeout;
	uint64_t cooloff_ns, grace_ns;
	uint64_t ttl_ms;		/* 0: XRL_GLOBAL_TTL_WINDOWS intervals */
	redisContext *ctx;
	char sha[48];			/* of sync_script, once loaded */
	bool open;			/* the breaker */
	uint64_t open_since_ns, retry_at_ns;
	time_t open_since_wall;
	char reason[160];
	uint64_t syncs, failures;
};

#define MS	1000000ULL

struct xrl_global *xrl_global_new(const struct xrl_global_opts *opts)
{
	uint64_t timeout_ms = opts->timeout_ms ?: XRL_GLOBAL_TIMEOUT_MS;
	struct xrl_global *g;

	if (!opts->host || !opts->node || !opts->node[0] ||
	    strlen(opts->node) >= XRL_NODE_NAME_MAX) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	snprintf(g->host, sizeof(g->host), "%s", opts->host);
	g->port = opts->port;
	snprintf(g->node, sizeof(g->node), "%s", opts->node);
	g->timeout.tv_sec = timeout_ms / 1000;
	g->timeout.tv_usec = timeout_ms % 1000 * 1000;
	g->cooloff_ns = (opts->cooloff_ms ?: XRL_GLOBAL_COOLOFF_MS) * MS;
	g->grace_ns = (opts->grace_ms ?: XRL_GLOBAL_GRACE_MS) * MS;
	g->ttl_ms = opts->ttl_ms;
	return g;
}

static void disconnect(struct xrl_global *g)
{
	if (g->ctx)
		redisFree(g->ctx);
	g->ctx = NULL;
	g->sha[0] = '\0';
}

void xrl_global_free(struct xrl_global *g)
{
	if (!g)
		return;
	disconnect(g);
	free(g);
}

void xrl_global_status(const struct xrl_global *g,
		       struct xrl_global_status *out)
{
	memset(out, 0, sizeof(*out));
	out->degraded = g->open;
	out->degraded_since = g->open ? g->open_since_wall : 0;
	snprintf(out->reason, sizeof(out->reason), "%s",
		 g->open ? g->reason : "");
	out->syncs = g->syncs;
	out->failures = g->failures;
	snprintf(out->node, sizeof(out->node), "%s", g->node);
	snprintf(out->address, sizeof(out->address), "%s:%u", g->host,
		 g->port);
}

/* ---- the parts of the budget ---------------------------------------- */

static void set_local(struct xrl_budget_rule *rule, uint64_t num,
		      uint64_t den)
{
	struct xrl_budget_limits whole, local;

	xrl_budget_limits_of(&rule->spec, &whole);
	xrl_budget_limits_scale(&whole, num, den, &local);
	if (memcmp(&local, &rule->local, sizeof(local))) {
		rule->local = local;
		rule->written = false;
	}
}

/* Breaker open: the last part for the grace period, then the budget
 * split evenly over the nodes last seen. */
static void degraded_parts(struct xrl_global *g, struct xrl_budgets *b,
			   uint64_t now_ns)
{
	bool grace = now_ns - g->open_since_ns < g->grace_ns;
	size_t i;

	for (i = 0; i < b->n_rules; i++) {
		struct xrl_budget_rule *rule = &b->rules[i];

		if (!rule->spec.global)
			continue;
		if (grace)
			set_local(rule, rule->node_weight, XRL_SHARE_ONE);
		else
			set_local(rule, 1, rule->nodes ?: 1);
	}
}

void xrl_global_follow(struct xrl_global *g, struct xrl_budgets *b,
		       uint64_t now_ns)
{
	size_t i;

	for (i = 0; i < b->n_rules; i++) {
		struct xrl_budget_rule *rule = &b->rules[i];

		if (!rule->spec.global)
			continue;
		if (!rule->node_weight) {
			/* New: as if alone until Redis says otherwise. */
			rule->node_weight = XRL_SHARE_ONE;
			rule->nodes = 1;
		}
		set_local(rule, rule->node_weight, XRL_SHARE_ONE);
	}
	if (g->open)
		degraded_parts(g, b, now_ns);
}

/* ---- the breaker ---------------------------------------------------- */

static void open_breaker(struct xrl_global *g, uint64_t now_ns,
			 const char *why)
{
	g->failures++;
	g->retry_at_ns = now_ns + g->cooloff_ns;
	disconnect(g);
	if (g->open) {
		pr_warn("redis %s:%u: probe failed: %s; next try in %llu ms",
			g->host, g->port, why,
			(unsigned long long)(g->cooloff_ns / MS));
		return;
	}
	g->open = true;
	g->open_since_ns = now_ns;
	g->open_since_wall = time(NULL);
	snprintf(g->reason, sizeof(g->reason), "%s", why);
	pr_warn("redis %s:%u: %s: degraded (global budgets: last share for "
		"%llu ms, then budget / nodes); next try in %llu ms", g->host,
		g->port, why, (unsigned long long)(g->grace_ns / MS),
		(unsigned long long)(g->cooloff_ns / MS));
}

static void close_breaker(struct xrl_global *g)
{
	if (!g->open)
		return;
	g->open = false;
	g->reason[0] = '\0';
	pr_info("redis %s:%u: reachable again: no longer degraded", g->host,
		g->port);
}

/* ---- talking to Redis ----------------------------------------------- */

/* Why a reply (or its absence) is a failure, or NULL when it is none. */
static const char *reply_error(redisContext *ctx, redisReply *reply,
			       char *buf, size_t len)
{
	if (!reply) {
		if (ctx->err == REDIS_ERR_IO && (errno == EAGAIN ||
						 errno == EWOULDBLOCK))
			return "timed out";
		snprintf(buf, len, "%s", ctx->errstr[0] ? ctx->errstr :
			 "no reply");
		return buf;
	}
	if (reply->type == REDIS_REPLY_ERROR) {
		snprintf(buf, len, "error reply: %.100s", reply->str);
		return buf;
	}
	return NULL;
}

static int connect_redis(struct xrl_global *g, char *why, size_t len)
{
	redisReply *reply;
	const char *err;

	g->ctx = redisConnectWithTimeout(g->host, g->port, g->timeout);
	if (!g->ctx || g->ctx->err) {
		snprintf(why, len, "connecting: %s",
			 g->ctx ? g->ctx->errstr : "out of memory");
		return -ECONNREFUSED;
	}
	if (redisSetTimeout(g->ctx, g->timeout) != REDIS_OK) {
		snprintf(why, len, "setting the timeout: %s", g->ctx->errstr);
		return -EIO;
	}
	reply = redisCommand(g->ctx, "SCRIPT LOAD %s", sync_script);
	err = reply_error(g->ctx, reply, why, len);
	if (!err && reply->type != REDIS_REPLY_STRING)
		err = "SCRIPT LOAD: not a string";
	if (!err)
		snprintf(g->sha, sizeof(g->sha), "%s", reply->str);
	else if (err != why)
		snprintf(why, len, "%s", err);
	if (reply)
		freeReplyObject(reply);
	return err ? -EIO : 0;
}

static redisReply *eval_sync(struct xrl_global *g,
			     const struct xrl_budget_rule *rule,
			     uint64_t ttl_ms)
{
	char nodes_key[XRL_RULE_NAME_MAX + 16], prefix[XRL_RULE_NAME_MAX + 16];
	char demand[24], ttl[24];
	const char *argv[8] = {
		"EVALSHA", g->sha, "1", nodes_key, prefix, g->node, demand,
		ttl,
	};

	snprintf(nodes_key, sizeof(nodes_key), "xrl:{%s}:nodes",
		 rule->spec.name);
	snprintf(prefix, sizeof(prefix), "xrl:{%s}:node:", rule->spec.name);
	snprintf(demand, sizeof(demand), "%llu",
		 (unsigned long long)rule->demand_pps);
	snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)ttl_ms);
	return redisCommandArgv(g->ctx, 8, argv, NULL);
}

/* This node's weight among the nodes of @reply; 0 or -EPROTO. */
static int node_weight(const struct xrl_global *g, redisReply *reply,
		       uint32_t *weight, uint32_t *nodes)
{
	size_t n, i, own = SIZE_MAX;
	uint64_t *demand;
	uint32_t *weights;
	int ret = 0;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements % 2)
		return -EPROTO;
	n = reply->elements / 2;
	if (!n || n > XRL_SHARE_ONE)
		return -EPROTO;
	demand = calloc(n, sizeof(*demand));
	weights = calloc(n, sizeof(*weights));
	if (!demand || !weights) {
		ret = -ENOMEM;
		goto free_all;
	}
	for (i = 0; i < n; i++) {
		redisReply *name = reply->element[2 * i];
		redisReply *value = reply->element[2 * i + 1];

		if (name->type != REDIS_REPLY_STRING ||
		    value->type != REDIS_REPLY_STRING) {
			ret = -EPROTO;
			goto free_all;
		}
		if (!strcmp(name->str, g->node))
			own = i;
		demand[i] = strtoull(value->str, NULL, 10);
	}
	if (own == SIZE_MAX) {
		ret = -EPROTO;
		goto free_all;
	}
	xrl_share_even(n, weights);
	xrl_share_split(demand, n, XRL_SHARE_FLOOR_PERCENT, weights);
	*weight = weights[own];
	*nodes = n;
free_all:
	free(demand);
	free(weights);
	return ret;
}

/* This node's demand for @rule since the last exchange, in pps. */
static void measure_demand(struct xrl_budgets *b, struct xrl_budget_rule *rule,
			   uint64_t now_ns)
{
	uint64_t total = 0, span;
	unsigned i;

	for (i = 0; i < b->n_cpus; i++)
		total += rule->seen[i];
	span = now_ns - rule->demand_at_ns;
	if (rule->demand_at_ns && span)
		rule->demand_pps = (unsigned __int128)(total -
			rule->arrived_total) * 1000000000ULL / span;
	rule->arrived_total = total;
	rule->demand_at_ns = now_ns;
}

static int exchange(struct xrl_global *g, struct xrl_budgets *b,
		    struct xrl_budget_rule *rule, char *why, size_t len)
{
	uint64_t ttl_ms = g->ttl_ms ?:
			  b->interval_ns * XRL_GLOBAL_TTL_WINDOWS / MS;
	redisReply *reply;
	const char *err;
	uint32_t weight, nodes;
	int ret;

	reply = eval_sync(g, rule, ttl_ms ?: 1);
	if (reply && reply->type == REDIS_REPLY_ERROR &&
	    !strncmp(reply->str, "NOSCRIPT", 8)) {
		/* Redis lost its scripts (restart, SCRIPT FLUSH): again. */
		freeReplyObject(reply);
		disconnect(g);
		ret = connect_redis(g, why, len);
		if (ret)
			return ret;
		reply = eval_sync(g, rule, ttl_ms ?: 1);
	}
	err = reply_error(g->ctx, reply, why, len);
	if (err) {
		if (err != why)
			snprintf(why, len, "%s", err);
		if (reply)
			freeReplyObject(reply);
		return -EIO;
	}
	ret = node_weight(g, reply, &weight, &nodes);
	freeReplyObject(reply);
	if (ret) {
		snprintf(why, len, "unexpected reply to the sync script");
		return ret;
	}
	rule->node_weight = weight;
	rule->nodes = nodes;
	set_local(rule, weight, XRL_SHARE_ONE);
	return 0;
}

int xrl_global_sync(struct xrl_global *g, struct xrl_budgets *b,
		    uint64_t now_ns)
{
	char why[160] = "";
	bool any = false;
	size_t i;
	int ret = 0;

	for (i = 0; i < b->n_rules; i++) {
		if (!b->rules[i].spec.global)
			continue;
		measure_demand(b, &b->rules[i], now_ns);
		any = true;
	}
	if (!any)
		return 0;
	if (g->open && now_ns < g->retry_at_ns) {
		degraded_parts(g, b, now_ns);
		return 0;	/* cooling off: Redis is left alone */
	}
	/* Closed, or the single half-open probe after the cool-off. */
	if (!g->ctx)
		ret = connect_redis(g, why, sizeof(why));
	for (i = 0; !ret && i < b->n_rules; i++) {
		if (b->rules[i].spec.global)
			ret = exchange(g, b, &b->rules[i], why, sizeof(why));
	}
	if (ret) {
		open_breaker(g, now_ns, why);
		degraded_parts(g, b, now_ns);
		return ret;
	}
	g->syncs++;
	close_breaker(g);
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * global.c - global budgets: each node's demand for a rule exchanged
 * through Redis, its part of the budget read back, and each rule's
 * degraded state (design: global.h). The exchange itself, pipelined over
 * Redis or a Redis Cluster: redis_cluster.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "global.h"
#include "log.h"
#include "redis_cluster.h"
#include "rule_spec.h"
#include "share.h"

/*
 * KEYS[1]  xrl:{rule}:demand, a hash: node name -> "DEMAND EXPIRY_MS ID"
 * ARGV[1]  this node's name, ARGV[2] its demand (pps), ARGV[3] TTL in ms,
 * ARGV[4]  this daemon's instance id
 * Returns { duplicate, node, demand, node, demand, ... } of the live
 * nodes, duplicate being 1 when our field held another live instance's
 * id. Expiry is Redis's clock (TIME), so daemons' clocks never meet;
 * expired fields are dropped.
 */
static const char sync_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local ttl = tonumber(ARGV[3])\n"
	"local dup = 0\n"
	"local old = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"if old then\n"
	"  local _, exp, id = string.match(old, '^(%d+) (%d+) (%S+)$')\n"
	"  if id and id ~= ARGV[4] and tonumber(exp) > now then dup = 1 end\n"
	"end\n"
	"redis.call('HSET', KEYS[1], ARGV[1],\n"
	"           ARGV[2] .. ' ' .. string.format('%d', now + ttl) .. ' ' ..\n"
	"           ARGV[4])\n"
	"redis.call('PEXPIRE', KEYS[1], ttl * 4)\n"
	"local out = { dup }\n"
	"local all = redis.call('HGETALL', KEYS[1])\n"
	"for i = 1, #all, 2 do\n"
	"  local d, exp = string.match(all[i + 1], '^(%d+) (%d+) ')\n"
	"  if d and tonumber(exp) > now then\n"
	"    out[#out + 1] = all[i]\n"
	"    out[#out + 1] = d\n"
	"  else\n"
	"    redis.call('HDEL', KEYS[1], all[i])\n"
	"  end\n"
	"end\n"
	"return out\n";

#define MS		1000000ULL
#define DUPLICATE_SYNCS	2	/* in a row: not a restart of our own */

/* What this side keeps of a global rule between exchanges. */
struct rule_state {
	uint32_t id;
	uint32_t node_weight;		/* this node's part, of SHARE_ONE */
	uint32_t nodes;			/* live nodes at the last exchange */
	bool degraded;
	bool sync_failed;		/* fallback parts apply */
	unsigned misses;		/* failed exchanges in a row */
	char reason[160];		/* why degraded */
	uint64_t degraded_since_ns;
	time_t degraded_since_wall;
	uint32_t nodes_before;		/* nodes when it failed */
	uint64_t rejoin_until_ns;	/* after it: a part of its own */
	unsigned duplicates;		/* exchanges in a row that saw our
					 * name written by another daemon */
	uint64_t part, of;		/* this node's part of the budget */
};

struct xrl_global {
	char node[XRL_NODE_NAME_MAX];
	char instance[20];		/* random, per daemon */
	uint64_t grace_ns;
	uint64_t ttl_ms;		/* 0: XRL_GLOBAL_TTL_WINDOWS intervals */
	struct xrl_redis *redis;
	struct rule_state *states;	/* one per global rule, by id */
	size_t n_states;
	uint64_t syncs, failures;
	unsigned newly_failed, newly_synced;	/* rules, this sync */
	char first_failed[200];
	/* As of the last sync, for xrl_global_status(). */
	unsigned n_degraded;
	time_t degraded_since;
	char reason[160];
};

struct xrl_global *xrl_global_new(const struct xrl_global_opts *opts)
{
	uint64_t grace_ms = opts->grace_ms ?: XRL_GLOBAL_GRACE_MS;
	struct xrl_redis_opts redis = {
		.host = opts->host,
		.port = opts->port,
		.script = sync_script,
		.timeout_ms = opts->timeout_ms ?: XRL_GLOBAL_TIMEOUT_MS,
		.cooloff_ms = opts->cooloff_ms ?: XRL_GLOBAL_COOLOFF_MS,
	};
	char note[160];
	uint64_t id = 0;
	struct xrl_global *g;

	if (!opts->host || !opts->node || !opts->node[0] ||
	    strlen(opts->node) >= XRL_NODE_NAME_MAX) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	snprintf(note, sizeof(note), "degraded (global budgets: last share "
		 "for %llu ms, then budget / nodes)",
		 (unsigned long long)grace_ms);
	redis.breaker_note = note;
	g->redis = xrl_redis_new(&redis);
	if (!g->redis) {
		free(g);
		return NULL;
	}
	snprintf(g->node, sizeof(g->node), "%s", opts->node);
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	snprintf(g->instance, sizeof(g->instance), "%016llx",
		 (unsigned long long)id);
	g->grace_ns = grace_ms * MS;
	g->ttl_ms = opts->ttl_ms;
	return g;
}

void xrl_global_free(struct xrl_global *g)
{
	if (!g)
		return;
	xrl_redis_free(g->redis);
	free(g->states);
	free(g);
}

void xrl_global_status(const struct xrl_global *g,
		       struct xrl_global_status *out)
{
	struct xrl_redis_status redis;

	memset(out, 0, sizeof(*out));
	xrl_redis_status(g->redis, &redis);
	out->degraded = g->n_degraded > 0;
	out->degraded_since = out->degraded ? g->degraded_since : 0;
	snprintf(out->reason, sizeof(out->reason), "%s",
		 out->degraded ? g->reason : "");
	out->syncs = g->syncs;
	out->failures = g->failures;
	out->moved = redis.moved;
	out->asked = redis.asked;
	out->cluster = redis.cluster;
	out->masters = redis.masters;
	snprintf(out->node, sizeof(out->node), "%s", g->node);
	snprintf(out->address, sizeof(out->address), "%s", redis.address);
}

/* ---- each rule's state -------------------------------------------- */

static struct rule_state *state_of(struct xrl_global *g, uint32_t id)
{
	size_t i;

	for (i = 0; i < g->n_states; i++)
		if (g->states[i].id == id)
			return &g->states[i];
	return NULL;
}

/* A degraded rule: its last part for the grace period, then the budget
 * split evenly over the nodes it last saw. */
static void degraded_part(struct xrl_global *g, struct rule_state *st,
			  uint64_t now_ns)
{
	if (now_ns - st->degraded_since_ns < g->grace_ns) {
		st->part = st->node_weight;
		st->of = XRL_SHARE_ONE;
	} else {
		st->part = 1;
		st->of = st->nodes ?: 1;
	}
}

/* What the engine reads back of a rule. */
static void hand_out(const struct rule_state *st, struct xrl_global_rule *r)
{
	r->part = st->part;
	r->of = st->of;
	r->node_weight = st->node_weight;
	r->nodes = st->nodes;
	r->degraded = st->degraded;
	snprintf(r->reason, sizeof(r->reason), "%s", st->reason);
}

/* The states of @rules, in their order: carried by id, new ones as if
 * alone until Redis says otherwise. 0 or -ENOMEM. */
static int follow_states(struct xrl_global *g,
			 const struct xrl_global_rule *rules, size_t n)
{
	struct rule_state *next, *old;
	size_t i;

	next = calloc(n ?: 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		old = state_of(g, rules[i].id);
		if (old) {
			next[i] = *old;
			continue;
		}
		next[i].id = rules[i].id;
		next[i].node_weight = XRL_SHARE_ONE;
		next[i].nodes = 1;
		next[i].part = next[i].of = 1;
	}
	free(g->states);
	g->states = next;
	g->n_states = n;
	return 0;
}

int xrl_global_follow(struct xrl_global *g, struct xrl_global_rule *rules,
		      size_t n, uint64_t now_ns)
{
	struct rule_state *st;
	size_t i;
	int ret = follow_states(g, rules, n);

	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		st = &g->states[i];
		if (st->sync_failed) {
			degraded_part(g, st, now_ns);
		} else {
			st->part = st->node_weight;
			st->of = XRL_SHARE_ONE;
		}
		hand_out(st, &rules[i]);
	}
	return 0;
}

/* ---- one sync --------------------------------------------------------- */

/* A demand as the script returns it: decimal digits, at most 2^40. */
static bool parse_demand(const redisReply *r, uint64_t *out)
{
	uint64_t value = 0;
	size_t i;

	if (r->type != REDIS_REPLY_STRING || !r->len || r->len > 13)
		return false;
	for (i = 0; i < r->len; i++) {
		if (r->str[i] < '0' || r->str[i] > '9')
			return false;
		value = value * 10 + (uint64_t)(r->str[i] - '0');
	}
	if (value > (1ULL << 40))
		return false;
	*out = value;
	return true;
}

struct part {
	uint32_t weight, nodes;
	bool duplicate;
};

/* This node's part among the nodes of the script's reply; 0 or -EPROTO
 * for anything but { 0|1, name, demand, ... } with our name once. */
static int read_part(const struct xrl_global *g, const redisReply *reply,
		     struct part *out)
{
	size_t n, i, j, own = SIZE_MAX;
	uint64_t demand[XRL_GLOBAL_MAX_NODES];
	uint32_t weights[XRL_GLOBAL_MAX_NODES];
	const redisReply *name;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 ||
	    reply->elements > XRL_GLOBAL_MAX_REPLY || !(reply->elements % 2) ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[0]->integer < 0 || reply->element[0]->integer > 1)
		return -EPROTO;
	n = reply->elements / 2;
	for (i = 0; i < n; i++) {
		name = reply->element[1 + 2 * i];
		if (name->type != REDIS_REPLY_STRING || !name->len ||
		    name->len >= XRL_NODE_NAME_MAX ||
		    memchr(name->str, '\0', name->len) ||
		    !parse_demand(reply->element[2 + 2 * i], &demand[i]))
			return -EPROTO;
		for (j = 0; j < i; j++)
			if (!strcmp(reply->element[1 + 2 * j]->str, name->str))
				return -EPROTO;	/* a name twice */
		if (!strcmp(name->str, g->node))
			own = i;
	}
	if (own == SIZE_MAX)
		return -EPROTO;
	xrl_share_even(n, weights);
	xrl_share_split(demand, n, XRL_SHARE_FLOOR_PERCENT, weights);
	out->weight = weights[own];
	out->nodes = n;
	out->duplicate = reply->element[0]->integer == 1;
	return 0;
}

static uint64_t ttl_ms_of(const struct xrl_global *g, uint64_t interval_ns)
{
	uint64_t ttl = g->ttl_ms ?: interval_ns * XRL_GLOBAL_TTL_WINDOWS / MS;

	return ttl ?: 1;
}

static void rule_failed(struct xrl_global *g, struct rule_state *st,
			const char *name, const char *why, uint64_t now_ns)
{
	if (!st->misses++)
		st->degraded_since_ns = now_ns;	/* grace starts here */
	if (!st->sync_failed && st->misses < XRL_GLOBAL_MISSES) {
		st->part = st->node_weight;
		st->of = XRL_SHARE_ONE;
		return;	/* a missed sync: the last part, not degraded yet */
	}
	if (!st->sync_failed) {
		st->sync_failed = true;
		st->degraded_since_wall = time(NULL);
		st->nodes_before = st->nodes;
		g->newly_failed++;	/* logged once per sync, not per rule */
		if (!g->first_failed[0])
			snprintf(g->first_failed, sizeof(g->first_failed),
				 "%s: %s", name, why);
	}
	st->degraded = true;
	snprintf(st->reason, sizeof(st->reason), "%s", why);
	degraded_part(g, st, now_ns);
}

/* Two daemons writing one name: each takes half of the name's part. */
static uint64_t judge_duplicates(struct xrl_global *g, struct rule_state *st,
				 const char *name, bool duplicate,
				 bool was_failed, uint64_t weight)
{
	st->duplicates = duplicate ? st->duplicates + 1 : 0;
	if (st->duplicates >= DUPLICATE_SYNCS) {
		if (!st->degraded)
			pr_err("rule %s: node name \"%s\" is also used by "
			       "another daemon: each takes half of its part; "
			       "give every node its own --node", name,
			       g->node);
		snprintf(st->reason, sizeof(st->reason), "node name \"%s\" "
			 "is also used by another daemon", g->node);
		st->degraded = true;
		return weight / 2;
	}
	if (st->degraded && !was_failed)
		pr_info("rule %s: node name \"%s\" no longer shared", name,
			g->node);
	st->degraded = false;
	st->reason[0] = '\0';
	return weight;
}

/*
 * A part from Redis. Coming back from a failure, the rule takes no more
 * than its part of the nodes it saw before while fewer have rejoined
 * (for one TTL at most); a name another daemon also writes takes half.
 */
static void rule_synced(struct xrl_global *g, struct rule_state *st,
			const char *name, const struct part *part,
			uint64_t ttl_ms, uint64_t now_ns)
{
	uint64_t weight = part->weight, cap;
	bool was_failed = st->sync_failed;

	st->misses = 0;
	if (st->sync_failed) {
		st->sync_failed = false;
		st->rejoin_until_ns = now_ns + ttl_ms * MS;
		g->newly_synced++;
	}
	if (part->nodes >= st->nodes_before)
		st->rejoin_until_ns = 0;	/* everyone is back */
	if (st->rejoin_until_ns && now_ns < st->rejoin_until_ns) {
		cap = XRL_SHARE_ONE / st->nodes_before;
		if (weight > cap)
			weight = cap;
	}
	weight = judge_duplicates(g, st, name, part->duplicate, was_failed,
				  weight);
	st->node_weight = (uint32_t)weight;
	st->nodes = part->nodes;
	st->part = weight ?: 1;
	st->of = XRL_SHARE_ONE;
}

/* One rule's exchange: what its job's text points at, and the rule. */
struct exchange {
	char key[XRL_RULE_NAME_MAX + 16];
	char demand[24], ttl[24];
	const char *name;
	struct rule_state *state;
};

/* One sync: exchange i is for job i. */
struct sync_ctx {
	struct xrl_global *g;
	uint64_t ttl_ms, now_ns;
	struct xrl_redis_job *jobs;
	struct exchange *xs;
};

/* The script's reply for @job (redis_cluster.h). */
static int read_reply(struct xrl_redis_job *job, const redisReply *reply,
		      void *arg)
{
	struct sync_ctx *ctx = arg;
	struct exchange *x = &ctx->xs[job - ctx->jobs];
	struct part part;

	if (read_part(ctx->g, reply, &part)) {
		snprintf(job->why, sizeof(job->why),
			 "unexpected reply to the sync script");
		return -EPROTO;
	}
	rule_synced(ctx->g, x->state, x->name, &part, ctx->ttl_ms,
		    ctx->now_ns);
	return 0;
}

static void prepare(struct xrl_global *g, struct exchange *x,
		    struct xrl_redis_job *job,
		    const struct xrl_global_rule *rule, uint64_t ttl_ms)
{
	snprintf(x->key, sizeof(x->key), "xrl:{%s}:demand", rule->name);
	snprintf(x->demand, sizeof(x->demand), "%llu",
		 (unsigned long long)rule->demand_pps);
	snprintf(x->ttl, sizeof(x->ttl), "%llu", (unsigned long long)ttl_ms);
	x->name = rule->name;
	x->state = state_of(g, rule->id);
	job->key = x->key;
	job->args[0] = g->node;
	job->args[1] = x->demand;
	job->args[2] = x->ttl;
	job->args[3] = g->instance;
	job->n_args = 4;
}

static void summarize(struct xrl_global *g)
{
	const struct rule_state *st;
	size_t i;

	g->n_degraded = 0;
	g->reason[0] = '\0';
	for (i = 0; i < g->n_states; i++) {
		st = &g->states[i];
		if (!st->degraded)
			continue;
		if (!g->n_degraded++) {
			snprintf(g->reason, sizeof(g->reason), "%s",
				 st->reason);
			g->degraded_since = st->sync_failed ?
				st->degraded_since_wall : time(NULL);
		}
	}
}

/* Logged once per sync, not per rule. */
static void log_changes(struct xrl_global *g)
{
	if (g->newly_failed)
		pr_warn("global budgets: sync failed for %u rule%s (%s): "
			"degraded", g->newly_failed,
			g->newly_failed == 1 ? "" : "s", g->first_failed);
	if (g->newly_synced)
		pr_info("global budgets: %u rule%s synced again",
			g->newly_synced, g->newly_synced == 1 ? "" : "s");
}

int xrl_global_sync(struct xrl_global *g, struct xrl_global_rule *rules,
		    size_t n, uint64_t interval_ns, uint64_t now_ns)
{
	struct sync_ctx ctx = {
		.g = g, .ttl_ms = ttl_ms_of(g, interval_ns), .now_ns = now_ns,
	};
	bool any_failed = false, any_done = false;
	size_t i;
	int ret = follow_states(g, rules, n);

	if (ret)
		return ret;
	ctx.jobs = calloc(n ?: 1, sizeof(*ctx.jobs));
	ctx.xs = calloc(n ?: 1, sizeof(*ctx.xs));
	if (!ctx.jobs || !ctx.xs) {
		ret = -ENOMEM;
		goto free_all;
	}
	for (i = 0; i < n; i++)
		prepare(g, &ctx.xs[i], &ctx.jobs[i], &rules[i], ctx.ttl_ms);
	g->newly_failed = g->newly_synced = 0;
	g->first_failed[0] = '\0';
	xrl_redis_run(g->redis, ctx.jobs, n, read_reply, &ctx, now_ns);
	for (i = 0; i < n; i++) {
		if (!ctx.jobs[i].done)
			rule_failed(g, ctx.xs[i].state, ctx.xs[i].name,
				    ctx.jobs[i].why[0] ? ctx.jobs[i].why :
				    "no reply", now_ns);
		any_failed |= !ctx.jobs[i].done;
		any_done |= ctx.jobs[i].done;
		hand_out(ctx.xs[i].state, &rules[i]);
	}
	log_changes(g);
	if (any_done)
		g->syncs++;
	if (any_failed)
		g->failures++;
	summarize(g);
	ret = g->n_degraded ? -EIO : 0;
free_all:
	free(ctx.jobs);
	free(ctx.xs);
	return ret;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * global.c - global budgets through Redis or Redis Cluster, pipelined,
 * with per-rule degraded state and a breaker per Redis node (design:
 * global.h; README "Global budgets").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>
#include <hiredis/hiredis.h>
#include "budget.h"
#include "clock.h"
#include "global.h"
#include "log.h"

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
#define N_SLOTS		16384
#define NO_OWNER	0xffff
#define REDIRECTS	2	/* MOVED/ASK followed per rule per sync */
#define DUPLICATE_SYNCS	2	/* in a row: not a restart of our own */

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

struct xrl_global {
	char node[XRL_NODE_NAME_MAX];
	char instance[20];		/* random, per daemon */
	struct timeval timeout;
	uint64_t cooloff_ns, grace_ns;
	uint64_t ttl_ms;		/* 0: XRL_GLOBAL_TTL_WINDOWS intervals */
	char sha[48];			/* of sync_script */
	bool cluster;			/* CLUSTER SLOTS answered */
	bool map_known, map_stale;
	uint16_t owner[N_SLOTS];	/* index in @nodes; NO_OWNER: seed */
	struct redis_node nodes[XRL_REDIS_MAX_MASTERS];	/* [0]: the seed */
	size_t n_nodes;
	uint64_t syncs, failures;
	uint64_t moved, asked;
	unsigned newly_failed, newly_synced;	/* rules, this sync */
	char first_failed[200];
	/* As of the last sync, for xrl_global_status(). */
	unsigned n_degraded;
	time_t degraded_since;
	char reason[160];
};

/* Per rule, during one sync. */
struct exchange {
	struct xrl_budget_rule *rule;
	char key[XRL_RULE_NAME_MAX + 16];
	unsigned slot;
	int target;			/* node index */
	bool asking;			/* ASK: send ASKING first */
	bool done, failed;
	char why[160];
};

struct xrl_global *xrl_global_new(const struct xrl_global_opts *opts)
{
	uint64_t timeout_ms = opts->timeout_ms ?: XRL_GLOBAL_TIMEOUT_MS;
	uint64_t id = 0;
	struct xrl_global *g;

	if (!opts->host || !opts->node || !opts->node[0] ||
	    strlen(opts->node) >= XRL_NODE_NAME_MAX ||
	    strlen(opts->host) >= sizeof(g->nodes[0].host)) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	snprintf(g->nodes[0].host, sizeof(g->nodes[0].host), "%s", opts->host);
	g->nodes[0].port = opts->port;
	g->n_nodes = 1;
	snprintf(g->node, sizeof(g->node), "%s", opts->node);
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	snprintf(g->instance, sizeof(g->instance), "%016llx",
		 (unsigned long long)id);
	g->timeout.tv_sec = timeout_ms / 1000;
	g->timeout.tv_usec = timeout_ms % 1000 * 1000;
	g->cooloff_ns = (opts->cooloff_ms ?: XRL_GLOBAL_COOLOFF_MS) * MS;
	g->grace_ns = (opts->grace_ms ?: XRL_GLOBAL_GRACE_MS) * MS;
	g->ttl_ms = opts->ttl_ms;
	memset(g->owner, 0xff, sizeof(g->owner));
	return g;
}

static void disconnect(struct redis_node *n)
{
	if (n->ctx)
		redisFree(n->ctx);
	n->ctx = NULL;
}

void xrl_global_free(struct xrl_global *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n_nodes; i++)
		disconnect(&g->nodes[i]);
	free(g);
}

void xrl_global_status(const struct xrl_global *g,
		       struct xrl_global_status *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->degraded = g->n_degraded > 0;
	out->degraded_since = out->degraded ? g->degraded_since : 0;
	snprintf(out->reason, sizeof(out->reason), "%s",
		 out->degraded ? g->reason : "");
	out->syncs = g->syncs;
	out->failures = g->failures;
	out->moved = g->moved;
	out->asked = g->asked;
	out->cluster = g->cluster;
	for (i = 0; i < g->n_nodes; i++)
		out->masters += g->nodes[i].ctx != NULL;
	snprintf(out->node, sizeof(out->node), "%s", g->node);
	snprintf(out->address, sizeof(out->address), "%s:%u", g->nodes[0].host,
		 g->nodes[0].port);
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

/* A degraded rule: its last part for the grace period, then the budget
 * split evenly over the nodes it last saw. */
static void degraded_part(struct xrl_global *g, struct xrl_budget_rule *rule,
			  uint64_t now_ns)
{
	if (now_ns - rule->degraded_since_ns < g->grace_ns)
		set_local(rule, rule->node_weight, XRL_SHARE_ONE);
	else
		set_local(rule, 1, rule->nodes ?: 1);
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
		if (rule->sync_failed)
			degraded_part(g, rule, now_ns);
		else
			set_local(rule, rule->node_weight, XRL_SHARE_ONE);
	}
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
static int node_index(struct xrl_global *g, const char *host, size_t len,
		      uint16_t port)
{
	size_t i;

	if (!len || len >= sizeof(g->nodes[0].host))
		return -EPROTO;
	for (i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].port == port &&
		    strlen(g->nodes[i].host) == len &&
		    !memcmp(g->nodes[i].host, host, len))
			return (int)i;
	if (g->n_nodes == XRL_REDIS_MAX_MASTERS)
		return -ENOSPC;
	memset(&g->nodes[i], 0, sizeof(g->nodes[i]));
	memcpy(g->nodes[i].host, host, len);
	g->nodes[i].port = port;
	g->n_nodes++;
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
static int read_slot_map(struct xrl_global *g, const redisReply *reply,
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
			host = g->nodes[from].host;
			len = strlen(host);
		}
		k = node_index(g, host, len,
			       (uint16_t)master->element[1]->integer);
		if (k < 0)
			return k;
		for (s = range->element[0]->integer;
		     s <= range->element[1]->integer; s++)
			owner[s] = (uint16_t)k;
	}
	memcpy(g->owner, owner, sizeof(owner));
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

/* A failed round trip; the breaker opens at the XRL_GLOBAL_MISSES-th in a
 * row (or at once when it was open: the probe failed). */
static void open_breaker(struct xrl_global *g, struct redis_node *n,
			 uint64_t now_ns, const char *why)
{
	disconnect(n);
	if (!n->open && ++n->misses < XRL_GLOBAL_MISSES)
		return;	/* tried again at the next sync */
	n->retry_at_ns = now_ns + g->cooloff_ns;
	if (n->open) {
		pr_warn("redis %s:%u: probe failed: %s; next try in %llu ms",
			n->host, n->port, why,
			(unsigned long long)(g->cooloff_ns / MS));
		return;
	}
	n->open = true;
	snprintf(n->reason, sizeof(n->reason), "%s", why);
	pr_warn("redis %s:%u: %s: degraded (global budgets: last share for "
		"%llu ms, then budget / nodes); next try in %llu ms", n->host,
		n->port, why, (unsigned long long)(g->grace_ns / MS),
		(unsigned long long)(g->cooloff_ns / MS));
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

static uint64_t timeout_ns(const struct xrl_global *g)
{
	return (uint64_t)g->timeout.tv_sec * 1000000000ULL +
	       (uint64_t)g->timeout.tv_usec * 1000ULL;
}

static int flush(redisContext *ctx);

/* One command, answered within the timeout, or NULL with @why. */
static redisReply *call(struct xrl_global *g, struct redis_node *n, char *why,
			size_t len, const char *fmt, ...)
{
	redisReply *reply = NULL;
	va_list ap;

	va_start(ap, fmt);
	redisvAppendCommand(n->ctx, fmt, ap);
	va_end(ap);
	if (flush(n->ctx) ||
	    get_reply(n->ctx, &reply, xrl_clock_ns(CLOCK_MONOTONIC) + timeout_ns(g))) {
		io_error(n->ctx, why, len);
		return NULL;
	}
	return reply;
}

/*
 * Asks node @k for the slot map. A Redis without cluster support answers
 * with an error: every slot is then the configured node's.
 */
static int ask_slots(struct xrl_global *g, int k, char *why, size_t len)
{
	redisReply *reply = call(g, &g->nodes[k], why, len, "CLUSTER SLOTS");
	int ret = 0;

	if (!reply)
		return -EIO;
	if (reply->type == REDIS_REPLY_ERROR && !g->cluster) {
		g->map_known = true;	/* a plain Redis */
	} else if (reply->type == REDIS_REPLY_ERROR) {
		snprintf(why, len, "CLUSTER SLOTS: %.100s", reply->str);
		ret = -EPROTO;
	} else if (read_slot_map(g, reply, k)) {
		snprintf(why, len, "CLUSTER SLOTS: unexpected reply");
		ret = -EPROTO;
	} else {
		g->cluster = g->map_known = true;
		g->map_stale = false;
	}
	freeReplyObject(reply);
	return ret;
}

/*
 * Connects to node @k and loads the script; the seed's first connection
 * also asks CLUSTER SLOTS. 0, or -errno with @why.
 */
static int connect_node(struct xrl_global *g, int k, char *why, size_t len)
{
	struct redis_node *n = &g->nodes[k];
	redisReply *reply;
	int ret = 0;

	n->ctx = redisConnectWithTimeout(n->host, n->port, g->timeout);
	if (!n->ctx || n->ctx->err) {
		snprintf(why, len, "connecting: %s",
			 n->ctx ? n->ctx->errstr : "out of memory");
		goto fail;
	}
	if (redisSetTimeout(n->ctx, g->timeout) != REDIS_OK) {
		snprintf(why, len, "setting the timeout: %s", n->ctx->errstr);
		goto fail;
	}
	guard_reader(n->ctx->reader);
	reply = call(g, n, why, len, "SCRIPT LOAD %s", sync_script);
	if (!reply)
		goto fail;
	if (reply->type != REDIS_REPLY_STRING || reply->len != 40) {
		snprintf(why, len, "SCRIPT LOAD: unexpected reply%s%.80s",
			 reply->type == REDIS_REPLY_ERROR ? ": " : "",
			 reply->type == REDIS_REPLY_ERROR ? reply->str : "");
		freeReplyObject(reply);
		goto fail;
	}
	snprintf(g->sha, sizeof(g->sha), "%s", reply->str);
	freeReplyObject(reply);
	if (k == 0 && !g->map_known)
		ret = ask_slots(g, 0, why, len);
	return ret;
fail:
	disconnect(n);
	return -EIO;
}

/* ---- one sync --------------------------------------------------------- */

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
	    !is_int(reply->element[0], 0, 1))
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

static uint64_t ttl_ms_of(const struct xrl_global *g,
			  const struct xrl_budgets *b)
{
	uint64_t ttl = g->ttl_ms ?: b->interval_ns * XRL_GLOBAL_TTL_WINDOWS / MS;

	return ttl ?: 1;
}

static void rule_failed(struct xrl_global *g, struct xrl_budget_rule *rule,
			const char *why, uint64_t now_ns)
{
	if (!rule->misses++)
		rule->degraded_since_ns = now_ns;	/* grace starts here */
	if (!rule->sync_failed && rule->misses < XRL_GLOBAL_MISSES) {
		set_local(rule, rule->node_weight, XRL_SHARE_ONE);
		return;	/* a missed sync: the last part, not degraded yet */
	}
	if (!rule->sync_failed) {
		rule->sync_failed = true;
		rule->degraded_since_wall = time(NULL);
		rule->nodes_before = rule->nodes;
		g->newly_failed++;	/* logged once per sync, not per rule */
		if (!g->first_failed[0])
			snprintf(g->first_failed, sizeof(g->first_failed),
				 "%s: %s", rule->spec.name, why);
	}
	rule->degraded = true;
	snprintf(rule->reason, sizeof(rule->reason), "%s", why);
	degraded_part(g, rule, now_ns);
}

/*
 * A part from Redis. Coming back from a failure, the rule takes no more
 * than its part of the nodes it saw before while fewer have rejoined
 * (for one TTL at most); a name another daemon also writes takes half.
 */
static void rule_synced(struct xrl_global *g, struct xrl_budget_rule *rule,
			const struct part *part, uint64_t ttl_ms,
			uint64_t now_ns)
{
	uint64_t weight = part->weight, cap;
	bool was_failed = rule->sync_failed;

	rule->misses = 0;
	if (rule->sync_failed) {
		rule->sync_failed = false;
		rule->rejoin_until_ns = now_ns + ttl_ms * MS;
		g->newly_synced++;
	}
	if (part->nodes >= rule->nodes_before)
		rule->rejoin_until_ns = 0;	/* everyone is back */
	if (rule->rejoin_until_ns && now_ns < rule->rejoin_until_ns) {
		cap = XRL_SHARE_ONE / rule->nodes_before;
		if (weight > cap)
			weight = cap;
	}
	rule->duplicates = part->duplicate ? rule->duplicates + 1 : 0;
	if (rule->duplicates >= DUPLICATE_SYNCS) {
		if (!rule->degraded)
			pr_err("rule %s: node name \"%s\" is also used by "
			       "another daemon: each takes half of its part; "
			       "give every node its own --node", rule->spec.name,
			       g->node);
		snprintf(rule->reason, sizeof(rule->reason), "node name \"%s\""
			 " is also used by another daemon", g->node);
		rule->degraded = true;
		weight /= 2;
	} else {
		if (rule->degraded && !was_failed)
			pr_info("rule %s: node name \"%s\" no longer shared",
				rule->spec.name, g->node);
		rule->degraded = false;
		rule->reason[0] = '\0';
	}
	rule->node_weight = (uint32_t)weight;
	rule->nodes = part->nodes;
	set_local(rule, weight ?: 1, XRL_SHARE_ONE);
}

/* "host:port" of a MOVED or ASK reply (the host may hold colons). */
static int redirect_target(struct xrl_global *g, const char *text,
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
	return node_index(g, space, (size_t)(colon - space), (uint16_t)port);
}

enum verdict { X_DONE, X_RETRY, X_FAILED };

/* What the script's reply means for @x; sets @reload on NOSCRIPT. */
static enum verdict judge(struct xrl_global *g, struct exchange *x,
			  const redisReply *reply, uint64_t ttl_ms,
			  uint64_t now_ns, bool *reload)
{
	struct part part;
	unsigned slot;
	int k;

	if (reply->type == REDIS_REPLY_ERROR) {
		bool moved = !strncmp(reply->str, "MOVED ", 6);

		if (moved || !strncmp(reply->str, "ASK ", 4)) {
			k = redirect_target(g, reply->str + (moved ? 6 : 4),
					    &slot);
			if (k < 0 || slot != x->slot) {
				snprintf(x->why, sizeof(x->why), "bad redirect"
					 ": %.100s", reply->str);
				return X_FAILED;
			}
			if (moved) {
				g->owner[slot] = (uint16_t)k;
				g->map_stale = true;
				g->moved++;
			} else {
				g->asked++;
			}
			x->target = k;
			x->asking = !moved;
			snprintf(x->why, sizeof(x->why), "redirected too often"
				 ": %.100s", reply->str);
			return X_RETRY;
		}
		if (!strncmp(reply->str, "NOSCRIPT", 8)) {
			*reload = true;	/* Redis restarted or flushed */
			snprintf(x->why, sizeof(x->why), "%.100s", reply->str);
			return X_RETRY;
		}
		snprintf(x->why, sizeof(x->why), "error reply: %.100s",
			 reply->str);
		return X_FAILED;
	}
	if (read_part(g, reply, &part)) {
		snprintf(x->why, sizeof(x->why),
			 "unexpected reply to the sync script");
		return X_FAILED;
	}
	rule_synced(g, x->rule, &part, ttl_ms, now_ns);
	return X_DONE;
}

static void append(struct xrl_global *g, struct redis_node *n,
		   const struct exchange *x, uint64_t ttl_ms)
{
	char demand[24], ttl[24];
	const char *argv[8] = {
		"EVALSHA", g->sha, "1", x->key, g->node, demand, ttl,
		g->instance,
	};

	snprintf(demand, sizeof(demand), "%llu",
		 (unsigned long long)x->rule->demand_pps);
	snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)ttl_ms);
	if (x->asking)
		redisAppendCommand(n->ctx, "ASKING");
	redisAppendCommandArgv(n->ctx, 8, argv, NULL);
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

/* Whether node @k may be talked to now: connected, or connected for its
 * breaker's probe. Rules it cannot serve fail with the reason. */
static bool reachable(struct xrl_global *g, int k, uint64_t now_ns,
		      char *why, size_t len)
{
	struct redis_node *n = &g->nodes[k];

	if (n->ctx)
		return true;
	if (n->open && now_ns < n->retry_at_ns) {
		snprintf(why, len, "%s", n->reason);
		return false;	/* cooling off: left alone */
	}
	if (!connect_node(g, k, why, len))
		return true;
	open_breaker(g, n, now_ns, why);
	return false;
}

/*
 * Redis answers a pipeline when it has run all of it: its replies are
 * due within the timeout plus XRL_GLOBAL_SCRIPT_US for each script in it
 * (1,000 rules: 50 ms + 500 ms at most, on the daemon's event loop).
 */
static uint64_t pipeline_deadline(const struct xrl_global *g,
				  const struct exchange *xs, size_t n, int k)
{
	uint64_t ns = timeout_ns(g);
	size_t i;

	for (i = 0; i < n; i++)
		if (!xs[i].done && !xs[i].failed && xs[i].target == k)
			ns += XRL_GLOBAL_SCRIPT_US * 1000ULL;
	return xrl_clock_ns(CLOCK_MONOTONIC) + ns;
}

/*
 * One round: every pending exchange is sent to its node, all nodes'
 * pipelines flushed before any reply is read (one round trip, nodes in
 * parallel), then the replies judged in order.
 */
static void round_trip(struct xrl_global *g, struct exchange *xs, size_t n,
		       uint64_t ttl_ms, uint64_t now_ns)
{
	bool used[XRL_REDIS_MAX_MASTERS] = { false };
	char why[160];
	redisReply *reply;
	size_t i, k;

	for (k = 0; k < g->n_nodes; k++) {
		for (i = 0; i < n; i++)
			if (!xs[i].done && !xs[i].failed &&
			    xs[i].target == (int)k)
				break;
		if (i == n)
			continue;
		if (!reachable(g, (int)k, now_ns, why, sizeof(why))) {
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
				append(g, &g->nodes[k], &xs[i], ttl_ms);
		used[k] = !flush(g->nodes[k].ctx);
		if (!used[k]) {
			io_error(g->nodes[k].ctx, why, sizeof(why));
			open_breaker(g, &g->nodes[k], now_ns, why);
		}
	}
	for (k = 0; k < g->n_nodes; k++) {
		struct redis_node *node = &g->nodes[k];
		bool reload = false, broken = false;
		uint64_t deadline;

		if (!used[k])
			continue;
		deadline = pipeline_deadline(g, xs, n, (int)k);
		for (i = 0; i < n; i++) {
			struct exchange *x = &xs[i];
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
			switch (judge(g, x, reply, ttl_ms, now_ns, &reload)) {
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
			open_breaker(g, node, now_ns, why);
			continue;
		}
		close_breaker(node);
		if (reload && !broken)
			disconnect(node);	/* loads it on reconnecting */
	}
}

static void summarize(struct xrl_global *g, const struct xrl_budgets *b)
{
	size_t i;

	g->n_degraded = 0;
	g->reason[0] = '\0';
	for (i = 0; i < b->n_rules; i++) {
		const struct xrl_budget_rule *rule = &b->rules[i];

		if (!rule->spec.global || !rule->degraded)
			continue;
		if (!g->n_degraded++) {
			snprintf(g->reason, sizeof(g->reason), "%s",
				 rule->reason);
			g->degraded_since = rule->sync_failed ?
				rule->degraded_since_wall : time(NULL);
		}
	}
}

int xrl_global_sync(struct xrl_global *g, struct xrl_budgets *b,
		    uint64_t now_ns)
{
	uint64_t ttl_ms = ttl_ms_of(g, b);
	struct exchange *xs;
	bool any_failed = false, any_done = false;
	char why[160];
	size_t i, n = 0;
	int round;

	xs = calloc(b->n_rules ?: 1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	for (i = 0; i < b->n_rules; i++) {
		struct xrl_budget_rule *rule = &b->rules[i];
		struct exchange *x = &xs[n];

		if (!rule->spec.global)
			continue;
		measure_demand(b, rule, now_ns);
		x->rule = rule;
		snprintf(x->key, sizeof(x->key), "xrl:{%s}:demand",
			 rule->spec.name);
		x->slot = xrl_redis_key_slot(x->key, strlen(x->key));
		n++;
	}
	if (!n)
		goto free_all;
	g->newly_failed = g->newly_synced = 0;
	g->first_failed[0] = '\0';
	/* The map first: the seed tells whether it is a cluster at all. */
	if (!g->map_known && reachable(g, 0, now_ns, why, sizeof(why)) &&
	    !g->map_known && ask_slots(g, 0, why, sizeof(why)))
		open_breaker(g, &g->nodes[0], now_ns, why);
	for (i = 0; i < n; i++)
		xs[i].target = g->owner[xs[i].slot] == NO_OWNER ? 0 :
			       g->owner[xs[i].slot];
	for (round = 0; round <= REDIRECTS; round++)
		round_trip(g, xs, n, ttl_ms, now_ns);
	for (i = 0; i < n; i++) {
		if (!xs[i].done)
			rule_failed(g, xs[i].rule, xs[i].why[0] ? xs[i].why :
				    "no reply", now_ns);
		any_failed |= !xs[i].done;
		any_done |= xs[i].done;
	}
	/* MOVED: the cluster changed; read the whole map for the next sync
	 * from a node that answered. */
	if (g->map_stale)
		for (i = 0; i < g->n_nodes && g->map_stale; i++)
			if (g->nodes[i].ctx)
				ask_slots(g, (int)i, why, sizeof(why));
	if (g->newly_failed)
		pr_warn("global budgets: sync failed for %u rule%s (%s): "
			"degraded", g->newly_failed,
			g->newly_failed == 1 ? "" : "s", g->first_failed);
	if (g->newly_synced)
		pr_info("global budgets: %u rule%s synced again",
			g->newly_synced, g->newly_synced == 1 ? "" : "s");
	if (any_done)
		g->syncs++;
	if (any_failed)
		g->failures++;
free_all:
	free(xs);
	summarize(g, b);
	return g->n_degraded ? -EIO : 0;
}

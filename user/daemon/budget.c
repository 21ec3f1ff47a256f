// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * budget.c - the engine that re-splits aggregate budgets by demand every
 * sync_interval (the split: core/share.c; the shares: datapath/aggregate.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "budget.h"
#include "datapath.h"
#include "global.h"
#include "limit.h"
#include "metrics.h"

/* ---- the sync engine ------------------------------------------------ */

int xrl_budgets_init(struct xrl_budgets *b, struct xrl_datapath *dp,
		     uint64_t interval_ns)
{
	memset(b, 0, sizeof(*b));
	b->dp = dp;
	b->n_cpus = xrl_datapath_cpus();
	b->floor_percent = XRL_SHARE_FLOOR_PERCENT;
	b->pool_pps = XRL_AGG_POOL_PPS;
	b->interval_ns = interval_ns ? interval_ns :
			 XRL_SYNC_INTERVAL_MS * 1000000ULL;
	pthread_mutex_init(&b->lock, NULL);
	if (b->n_cpus > XRL_SHARE_ONE)
		return -E2BIG;
	return 0;
}

static void free_rule(struct xrl_budget_rule *rule)
{
	free(rule->weights);
	free(rule->seen);
	free(rule->demand);
}

void xrl_budgets_free(struct xrl_budgets *b)
{
	size_t i;

	for (i = 0; i < b->n_rules; i++)
		free_rule(&b->rules[i]);
	free(b->rules);
	b->rules = NULL;
	b->n_rules = 0;
}

struct xrl_budget_rule *xrl_budgets_find(struct xrl_budgets *b, uint32_t id)
{
	size_t i;

	for (i = 0; i < b->n_rules; i++)
		if (b->rules[i].spec.id == id)
			return &b->rules[i];
	return NULL;
}

static int init_rule(struct xrl_budgets *b, struct xrl_budget_rule *rule,
		     const struct xrl_rule_spec *spec)
{
	memset(rule, 0, sizeof(*rule));
	rule->spec = *spec;
	rule->weights = calloc(b->n_cpus, sizeof(*rule->weights));
	rule->seen = calloc(b->n_cpus, sizeof(*rule->seen));
	rule->demand = calloc(b->n_cpus, sizeof(*rule->demand));
	if (!rule->weights || !rule->seen || !rule->demand) {
		free_rule(rule);
		return -ENOMEM;
	}
	/* As the apply wrote it, until demand says otherwise. */
	rule->pool_weight = xrl_share_floors(b->n_cpus, b->floor_percent,
					     rule->weights);
	xrl_budget_limits_of(spec, &rule->local);
	return 0;
}

/* The engine's copy of a rule that stays: its split and readings, with
 * the limits of the policy now in force. */
static void carry_rule(struct xrl_budget_rule *next,
		       struct xrl_budget_rule *old,
		       const struct xrl_rule_spec *spec)
{
	*next = *old;
	next->spec = *spec;
	next->written = false;
	memset(old, 0, sizeof(*old));
	if (!spec->global)
		xrl_budget_limits_of(spec, &next->local);
}

/* ---- global rules: demand to Redis, parts back (global.h) ------------ */

/* The local budget: @part / @of of the rule's. */
static void set_local(struct xrl_budget_rule *rule, uint64_t part,
		      uint64_t of)
{
	struct xrl_budget_limits whole, local;

	xrl_budget_limits_of(&rule->spec, &whole);
	xrl_budget_limits_scale(&whole, part, of, &local);
	if (memcmp(&local, &rule->local, sizeof(local))) {
		rule->local = local;
		rule->written = false;
	}
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

static void take_part(struct xrl_budget_rule *rule,
		      const struct xrl_global_rule *x)
{
	rule->node_weight = x->node_weight;
	rule->nodes = x->nodes;
	rule->degraded = x->degraded;
	snprintf(rule->reason, sizeof(rule->reason), "%s", x->reason);
	set_local(rule, x->part, x->of);
}

/*
 * The global rules' exchange: a sync (@sync) hands Redis their demands;
 * after a policy change only their parts are carried. Each rule then
 * takes its part. 0, or -errno of the exchange.
 */
static int exchange(struct xrl_budgets *b, uint64_t now_ns, bool sync)
{
	struct xrl_global_rule *xs;
	size_t i, n = 0;
	int ret;

	xs = calloc(b->n_rules ?: 1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	for (i = 0; i < b->n_rules; i++) {
		struct xrl_budget_rule *rule = &b->rules[i];

		if (!rule->spec.global)
			continue;
		if (sync)
			measure_demand(b, rule, now_ns);
		xs[n].id = rule->spec.id;
		xs[n].name = rule->spec.name;
		xs[n++].demand_pps = rule->demand_pps;
	}
	ret = sync ? xrl_global_sync(b->global, xs, n, b->interval_ns, now_ns) :
		     xrl_global_follow(b->global, xs, n, now_ns);
	for (i = 0, n = 0; ret != -ENOMEM && i < b->n_rules; i++)
		if (b->rules[i].spec.global)
			take_part(&b->rules[i], &xs[n++]);
	free(xs);
	return ret;
}

static int set_policy(struct xrl_budgets *b, const struct xrl_policy *policy,
		      uint64_t now_ns)
{
	struct xrl_budget_rule *rules, *old;
	size_t i, n = 0;
	int ret = 0;

	rules = calloc(policy->n_rules ? policy->n_rules : 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (i = 0; i < policy->n_rules && !ret; i++) {
		const struct xrl_rule_spec *spec = &policy->rules[i];

		if (!xrl_rule_is_aggregate(spec))
			continue;
		old = xrl_budgets_find(b, spec->id);
		if (old && old->weights)
			carry_rule(&rules[n++], old, spec);
		else if (!(ret = init_rule(b, &rules[n], spec)))
			n++;
	}
	if (ret) {
		while (n-- > 0)
			free_rule(&rules[n]);
		free(rules);
		return ret;
	}
	xrl_budgets_free(b);
	b->rules = rules;
	b->n_rules = n;
	if (b->global)
		exchange(b, now_ns, false);
	/* The apply wrote even shares: put the carried splits back. */
	for (i = 0; i < n; i++) {
		struct xrl_budget_rule *rule = &rules[i];
		int err = xrl_agg_write_shares(b->dp, rule->spec.id,
					       &rule->local, rule->weights,
					       rule->pool_weight);

		rule->written = !err;
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* Demand per CPU since the last reading. False before a first reading. */
static bool read_demand(struct xrl_budgets *b, struct xrl_budget_rule *rule,
			struct xrl_agg_state *state)
{
	bool primed = rule->primed;
	unsigned i;

	if (xrl_agg_read_state(b->dp, rule->spec.id, state)) {
		memset(rule->demand, 0, b->n_cpus * sizeof(*rule->demand));
		return false;	/* no packet yet */
	}
	for (i = 0; i < b->n_cpus; i++) {
		rule->demand[i] = state[i].arrived - rule->seen[i];
		rule->seen[i] = state[i].arrived;
	}
	rule->primed = true;
	return primed;
}

/*
 * Re-splits one rule: the pool as its (maybe new) local budget asks, the
 * rest over the CPUs by the demand just read (or, without a reading, in
 * the proportions they had); marks it to write if anything changed.
 */
static void resplit_rule(struct xrl_budgets *b, struct xrl_budget_rule *rule,
			 bool have_demand, uint32_t *weights)
{
	uint32_t pool = xrl_agg_pool_weight(&rule->local, b->n_cpus,
					    b->floor_percent, b->pool_pps);
	const uint64_t *demand = rule->demand;
	uint64_t by[b->n_cpus];
	unsigned i;

	if (!have_demand) {
		if (pool == rule->pool_weight)
			return;	/* nothing to go by: the split stays */
		for (i = 0; i < b->n_cpus; i++)
			by[i] = rule->weights[i];
		demand = by;
	}
	if (xrl_share_split_part(demand, b->n_cpus, b->floor_percent,
				 XRL_SHARE_ONE - pool, weights)) {
		if (pool == rule->pool_weight)
			return;
		/* No demand anywhere: floors, the rest to the pool. */
		pool = xrl_share_floors(b->n_cpus, b->floor_percent, weights);
	}
	if (pool == rule->pool_weight &&
	    !memcmp(weights, rule->weights, b->n_cpus * sizeof(*weights)))
		return;
	memcpy(rule->weights, weights, b->n_cpus * sizeof(*weights));
	rule->pool_weight = pool;
	rule->written = false;
}

static int write_rule(struct xrl_budgets *b, struct xrl_budget_rule *rule)
{
	int ret;

	if (rule->written)
		return 0;
	ret = xrl_agg_write_shares(b->dp, rule->spec.id, &rule->local,
				   rule->weights, rule->pool_weight);
	if (ret)
		return ret;
	rule->written = true;
	rule->syncs++;
	return 0;
}

static int sync_all(struct xrl_budgets *b, uint64_t now_ns)
{
	struct xrl_agg_state *state;
	uint32_t *weights;
	bool *have = NULL;
	size_t i;
	int ret = 0, err;

	if (!b->n_rules)
		return 0;
	state = calloc(b->n_cpus, sizeof(*state));
	weights = calloc(b->n_cpus, sizeof(*weights));
	if (!state || !weights) {
		ret = -ENOMEM;
		goto free_all;
	}
	have = calloc(b->n_rules, sizeof(*have));
	if (!have) {
		ret = -ENOMEM;
		goto free_all;
	}
	for (i = 0; i < b->n_rules; i++)
		have[i] = read_demand(b, &b->rules[i], state);
	/* Global rules learn their node's part from the demands just read;
	 * the split of that part over the CPUs comes after. */
	if (b->global) {
		err = exchange(b, now_ns, true);
		if (err && !ret)
			ret = err;
	}
	for (i = 0; i < b->n_rules; i++) {
		resplit_rule(b, &b->rules[i], have[i], weights);
		err = write_rule(b, &b->rules[i]);
		if (err && !ret)
			ret = err;
	}
free_all:
	free(have);
	free(state);
	free(weights);
	return ret;
}

int xrl_budgets_set_policy(struct xrl_budgets *b,
			   const struct xrl_policy *policy, uint64_t now_ns)
{
	int ret;

	pthread_mutex_lock(&b->lock);
	ret = set_policy(b, policy, now_ns);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

int xrl_budgets_sync(struct xrl_budgets *b, uint64_t now_ns)
{
	int ret;

	pthread_mutex_lock(&b->lock);
	ret = sync_all(b, now_ns);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

/* ---- what status, stats and /metrics show --------------------------- */

bool xrl_budgets_rule_degraded(const struct xrl_budgets *b, uint32_t id)
{
	size_t i;

	for (i = 0; b && i < b->n_rules; i++)
		if (b->rules[i].spec.id == id)
			return b->rules[i].spec.global && b->rules[i].degraded;
	return false;
}

bool xrl_budgets_degraded(const struct xrl_budgets *b)
{
	struct xrl_global_status status;

	if (!b || !b->global)
		return false;
	xrl_global_status(b->global, &status);
	return status.degraded;
}

void xrl_budgets_degraded_why(void *ctx, char *why, size_t len)
{
	struct xrl_budgets *b = ctx;
	const struct xrl_budget_rule *first = NULL;
	size_t i, n = 0;

	pthread_mutex_lock(&b->lock);
	for (i = 0; i < b->n_rules; i++) {
		if (!b->rules[i].spec.global || !b->rules[i].degraded)
			continue;
		if (!n++)
			first = &b->rules[i];
	}
	if (first && n > 1)
		snprintf(why, len, "global budget %s: %s (and %zu more)",
			 first->spec.name, first->reason, n - 1);
	else if (first)
		snprintf(why, len, "global budget %s: %s", first->spec.name,
			 first->reason);
	pthread_mutex_unlock(&b->lock);
}

static json_t *rule_json(const struct xrl_budgets *b,
			 const struct xrl_budget_rule *rule)
{
	json_t *weights = json_array(), *obj;
	unsigned i;

	for (i = 0; i < b->n_cpus; i++)
		json_array_append_new(weights, json_integer(rule->weights[i]));
	obj = json_pack("{s:s, s:I, s:b, s:o, s:I, s:I, s:I}",
			"rule", rule->spec.name,
			"id", (json_int_t)rule->spec.id,
			"global", rule->spec.global,
			"cpu_weights", weights,
			"pool_weight", (json_int_t)rule->pool_weight,
			"local_pps", (json_int_t)rule->local.pps,
			"local_bps", (json_int_t)rule->local.bps);
	if (obj && rule->spec.global) {
		json_object_set_new(obj, "nodes", json_integer(rule->nodes));
		json_object_set_new(obj, "node_weight",
				    json_integer(rule->node_weight));
		json_object_set_new(obj, "demand_pps",
				    json_integer(rule->demand_pps));
		json_object_set_new(obj, "degraded",
				    json_boolean(rule->degraded));
		if (rule->degraded)
			json_object_set_new(obj, "degraded_reason",
					    json_string(rule->reason));
	}
	return obj;
}

static json_t *global_json(const struct xrl_global *g)
{
	struct xrl_global_status status;
	char since[32] = "";
	struct tm tm;
	json_t *obj;

	xrl_global_status(g, &status);
	obj = json_pack("{s:s, s:s, s:b, s:b, s:I, s:I, s:I}",
			"redis", status.address, "node", status.node,
			"degraded", status.degraded, "cluster", status.cluster,
			"masters", (json_int_t)status.masters,
			"syncs", (json_int_t)status.syncs,
			"failures", (json_int_t)status.failures);
	if (obj && status.degraded) {
		gmtime_r(&status.degraded_since, &tm);
		strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_set_new(obj, "degraded_since", json_string(since));
		json_object_set_new(obj, "degraded_reason",
				    json_string(status.reason));
	}
	return obj;
}

json_t *xrl_budgets_json(const struct xrl_budgets *b)
{
	json_t *rules = json_array(), *obj;
	size_t i;

	for (i = 0; i < b->n_rules; i++)
		json_array_append_new(rules, rule_json(b, &b->rules[i]));
	obj = json_pack("{s:I, s:o}", "sync_interval_ms",
			(json_int_t)(b->interval_ns / 1000000ULL),
			"aggregates", rules);
	if (obj && b->global)
		json_object_set_new(obj, "global", global_json(b->global));
	return obj;
}

/* Exchanges with Redis, and the missed ones: a missed sync is never silent. */
static void write_sync_counters(FILE *out, const struct xrl_global *g)
{
	const char *no_labels[] = { NULL };
	struct xrl_global_status status;

	xrl_global_status(g, &status);
	xrl_metrics_family(out, "xdp_ratelimit_sync_exchanges_total", "counter",
			   "Exchanges with Redis for the global budgets.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_sync_exchanges_total",
			       no_labels, status.syncs);
	xrl_metrics_family(out, "xdp_ratelimit_sync_failures_total", "counter",
			   "Exchanges with Redis that failed or timed out "
			   "(missed syncs).");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_sync_failures_total",
			       no_labels, status.failures);
}

void xrl_budgets_write_metrics(FILE *out, void *ctx)
{
	struct xrl_budgets *b = ctx;
	size_t i;

	pthread_mutex_lock(&b->lock);
	if (b->global)
		write_sync_counters(out, b->global);
	xrl_metrics_family(out, "xdp_ratelimit_sync_degraded", "gauge",
			   "1 while a global budget runs without Redis "
			   "(breaker open).");
	for (i = 0; i < b->n_rules; i++) {
		const char *labels[] = { "rule", b->rules[i].spec.name, NULL };

		if (b->rules[i].spec.global)
			xrl_metrics_sample(out, "xdp_ratelimit_sync_degraded",
					   labels, b->rules[i].degraded);
	}
	xrl_metrics_family(out, "xdp_ratelimit_budget_local_pps", "gauge",
			   "Packets per second of an aggregate budget this "
			   "host enforces (its part of a global one).");
	for (i = 0; i < b->n_rules; i++) {
		const char *labels[] = { "rule", b->rules[i].spec.name, NULL };

		xrl_metrics_sample_u64(out, "xdp_ratelimit_budget_local_pps",
				       labels, b->rules[i].local.pps);
	}
	xrl_metrics_family(out, "xdp_ratelimit_budget_nodes", "gauge",
			   "Nodes sharing a global budget, as last seen in "
			   "Redis.");
	for (i = 0; i < b->n_rules; i++) {
		const char *labels[] = { "rule", b->rules[i].spec.name, NULL };

		if (b->rules[i].spec.global)
			xrl_metrics_sample_u64(out, "xdp_ratelimit_budget_nodes",
					       labels, b->rules[i].nodes);
	}
	pthread_mutex_unlock(&b->lock);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Global budgets through a real redis-server (started here on a free
 * loopback port, stopped by pid). Two nodes are two instances of the
 * sync engine as library objects, each with a data path of its own
 * (loaded with the test clock): the same code the daemon runs every
 * sync_interval, driven step by step with one simulated clock, so that
 * both nodes see the same instants and nothing sleeps. What stays real
 * is Redis itself: its key TTLs (real time: set to 30 s here, so that
 * a loaded machine cannot expire a node between two simulated syncs,
 * and to 400 ms where a departed node must vanish) and the 50 ms call
 * timeout.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "budget.h"
#include "cidr.h"
#include "fixture.h"
#include "global.h"
#include "loader.h"
#include "redis_testbed.h"
#include "rule.h"

#define GLOBAL_PPS	10000
#define BURST		100
#define CHUNK_NS	5000000ULL	/* 5 ms of simulated time */
#define SYNC_EVERY	20		/* chunks: 100 ms */
#define CHUNKS_PER_S	(NS_PER_S / CHUNK_NS)

struct node {
	const char *name;
	struct xrl_datapath dp;
	struct xrl_policy policy;
	struct xrl_budgets budgets;
	struct packet pkt;
	uint32_t offer;		/* packets per chunk */
	uint32_t id;		/* of the global rule */
};

static struct redis_server redis;
static struct node nodes[2] = { { .name = "a" }, { .name = "b" } };
static uint64_t now_ns;
static uint64_t ttl_ms = 30000;
static uint64_t rule_pps = GLOBAL_PPS, rule_burst = BURST;

static void pin_to_cpu0(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
}

static uint32_t add_rule(struct xrl_policy *policy, const char *name,
			 const char *cidr, bool global)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = rule_pps, .burst = rule_burst,
		.scope = XRL_SCOPE_AGGREGATE, .global = global,
	};
	char err[128];

	snprintf(rule.name, sizeof(rule.name), "%s", name);
	cr_assert_eq(xrl_cidr_parse(cidr, &rule.prefix), 0);
	cr_assert_eq(xrl_rule_check(&rule, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(xrl_policy_add(policy, &rule), 0);
	return policy->rules[policy->n_rules - 1].id;
}

static void node_start(struct node *n, uint16_t port, const char *src,
		       uint32_t offer, bool with_local_rule)
{
	struct xrl_global_opts opts = {
		.host = "127.0.0.1", .port = port, .node = n->name,
		/* Real time, unlike the simulated interval: long enough that
		 * no key expires while a loaded machine runs one. */
		.ttl_ms = ttl_ms,
	};

	fixture_load(&n->dp, 4096);
	cr_assert_eq(xrl_policy_init(&n->policy), 0);
	n->id = add_rule(&n->policy, "fleet", "198.18.0.0/24", true);
	if (with_local_rule)
		add_rule(&n->policy, "local", "198.18.1.0/24", false);
	fixture_apply(&n->dp, &n->policy);
	cr_assert_eq(xrl_budgets_init(&n->budgets, &n->dp, 0), 0);
	n->budgets.global = xrl_global_new(&opts);
	cr_assert_not_null(n->budgets.global);
	cr_assert_eq(xrl_budgets_set_policy(&n->budgets, &n->policy, now_ns),
		     0);
	cr_assert_eq(packet_from(&n->pkt, src), 0);
	n->offer = offer;
}

static void node_stop(struct node *n)
{
	if (!n->budgets.global)
		return;
	xrl_global_free(n->budgets.global);
	n->budgets.global = NULL;
	xrl_budgets_free(&n->budgets);
	xrl_policy_free(&n->policy);
	xrl_datapath_close(&n->dp);
}

static void setup(void)
{
	pin_to_cpu0();
	now_ns = NS_PER_S;
	cr_assert_eq(redis_start(&redis, 0), 0, "redis-server did not start");
}

static void teardown(void)
{
	node_stop(&nodes[0]);
	node_stop(&nodes[1]);
	redis_stop(&redis);
}

TestSuite(global, .init = setup, .fini = teardown);

static uint64_t admitted(struct node *n)
{
	return fixture_rule_counters(&n->dp, n->id)
		.outcome[XRL_RULE_PASSED].packets;
}

/* @chunks chunks of simulated time; every node offers at each and all
 * sync together every SYNC_EVERY chunks. */
static void run(int n_nodes, unsigned chunks)
{
	unsigned chunk, i;
	int k;

	for (chunk = 0; chunk < chunks; chunk++) {
		now_ns += CHUNK_NS;
		for (k = 0; k < n_nodes; k++) {
			xrl_datapath_set_time(&nodes[k].dp, now_ns);
			for (i = 0; i < nodes[k].offer; i++)
				fixture_run(&nodes[k].dp, &nodes[k].pkt);
		}
		if ((chunk + 1) % SYNC_EVERY)
			continue;
		for (k = 0; k < n_nodes; k++)
			xrl_budgets_sync(&nodes[k].budgets, now_ns);
	}
}

static bool degraded(struct node *n)
{
	struct xrl_global_status status;

	xrl_global_status(n->budgets.global, &status);
	return status.degraded;
}

struct window {
	uint64_t a, b;
};

static struct window measure(unsigned chunks)
{
	uint64_t a = admitted(&nodes[0]), b = admitted(&nodes[1]);

	run(2, chunks);
	return (struct window){ admitted(&nodes[0]) - a,
				admitted(&nodes[1]) - b };
}

static void report(const char *what, struct window w, double seconds)
{
	double budget = GLOBAL_PPS * seconds;

	fprintf(stderr, "global %s over %.1f s: node a %lu, node b %lu, "
		"total %lu of %.0f (%+.2f%%)\n", what, seconds, w.a, w.b,
		w.a + w.b, budget, 100.0 * ((double)(w.a + w.b) - budget) /
		budget);
}

/* Demand 3:1 (a: 30000 pps, b: 10000 pps offered, 10000 in the budget). */
static void start_fleet(void)
{
	node_start(&nodes[0], redis.port, "198.18.0.1", 150, false);
	node_start(&nodes[1], redis.port, "198.18.0.2", 50, false);
}

Test(global, two_nodes_3_to_1_share_the_global_rate)
{
	struct window w;

	start_fleet();
	run(2, CHUNKS_PER_S);	/* the first second: nodes find each other */
	w = measure(2 * CHUNKS_PER_S);
	report("3:1, healthy", w, 2);
	cr_assert_geq(w.a + w.b, GLOBAL_PPS * 2 * 0.95);
	cr_assert_leq(w.a + w.b, GLOBAL_PPS * 2 * 1.05);
	cr_assert_gt(w.a, 2 * w.b, "a %lu, b %lu", w.a, w.b);
	cr_assert_lt(w.a, 4 * w.b, "a %lu, b %lu", w.a, w.b);
	cr_assert_eq(xrl_budgets_find(&nodes[0].budgets, nodes[0].id)->nodes,
		     2);
	cr_assert(!degraded(&nodes[0]));
	cr_assert(!degraded(&nodes[1]));
}

Test(global, redis_down_degrades_to_the_fallback_and_recovers)
{
	struct xrl_global_status status;
	struct window w;
	uint64_t opened;
	uint16_t port;

	start_fleet();
	run(2, CHUNKS_PER_S);
	w = measure(CHUNKS_PER_S);
	report("3:1, healthy", w, 1);

	port = redis.port;
	redis_stop(&redis);
	/* Both find Redis gone; after XRL_GLOBAL_MISSES syncs in a row they
	 * say so (a single slow reply is no outage). */
	run(2, (XRL_GLOBAL_MISSES - 1) * SYNC_EVERY);
	cr_assert(!degraded(&nodes[0]), "degraded at the first miss");
	run(2, SYNC_EVERY);
	opened = now_ns;
	cr_assert(degraded(&nodes[0]));
	cr_assert(degraded(&nodes[1]));
	xrl_global_status(nodes[0].budgets.global, &status);
	cr_assert_neq(status.reason[0], '\0');
	cr_assert_geq(status.failures, 1);

	/* The grace period (1 s from the first miss): the last parts, 3:1. */
	w = measure(CHUNKS_PER_S - XRL_GLOBAL_MISSES * SYNC_EVERY);
	report("3:1, Redis down, grace", w, 0.7);
	cr_assert_leq(w.a + w.b, GLOBAL_PPS * 0.7 * 1.05);
	cr_assert_geq(w.a + w.b, GLOBAL_PPS * 0.7 * 0.95);
	/* Then the budget / the 2 nodes last seen each. */
	run(2, SYNC_EVERY);
	w = measure(2 * CHUNKS_PER_S);
	report("3:1, Redis down, fallback", w, 2);
	cr_assert_leq(w.a + w.b, GLOBAL_PPS * 2 * 1.05);
	cr_assert_geq(w.a + w.b, GLOBAL_PPS * 2 * 0.95);
	cr_assert_leq(w.a, GLOBAL_PPS + BURST, "a: %lu", w.a);
	cr_assert_leq(w.b, GLOBAL_PPS + BURST, "b: %lu", w.b);
	cr_assert(degraded(&nodes[0]) && degraded(&nodes[1]));

	/* Back: after the cool-off (5 s from the failure) one probe each
	 * closes the breaker. */
	cr_assert_eq(redis_start(&redis, port), 0,
		     "redis-server did not start again");
	while (degraded(&nodes[0])) {
		cr_assert_lt(now_ns, opened + 6 * NS_PER_S, "never recovered");
		run(2, SYNC_EVERY);
	}
	cr_assert_geq(now_ns, opened + 5 * NS_PER_S, "probed before the "
		      "cool-off");
	/* Rejoining: a probed first and saw itself alone in the fresh
	 * Redis; it took no more than its part of the 2 nodes it knew. */
	cr_assert_leq(xrl_budgets_find(&nodes[0].budgets, nodes[0].id)
		      ->node_weight, XRL_SHARE_ONE / 2);
	cr_assert(!degraded(&nodes[1]), "b still degraded");
	run(2, CHUNKS_PER_S / 2);
	w = measure(CHUNKS_PER_S);
	report("3:1, Redis back", w, 1);
	cr_assert_geq(w.a + w.b, GLOBAL_PPS * 0.95);
	cr_assert_leq(w.a + w.b, GLOBAL_PPS * 1.05);
	cr_assert_gt(w.a, 2 * w.b);
}

static double real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A Redis that accepts and never answers: each call gives up after its
 * timeout, the breaker opens, and the other rules keep being synced. */
Test(global, a_silent_redis_costs_one_timeout_and_stalls_nothing)
{
	struct xrl_budget_rule *local;
	struct xrl_global_status status;
	struct packet pkt;
	double started, took;
	uint16_t port;
	int fake, i, k;

	fake = fake_redis_listen(&port);
	node_start(&nodes[0], port, "198.18.1.1", 0, true);
	nodes[0].budgets.pool_pps = 0;	/* the CPU split shows the re-split */
	cr_assert_eq(packet_from(&pkt, "198.18.1.1"), 0);
	for (i = 0; i < 50; i++)
		fixture_run(&nodes[0].dp, &pkt);	/* local rule, CPU 0 */
	now_ns += 100 * 1000000ULL;
	started = real_ms();
	xrl_budgets_sync(&nodes[0].budgets, now_ns);	/* primes demand */
	for (k = 1; k < XRL_GLOBAL_MISSES; k++) {
		for (i = 0; i < 50; i++)
			fixture_run(&nodes[0].dp, &pkt);
		now_ns += 100 * 1000000ULL;
		xrl_budgets_sync(&nodes[0].budgets, now_ns);
	}
	took = real_ms() - started;
	fprintf(stderr, "silent Redis: %d syncs took %.0f ms of real time\n",
		XRL_GLOBAL_MISSES, took);
	/* Bounded by the 50 ms timeouts, not by Redis: generous margin for
	 * a loaded machine, but far below a hang. */
	cr_assert_lt(took, 2000);
	cr_assert(degraded(&nodes[0]));
	xrl_global_status(nodes[0].budgets.global, &status);
	cr_assert_str_eq(status.reason, "timed out");
	local = xrl_budgets_find(&nodes[0].budgets,
				 nodes[0].policy.rules[2].id);
	cr_assert_not_null(local);
	cr_assert_gt(local->weights[0], local->weights[1],
		     "the local rule was re-split: %u:%u", local->weights[0],
		     local->weights[1]);
	close(fake);
}

/* A node that stops syncing (a departed host) stops counting once its
 * key expires: the other then holds the whole budget. */
Test(global, a_departed_node_stops_counting_after_its_ttl)
{
	struct xrl_budget_rule *rule;
	struct window w;

	ttl_ms = 400;
	start_fleet();
	run(2, CHUNKS_PER_S);
	rule = xrl_budgets_find(&nodes[0].budgets, nodes[0].id);
	cr_assert_eq(rule->nodes, 2);
	usleep(600 * 1000);	/* b's key expires (bounded real wait) */
	run(1, SYNC_EVERY);	/* only a goes on */
	cr_assert_eq(rule->nodes, 1, "nodes: %u", rule->nodes);
	cr_assert_eq(rule->node_weight, XRL_SHARE_ONE);
	run(1, SYNC_EVERY);
	w.a = admitted(&nodes[0]);
	run(1, CHUNKS_PER_S);
	w.a = admitted(&nodes[0]) - w.a;
	fprintf(stderr, "global, node b gone: node a %lu of %d in 1 s\n", w.a,
		GLOBAL_PPS);
	cr_assert_geq(w.a, GLOBAL_PPS * 0.95);
	cr_assert_leq(w.a, GLOBAL_PPS + BURST);
}

/*
 * The node-level debt bound: node b's demand reads 0 for two intervals,
 * so its part drops to the floor (2% of half of 200 pps: 2 pps, whose one
 * packet of tolerance is half a second). When its traffic comes back, a
 * sync gives it its part again, and the debt the floor left is cut to
 * what that part tolerates: it loses about one sync, not the 0.9 s it
 * took before the bound.
 */
Test(global, a_node_whose_demand_dipped_is_not_locked_out)
{
	struct xrl_budget_rule *rule;
	uint64_t b_before, b_after;
	double expected;

	rule_pps = 200;
	rule_burst = 20;
	node_start(&nodes[0], redis.port, "198.18.0.1", 3, false); /* 600 */
	node_start(&nodes[1], redis.port, "198.18.0.2", 1, false); /* 200 */
	run(2, CHUNKS_PER_S);
	nodes[1].offer = 0;
	run(2, 2 * SYNC_EVERY);
	rule = xrl_budgets_find(&nodes[1].budgets, nodes[1].id);
	cr_assert_eq(rule->node_weight, xrl_share_floor(2, 2),
		     "b at the floor: %u", rule->node_weight);
	nodes[1].offer = 1;
	b_before = admitted(&nodes[1]);
	run(2, 2 * CHUNKS_PER_S);
	b_after = admitted(&nodes[1]);
	/* b's part of 200 pps at demand 1:3, for 2 s less one sync */
	expected = 200.0 * rule->node_weight / XRL_SHARE_ONE * 1.9;
	fprintf(stderr, "global 200 pps, b back after a dip: %lu admitted in "
		"2 s, %.0f expected (weight %u)\n", b_after - b_before,
		expected, rule->node_weight);
	cr_assert_gt(rule->node_weight, XRL_SHARE_ONE / 5);
	cr_assert_geq(b_after - b_before, expected * 0.95);
}

/* ---- Redis Cluster: three real masters ------------------------------- */

static struct redis_cluster cluster;

static void setup_cluster(void)
{
	pin_to_cpu0();
	now_ns = NS_PER_S;
	redis_cluster_start(&cluster);
}

static void teardown_cluster(void)
{
	node_stop(&nodes[0]);
	node_stop(&nodes[1]);
	redis_cluster_stop(&cluster);
}

TestSuite(cluster, .init = setup_cluster, .fini = teardown_cluster,
	  .timeout = 60);

static unsigned rule_slot(const char *name)
{
	char key[96];

	snprintf(key, sizeof(key), "xrl:{%s}:demand", name);
	return redis_cluster_key_slot(&cluster, key);
}

static void assert_shared_3_to_1(const char *what, double seconds)
{
	struct window w = measure(seconds * CHUNKS_PER_S);

	report(what, w, seconds);
	cr_assert_geq(w.a + w.b, GLOBAL_PPS * seconds * 0.95);
	cr_assert_leq(w.a + w.b, GLOBAL_PPS * seconds * 1.05);
	cr_assert_gt(w.a, 2 * w.b, "a %lu, b %lu", w.a, w.b);
	cr_assert_lt(w.a, 4 * w.b, "a %lu, b %lu", w.a, w.b);
}

/* Both daemons are pointed at a master that does not own the rule's
 * slot: they follow MOVED, learn the map, and share the budget. */
Test(cluster, daemons_pointed_at_a_non_owner_follow_moved)
{
	int owner = redis_cluster_owner(&cluster, rule_slot("fleet"));
	uint16_t port = cluster.node[(owner + 1) % 3].port;
	struct xrl_global_status status;

	node_start(&nodes[0], port, "198.18.0.1", 150, false);
	node_start(&nodes[1], port, "198.18.0.2", 50, false);
	run(2, CHUNKS_PER_S);
	assert_shared_3_to_1("cluster, pointed at a non-owner", 2);
	xrl_global_status(nodes[0].budgets.global, &status);
	cr_assert(status.cluster);
	cr_assert(!status.degraded, "%s", status.reason);
	/* The map from CLUSTER SLOTS sends it to the owner at once: no
	 * redirect, ever (MOVED is followed in a_slot_migration_*). */
	cr_assert_eq(status.moved, 0, "MOVED followed %lu times", status.moved);
	cr_assert_eq(status.masters, 2, "the one asked and the owner");
	cr_assert_eq(xrl_budgets_find(&nodes[0].budgets, nodes[0].id)->nodes,
		     2);
}

/* Two global rules whose slots live on different masters: both sync,
 * each over its own connection, in the same round trip. */
Test(cluster, rules_on_different_masters_all_sync)
{
	char other[16] = "";
	struct xrl_budget_rule *r0, *r1;
	struct xrl_global_status status;
	int k, i, owner = redis_cluster_owner(&cluster, rule_slot("fleet"));

	for (i = 0; i < 100 && !other[0]; i++) {
		snprintf(other, sizeof(other), "fleet%d", i);
		if (redis_cluster_owner(&cluster, rule_slot(other)) == owner)
			other[0] = '\0';
	}
	cr_assert_neq(other[0], '\0');
	for (k = 0; k < 2; k++) {
		node_start(&nodes[k], cluster.node[0].port,
			   k ? "198.18.0.2" : "198.18.0.1", k ? 50 : 150, false);
		add_rule(&nodes[k].policy, other, "198.18.2.0/24", true);
		fixture_apply(&nodes[k].dp, &nodes[k].policy);
		cr_assert_eq(xrl_budgets_set_policy(&nodes[k].budgets,
						    &nodes[k].policy, now_ns), 0);
	}
	run(2, CHUNKS_PER_S);
	for (k = 0; k < 2; k++) {
		r0 = xrl_budgets_find(&nodes[k].budgets, nodes[k].id);
		r1 = xrl_budgets_find(&nodes[k].budgets,
				      nodes[k].policy.rules[2].id);
		cr_assert(r1 && r1->spec.global);
		cr_assert(!r0->degraded && !r1->degraded, "%s / %s",
			  r0->reason, r1->reason);
		cr_assert_eq(r0->nodes, 2);
		cr_assert_eq(r1->nodes, 2, "rule %s on another master", other);
		xrl_global_status(nodes[k].budgets.global, &status);
		cr_assert_geq(status.masters, 2);
	}
	assert_shared_3_to_1("cluster, two rules on two masters", 1);
}

/* The rule's slot migrates mid-run, in the steps redis-cli takes: keys
 * moved (ASK), then the slot given away (MOVED). No sync is lost: after
 * every one the rule is synced, not degraded. */
Test(cluster, a_slot_migration_costs_no_sync)
{
	unsigned slot = rule_slot("fleet");
	int from = redis_cluster_owner(&cluster, slot), to = (from + 1) % 3;
	struct xrl_global_status status;
	struct xrl_budget_rule *a;

	node_start(&nodes[0], cluster.node[from].port, "198.18.0.1", 150,
		   false);
	node_start(&nodes[1], cluster.node[from].port, "198.18.0.2", 50,
		   false);
	run(2, CHUNKS_PER_S);
	a = xrl_budgets_find(&nodes[0].budgets, nodes[0].id);
	redis_cluster_migrate_begin(&cluster, slot, from, to);
	run(2, SYNC_EVERY);
	cr_assert(!a->degraded, "importing/migrating: %s", a->reason);
	redis_cluster_migrate_keys(&cluster, slot, from, to);
	run(2, SYNC_EVERY);	/* the source answers ASK */
	cr_assert(!a->degraded, "keys moved (ASK): %s", a->reason);
	cr_assert_eq(a->nodes, 2);
	xrl_global_status(nodes[0].budgets.global, &status);
	cr_assert_geq(status.asked, 1, "no ASK was followed");
	redis_cluster_migrate_end(&cluster, slot, to);
	run(2, SYNC_EVERY);	/* the source answers MOVED */
	cr_assert(!a->degraded, "slot moved (MOVED): %s", a->reason);
	cr_assert_eq(a->nodes, 2);
	cr_assert_eq(redis_cluster_owner(&cluster, slot), to);
	xrl_global_status(nodes[0].budgets.global, &status);
	cr_assert_eq(status.moved, 1, "MOVED followed %lu times", status.moved);
	assert_shared_3_to_1("cluster, after a slot migration", 1);
}

/* ---- a stranger's replies -------------------------------------------- */

#define SHA_REPLY "$40\r\n0123456789012345678901234567890123456789\r\n"
#define PLAIN "-ERR This instance has cluster support disabled\r\n"

struct stranger {
	const char *what;
	const char *cluster_slots;	/* reply to CLUSTER SLOTS */
	const char *evalsha;		/* reply to EVALSHA */
	const char *reason;		/* what status says, a prefix */
	unsigned trickle_ms;		/* EVALSHA's reply, a byte each */
};

static const struct stranger strangers[] = {
	{ "an integer for the script", PLAIN, ":1\r\n",
	  "unexpected reply to the sync script", 0 },
	{ "our own name missing", PLAIN,
	  "*3\r\n:0\r\n$5\r\nother\r\n$3\r\n100\r\n",
	  "unexpected reply to the sync script", 0 },
	{ "a negative demand", PLAIN, "*3\r\n:0\r\n$1\r\na\r\n$2\r\n-5\r\n",
	  "unexpected reply to the sync script", 0 },
	{ "a demand of 10^20", PLAIN,
	  "*3\r\n:0\r\n$1\r\na\r\n$21\r\n100000000000000000000\r\n",
	  "unexpected reply to the sync script", 0 },
	{ "a name of 200 bytes", PLAIN,
	  "*3\r\n:0\r\n$200\r\n"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "\r\n$1\r\n1\r\n", "unexpected reply to the sync script", 0 },
	{ "our name twice", PLAIN,
	  "*5\r\n:0\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n9\r\n",
	  "unexpected reply to the sync script", 0 },
	{ "nested arrays for names", PLAIN,
	  "*3\r\n:0\r\n*1\r\n$1\r\na\r\n$1\r\n1\r\n",
	  "unexpected reply to the sync script", 0 },
	{ "an array of 2^31 - 1 announced", PLAIN, "*2147483647\r\n", "", 0 },
	{ "a string of 1 GB announced", PLAIN, "$1073741824\r\nabc", "", 0 },
	{ "a good reply, one byte every 30 ms", PLAIN,
	  "*3\r\n:0\r\n$1\r\na\r\n$1\r\n1\r\n", "timed out", 30 },
	{ "an error", PLAIN, "-OOM command not allowed\r\n",
	  "error reply: OOM", 0 },
	{ "MOVED to a slot that is not the rule's", PLAIN,
	  "-MOVED 1 127.0.0.1:1\r\n", "bad redirect", 0 },
	{ "MOVED to garbage", PLAIN, "-MOVED 99999 nowhere\r\n",
	  "bad redirect", 0 },
	{ "CLUSTER SLOTS with start after end",
	  "*1\r\n*3\r\n:9\r\n:1\r\n*2\r\n$9\r\n127.0.0.1\r\n:1\r\n", NULL,
	  "CLUSTER SLOTS: unexpected reply", 0 },
	{ "CLUSTER SLOTS with port 0",
	  "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:0\r\n", NULL,
	  "CLUSTER SLOTS: unexpected reply", 0 },
	{ "CLUSTER SLOTS as a string", "+OK\r\n", NULL,
	  "CLUSTER SLOTS: unexpected reply", 0 },
};

/*
 * Each of the worst replies fails the rule, with a reason, never the
 * engine: bounded in time (one 50 ms timeout at most), the rule degraded
 * and holding its fallback part, and a local aggregate rule beside it
 * still re-split.
 */
Test(stranger, every_crafted_reply_degrades_the_rule_and_nothing_else)
{
	struct xrl_global_status status;
	struct fake_redis fake;
	struct packet pkt;
	size_t i;
	int k;

	pin_to_cpu0();
	now_ns = NS_PER_S;
	for (i = 0; i < sizeof(strangers) / sizeof(strangers[0]); i++) {
		const struct stranger *s = &strangers[i];
		struct fake_reply replies[] = {
			{ "CLUSTER SLOTS", s->cluster_slots, 0, 0 },
			{ "SCRIPT LOAD", SHA_REPLY, 0, 0 },
			{ "EVALSHA", s->evalsha ? s->evalsha : ":1\r\n", 0,
			  s->trickle_ms },
		};
		struct xrl_budget_rule *rule, *local;
		double started, took;

		fake_redis_start(&fake, replies, 3);
		nodes[0].name = "a";
		node_start(&nodes[0], fake.port, "198.18.1.1", 0, true);
		nodes[0].budgets.pool_pps = 0;
		cr_assert_eq(packet_from(&pkt, "198.18.1.1"), 0);
		started = real_ms();
		for (k = 0; k < 3; k++) {
			int j;

			for (j = 0; j < 50; j++)
				fixture_run(&nodes[0].dp, &pkt);
			now_ns += 100 * 1000000ULL;
			xrl_budgets_sync(&nodes[0].budgets, now_ns);
		}
		took = real_ms() - started;
		rule = xrl_budgets_find(&nodes[0].budgets, nodes[0].id);
		local = xrl_budgets_find(&nodes[0].budgets,
					 nodes[0].policy.rules[2].id);
		xrl_global_status(nodes[0].budgets.global, &status);
		fprintf(stderr, "stranger: %s: degraded: %s (%.0f ms)\n",
			s->what, rule->reason, took);
		cr_assert(rule->degraded, "%s: not degraded", s->what);
		cr_assert(status.degraded, "%s", s->what);
		cr_assert_neq(rule->reason[0], '\0', "%s: no reason", s->what);
		cr_assert(!strncmp(rule->reason, s->reason, strlen(s->reason)),
			  "%s: reason \"%s\"", s->what, rule->reason);
		/* 3 syncs, each bounded by one 50 ms deadline */
		cr_assert_lt(took, 1000, "%s: %.0f ms", s->what, took);
		cr_assert_leq(rule->local.pps, GLOBAL_PPS);
		cr_assert_gt(local->weights[0], local->weights[1],
			     "%s: the local rule was not re-split", s->what);
		node_stop(&nodes[0]);
		fake_redis_stop(&fake);
	}
}

/*
 * Two daemons that share a node name (the default is the hostname, so
 * cloned machines do): each sees its name written by another instance,
 * says so in status, /metrics and the log, and takes half of the name's
 * part, so that together they still admit the budget, not twice it.
 */
Test(global, two_daemons_with_one_name_are_detected_and_halved)
{
	struct xrl_budget_rule *a, *b;
	struct window w;
	json_t *json, *rule;
	char *metrics = NULL;
	size_t len = 0;
	FILE *out;

	nodes[1].name = "a";
	start_fleet();
	run(2, CHUNKS_PER_S);
	a = xrl_budgets_find(&nodes[0].budgets, nodes[0].id);
	b = xrl_budgets_find(&nodes[1].budgets, nodes[1].id);
	cr_assert(a->degraded && b->degraded, "not detected");
	cr_assert(strstr(a->reason, "node name \"a\" is also used by another "
			 "daemon"), "%s", a->reason);
	cr_assert(degraded(&nodes[0]) && degraded(&nodes[1]));
	w = measure(2 * CHUNKS_PER_S);
	report("one name for two daemons", w, 2);
	cr_assert_leq(w.a + w.b, GLOBAL_PPS * 2 * 1.05);
	cr_assert_geq(w.a + w.b, GLOBAL_PPS * 2 * 0.9);

	json = xrl_budgets_json(&nodes[0].budgets);
	rule = json_array_get(json_object_get(json, "aggregates"), 0);
	cr_assert(json_is_true(json_object_get(rule, "degraded")));
	cr_assert(strstr(json_string_value(json_object_get(rule,
				"degraded_reason")), "also used"));
	json_decref(json);
	out = open_memstream(&metrics, &len);
	xrl_budgets_write_metrics(out, &nodes[0].budgets);
	fclose(out);
	cr_assert(strstr(metrics, "xdp_ratelimit_sync_degraded{rule=\"fleet\"} "
			 "1"), "%s", metrics);
	free(metrics);
	nodes[1].name = "b";
}

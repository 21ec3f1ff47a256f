// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet budgets end to end: two or three real xdp-ratelimitd processes,
 * each attached to its own veth, one real redis-server, real frames from
 * paced senders left to the scheduler (and in one run moved between CPUs
 * by the test). Time is real here, so what is asserted is admitted
 * counts over a measured window, never speeds: after one second of
 * warm-up the fleet admits the global rate within 5%, and each node's
 * part follows its demand within 20%.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "fleet.h"

#define WARM_UP_S	1.0
#define MOVE_EVERY_S	0.15

static struct fleet fleet;
static struct redis_cluster cluster;
static bool with_cluster;

static void teardown(void)
{
	if (with_cluster)
		redis_cluster_stop(&cluster);
	fleet_destroy(&fleet);
}

TestSuite(fleet, .fini = teardown, .timeout = 120);

struct scenario {
	const char *what;
	int nodes;
	bool global;		/* false: one node, a local aggregate rule */
	unsigned pps, burst;	/* the rule's */
	unsigned offer[FLEET_MAX_NODES];
	double window_s;
	bool moved;		/* senders moved between CPUs on purpose */
	bool cluster;		/* a 3-master cluster, daemons pointed at a
				 * master that does not own the rule */
	double migrate_at_s;	/* >0: the rule's slot moves then */
	double redis_down_s[2];	/* >0: Redis stopped, then started */
};

struct outcome {
	uint64_t admitted[FLEET_MAX_NODES], arrived[FLEET_MAX_NODES];
	uint64_t sent[FLEET_MAX_NODES];
	uint64_t total, arrived_total;
	double window_s;
};

static const char *source(int k)
{
	static char text[FLEET_MAX_NODES][24];

	snprintf(text[k], sizeof(text[k]), "198.18.%d.1", k);
	return text[k];
}

static void start_fleet(const struct scenario *s)
{
	char yaml[512];
	int k;

	snprintf(yaml, sizeof(yaml),
		 "sync_interval: 100ms\n"
		 "rules:\n"
		 "  - name: fleet\n"
		 "    cidr: 198.18.0.0/16\n"
		 "    pps: %u\n"
		 "    burst: %u\n"
		 "    scope: aggregate\n"
		 "%s", s->pps, s->burst, s->global ? "    global: true\n" : "");
	fleet_create(&fleet, s->nodes, s->global && !s->cluster);
	if (s->cluster) {
		static char address[32];
		unsigned slot;
		int owner;

		fleet_enter(&fleet);
		with_cluster = true;
		redis_cluster_start(&cluster);
		slot = redis_cluster_key_slot(&cluster, "xrl:{fleet}:demand");
		owner = redis_cluster_owner(&cluster, slot);
		snprintf(address, sizeof(address), "127.0.0.1:%u",
			 cluster.node[(owner + 1) % 3].port);
		fleet.redis_address = address;
	}
	for (k = 0; k < s->nodes; k++)
		fleet_start_daemon(&fleet, k, yaml);
}

static void read_counts(int n, uint64_t *admitted, uint64_t *arrived)
{
	int k;

	for (k = 0; k < n; k++) {
		admitted[k] = fleet_admitted(&fleet, k, source(k));
		arrived[k] = admitted[k] +
			     fleet_refused(&fleet, k, source(k));
	}
}

/* Moves every sender to the other CPU every MOVE_EVERY_S until @until. */
static void move_senders(int n, double until)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int round = 0, k;

	while (fleet_now() < until) {
		for (k = 0; k < n; k++)
			fleet_move_sender(&fleet, k, (k + round) % cpus);
		round++;
		fleet_sleep(MOVE_EVERY_S);
	}
}

/* The moves happened: every CPU judged a good part of each node's
 * traffic (counted since the start, by the program itself). */
static void assert_moved(const struct scenario *s)
{
	uint64_t per_cpu[64], total;
	unsigned n, i;
	int k;

	for (k = 0; k < s->nodes; k++) {
		n = fleet_cpu_arrivals(&fleet, k, source(k), per_cpu, 64);
		for (i = 0, total = 0; i < n; i++)
			total += per_cpu[i];
		for (i = 0; i < n && i < sysconf(_SC_NPROCESSORS_ONLN); i++)
			cr_assert_geq(per_cpu[i], total / 5, "%s: node %c, CPU "
				      "%u judged %lu of %lu", s->what,
				      'a' + k, i, per_cpu[i], total);
	}
}

/* At @at the rule's slot moves to another master (keys and all). */
static void migrate(double at, double until)
{
	unsigned slot = redis_cluster_key_slot(&cluster, "xrl:{fleet}:demand");
	int from = redis_cluster_owner(&cluster, slot);

	fleet_sleep(at - fleet_now());
	redis_cluster_move_slot(&cluster, slot, from, (from + 1) % 3);
	cr_assert_eq(redis_cluster_owner(&cluster, slot), (from + 1) % 3);
	fleet_sleep(until - fleet_now());
}

static void redis_down_and_back(double t0, const struct scenario *s)
{
	uint16_t port = fleet.redis.port;

	fleet_sleep(t0 + s->redis_down_s[0] - fleet_now());
	redis_stop(&fleet.redis);
	fleet_sleep(t0 + s->redis_down_s[1] - fleet_now());
	cr_assert_eq(redis_start(&fleet.redis, port), 0,
		     "redis-server did not start again");
	fleet_sleep(t0 + s->window_s - fleet_now());
}

static struct outcome run(const struct scenario *s)
{
	uint64_t a0[FLEET_MAX_NODES], r0[FLEET_MAX_NODES];
	uint64_t a1[FLEET_MAX_NODES], r1[FLEET_MAX_NODES];
	struct outcome o = {};
	double t0, t1;
	int k;

	start_fleet(s);
	fleet_sleep(0.3);	/* every daemon has synced once */
	for (k = 0; k < s->nodes; k++)
		fleet_send(&fleet, k, source(k), s->offer[k],
			   WARM_UP_S + s->window_s + 0.5);
	fleet_sleep(WARM_UP_S);
	read_counts(s->nodes, a0, r0);
	t0 = fleet_now();
	if (s->moved)
		move_senders(s->nodes, t0 + s->window_s);
	else if (s->migrate_at_s > 0)
		migrate(t0 + s->migrate_at_s, t0 + s->window_s);
	else if (s->redis_down_s[0] > 0)
		redis_down_and_back(t0, s);
	else
		fleet_sleep(s->window_s);
	read_counts(s->nodes, a1, r1);
	t1 = fleet_now();
	o.window_s = t1 - t0;
	for (k = 0; k < s->nodes; k++) {
		o.sent[k] = fleet_send_wait(&fleet, k);
		o.admitted[k] = a1[k] - a0[k];
		o.arrived[k] = r1[k] - r0[k];
		o.total += o.admitted[k];
		o.arrived_total += o.arrived[k];
	}
	if (s->moved)
		assert_moved(s);
	return o;
}

static void report(const struct scenario *s, const struct outcome *o)
{
	double budget = s->pps * o->window_s;
	char line[512];
	int k, len;

	len = snprintf(line, sizeof(line), "fleet %s: admitted %lu of %.0f "
		       "(%+.1f%%) in %.2f s;", s->what, o->total, budget,
		       100.0 * ((double)o->total - budget) / budget,
		       o->window_s);
	for (k = 0; k < s->nodes; k++)
		len += snprintf(line + len, sizeof(line) - len,
				" %c: %lu (%.0f%%) of %lu arrived (%.0f%%), "
				"%lu sent;", 'a' + k, o->admitted[k],
				100.0 * o->admitted[k] / (o->total ?: 1),
				o->arrived[k], 100.0 * o->arrived[k] /
				(o->arrived_total ?: 1), o->sent[k]);
	fprintf(stderr, "%s\n", line);
}

/* The total within 5% of the rate; each part within 20% of its demand. */
static void assert_accurate(const struct scenario *s, const struct outcome *o)
{
	double budget = s->pps * o->window_s, part, demand;
	int k;

	report(s, o);
	cr_assert_geq(o->arrived_total, budget * 1.3,
		      "%s: offered too little to test the limit: %lu arrived",
		      s->what, o->arrived_total);
	cr_assert_geq(o->total, budget * 0.95, "%s: %lu of %.0f", s->what,
		      o->total, budget);
	cr_assert_leq(o->total, budget * 1.05, "%s: %lu of %.0f", s->what,
		      o->total, budget);
	for (k = 0; k < s->nodes; k++) {
		part = (double)o->admitted[k] / o->total;
		demand = (double)o->arrived[k] / o->arrived_total;
		cr_assert_geq(part, demand * 0.8, "%s: node %c has %.1f%% for "
			      "a demand of %.1f%%", s->what, 'a' + k,
			      100 * part, 100 * demand);
		cr_assert_leq(part, demand * 1.2, "%s: node %c has %.1f%% for "
			      "a demand of %.1f%%", s->what, 'a' + k,
			      100 * part, 100 * demand);
	}
}

Test(fleet, two_daemons_200pps_unpinned_senders)
{
	struct scenario s = {
		.what = "2 daemons, 200 pps, unpinned", .nodes = 2,
		.global = true, .pps = 200, .burst = 20,
		.offer = { 450, 150 }, .window_s = 4,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
}

Test(fleet, two_daemons_200pps_senders_moved_between_cpus)
{
	struct scenario s = {
		.what = "2 daemons, 200 pps, moved every 150 ms", .nodes = 2,
		.global = true, .pps = 200, .burst = 20,
		.offer = { 450, 150 }, .window_s = 4, .moved = true,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
}

Test(fleet, three_daemons_200pps_unpinned_senders)
{
	struct scenario s = {
		.what = "3 daemons, 200 pps, unpinned", .nodes = 3,
		.global = true, .pps = 200, .burst = 20,
		.offer = { 300, 200, 100 }, .window_s = 4,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
}

Test(fleet, two_daemons_20000pps_unpinned_senders)
{
	struct scenario s = {
		.what = "2 daemons, 20000 pps, unpinned", .nodes = 2,
		.global = true, .pps = 20000, .burst = 2000,
		.offer = { 30000, 10000 }, .window_s = 3,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
}

Test(fleet, local_aggregate_without_redis_source_moved_between_cpus)
{
	struct scenario s = {
		.what = "1 daemon, local aggregate, 200 pps, moved", .nodes = 1,
		.pps = 200, .burst = 20, .offer = { 400 }, .window_s = 4,
		.moved = true,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
}

Test(fleet, local_aggregate_without_redis_20000pps_moved_between_cpus)
{
	struct scenario s = {
		.what = "1 daemon, local aggregate, 20000 pps, moved",
		.nodes = 1, .pps = 20000, .burst = 2000, .offer = { 40000 },
		.window_s = 3, .moved = true,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
}

Test(fleet, cluster_daemons_pointed_at_a_non_owner_and_a_slot_migrated)
{
	struct scenario s = {
		.what = "2 daemons, 3-master cluster, non-owner, slot moved "
			"at 2 s", .nodes = 2, .global = true, .pps = 200,
		.burst = 20, .offer = { 450, 150 }, .window_s = 4,
		.cluster = true, .migrate_at_s = 2,
	};
	struct outcome o = run(&s);

	assert_accurate(&s, &o);
	cr_assert_null(strstr(fleet_log(&fleet, 0), "degraded"), "%s",
		       fleet_log(&fleet, 0));
}

/*
 * Redis stopped 1 s into the window and started again 4 s later, empty:
 * grace (1 s of last parts), fallback (200 / 2 each), the cool-off (5 s
 * from the failure), then the rejoin. Over the 10 s the fleet admits
 * the global rate within 5%, never more.
 */
Test(fleet, redis_stopped_and_back)
{
	struct scenario s = {
		.what = "2 daemons, Redis stopped at 1 s, back at 5 s",
		.nodes = 2, .global = true, .pps = 200, .burst = 20,
		.offer = { 450, 150 }, .window_s = 10,
		.redis_down_s = { 1, 5 },
	};
	struct outcome o = run(&s);
	double budget = s.pps * o.window_s;

	report(&s, &o);
	cr_assert_leq(o.total, budget * 1.05);
	cr_assert_geq(o.total, budget * 0.95);
	cr_assert(strstr(fleet_log(&fleet, 0), "reachable again"), "%s",
		  fleet_log(&fleet, 0));
	cr_assert(strstr(fleet_log(&fleet, 0), "budget sync: working again"),
		  "%s", fleet_log(&fleet, 0));
}

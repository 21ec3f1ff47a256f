// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Aggregate budgets (scope: aggregate): one budget for everything a rule
 * matches, enforced per CPU. Two threads pinned to CPU 0 and CPU 1 offer
 * traffic in chunks of simulated time (the test clock); between chunks
 * the sync engine (the daemon's step, as a library call) re-splits the
 * budget by each CPU's demand. Compared with the per-source design (one
 * bucket shared by both CPUs, updated by compare-and-swap) under the same
 * traffic.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "budget.h"
#include "cpu_pool.h"
#include "fixture.h"
#include "loader.h"

#define RATE		20000	/* pps */
#define BURST		400
#define CHUNK_NS	5000000ULL	/* 5 ms of simulated time per chunk */
#define SYNC_EVERY	20		/* chunks: a sync every 100 ms */
#define SECONDS		3
#define CHUNKS		(SECONDS * NS_PER_S / CHUNK_NS)
/* What a budget admits from the first chunk to the last: rate * t + burst
 * (the first chunk finds the bucket full, so t starts there). */
#define BUDGET(chunks)	((double)RATE * ((chunks) - 1) * CHUNK_NS / NS_PER_S \
			 + BURST)

static struct xrl_datapath dp;
static struct xrl_policy policy;
static struct xrl_budgets budgets;
static struct cpu_pool pool;

static void setup(void)
{
	cpu_pool_start(&pool, &dp);
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	cr_assert_eq(xrl_budgets_init(&budgets, &dp, 0), 0);
}

static void teardown(void)
{
	cpu_pool_stop(&pool);
	xrl_budgets_free(&budgets);
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(aggregate, .init = setup, .fini = teardown);

/* The rule for 198.18.0.0/24, with @scope; returns its id. */
static uint32_t install(enum xrl_scope scope)
{
	uint32_t id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT,
				   RATE, BURST, 0, 0);

	policy.rules[policy.n_rules - 1].scope = scope;
	fixture_apply(&dp, &policy);
	cr_assert_eq(xrl_budgets_set_policy(&budgets, &policy, NS_PER_S), 0);
	return id;
}

/* One by one: a run with repeat > 1 swaps the XDP dispatcher, which
 * costs milliseconds per chunk. */
static void set_traffic(int cpu, const char *src, uint32_t offer)
{
	cr_assert_eq(packet_from(&pool.workers[cpu].pkt, src), 0);
	pool.workers[cpu].runs = offer;
	pool.workers[cpu].repeat = 1;
}

/*
 * Runs @chunks chunks of simulated time from *@now_ns, both workers
 * offering at the start of each; syncs every SYNC_EVERY chunks when
 * @sync. Returns the time reached.
 */
static uint64_t run_chunks(uint64_t now_ns, unsigned chunks, bool sync)
{
	unsigned chunk;

	for (chunk = 0; chunk < chunks; chunk++) {
		now_ns += CHUNK_NS;
		xrl_datapath_set_time(&dp, now_ns);
		cpu_pool_round(&pool);
		if (sync && (chunk + 1) % SYNC_EVERY == 0)
			cr_assert_eq(xrl_budgets_sync(&budgets, now_ns), 0);
	}
	return now_ns;
}

static double error_percent(uint64_t admitted, double budget)
{
	return 100.0 * ((double)admitted - budget) / budget;
}

/*
 * Demand 3:1 (both CPUs over their share): the two together admit the
 * budget, rate * t + burst, and the split follows demand. The split
 * alone (no pool), as for a budget far above XRL_AGG_POOL_PPS.
 */
Test(aggregate, demand_3_to_1_admits_the_budget_and_favours_the_busier_cpu)
{
	uint64_t passed[CPU_POOL_SIZE], now = NS_PER_S, total;
	double budget = BUDGET(CHUNKS);
	struct xrl_budget_rule *rule;
	uint32_t id;

	budgets.pool_pps = 0;
	id = install(XRL_SCOPE_AGGREGATE);

	/* per chunk of 5 ms: 300 and 100 offered, 100 in the budget */
	set_traffic(0, "198.18.0.1", 300);
	set_traffic(1, "198.18.0.2", 100);
	now = run_chunks(now, CHUNKS, true);
	cpu_pool_passed(&pool, passed);
	total = passed[0] + passed[1];
	rule = xrl_budgets_find(&budgets, id);
	cr_assert_not_null(rule);
	fprintf(stderr, "aggregate 3:1 over %ds: admitted %lu (CPU0 %lu, "
		"CPU1 %lu) of budget %.0f: %+.2f%%; weights %u:%u of %u\n",
		SECONDS, total, passed[0], passed[1], budget,
		error_percent(total, budget), rule->weights[0],
		rule->weights[1], XRL_SHARE_ONE);
	cr_assert_leq(total, budget * 1.05);
	cr_assert_geq(total, budget * 0.95);
	cr_assert_gt(rule->weights[0], 2 * rule->weights[1],
		     "weights %u:%u", rule->weights[0], rule->weights[1]);
	cr_assert_eq(rule->pool_weight, 0);
	cr_assert_gt(passed[0], 2 * passed[1]);
	cr_assert_eq(fixture_rule_counters(&dp, id).outcome[XRL_RULE_PASSED]
		     .packets, total);
}

/* An idle CPU keeps a floor, so its first packets pass and its demand
 * shows; the next syncs give it its part (the split alone, no pool). */
Test(aggregate, an_idle_cpu_ramps_up)
{
	uint64_t before[CPU_POOL_SIZE], after[CPU_POOL_SIZE], now = NS_PER_S;
	struct xrl_budget_rule *rule;
	uint32_t id;

	budgets.pool_pps = 0;
	id = install(XRL_SCOPE_AGGREGATE);

	set_traffic(0, "198.18.0.1", 300);
	set_traffic(1, "198.18.0.2", 0);
	now = run_chunks(now, 200, true);	/* 1 s, CPU1 idle */
	rule = xrl_budgets_find(&budgets, id);
	cr_assert_eq(rule->weights[1],
		     xrl_share_floor(budgets.n_cpus, XRL_SHARE_FLOOR_PERCENT),
		     "idle CPU at its floor: %u", rule->weights[1]);

	set_traffic(1, "198.18.0.2", 300);	/* both busy, 1:1 now */
	cpu_pool_passed(&pool, before);
	now = run_chunks(now, 5 * SYNC_EVERY, true);
	cpu_pool_passed(&pool, after);
	cr_assert_eq(rule->weights[0], XRL_SHARE_ONE / 2);
	cr_assert_eq(rule->weights[1], XRL_SHARE_ONE / 2);
	/* 0.5 s: 10000 in the budget; CPU1 ramped within one sync */
	cr_assert_geq(after[1] - before[1], 4000, "CPU1: %lu",
		      after[1] - before[1]);
	cr_assert_leq(after[0] + after[1] - before[0] - before[1],
		      RATE / 2 + BURST);
}

/* No daemon (no sync): the split written with the policy (floors, the
 * rest in the pool) serves whichever CPUs receive traffic, and the
 * budget is still never exceeded (but by one floor packet per CPU). */
Test(aggregate, without_syncs_busy_cpus_share_the_whole_budget)
{
	uint64_t passed[CPU_POOL_SIZE];
	double budget = BUDGET(CHUNKS);

	install(XRL_SCOPE_AGGREGATE);
	set_traffic(0, "198.18.0.1", 300);
	set_traffic(1, "198.18.0.2", 100);
	run_chunks(NS_PER_S, CHUNKS, false);
	cpu_pool_passed(&pool, passed);
	fprintf(stderr, "aggregate 3:1, no sync: CPU0 %lu CPU1 %lu of %.0f\n",
		passed[0], passed[1], budget);
	cr_assert_leq(passed[0] + passed[1], budget + CPU_POOL_SIZE);
	cr_assert_geq(passed[0] + passed[1], budget * 0.95);
}

/* The traffic of one CPU (a single queue, one flow) gets the whole
 * budget without the daemon, not 1/ncpus of it. */
Test(aggregate, without_syncs_one_busy_cpu_gets_the_whole_budget)
{
	uint64_t passed[CPU_POOL_SIZE];
	double budget = BUDGET(CHUNKS);

	install(XRL_SCOPE_AGGREGATE);
	set_traffic(0, "198.18.0.1", 0);
	set_traffic(1, "198.18.0.2", 300);
	run_chunks(NS_PER_S, CHUNKS, false);
	cpu_pool_passed(&pool, passed);
	fprintf(stderr, "aggregate, one CPU, no sync: CPU1 %lu of %.0f\n",
		passed[1], budget);
	cr_assert_eq(passed[0], 0);
	cr_assert_leq(passed[1], budget + 1);
	cr_assert_geq(passed[1], budget * 0.97);
}

/*
 * Traffic that hops between CPUs faster than the syncs (every 35 ms,
 * syncs every 100 ms): with the budget in the pool, each hop costs
 * nothing and the whole budget is admitted.
 */
Test(aggregate, traffic_hopping_between_cpus_keeps_the_budget)
{
	uint64_t passed[CPU_POOL_SIZE], now = NS_PER_S, total;
	double budget = BUDGET(CHUNKS);
	unsigned chunk;

	install(XRL_SCOPE_AGGREGATE);
	for (chunk = 0; chunk < CHUNKS; chunk++) {
		bool on0 = chunk / 7 % 2 == 0;

		set_traffic(0, "198.18.0.1", on0 ? 300 : 0);
		set_traffic(1, "198.18.0.2", on0 ? 0 : 300);
		now = run_chunks(now, 1, chunk % SYNC_EVERY == SYNC_EVERY - 1);
	}
	cpu_pool_passed(&pool, passed);
	total = passed[0] + passed[1];
	fprintf(stderr, "aggregate, hopping every 35 ms: CPU0 %lu CPU1 %lu, "
		"%lu of %.0f: %+.2f%%\n", passed[0], passed[1], total, budget,
		error_percent(total, budget));
	cr_assert_geq(total, budget * 0.97);
	cr_assert_leq(total, budget + CPU_POOL_SIZE);
}

/*
 * The debt bound, with the split alone (no pool) and the rule,
 * 200 pps burst 20: CPU1 idles at its floor (about 2 pps, whose one
 * packet is half a second), traffic moves there and takes that packet;
 * the next sync gives CPU1 the main share (tolerance 100 ms). Its debt
 * is cut to that tolerance, so it admits at the share's rate at once,
 * not after the floor packet's half second.
 */
Test(aggregate, a_move_costs_at_most_one_sync)
{
	uint64_t before[CPU_POOL_SIZE], after[CPU_POOL_SIZE], now = NS_PER_S;
	uint32_t id;

	budgets.pool_pps = 0;
	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 200, 20,
			  0, 0);
	policy.rules[policy.n_rules - 1].scope = XRL_SCOPE_AGGREGATE;
	fixture_apply(&dp, &policy);
	cr_assert_eq(xrl_budgets_set_policy(&budgets, &policy, now), 0);
	/* 2 per 5 ms: 400 pps on CPU0 for 1 s */
	set_traffic(0, "198.18.0.1", 2);
	set_traffic(1, "198.18.0.2", 0);
	now = run_chunks(now, 10 * SYNC_EVERY, true);
	cr_assert_eq(xrl_budgets_find(&budgets, id)->weights[1],
		     xrl_share_floor(budgets.n_cpus, XRL_SHARE_FLOOR_PERCENT));
	/* The move: one sync interval at CPU1's floor, then its share. */
	set_traffic(0, "198.18.0.1", 0);
	set_traffic(1, "198.18.0.2", 2);
	now = run_chunks(now, SYNC_EVERY, true);
	cr_assert_gt(xrl_budgets_find(&budgets, id)->weights[1],
		     XRL_SHARE_ONE / 2);
	cpu_pool_passed(&pool, before);
	now = run_chunks(now, 2 * SYNC_EVERY, true);	/* 200 ms */
	cpu_pool_passed(&pool, after);
	fprintf(stderr, "aggregate 200 pps, after a move: CPU1 admitted %lu "
		"in the 200 ms after its share came\n", after[1] - before[1]);
	/* 200 ms of ~196 pps is 39; locked by the floor's debt it is 0 */
	cr_assert_geq(after[1] - before[1], 35);
	cr_assert_leq(after[1] - before[1], 40 + 20);
}

/*
 * Shares follow demand as it arrives (admitted or not), so every packet
 * has about the same chance to pass whichever CPU it lands on: a CPU
 * asking little keeps its proportion (plus the floor), not all it asks.
 */
Test(aggregate, a_light_cpu_passes_the_same_fraction)
{
	uint64_t before[CPU_POOL_SIZE], after[CPU_POOL_SIZE], now = NS_PER_S;
	double ratio0, ratio1;
	uint64_t total;

	install(XRL_SCOPE_AGGREGATE);
	/* 5 ms chunks: CPU1 asks 10 (2000 pps), CPU0 asks 300 */
	set_traffic(0, "198.18.0.1", 300);
	set_traffic(1, "198.18.0.2", 10);
	now = run_chunks(now, 2 * SYNC_EVERY, true);
	cpu_pool_passed(&pool, before);
	now = run_chunks(now, 10 * SYNC_EVERY, true);	/* 1 s */
	cpu_pool_passed(&pool, after);
	ratio0 = (after[0] - before[0]) / (300.0 * 10 * SYNC_EVERY);
	ratio1 = (after[1] - before[1]) / (10.0 * 10 * SYNC_EVERY);
	total = after[0] + after[1] - before[0] - before[1];
	fprintf(stderr, "aggregate, 30:1: CPU0 %lu (%.1f%% of its offer), "
		"CPU1 %lu (%.1f%%) in 1 s of %d\n", after[0] - before[0],
		100 * ratio0, after[1] - before[1], 100 * ratio1, RATE);
	cr_assert_geq(ratio1, ratio0);
	cr_assert_geq(total, RATE * 0.95);
	cr_assert_leq(total, RATE + BURST);
}

/*
 * The per-source design under the same traffic: every packet from one
 * source, one bucket shared by both CPUs through compare-and-swap.
 */
Test(aggregate, compared_with_one_shared_cas_bucket)
{
	uint64_t passed[CPU_POOL_SIZE], total;
	double budget = BUDGET(CHUNKS);

	install(XRL_SCOPE_SOURCE);
	set_traffic(0, "198.18.0.1", 300);
	set_traffic(1, "198.18.0.1", 100);
	run_chunks(NS_PER_S, CHUNKS, false);
	cpu_pool_passed(&pool, passed);
	total = passed[0] + passed[1];
	fprintf(stderr, "shared CAS bucket 3:1 over %ds: admitted %lu (CPU0 "
		"%lu, CPU1 %lu) of budget %.0f: %+.2f%%\n", SECONDS, total,
		passed[0], passed[1], budget, error_percent(total, budget));
	cr_assert_leq(total, budget);
	cr_assert_geq(total, budget * 0.999);
}

/* A rule that stops being aggregate (or goes) takes its shares and state
 * with it; one that stays keeps its buckets across the reload. */
Test(aggregate, reloads_keep_kept_rules_and_forget_the_others)
{
	int n_cpus = libbpf_num_possible_cpus();
	struct xrl_agg_state state[n_cpus];
	struct xrl_agg_share shares[n_cpus];
	uint32_t kept, gone;

	kept = install(XRL_SCOPE_AGGREGATE);
	gone = fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, RATE,
			    BURST, 0, 0);
	policy.rules[policy.n_rules - 1].scope = XRL_SCOPE_AGGREGATE;
	fixture_apply(&dp, &policy);
	set_traffic(0, "198.18.0.1", 10);
	set_traffic(1, "198.18.1.1", 10);
	run_chunks(NS_PER_S, 1, false);
	cr_assert_eq(xrl_agg_read_state(&dp, kept, state), 0);
	cr_assert_eq(xrl_agg_read_state(&dp, gone, state), 0);

	policy.rules[policy.n_rules - 1].scope = XRL_SCOPE_SOURCE;
	fixture_apply(&dp, &policy);
	cr_assert_eq(xrl_agg_read_state(&dp, gone, state), -ENOENT);
	cr_assert_neq(bpf_map_lookup_elem(dp.agg_shares_fd, &gone, shares), 0);
	cr_assert_eq(xrl_agg_read_state(&dp, kept, state), 0);
	cr_assert_eq(state[0].arrived + state[1].arrived, 10);
	cr_assert_eq(bpf_map_lookup_elem(dp.agg_shares_fd, &kept, shares), 0);
}

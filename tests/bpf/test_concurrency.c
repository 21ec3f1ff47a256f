// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Exactness across CPUs: two threads pinned to two CPUs judge packets of
 * one source at the same test-clock instant, starting together; however
 * their compare-and-swaps interleave, exactly `burst` pass per round.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cpu_pool.h"
#include "fixture.h"
#include "limit.h"
#include "loader.h"

/* A burst that takes one CPU a few hundred microseconds to drain, so the
 * other starts while it lasts (the logged overlap says how often). */
#define ROUNDS		((int)fixture_scaled(200, 20))	/* by $XRL_TEST_SCALE */
#define PER_THREAD	4000	/* packets each CPU offers per round */
#define BURST		2000

static struct xrl_datapath dp;
static struct xrl_policy policy;
static struct cpu_pool pool;

static void setup(void)
{
	cpu_pool_start(&pool, &dp);
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void teardown(void)
{
	cpu_pool_stop(&pool);
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(concurrency, .init = setup, .fini = teardown);

/* One round: both workers offer PER_THREAD packets of @pkt at once.
 * Returns whether both CPUs admitted some (the race was real). */
static bool run_round(const struct packet *pkt)
{
	uint64_t before[CPU_POOL_SIZE], after[CPU_POOL_SIZE];
	int i;

	for (i = 0; i < CPU_POOL_SIZE; i++) {
		pool.workers[i].pkt = *pkt;
		pool.workers[i].runs = 1;
		pool.workers[i].repeat = PER_THREAD;
	}
	cpu_pool_passed(&pool, before);
	cpu_pool_round(&pool);
	cpu_pool_passed(&pool, after);
	return after[0] > before[0] && after[1] > before[1];
}

static void log_overlap(int both)
{
	/* Not asserted: how the two CPUs interleave is up to the machine.
	 * The exact totals above hold either way. */
	cr_log_info("%d of %d rounds had both CPUs admitting", both, ROUNDS);
}

Test(concurrency, a_new_source_admits_exactly_burst_across_cpus)
{
	struct fixture_counts counts;
	struct xrl_bucket bucket;
	struct packet pkt;
	char src[32];
	int round, both = 0;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1000, BURST, 0, 0);
	fixture_apply(&dp, &policy);
	for (round = 0; round < ROUNDS; round++) {
		/* A source never seen: both CPUs race to create its bucket. */
		snprintf(src, sizeof(src), "198.18.%d.%d", round / 200,
			 round % 200 + 1);
		cr_assert_eq(packet_from(&pkt, src), 0);
		both += run_round(&pkt);
		cr_assert_eq(fixture_bucket(&dp, src, 0, &bucket), 0);
		cr_assert_eq(fixture_packets_owed(&bucket, 1000, BURST,
						  NS_PER_S), BURST,
			     "round %d", round);
		/* Counted from the first refusal: every refusal, and only
		 * passes another CPU took before it but counted after. */
		counts = fixture_source_counts(&dp, src, 0);
		cr_assert_eq(counts.dropped, CPU_POOL_SIZE * PER_THREAD - BURST,
			     "round %d", round);
		cr_assert_lt(counts.passed, CPU_POOL_SIZE, "round %d: %lu",
			     round, counts.passed);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), ROUNDS * BURST);
	log_overlap(both);
}

Test(concurrency, a_refilled_source_admits_exactly_burst_across_cpus)
{
	uint64_t before_refusal = 0, passed;
	struct packet pkt;
	int round, both = 0;

	/* 1 Mpps: the burst refills in 2 ms; each round is 1 s later. */
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1000000, BURST, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	for (round = 0; round < ROUNDS; round++) {
		xrl_datapath_set_time(&dp, (round + 1) * NS_PER_S);
		both += run_round(&pkt);
		/* Counted from the first refusal, in round 0 (what was
		 * counted there is the passes other CPUs counted late). */
		passed = fixture_source_counts(&dp, "198.18.0.1", 0).passed;
		if (!round)
			before_refusal = passed;
		cr_assert_eq(passed - before_refusal, round * (uint64_t)BURST,
			     "round %d: %lu passed in all", round,
			     passed - before_refusal);
	}
	log_overlap(both);
}

/* What a limit's word says is owed at @now_ns, in its units. */
static uint64_t debt_units(uint64_t word, uint64_t now_ns)
{
	int shift = XRL_TAT_SHIFT(word);
	uint64_t now = shift >= 0 ? now_ns << shift : now_ns >> -shift;

	return XRL_TAT_AHEAD(word, now);
}

/*
 * Bytes bind before packets: the packet limit takes a CAS first and must
 * give it back whenever the byte CAS loses a race. Whatever the
 * interleaving, exactly the byte burst passes and the packet limit is
 * charged for exactly those packets, not for the races.
 */
Test(concurrency, a_lost_race_on_bytes_gives_the_packet_back)
{
	const uint64_t frames = 1500, frame_len = 100;
	struct packet_spec spec = { .src = "198.18.0.1",
				    .frame_len = frame_len };
	struct xrl_limit pps_limit, bps_limit;
	struct xrl_bucket bucket;
	struct packet pkt;
	uint64_t now, passed = 0, counted;
	int round, both = 0;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1000000, BURST, 800000000,
		     frames * frame_len);
	fixture_apply(&dp, &policy);
	cr_assert_eq(xrl_limit_compile_pps(1000000, BURST, &pps_limit), 0);
	cr_assert_eq(xrl_limit_compile_bps(800000000, frames * frame_len,
					   &bps_limit), 0);
	cr_assert_eq(packet_build(&pkt, &spec), 0);
	for (round = 0; round < ROUNDS; round++) {
		now = (round + 1) * NS_PER_S;
		xrl_datapath_set_time(&dp, now);
		both += run_round(&pkt);
		cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
		/* Passes are counted from the first refusal (round 0). */
		counted = fixture_source_counts(&dp, "198.18.0.1", 0).passed;
		cr_assert(!round || counted - passed == frames,
			  "round %d: %lu", round, counted - passed);
		passed = counted;
		cr_assert_eq(debt_units(bucket.tat[XRL_LIMIT_PACKETS], now),
			     frames * pps_limit.interval,
			     "round %d: packet limit charged for races", round);
		cr_assert_eq(debt_units(bucket.tat[XRL_LIMIT_BYTES], now),
			     frames * frame_len * bps_limit.interval,
			     "round %d", round);
	}
	log_overlap(both);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Strategies in the data path, through BPF_PROG_TEST_RUN with the test
 * clock: token and leaky buckets of the same parameters admit identical
 * sequences; a sliding window admits exactly its limit at one instant,
 * across CPUs too, is admitted again exactly when the documented bound
 * says (include/xrl.h, "Strategies"), never more than its limit in any
 * window, and does not count its refusals.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "cpu_pool.h"
#include "fixture.h"
#include "loader.h"
#include "rule.h"

#define NS_PER_MS	1000000ULL

static struct xrl_datapath dp;
static struct xrl_policy policy;

static void setup(void)
{
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(window, .init = setup, .fini = teardown);

static uint32_t add_rule(const char *cidr, struct xrl_rule_spec rule)
{
	return fixture_rule_spec(&policy, cidr, rule);
}

static uint32_t window_rule(const char *cidr, enum xrl_action action,
			    uint64_t limit, uint64_t window_ns)
{
	struct xrl_rule_spec rule = {
		.action = action,
		.strategy = {
			.kind = XRL_STRATEGY_SLIDING_WINDOW,
			.limit = limit,
			.window_ns = window_ns,
		},
	};

	return add_rule(cidr, rule);
}

static struct packet packet_of(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	return pkt;
}

/* How many of @n packets of @pkt pass at @now_ns, one run each. */
static unsigned admitted_at(const struct packet *pkt, uint64_t now_ns,
			    unsigned n)
{
	unsigned i, passed = 0;

	xrl_datapath_set_time(&dp, now_ns);
	for (i = 0; i < n; i++)
		passed += fixture_run(&dp, pkt) == XDP_PASS;
	return passed;
}

/* A fixed pseudo-random sequence (the test repeats exactly). */
static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

/*
 * Sources of a token bucket and of its leaky-bucket twins (the same rate
 * and burst; a pace given as a rate or as an interval) offered the same
 * long arrival sequence, bursts and gaps, admit the same packets.
 */
Test(window, token_and_leaky_buckets_admit_identical_sequences)
{
	static const char *const src[] = {
		"198.18.1.1", "198.18.2.1", "198.18.3.1",	/* 1000 pps, 20 */
		"198.18.4.1", "198.18.5.1",	/* 250 pps, burst 1 */
	};
	struct xrl_rule_spec token = { .pps = 1000, .burst = 20 };
	struct xrl_rule_spec leaky_rate = {
		.pps = 1000, .burst = 20,
		.strategy.kind = XRL_STRATEGY_LEAKY_BUCKET,
	};
	struct xrl_rule_spec leaky_interval = {
		.burst = 20,
		.strategy = { .kind = XRL_STRATEGY_LEAKY_BUCKET,
			      .interval_ns = NS_PER_MS },
	};
	struct xrl_rule_spec token_pace = { .pps = 250, .burst = 1 };
	struct xrl_rule_spec leaky_pace = {	/* burst 1 unless set */
		.strategy = { .kind = XRL_STRATEGY_LEAKY_BUCKET,
			      .interval_ns = 4 * NS_PER_MS },
	};
	struct packet pkt[5];
	uint64_t seed = 14, start = 10 * NS_PER_S, now = start, r;
	double span_s;
	unsigned step, i, k, verdict[5], passed[5] = { 0 }, offered = 0;

	add_rule("198.18.1.0/24", token);
	add_rule("198.18.2.0/24", leaky_rate);
	add_rule("198.18.3.0/24", leaky_interval);
	add_rule("198.18.4.0/24", token_pace);
	add_rule("198.18.5.0/24", leaky_pace);
	fixture_apply(&dp, &policy);
	for (i = 0; i < 5; i++)
		pkt[i] = packet_of(src[i]);

	for (step = 0; step < 6000; step++) {
		r = next_random(&seed);
		/* Bursts at one instant, gaps up to 3 ms, sometimes idle:
		 * about twice the faster rate, so both limits bind. */
		now += r % 4 == 0 ? 0 : r % 32 == 1 ? 50 * NS_PER_MS :
		       (r >> 4) % (3 * NS_PER_MS);
		xrl_datapath_set_time(&dp, now);
		for (k = 0; k < 1 + (r >> 8) % 5; k++) {
			for (i = 0; i < 5; i++) {
				verdict[i] = fixture_run(&dp, &pkt[i]);
				passed[i] += verdict[i] == XDP_PASS;
			}
			offered++;
			cr_assert_eq(verdict[1], verdict[0], "step %u", step);
			cr_assert_eq(verdict[2], verdict[0], "step %u", step);
			cr_assert_eq(verdict[4], verdict[3], "step %u", step);
		}
	}
	/* Both limits bound, each to its rate over the sequence's span. */
	span_s = (double)(now - start) / NS_PER_S;
	cr_assert(passed[0] > offered / 4 && passed[0] < offered * 3 / 4,
		  "%u of %u", passed[0], offered);
	cr_assert_leq(passed[0], 1000 * span_s + 20);
	cr_assert(passed[3] > 0 && passed[3] < passed[0]);
	cr_assert_leq(passed[3], 250 * span_s + 1);
	cr_log_info("%u offered: 1000 pps burst 20 admitted %u, 250 pps "
		    "burst 1 admitted %u", offered, passed[0], passed[3]);
}

/* The first instant from which sub-window @e no longer counts. */
static uint64_t leaves_at(uint64_t e, uint64_t sub_ns)
{
	return (e + XRL_WINDOW_SUBS + 1) * sub_ns;
}

/*
 * limit 50 in 1 s: at one instant exactly 50 pass; the window holds
 * them until the sub-window of the first one leaves it, and the one
 * packet admitted in its place is the first one's: the 49 admitted
 * later still count.
 */
Test(window, the_n_plus_first_is_refused_until_the_first_leaves)
{
	const uint64_t window = NS_PER_S, sub = (window + 14) / 15;
	struct packet pkt = packet_of("198.18.0.1");
	uint64_t t0 = 10 * NS_PER_S + 12345, t1 = t0 + 300 * NS_PER_MS, back;
	struct fixture_counts counts;
	struct xrl_bucket bucket;

	window_rule("198.18.0.0/24", XRL_ACTION_LIMIT, 50, window);
	fixture_apply(&dp, &policy);

	cr_assert_eq(admitted_at(&pkt, t0, 1), 1);
	cr_assert_eq(admitted_at(&pkt, t1, 60), 49, "the 51st is refused");
	cr_assert_eq(admitted_at(&pkt, t0 + window, 1), 0,
		     "still in the window");
	back = leaves_at(t0 / sub, sub);
	cr_assert_eq(admitted_at(&pkt, back - 1, 1), 0,
		     "the first's sub-window still counts");
	cr_assert_eq(admitted_at(&pkt, back, 3), 1,
		     "the first left: one in its place, the others still in");
	/* The documented bound of refusing early: under one sub-window. */
	cr_assert_geq(back, t0 + window);
	cr_assert_leq(back - (t0 + window), sub);
	/* And the 49 leave when theirs does. */
	cr_assert_eq(admitted_at(&pkt, leaves_at(t1 / sub, sub) - 1, 60), 0);
	cr_assert_eq(admitted_at(&pkt, leaves_at(t1 / sub, sub), 60), 49);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 1, &bucket), 0);
	/* Counted from its first refusal, the 51st: all 100 but 1 + 49. */
	counts = fixture_source_counts(&dp, "198.18.0.1", 1);
	cr_assert_eq(counts.passed, 100 - 1 - 49);
	cr_assert_eq(counts.dropped, 11 + 1 + 1 + 2 + 60 + 11);
}

/*
 * A long pseudo-random sequence: every verdict is the documented one (a
 * packet at t passes when fewer than n passed since the start of the
 * sub-window XRL_WINDOW_SUBS before t's), and no exact window (t - W, t]
 * ever holds more than n admitted packets.
 */
#define MODEL_PACKETS	6000

/* An exact sliding-window log of the same sequence, for comparison. */
static bool exact_log_admits(uint64_t *log, size_t *n, uint64_t limit,
			     uint64_t window, uint64_t now)
{
	size_t j, in_window = 0;

	for (j = *n; j > 0 && log[j - 1] > now - window; j--)
		in_window++;
	if (in_window >= limit)
		return false;
	log[(*n)++] = now;
	return true;
}

Test(window, every_verdict_is_the_documented_one_and_no_window_holds_more)
{
	const uint64_t limit = 20, window = 100 * NS_PER_MS;
	const uint64_t sub = (window + XRL_WINDOW_SUBS - 1) / XRL_WINDOW_SUBS;
	static uint64_t admitted[MODEL_PACKETS];
	struct packet pkt = packet_of("198.18.0.1");
	uint64_t seed = 7, now = 5 * NS_PER_S, r, from;
	static uint64_t exact[MODEL_PACKETS];
	size_t n_admitted = 0, i, j, in_window, early = 0;
	size_t n_exact = 0, exact_admitted = 0;
	bool model;
	int verdict;

	window_rule("198.18.0.0/24", XRL_ACTION_LIMIT, limit, window);
	fixture_apply(&dp, &policy);
	for (i = 0; i < MODEL_PACKETS; i++) {
		r = next_random(&seed);
		now += r % 3 == 0 ? 0 : (r >> 2) % (12 * NS_PER_MS);
		from = (now / sub - XRL_WINDOW_SUBS) * sub;
		for (j = n_admitted, in_window = 0; j > 0 &&
		     admitted[j - 1] >= from; j--)
			in_window++;
		model = in_window < limit;
		xrl_datapath_set_time(&dp, now);
		verdict = fixture_run(&dp, &pkt);
		cr_assert_eq(verdict == XDP_PASS, model, "packet %zu at %lu",
			     i, now);
		/* What an exact log would have admitted and this refused. */
		for (j = n_admitted, in_window = 0; j > 0 &&
		     admitted[j - 1] > now - window; j--)
			in_window++;
		early += !model && in_window < limit;
		if (model)
			admitted[n_admitted++] = now;
		exact_admitted += exact_log_admits(exact, &n_exact, limit,
						   window, now);
	}
	for (i = 0; i < n_admitted; i++) {
		for (j = i, in_window = 0; j < n_admitted &&
		     admitted[j] < admitted[i] + window; j++)
			in_window++;
		cr_assert_leq(in_window, limit, "window from %lu", admitted[i]);
	}
	cr_assert(n_admitted > limit * 10 && n_admitted < MODEL_PACKETS,
		  "%zu admitted", n_admitted);
	cr_assert_leq(n_admitted, exact_admitted, "refuses early only");
	cr_log_info("%d offered, %zu admitted (an exact log: %zu); %zu "
		    "refused at a moment an exact log would have admitted",
		    MODEL_PACKETS, n_admitted, exact_admitted, early);
}

/* A source refused all through its window is admitted again as soon as
 * its admissions leave: its refusals never counted. */
Test(window, refusals_are_not_counted)
{
	const uint64_t window = NS_PER_S, sub = (window + 14) / 15;
	struct packet pkt = packet_of("198.18.0.1");
	uint64_t t0 = 20 * NS_PER_S, t;
	unsigned refused = 0;

	window_rule("198.18.0.0/24", XRL_ACTION_LIMIT, 5, window);
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted_at(&pkt, t0, 5), 5);
	for (t = t0 + NS_PER_MS; t < leaves_at(t0 / sub, sub);
	     t += 7 * NS_PER_MS)
		refused += 10 - admitted_at(&pkt, t, 10);
	cr_assert_gt(refused, 1000);
	cr_assert_eq(admitted_at(&pkt, leaves_at(t0 / sub, sub), 10), 5);
}

/* A monitor window passes everything, counts what it would drop, and
 * its window holds only what it would have admitted. */
Test(window, a_monitor_window_passes_all_and_counts_as_a_limit_would)
{
	const uint64_t window = NS_PER_S, sub = (window + 14) / 15;
	struct packet pkt = packet_of("198.18.0.1");
	uint64_t t0 = 20 * NS_PER_S;
	struct xrl_rule_counters c;
	uint32_t id;

	id = window_rule("198.18.0.0/24", XRL_ACTION_MONITOR, 5, window);
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted_at(&pkt, t0, 10), 10);
	cr_assert_eq(admitted_at(&pkt, t0 + 500 * NS_PER_MS, 10), 10);
	c = fixture_rule_counters(&dp, id);
	cr_assert_eq(c.outcome[XRL_RULE_PASSED].packets, 5);
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].packets, 15);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MONITOR), 15);
	admitted_at(&pkt, leaves_at(t0 / sub, sub), 10);
	c = fixture_rule_counters(&dp, id);
	cr_assert_eq(c.outcome[XRL_RULE_PASSED].packets, 10);
}

/* A reload of the same policy keeps every window; a source keyed by
 * its /24 shares one window across its addresses. */
Test(window, a_policy_swap_keeps_the_windows)
{
	struct packet pkt = packet_of("198.18.0.1");
	uint64_t t0 = 20 * NS_PER_S;

	window_rule("198.18.0.0/24", XRL_ACTION_LIMIT, 50, NS_PER_S);
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted_at(&pkt, t0, 50), 50);
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted_at(&pkt, t0 + NS_PER_MS, 5), 0,
		     "the swap emptied the window");
}

/* A source active under a token bucket whose rule becomes a sliding
 * window has no window state to go by: it starts with a full window and
 * waits one, rather than getting a fresh n on top of what it just sent.
 * A source new to the rule gets its n at once. */
Test(window, a_source_whose_rule_became_a_window_starts_full)
{
	const uint64_t window = NS_PER_S, sub = (window + 14) / 15;
	struct packet pkt = packet_of("198.18.0.1");
	struct packet other = packet_of("198.18.0.2");
	struct xrl_rule_spec *rule;
	uint64_t t0 = 20 * NS_PER_S, t1 = t0 + NS_PER_MS;
	char err[128];

	add_rule("198.18.0.0/24", (struct xrl_rule_spec){ .pps = 1000,
							  .burst = 100 });
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted_at(&pkt, t0, 10), 10);
	rule = &policy.rules[policy.n_rules - 1];
	rule->pps = rule->burst = 0;
	rule->strategy = (struct xrl_strategy_spec){
		.kind = XRL_STRATEGY_SLIDING_WINDOW, .limit = 5,
		.window_ns = window,
	};
	cr_assert_eq(xrl_rule_check(rule, err, sizeof(err)), 0, "%s", err);
	fixture_apply(&dp, &policy);
	cr_assert_eq(admitted_at(&pkt, t1, 10), 0);
	cr_assert_eq(admitted_at(&other, t1, 10), 5);
	cr_assert_eq(admitted_at(&pkt, leaves_at(t1 / sub, sub) - 1, 1), 0);
	cr_assert_eq(admitted_at(&pkt, leaves_at(t1 / sub, sub), 10), 5);
}

/*
 * A new source the new-source budget refuses a bucket is judged by the
 * unknown_sources prefix fallback, which for a window is the pace
 * limit / window with a burst of 1: never more than the limit in any
 * window either. The test stays on one CPU: the budget is per CPU.
 */
Test(window, refused_new_sources_are_paced_never_more_than_the_limit)
{
	const uint64_t window = NS_PER_S;
	uint64_t t0 = 30 * NS_PER_S, t, times[256];
	unsigned n = 0, i, j, in_window, step = 0;
	struct packet pkt;
	cpu_set_t one;
	char src[32];

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	window_rule("198.18.0.0/16", XRL_ACTION_LIMIT, 5, window);
	policy.new_pps = 1;
	policy.new_burst = libbpf_num_possible_cpus();	/* one per CPU */
	policy.unknown = XRL_UNKNOWN_PREFIX;
	fixture_apply(&dp, &policy);
	pkt = packet_of("198.18.1.1");
	cr_assert_eq(admitted_at(&pkt, t0, 10), 5, "the one given a bucket");

	/* New sources of one /24 at one instant: one passes. */
	for (i = 0; i < 10; i++) {
		snprintf(src, sizeof(src), "198.18.2.%u", ++step);
		pkt = packet_of(src);
		if (admitted_at(&pkt, t0, 1))
			times[n++] = t0;
	}
	cr_assert_eq(n, 1);
	/* Then one every window / limit, a new source each 10 ms. */
	for (t = t0 + 10 * NS_PER_MS; t < t0 + 1500 * NS_PER_MS;
	     t += 10 * NS_PER_MS) {
		snprintf(src, sizeof(src), "198.18.2.%u", ++step % 250 + 1);
		pkt = packet_of(src);
		if (admitted_at(&pkt, t, 1))
			times[n++] = t;
	}
	cr_assert_eq(n, 8, "%u admitted in 1.5 s at 5 a second", n);
	for (i = 0; i < n; i++) {
		for (j = i, in_window = 0; j < n && times[j] < times[i] + window;
		     j++)
			in_window++;
		cr_assert_leq(in_window, 5);
	}
}

/* Two threads pinned to the two CPUs, packets of one source at one
 * frozen instant: exactly the limit passes, however the adds and
 * take-backs interleave, for a new source (both CPUs race to make its
 * bucket and window) and for one seen before. */
#define ROUNDS		200
#define PER_THREAD	400
#define LIMIT		50

static struct cpu_pool pool;

static void pool_setup(void)
{
	cpu_pool_start(&pool, &dp);
	setup();
}

static void pool_teardown(void)
{
	cpu_pool_stop(&pool);
	teardown();
}

TestSuite(window_cpus, .init = pool_setup, .fini = pool_teardown);

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

Test(window_cpus, exactly_n_pass_at_one_instant_across_cpus)
{
	uint64_t passed, before_refusal = 0;
	struct xrl_bucket bucket;
	struct packet pkt;
	char src[32];
	int round, both = 0;
	uint32_t id;

	id = window_rule("198.18.0.0/15", XRL_ACTION_LIMIT, LIMIT, NS_PER_S);
	fixture_apply(&dp, &policy);
	for (round = 0; round < ROUNDS; round++) {
		/* A new source each round, and one seen every round, each
		 * at an instant two windows after the last. */
		xrl_datapath_set_time(&dp, (uint64_t)(round + 2) * 2 * NS_PER_S);
		snprintf(src, sizeof(src), "198.18.%d.%d", round / 200 + 1,
			 round % 200 + 1);
		pkt = packet_of(src);
		both += run_round(&pkt);
		cr_assert_eq(fixture_bucket(&dp, src, id, &bucket), 0);
		/* Counted from the first refusal: only passes another CPU
		 * took before it but counted after. */
		passed = fixture_source_counts(&dp, src, id).passed;
		cr_assert_lt(passed, CPU_POOL_SIZE, "round %d: %lu passed",
			     round, passed);
		pkt = packet_of("198.18.0.1");
		both += run_round(&pkt);
		passed = fixture_source_counts(&dp, "198.18.0.1", id).passed;
		if (!round)
			before_refusal = passed;
		cr_assert_eq(passed - before_refusal, (uint64_t)round * LIMIT,
			     "round %d: %lu passed in all", round,
			     passed - before_refusal);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS),
		     2ULL * ROUNDS * LIMIT);
	cr_log_info("%d of %d rounds had both CPUs admitting", both,
		    2 * ROUNDS);
}

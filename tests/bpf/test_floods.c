// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Spoofed-source floods: the new-source budget bounds inserts, sources in
 * the table keep their state, the unknown_sources fallback judges the
 * rest, and the table counters account for every packet. A million
 * distinct sources come from tests/bpf/progs/test_flood.bpf.c, which rewrites the
 * source of each repeat and tail-calls the limiter. Time is the test
 * clock; the process is pinned to one CPU so that one CPU's share of the
 * budget is what is spent, and counts are exact.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "fixture.h"
#include "loader.h"
#include "report.h"
#include "stats.h"
#include "test_flood.skel.h"

#define TABLE		65536
#define FLOOD		1000000
#define CHUNKS		100
#define CHUNK		(FLOOD / CHUNKS)
#define STEP_NS		(10 * 1000 * 1000ULL)	/* 10 ms per chunk: 1 Mpps */
#define RULE_PPS	1000
#define RULE_BURST	100

static struct xrl_datapath dp;
static struct xrl_policy policy;
static unsigned n_cpus;

static void setup(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	cr_assert_eq(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
	n_cpus = xrl_datapath_cpus();
	fixture_load(&dp, TABLE);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, RULE_PPS, RULE_BURST, 0, 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(floods, .init = setup, .fini = teardown);

static struct xrl_table_counters table_counters(void)
{
	return fixture_table_counters(&dp);
}

static uint64_t table_delta(const struct xrl_table_counters *before,
			    enum xrl_table_event event)
{
	return table_counters().events[event] - before->events[event];
}

struct flood {
	struct test_flood_bpf *skel;
	struct packet pkt;
};

static void flood_open(struct flood *f)
{
	__u32 slot = 0;
	int target = dp.prog_fd;

	f->skel = test_flood_bpf__open_and_load();
	cr_assert_not_null(f->skel, "loading the flood wrapper");
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(f->skel->maps.flood_target),
					 &slot, &target, 0), 0);
	cr_assert_eq(packet_from(&f->pkt, "fd00::"), 0);
}

/* @n packets from @n sources never seen before. */
static void flood_send(struct flood *f, uint32_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = f->pkt.data,
		.data_size_in = f->pkt.len,
		.repeat = n,
	);
	int ret = bpf_prog_test_run_opts(
		bpf_program__fd(f->skel->progs.test_flood), &opts);

	cr_assert_eq(ret, 0, "flood run: %s", strerror(errno));
	cr_assert_neq(opts.retval, XDP_ABORTED, "the tail call failed");
}

static void flood_close(struct flood *f)
{
	test_flood_bpf__destroy(f->skel);
}

/* What one CPU's share of a budget of @pps and @burst allows in @ns. */
static uint64_t share_allows(uint64_t pps, uint64_t burst, uint64_t ns)
{
	uint64_t burst_share = burst / n_cpus ? burst / n_cpus : 1;

	return burst_share + pps * ns / NS_PER_S / n_cpus;
}

/*
 * One known abusive source (offering 10x its rate) and one known
 * well-behaved source (at its rate) go through CHUNKS chunks of a flood
 * of new sources, with the test clock moving STEP_NS per chunk. Returns
 * the inserts the flood made.
 */
static uint64_t flood_with_known_sources(uint64_t budget_pps,
					 uint64_t budget_burst)
{
	struct xrl_table_counters before;
	struct packet abuser, good;
	uint64_t abuser_passed, allowed, inserts = 0, elapsed;
	struct flood f;
	int chunk, i;

	flood_open(&f);
	cr_assert_eq(packet_from(&abuser, "198.18.0.1"), 0);
	cr_assert_eq(packet_from(&good, "198.18.0.2"), 0);
	/* Both known before the flood: in the table, the abuser limited. */
	abuser_passed = fixture_run_many(&dp, &abuser, 2 * RULE_BURST);
	cr_assert_eq(abuser_passed, RULE_BURST);
	cr_assert_eq(fixture_run(&dp, &good), XDP_PASS);
	before = table_counters();

	for (chunk = 1; chunk <= CHUNKS; chunk++) {
		elapsed = chunk * STEP_NS;
		xrl_datapath_set_time(&dp, NS_PER_S + elapsed);
		flood_send(&f, CHUNK);
		abuser_passed += fixture_run_many(&dp, &abuser,
					10 * RULE_PPS * STEP_NS / NS_PER_S);
		for (i = 0; i < (int)(RULE_PPS * STEP_NS / NS_PER_S); i++)
			cr_assert_eq(fixture_run(&dp, &good), XDP_PASS,
				     "well-behaved source dropped in chunk %d",
				     chunk);
		/* Still limited to its rate: a bucket evicted and made
		 * again would hand it a fresh burst. The interval is rounded
		 * up, so at most one packet fewer than the ideal. */
		allowed = RULE_BURST + RULE_PPS * elapsed / NS_PER_S;
		cr_assert_leq(abuser_passed, allowed, "chunk %d", chunk);
		cr_assert_geq(abuser_passed + 1, allowed, "chunk %d", chunk);
		inserts = table_delta(&before, XRL_TABLE_INSERT);
		cr_assert_leq(inserts, budget_burst +
			      budget_pps * elapsed / NS_PER_S,
			      "chunk %d: %lu inserts", chunk, inserts);
		/* Pinned to one CPU: that CPU's share (which the two known
		 * sources' inserts came from too), less at most one chunk's
		 * refill (the budget was full before the first chunk) and
		 * the interval's rounding up (under 1/4096, include/xrl.h). */
		allowed = share_allows(budget_pps, budget_burst, elapsed);
		cr_assert_leq(inserts + 2, allowed, "chunk %d", chunk);
		allowed -= budget_pps * STEP_NS / NS_PER_S / n_cpus;
		cr_assert_geq(inserts + 2 + 1 + allowed / 4096, allowed,
			      "chunk %d: %lu inserts", chunk, inserts);
	}
	/* Every flood packet was either given a bucket or refused one, and
	 * every refused one was judged by the fallback. */
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT) +
		     table_delta(&before, XRL_TABLE_INSERT_FAILED) +
		     table_delta(&before, XRL_TABLE_REFUSED), FLOOD);
	cr_assert_eq(table_delta(&before, XRL_TABLE_FALLBACK_PASS) +
		     table_delta(&before, XRL_TABLE_FALLBACK_DROP),
		     table_delta(&before, XRL_TABLE_REFUSED));
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT_FAILED), 0);
	cr_log_info("flood of %d sources over %.2f s: %lu inserts "
		    "(%.0f per second), %lu refused, %lu fallback-passed, "
		    "%lu fallback-dropped", FLOOD,
		    (double)CHUNKS * STEP_NS / NS_PER_S, inserts,
		    inserts / ((double)CHUNKS * STEP_NS / NS_PER_S),
		    table_delta(&before, XRL_TABLE_REFUSED),
		    table_delta(&before, XRL_TABLE_FALLBACK_PASS),
		    table_delta(&before, XRL_TABLE_FALLBACK_DROP));
	flood_close(&f);
	return inserts;
}

Test(floods, default_budget_holds_known_sources_through_a_million_sources)
{
	struct xrl_stats_report report;
	uint64_t pps, burst, inserts;

	fixture_apply(&dp, &policy);
	xrl_new_sources_budget(&policy, TABLE, &pps, &burst);
	cr_assert_eq(pps, TABLE / XRL_TURNOVER_S);
	cr_assert_eq(burst, TABLE / XRL_BURST_DIVISOR);
	inserts = flood_with_known_sources(pps, burst);

	/* The table never filled: nothing evicted, and stats says so. */
	cr_assert_eq(xrl_stats_collect(&dp, &report), 0);
	cr_assert_eq(report.table.occupancy, 2 + inserts);
	cr_assert_eq(report.table.evictions, 0);
	cr_assert_eq(report.table.counters.events[XRL_TABLE_INSERT], 2 + inserts);
	cr_assert_eq(report.table.max_sources, TABLE);
	cr_assert_eq(report.table.settings.new_sources_pps, pps);
	xrl_stats_report_free(&report);
}

Test(floods, a_budget_past_the_table_size_evicts_at_most_its_inserts)
{
	struct xrl_stats_report report;
	uint64_t inserts;

	/* 300k inserts a second: the table turns over several times. (A
	 * burst above what one chunk's 10 ms refill, so every chunk drains
	 * the budget and the count is exact.) */
	policy.new_pps = 300000;
	policy.new_burst = 6000;
	fixture_apply(&dp, &policy);
	inserts = flood_with_known_sources(policy.new_pps, policy.new_burst);
	cr_assert_gt(inserts, 2 * TABLE);

	cr_assert_eq(xrl_stats_collect(&dp, &report), 0);
	cr_assert_leq(report.table.occupancy, TABLE);
	cr_assert_eq(report.table.evictions, 2 + inserts - report.table.occupancy);
	cr_assert_geq(report.table.evictions, 2 + inserts - TABLE);
	xrl_stats_report_free(&report);
}

Test(floods, budget_off_inserts_every_new_source)
{
	struct xrl_table_counters before;
	struct flood f;

	policy.new_sources_off = true;
	fixture_apply(&dp, &policy);
	flood_open(&f);
	before = table_counters();
	flood_send(&f, 2 * TABLE);
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT), 2 * TABLE);
	cr_assert_eq(table_delta(&before, XRL_TABLE_REFUSED), 0);
	flood_close(&f);
}

/* ---- unknown_sources ------------------------------------------------ */

/* A budget of one insert on this CPU, then one per n_cpus seconds. */
static void one_insert_budget(enum xrl_unknown_verdict verdict)
{
	struct packet first;
	struct xrl_bucket bucket;

	policy.new_pps = 1;
	policy.new_burst = n_cpus;
	policy.unknown = verdict;
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&first, "198.18.1.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &first, 1), 1);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.1", 0, &bucket), 0);
}

/* @n packets of a source the budget refuses; returns how many passed.
 * @key is the source as the table would key it (IPv6: its /64). */
static uint64_t refused_key(const char *src, const char *key, uint32_t n)
{
	struct xrl_table_counters before = table_counters();
	struct xrl_bucket bucket;
	struct packet pkt;
	uint64_t passed;

	cr_assert_eq(packet_from(&pkt, src), 0);
	passed = fixture_run_many(&dp, &pkt, n);
	cr_assert_eq(table_delta(&before, XRL_TABLE_REFUSED), n, "%s", src);
	cr_assert_eq(table_delta(&before, XRL_TABLE_FALLBACK_PASS), passed);
	cr_assert_eq(table_delta(&before, XRL_TABLE_FALLBACK_DROP),
		     n - passed);
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT), 0);
	cr_assert_eq(fixture_bucket(&dp, key, 0, &bucket), -ENOENT,
		     "%s was given a bucket", src);
	return passed;
}

static uint64_t refused_source(const char *src, uint32_t n)
{
	return refused_key(src, src, n);
}

Test(floods, unknown_sources_pass_lets_refused_sources_through)
{
	one_insert_budget(XRL_UNKNOWN_PASS);
	cr_assert_eq(refused_source("198.18.2.1", 50), 50);
	cr_assert_eq(refused_key("fd00:2::1", "fd00:2::", 50), 50);
}

Test(floods, unknown_sources_drop_drops_refused_sources)
{
	uint64_t dropped = fixture_count(&dp, XRL_VERDICT_DROP);

	one_insert_budget(XRL_UNKNOWN_DROP);
	cr_assert_eq(refused_source("198.18.2.1", 50), 0);
	cr_assert_eq(refused_key("fd00:2::1", "fd00:2::", 50), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP) - dropped, 100);
}

Test(floods, unknown_sources_prefix_limits_each_prefix_at_the_rule_rate)
{
	struct packet known;
	struct xrl_bucket bucket;
	struct packet pkt;

	one_insert_budget(XRL_UNKNOWN_PREFIX);
	/* A /24 of unknown sources shares one source's limit... */
	cr_assert_eq(refused_source("198.18.2.1", 3 * RULE_BURST), RULE_BURST);
	cr_assert_eq(refused_source("198.18.2.200", 10), 0);
	/* ...another /24, and an IPv6 /48, have their own. */
	cr_assert_eq(refused_source("198.18.3.1", 3 * RULE_BURST), RULE_BURST);
	cr_assert_eq(refused_key("fd00:2:3:4::1", "fd00:2:3:4::",
				 3 * RULE_BURST),
		     RULE_BURST);
	cr_assert_eq(refused_key("fd00:2:3:5::1", "fd00:2:3:5::", 10), 0);
	/* The known source keeps its own bucket all along. */
	cr_assert_eq(packet_from(&known, "198.18.1.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &known, 2 * RULE_BURST),
		     RULE_BURST - 1);
	/* The prefix bucket refills at the rule's rate: 10 more in 10 ms
	 * (and a half: the interval is rounded up). */
	xrl_datapath_set_time(&dp, NS_PER_S + 21 * NS_PER_S / RULE_PPS / 2);
	cr_assert_eq(refused_source("198.18.2.7", 50), 10);
	/* And the budget refills at its own: one insert per n_cpus s. */
	xrl_datapath_set_time(&dp, (2 + n_cpus) * NS_PER_S);
	cr_assert_eq(packet_from(&pkt, "198.18.4.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 1), 1);
	cr_assert_eq(fixture_bucket(&dp, "198.18.4.1", 0, &bucket), 0);
}

Test(floods, monitor_rule_passes_what_the_fallback_refuses)
{
	uint64_t monitored = fixture_count(&dp, XRL_VERDICT_MONITOR);
	struct packet pkt;

	fixture_rule(&policy, NULL, XRL_ACTION_MONITOR, RULE_PPS, RULE_BURST,
		     0, 0);
	one_insert_budget(XRL_UNKNOWN_DROP);
	cr_assert_eq(packet_from(&pkt, "198.18.2.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 20), 20);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MONITOR) - monitored, 20);
	cr_assert_eq(table_counters().events[XRL_TABLE_FALLBACK_DROP], 20);
}

/* ---- what the budget buys ------------------------------------------- */

/*
 * An abusive source spends its burst, stays quiet while a flood of three
 * tables' worth of new sources goes by, and comes back 1.5 ms later
 * (one packet's interval, and a half: the interval is rounded up).
 * Returns how many of its packets then passed.
 */
static uint64_t abuser_after_a_quiet_flood(bool *kept_bucket)
{
	struct xrl_bucket bucket;
	struct packet abuser;
	struct flood f;

	flood_open(&f);
	cr_assert_eq(packet_from(&abuser, "198.18.0.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &abuser, 2 * RULE_BURST), RULE_BURST);
	flood_send(&f, 3 * TABLE);
	xrl_datapath_set_time(&dp, NS_PER_S + 3 * NS_PER_S / RULE_PPS / 2);
	*kept_bucket = !fixture_bucket(&dp, "198.18.0.1", 0, &bucket);
	flood_close(&f);
	return fixture_run_many(&dp, &abuser, 2 * RULE_BURST);
}

Test(floods, without_the_budget_a_flood_resets_a_limited_source)
{
	bool kept;

	policy.new_sources_off = true;
	fixture_apply(&dp, &policy);
	/* Evicted, then made again full: a second burst in 1.5 ms. */
	cr_assert_eq(abuser_after_a_quiet_flood(&kept), RULE_BURST);
	cr_assert_not(kept);
}

Test(floods, with_the_budget_a_limited_source_stays_limited)
{
	bool kept;

	fixture_apply(&dp, &policy);
	/* 1.5 ms at 1000 pps: one packet, from the bucket it kept. */
	cr_assert_eq(abuser_after_a_quiet_flood(&kept), 1);
	cr_assert(kept);
}

Test(floods, stats_json_carries_the_table_counters)
{
	struct xrl_stats_report report;
	json_t *json, *table, *budget;
	struct flood f;

	policy.unknown = XRL_UNKNOWN_DROP;
	fixture_apply(&dp, &policy);
	flood_open(&f);
	flood_send(&f, 10000);
	flood_close(&f);
	cr_assert_eq(xrl_stats_collect(&dp, &report), 0);
	json = xrl_stats_json(&report);
	table = json_object_get(json, "table");
	cr_assert_not_null(table);
#define FIELD(name) json_integer_value(json_object_get(table, name))
	cr_assert_eq(FIELD("max_sources"), TABLE);
	cr_assert_eq(FIELD("inserts"), TABLE / XRL_BURST_DIVISOR / n_cpus);
	cr_assert_eq(FIELD("occupancy"), FIELD("inserts"));
	cr_assert_eq(FIELD("evictions"), 0);
	cr_assert_eq(FIELD("insert_failures"), 0);
	cr_assert_eq(FIELD("refused"), 10000 - FIELD("inserts"));
	cr_assert_eq(FIELD("fallback_pass"), 0);
	cr_assert_eq(FIELD("fallback_drop"), FIELD("refused"));
#undef FIELD
	cr_assert_str_eq(json_string_value(json_object_get(table,
							   "unknown_sources")),
			 "drop");
	budget = json_object_get(table, "new_sources");
	cr_assert_eq(json_integer_value(json_object_get(budget, "pps")),
		     TABLE / XRL_TURNOVER_S);
	cr_assert_eq(json_integer_value(json_object_get(budget, "burst")),
		     TABLE / XRL_BURST_DIVISOR);
	cr_assert(json_is_true(json_object_get(budget, "default")));
	json_decref(json);
	xrl_stats_report_free(&report);
}

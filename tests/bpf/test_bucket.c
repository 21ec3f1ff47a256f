// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Token-bucket behaviour of the data path, driven by the test clock. */
#include <stdio.h>
#include <stdlib.h>
#include <criterion/criterion.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "fixture.h"
#include "loader.h"
#include "memory.h"

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

TestSuite(bucket, .init = setup, .fini = teardown);

Test(bucket, admits_exactly_burst_at_one_instant_then_one_per_interval)
{
	struct packet pkt;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 100, 50, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);

	cr_assert_eq(fixture_run_many(&dp, &pkt, 80), 50);
	/* Then one per 10 ms interval: never early, and late by at most
	 * 0.1% of the time elapsed (the representation's bound is 0.025%,
	 * include/xrl.h). */
	for (int k = 1; k <= 100; k++) {
		uint64_t ideal = NS_PER_S + k * 10000000ULL;

		xrl_datapath_set_time(&dp, ideal - 5000);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 0, "k=%d early", k);
		xrl_datapath_set_time(&dp, ideal + k * 10000000ULL / 1000);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 1, "k=%d", k);
	}
}

static void source_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "198.18.%d.%d", i / 100, i % 100 + 1);
}

Test(bucket, separate_sources_never_share_a_budget)
{
	enum { SOURCES = 200, BURST = 4, OFFERED = BURST + 3 };
	unsigned passed[SOURCES] = { 0 };
	struct fixture_counts counts;
	struct packet pkt[SOURCES];
	struct xrl_bucket bucket;
	char src[32];
	int i, round;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 10, BURST, 0, 0);
	fixture_apply(&dp, &policy);
	for (i = 0; i < SOURCES; i++) {
		source_name(src, sizeof(src), i);
		cr_assert_eq(packet_from(&pkt[i], src), 0);
	}
	/* Interleaved, so that a shared budget would show as a source
	 * starved by the ones before it. */
	for (round = 0; round < OFFERED; round++)
		for (i = 0; i < SOURCES; i++)
			passed[i] += fixture_run(&dp, &pkt[i]) == XDP_PASS;
	for (i = 0; i < SOURCES; i++) {
		source_name(src, sizeof(src), i);
		cr_assert_eq(passed[i], BURST, "source %s", src);
		cr_assert_eq(fixture_bucket(&dp, src, 0, &bucket), 0, "%s",
			     src);
		cr_assert_eq(fixture_packets_owed(&bucket, 10, BURST, NS_PER_S),
			     BURST, "source %s", src);
		/* Counted from its first refusal (struct xrl_offender). */
		counts = fixture_source_counts(&dp, src, 0);
		cr_assert_eq(counts.passed, 0, "source %s", src);
		cr_assert_eq(counts.dropped, OFFERED - BURST, "source %s", src);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), SOURCES * BURST);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP),
		     SOURCES * (OFFERED - BURST));
}

/*
 * Each CPU reads the clock before judging, so a CPU may judge with a
 * "now" slightly older than the last admission another CPU made. That
 * bucket was just used: it must not look idle for ages (and so full).
 */
Test(bucket, clock_read_before_the_last_admission_does_not_refill)
{
	const uint64_t t1 = NS_PER_S + 1000;
	struct packet pkt;

	/* 1 Mpps counts time in 1/8 ns: its bucket can go stale. */
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1000000, 5, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);

	xrl_datapath_set_time(&dp, t1);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 10), 5);
	for (uint64_t behind = 1; behind <= 1000; behind *= 10) {
		xrl_datapath_set_time(&dp, t1 - behind);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 10), 0,
			     "%lu ns behind", behind);
	}
}

/*
 * A bucket counts time modulo 2^58 of its units: 2^49 ns at 100 Mpps
 * (shift 9), 2^40 ns at 400 Gbit/s (shift 18). A microsecond short of a
 * wrap, a bucket drained back then reads as owing its whole tolerance
 * and a microsecond more; it idled, so it must read as full. (Exactly a
 * wrap later it would read as owing just the tolerance, which the
 * program believes: see limit_debt() in bpf/gcra.h.)
 */
Test(bucket, idle_past_the_wrap_horizon_refills_the_bucket)
{
	struct {
		uint64_t pps, burst, bps, burst_bytes, wrap_ns;
		uint64_t admitted;
	} cases[] = {
		{ 100000000, 10, 0, 0, 1ULL << 49, 10 },
		{ 0, 0, 400000000000ULL, 640, 1ULL << 40, 10 },
	};
	struct packet pkt;
	uint64_t now;
	int k, wraps;

	for (k = 0; k < 2; k++) {
		fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, cases[k].pps,
			     cases[k].burst, cases[k].bps,
			     cases[k].burst_bytes);
		fixture_apply(&dp, &policy);
		cr_assert_eq(packet_from(&pkt, k ? "198.18.0.2" : "198.18.0.1"),
			     0);
		now = NS_PER_S;
		xrl_datapath_set_time(&dp, now);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 30),
			     cases[k].admitted, "case %d", k);
		for (wraps = 1; wraps <= 3; wraps++) {
			now += cases[k].wrap_ns - 1000;
			xrl_datapath_set_time(&dp, now);
			cr_assert_eq(fixture_run_many(&dp, &pkt, 30),
				     cases[k].admitted, "case %d wrap %d", k,
				     wraps);
		}
	}
}

Test(bucket, policy_swap_keeps_the_bucket_state)
{
	struct xrl_bucket bucket;
	struct packet pkt;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 10, 5, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 8), 5);

	/* The same policy again: a new rules map, the same rule id. */
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 8), 0);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 10, 5, NS_PER_S), 5);
	/* Its record, made at its first refusal, kept across the swap. */
	cr_assert_eq(fixture_source_counts(&dp, "198.18.0.1", 0).dropped, 11);
	/* One interval later (plus the 0.1% the representation may lag). */
	xrl_datapath_set_time(&dp, NS_PER_S + NS_PER_S / 10 + 100000);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 8), 1);
}

static int word_shift(__u64 word)
{
	return XRL_TAT_SHIFT(word);
}

/* Drains a 1 pps bucket of 10 (10 s of debt, counted in 2^17 ns units),
 * then lets a 1000 pps rule (2^7 ns units) judge the same bucket. */
static void drain_one_pps_then_swap(uint64_t pps, uint64_t burst,
				    struct packet *pkt)
{
	struct xrl_bucket bucket;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 10, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(pkt, "198.18.0.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, pkt, 12), 10);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
	cr_assert_eq(word_shift(bucket.tat[XRL_LIMIT_PACKETS]), -17);

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, pps, burst, 0, 0);
	fixture_apply(&dp, &policy);
}

Test(bucket, rate_change_to_a_finer_unit_rescales_the_debt)
{
	struct xrl_bucket bucket;
	struct packet pkt;
	uint64_t admitted;

	/* 20 s of tolerance less 10 s of debt: 10 s, 10000 packets, less
	 * the rounding of both intervals (under 0.1%). */
	drain_one_pps_then_swap(1000, 20000, &pkt);
	admitted = fixture_run_many(&dp, &pkt, 12000);
	cr_assert(admitted >= 9990 && admitted <= 10000, "admitted %lu",
		  admitted);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
	cr_assert_eq(word_shift(bucket.tat[XRL_LIMIT_PACKETS]), -7);
}

Test(bucket, debt_over_the_new_tolerance_drains_at_the_new_rate)
{
	struct packet pkt;
	uint64_t admitted;

	/* 10 s of debt against 0.1 s of tolerance: nothing until the debt
	 * is back under it, then what is left of 0.1 s. */
	drain_one_pps_then_swap(1000, 100, &pkt);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 200), 0);
	xrl_datapath_set_time(&dp, NS_PER_S + 9 * NS_PER_S);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 200), 0);
	xrl_datapath_set_time(&dp, NS_PER_S + 9950 * 1000000ULL);
	admitted = fixture_run_many(&dp, &pkt, 200);
	cr_assert(admitted >= 47 && admitted <= 50, "admitted %lu", admitted);
}

Test(bucket, rate_change_to_a_coarser_unit_rescales_the_debt)
{
	struct xrl_bucket bucket;
	struct packet pkt;

	/* 1000 pps, burst 1500 drained: 1.5 s of debt. At 1 pps with a
	 * burst of 3 that leaves 1.5 s: one packet now, one more 0.6 s on
	 * (2.1 s less the one taken), then one per second. */
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1000, 1500, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 1600), 1500);

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 1);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
	cr_assert_eq(word_shift(bucket.tat[XRL_LIMIT_PACKETS]), -17);
	xrl_datapath_set_time(&dp, NS_PER_S + 600 * 1000000ULL);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 1);
	xrl_datapath_set_time(&dp, NS_PER_S + 1400 * 1000000ULL);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 0);
	xrl_datapath_set_time(&dp, NS_PER_S + 1700 * 1000000ULL);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 1);
}

/*
 * A limit dropped from a rule and set again later must not judge by the
 * state it left: its clock may have wrapped meanwhile while the other
 * limit kept the bucket in use (so the idle guard does not see it).
 */
Test(bucket, limit_set_again_after_a_wrap_starts_full)
{
	const uint64_t wrap_ns = 1ULL << 49;	/* 100 Mpps: shift 9 */
	struct packet pkt;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 100000000, 10,
		     8000000000ULL, 100000);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 30), 10);

	/* Bytes only, in use until just before one wrap of the pps clock. */
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 0, 0, 8000000000ULL,
		     100000);
	fixture_apply(&dp, &policy);
	xrl_datapath_set_time(&dp, NS_PER_S + wrap_ns - 1000);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 1), 1);

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 100000000, 10,
		     8000000000ULL, 100000);
	fixture_apply(&dp, &policy);
	xrl_datapath_set_time(&dp, NS_PER_S + wrap_ns);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 30), 10);
}

/*
 * A CPU stores last_seen_ns just after its compare-and-swap; another CPU
 * in between sees a word written now beside a last_seen_ns from before a
 * long idle. That word is current and must be believed, not taken for
 * one whose clock wrapped (which would refill the burst). The state is
 * written here as that CPU would see it.
 */
Test(bucket, a_fresh_word_beside_a_stale_last_seen_is_believed)
{
	const uint64_t long_ago = 1ULL << 50;	/* past every horizon */
	const uint64_t t1 = long_ago + NS_PER_S;
	struct xrl_bucket_key key = { .tag = XRL_FAMILY_IPV4 };
	struct xrl_bucket bucket;
	struct packet pkt;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 100000000, 10, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	xrl_datapath_set_time(&dp, t1);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 30), 10);

	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
	bucket.last_seen_ns = t1 - long_ago;
	memcpy(key.addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x01", 16);
	cr_assert_eq(bpf_map_update_elem(dp.buckets_fd, &key, &bucket,
					 BPF_EXIST), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 30), 0);
	/* And it drains at the rate: one per 10 ns. */
	xrl_datapath_set_time(&dp, t1 + 50);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 30), 5);
}

/* The kernel's own figure (fdinfo memlock, as bpftool prints it) of a
 * map of @dp, by name; asserts it is there. */
static struct xrl_map_memory map_memory(const char *name)
{
	struct xrl_memory_report *report = malloc(sizeof(*report));
	struct xrl_map_memory found = { 0 };
	size_t i;

	cr_assert_not_null(report);
	cr_assert_eq(xrl_memory_collect(&dp, report), 0);
	for (i = 0; i < report->n_maps; i++)
		if (!strcmp(report->maps[i].name, name))
			found = report->maps[i];
	free(report);
	cr_assert_neq(found.max_entries, 0, "no map %s", name);
	return found;
}

/*
 * Issue 23 item 5: a tracked source costs at most 120 bytes of kernel
 * memory (LRU element, key, the 32-byte bucket), by the kernel's own
 * count; what only offenders need is in a map of its own, which a
 * source within its limits never gets an entry of.
 */
Test(bucket, a_tracked_source_costs_at_most_120_bytes)
{
	struct xrl_map_memory buckets = map_memory("xrl_buckets");
	struct xrl_map_memory offenders = map_memory("xrl_offenders");
	struct xrl_bucket_key next;
	struct xrl_bucket bucket;
	struct packet pkt;
	double per_source;

	per_source = (double)buckets.memlock / buckets.max_entries;
	cr_log_info("xrl_buckets: %llu B for %u sources, %.1f B each; "
		    "xrl_offenders: %llu B for %u, %.1f B each",
		    (unsigned long long)buckets.memlock, buckets.max_entries,
		    per_source, (unsigned long long)offenders.memlock,
		    offenders.max_entries,
		    (double)offenders.memlock / offenders.max_entries);
	cr_assert_eq(buckets.value_size, 32);
	/* Whole bytes: the map's header (under 1 KiB) is spread over the
	 * entries. */
	cr_assert_leq(buckets.memlock / buckets.max_entries, 120,
		      "%.1f B per source", per_source);
	cr_assert_eq(offenders.max_entries, 65536 / XRL_OFFENDER_SHARE);
	cr_assert_eq(offenders.value_size, 56);

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 100, 5, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 5);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", 0, &bucket), 0);
	cr_assert_eq(bucket.rule_id & XRL_BUCKET_FLAGS, XRL_BUCKET_PASSED);
	cr_assert_neq(bpf_map_get_next_key(dp.offenders_fd, NULL, &next), 0,
		      "a source within its limit has an offender record");
	/* Its first refusal makes one. */
	cr_assert_eq(fixture_run_many(&dp, &pkt, 1), 0);
	cr_assert(fixture_source_counts(&dp, "198.18.0.1", 0).refused);
}

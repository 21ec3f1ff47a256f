// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Levels of a rule in the data path (include/xrl.h, "Levels of a rule";
 * docs/POLICY.md "Levels"), through BPF_PROG_TEST_RUN with the test
 * clock: a packet passes only when its source's bucket and every level
 * of its family admit it, so exactly the least of their bounds passes; a
 * level that refuses consumes nothing from the source or the other
 * levels; monitor rules count what a level would drop; level buckets
 * come from the new-source budget; a swap keeps them, a reused rule id
 * never inherits them; a level's refusal is no ban offence.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "bucket.h"
#include "cidr.h"
#include "fixture.h"
#include "loader.h"
#include "stats.h"

#define NS_PER_MS	1000000ULL

static struct xrl_datapath dp;
static struct xrl_policy policy;
static unsigned n_cpus;

/* On one CPU: the new-source budget is per CPU (include/xrl.h). */
static void setup(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	cr_assert_eq(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
	n_cpus = xrl_datapath_cpus();
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	policy.new_sources_off = true;
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(levels, .init = setup, .fini = teardown);

static struct xrl_level_spec level(enum xrl_family family, unsigned prefix,
				   uint64_t pps, uint64_t burst)
{
	return (struct xrl_level_spec){
		.family = family, .prefix = prefix, .pps = pps, .burst = burst,
	};
}

#define V4(prefix, pps, burst)	level(XRL_FAMILY_IPV4, prefix, pps, burst)
#define V6(prefix, pps, burst)	level(XRL_FAMILY_IPV6, prefix, pps, burst)

/* @rule for @cidr (NULL: the default rule, replaced); returns its id. */
static uint32_t add_rule(const char *cidr, struct xrl_rule_spec rule)
{
	return fixture_rule_spec(&policy, cidr, rule);
}

static struct packet packet_of(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	return pkt;
}


static void at_ms(uint64_t ms)
{
	xrl_datapath_set_time(&dp, NS_PER_S + ms * NS_PER_MS);
}

static struct xrl_table_counters table_counters(void)
{
	return fixture_table_counters(&dp);
}

static uint64_t table_delta(const struct xrl_table_counters *before,
			    enum xrl_table_event event)
{
	return table_counters().events[event] - before->events[event];
}

/*
 * At one instant: each source its own burst (10), each /24 together the
 * level's (25). Three sources of one /24 offering 10 each get 10, 10 and
 * 5; a source of another /24 its full 10.
 */
Test(levels, at_one_instant_the_least_of_the_bounds_passes)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 25) }, .n_levels = 1,
	};
	struct xrl_bucket bucket;
	uint32_t id = add_rule("198.18.0.0/16", rule);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 40), 10, "the source's own bound");
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 10), 10);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.3", 10), 5, "the /24's bound");
	cr_assert_eq(fixture_passes(&dp, "198.18.1.4", 10), 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 10), 10, "another /24");
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.1.0", id, 0, &bucket),
		     0, "no bucket for the /24");
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.2.0", id, 0, &bucket),
		     0);
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.1.1", id, 0, &bucket),
		     -ENOENT, "a level bucket keyed by the whole address");
}

/*
 * Over a second of 1 ms steps, 20 sources of one /24 each offering a
 * packet per step: each source's own bound is 5 + 100 pps, the /24's 50
 * + 1,000 pps, so the /24 passes what one bucket of the /24's limit
 * passes when offered as much (a control source under a rule of that
 * limit, without levels, offered 20 packets a step), however the sources share it, and no
 * source more than its own bound.
 */
Test(levels, over_time_the_least_of_the_rates_passes)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 100, .burst = 5,
		.levels = { V4(24, 1000, 50) }, .n_levels = 1,
	};
	struct xrl_rule_spec alone = {
		.action = XRL_ACTION_LIMIT, .pps = 1000, .burst = 50,
	};
	unsigned step, i, passed[20] = { 0 }, total = 0, control = 0;
	struct packet pkt[20], control_pkt = packet_of("198.19.7.1");
	char src[32];

	add_rule("198.18.0.0/16", rule);
	add_rule("198.19.0.0/16", alone);
	fixture_apply(&dp, &policy);
	for (i = 0; i < 20; i++) {
		snprintf(src, sizeof(src), "198.18.7.%u", i + 1);
		pkt[i] = packet_of(src);
	}
	for (step = 0; step <= 1000; step++) {
		at_ms(step);
		for (i = 0; i < 20; i++) {
			passed[i] += fixture_run(&dp, &pkt[i]) == XDP_PASS;
			control += fixture_run(&dp, &control_pkt) == XDP_PASS;
		}
	}
	for (i = 0; i < 20; i++) {
		cr_assert_leq(passed[i], 5 + 100 + 1, "source %u", i);
		total += passed[i];
	}
	cr_assert_eq(total, control, "the /24 passed %u, its limit %u", total,
		     control);
	/* At most one under 50 + 1,000: the interval, rounded up by under
	 * 1/4096 (include/xrl.h), puts the last packet offered on time a
	 * hair late. */
	cr_assert(control == 1050 || control == 1049, "control %u", control);
}

/*
 * The level refuses 3 of the source's first 8 packets; its own bucket
 * (10, refilling at 1 pps) gives nothing for them: 10 ms later, the
 * level full again, 5 more pass (2 would if the refusals had cost it).
 */
Test(levels, a_refusing_level_consumes_nothing_of_the_source)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1000, 5) }, .n_levels = 1,
	};
	struct fixture_counts counts;
	struct xrl_bucket bucket;
	uint32_t id = add_rule("198.18.0.0/16", rule);

	fixture_apply(&dp, &policy);
	at_ms(0);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 8), 5);
	at_ms(10);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 8), 5);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 1), 0);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.1", id, &bucket), 0);
	/* 10 taken, none regained in 10 ms at 1 pps. */
	cr_assert_eq(fixture_packets_owed(&bucket, 1, 10, NS_PER_S +
					  10 * 1000000ULL), 10);
	/* Counted from its first refusal, at 0 ms: 3 + 3 + 1 refused,
	 * the 5 passed at 10 ms. */
	counts = fixture_source_counts(&dp, "198.18.1.1", id);
	cr_assert_eq(counts.passed, 5);
	cr_assert_eq(counts.dropped, 7);
}

/* A source its own bucket refuses takes nothing from its /24: the next
 * source of the /24 gets what the first could not use. */
Test(levels, a_source_its_own_bucket_refuses_takes_nothing_of_the_level)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 2,
		.levels = { V4(24, 1, 5) }, .n_levels = 1,
	};

	add_rule("198.18.0.0/16", rule);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 2);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 5), 2);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.3", 5), 1);
}

/*
 * Three buckets for IPv6 (the /64 key, its /56, its /48): 4 per /64, 6
 * per /56, 10 per /48 at one instant. a and b share a /56 (6: 4 + 2); b's
 * refused packets take nothing from the /48, so c, in another /56,
 * still gets 4, and d, in a third /56, what the /48 has left: none. The
 * refusals of b and d by one level cost the other levels nothing.
 */
Test(levels, three_levels_pass_the_least_of_the_three)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 4,
		.levels = { V6(56, 1, 6), V6(48, 1, 10) }, .n_levels = 2,
	};
	struct xrl_offender off;
	struct xrl_bucket bucket;
	uint32_t id = add_rule("fd00::/16", rule);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:100::1", 8), 4, "a");
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:101::1", 8), 2, "b");
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:200::1", 8), 4, "c");
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:300::1", 8), 0, "d");
	cr_assert_eq(fixture_level_bucket(&dp, "fd00:0:0:100::", id, 0,
					  &bucket), 0);
	cr_assert_eq(fixture_level_offender(&dp, "fd00:0:0:100::", id, 0,
					    &off), 0);
	cr_assert_eq(off.dropped, 6, "b's refusals by its /56");
	cr_assert_eq(fixture_level_bucket(&dp, "fd00:0:0:300::", id, 0,
					  &bucket), 0);
	cr_assert_eq(fixture_level_offender(&dp, "fd00:0:0:300::", id, 0,
					    &off), -ENOENT,
		     "d was refused by the /48, not here");
	cr_assert_eq(fixture_level_bucket(&dp, "fd00::", id, 1, &bucket), 0);
	cr_assert_eq(fixture_level_offender(&dp, "fd00::", id, 1, &off), 0);
	cr_assert_eq(off.dropped, 8, "d's refusals");
	/* d's refused packets took nothing from its /64 nor its /56. */
	at_ms(1100);	/* the /48 and every /56 regain one */
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:300::1", 4), 1);
}

/* Two levels of IPv4 (/24 and /16) the same way. */
Test(levels, two_levels_pass_the_least_of_the_two)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 4,
		.levels = { V4(24, 1, 6), V4(16, 1, 10) }, .n_levels = 2,
	};

	add_rule("198.18.0.0/15", rule);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 8), 4);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 8), 2);
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 8), 4);
	cr_assert_eq(fixture_passes(&dp, "198.18.3.1", 8), 0);
	cr_assert_eq(fixture_passes(&dp, "198.19.3.1", 8), 4, "another /16");
}

/* The default rule, of both families, with a level of each: a level
 * judges only sources of its family. */
Test(levels, a_level_judges_only_its_family)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 3), V6(48, 1, 5) }, .n_levels = 2,
	};

	add_rule(NULL, rule);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 4), 3);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 4), 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 4), 3);
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:1::1", 4), 4);
	cr_assert_eq(fixture_passes(&dp, "fd00:0:0:2::1", 4), 1);
	cr_assert_eq(fixture_passes(&dp, "fd00:1::1", 4), 4, "another /48");
}

/*
 * A monitor rule passes everything and counts as would-drop what a level
 * refuses, consuming nothing: of 5, 3 pass the level and 2 would be
 * dropped; in the next milliseconds (the level full again each time:
 * 1,000,000 pps, burst 3) the source's own bucket (10 at 1 pps) has 7
 * left, not 5.
 */
Test(levels, a_monitor_rule_counts_what_a_level_would_drop)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_MONITOR, .pps = 1, .burst = 10,
		.levels = { V4(24, 1000000, 3) }, .n_levels = 1,
	};
	struct xrl_rule_counters counters;
	uint32_t id = add_rule("198.18.0.0/16", rule);

	fixture_apply(&dp, &policy);
	at_ms(0);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 5);
	counters = fixture_rule_counters(&dp, id);
	cr_assert_eq(counters.outcome[XRL_RULE_PASSED].packets, 3);
	cr_assert_eq(counters.outcome[XRL_RULE_DROPPED].packets, 2);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MONITOR), 2);
	for (unsigned ms = 1; ms <= 3; ms++) {
		at_ms(ms);
		cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 3), 3);
	}
	counters = fixture_rule_counters(&dp, id);
	cr_assert_eq(counters.outcome[XRL_RULE_PASSED].packets, 3 + 7,
		     "the refusals cost the source's bucket");
	cr_assert_eq(counters.outcome[XRL_RULE_DROPPED].packets, 2 + 2);
}

/*
 * A level's bucket is a new entry of the table, given by the new-source
 * budget as a source's is: a source of a new /24 takes two inserts,
 * another source of that /24 one. With the budget spent, a source keeps
 * being judged by the fallback (and its level by the level's fallback).
 */
Test(levels, level_buckets_take_inserts_from_the_new_source_budget)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 4) }, .n_levels = 1,
	};
	struct xrl_table_counters before;

	add_rule("198.18.0.0/16", rule);
	policy.new_sources_off = false;
	policy.new_pps = 1;
	policy.new_burst = 3 * n_cpus;	/* 3 inserts on this CPU */
	policy.unknown = XRL_UNKNOWN_PREFIX;
	fixture_apply(&dp, &policy);
	before = table_counters();
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 1), 1);
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT), 2);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 1), 1);
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT), 3);
	cr_assert_eq(table_delta(&before, XRL_TABLE_REFUSED), 0);

	/* The budget spent: the source and its level each refused, both
	 * judged by a fallback bucket (the level's: burst 4). */
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 6), 4);
	cr_assert_eq(table_delta(&before, XRL_TABLE_INSERT), 3);
	cr_assert_eq(table_delta(&before, XRL_TABLE_REFUSED), 12);
	cr_assert_eq(table_delta(&before, XRL_TABLE_FALLBACK_PASS) +
		     table_delta(&before, XRL_TABLE_FALLBACK_DROP), 12);
	/* Packets 5 and 6 count twice: the level's fallback refused them,
	 * which is the verdict of the source's fallback too. */
	cr_assert_eq(table_delta(&before, XRL_TABLE_FALLBACK_DROP), 4);
}

/* The budget has an insert for the source and none for its level: the
 * level is judged as unknown_sources says. */
static unsigned level_refused_an_insert(enum xrl_unknown_verdict verdict)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 2) }, .n_levels = 1,
	};

	add_rule("198.18.0.0/16", rule);
	policy.new_sources_off = false;
	policy.new_pps = 1;
	policy.new_burst = n_cpus;	/* 1 insert on this CPU */
	policy.unknown = verdict;
	fixture_apply(&dp, &policy);
	return fixture_passes(&dp, "198.18.1.1", 5);
}

Test(levels, a_level_refused_its_bucket_drops_under_unknown_sources_drop)
{
	cr_assert_eq(level_refused_an_insert(XRL_UNKNOWN_DROP), 0);
}

Test(levels, a_level_refused_its_bucket_is_skipped_under_unknown_sources_pass)
{
	cr_assert_eq(level_refused_an_insert(XRL_UNKNOWN_PASS), 5);
}

Test(levels, a_level_refused_its_bucket_uses_its_fallback_under_prefix)
{
	cr_assert_eq(level_refused_an_insert(XRL_UNKNOWN_PREFIX), 2);
}

/*
 * A swap keeps a level's bucket (a new generation of the same rule); a
 * rule that gets a deleted rule's id starts with fresh level buckets.
 */
Test(levels, a_swap_keeps_level_buckets_and_a_reused_id_starts_afresh)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 3) }, .n_levels = 1,
	};
	uint32_t old_id, new_id;

	old_id = add_rule("198.18.0.0/16", rule);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 3);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 5), 0, "the swap refilled the /24");

	cr_assert_eq(xrl_policy_del(&policy, "198.18.0.0/16"), 0);
	rule.levels[0].burst = 4;
	new_id = add_rule("198.18.0.0/15", rule);
	policy.rules[policy.n_rules - 1].id = old_id;
	fixture_apply(&dp, &policy);
	cr_assert_neq(new_id, 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.3", 6), 4,
		     "the new rule was judged by the old rule's /24 bucket");
}

/* Bans count the source's own refusals only: a level's refusal is its
 * subnet's. The /24 refuses 2 of 5 (no ban); 5 ms later its own bucket
 * (5 at 1 pps) has 2 left, and its first refusal bans it. */
Test(levels, a_level_refusal_is_no_ban_offence)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 5,
		.levels = { V4(24, 1000, 3) }, .n_levels = 1,
		.ban = { .ns = 10 * NS_PER_S },
	};
	struct xrl_bucket bucket;
	uint32_t id = add_rule("198.18.0.0/16", rule);

	fixture_apply(&dp, &policy);
	at_ms(0);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 3);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.1", id, &bucket), 0);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.1.1", id).ban_until_ns,
		     0, "banned by its /24's refusals");
	at_ms(5);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 3), 2, "not banned");
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.1", id, &bucket), 0);
	cr_assert_neq(fixture_source_counts(&dp, "198.18.1.1", id).ban_until_ns,
		      0, "its own refusal bans it");
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 1), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 1);
}

/*
 * Rules of the same numbers are compiled once; one with levels (or a
 * ban) after one without keeps its own.
 */
Test(levels, a_rule_after_a_twin_without_levels_keeps_its_levels)
{
	struct xrl_rule_spec plain = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
	};
	struct xrl_rule_spec levelled = plain;

	levelled.levels[0] = V4(24, 1, 3);
	levelled.n_levels = 1;
	add_rule("198.18.0.0/16", plain);
	add_rule("198.19.0.0/16", levelled);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 5);
	cr_assert_eq(fixture_passes(&dp, "198.19.1.1", 5), 3);
}

/* How many buckets forgetting @cidr deletes. */
static size_t forget(const char *cidr)
{
	struct xrl_lpm_key prefix;
	size_t n;

	cr_assert_eq(xrl_cidr_parse(cidr, &prefix), 0, "%s", cidr);
	cr_assert_eq(xrl_buckets_forget(&dp, &prefix, XRL_FAMILY_ANY, &n), 0, "%s", cidr);
	return n;
}

/*
 * `reset` (xrl_buckets_forget) forgets a level's bucket only with its
 * whole subnet: one source's reset, or half the /24's, leaves the /24's
 * budget as it is; the /24's gives it back.
 */
Test(levels, a_reset_forgets_a_level_bucket_only_with_its_whole_subnet)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 3) }, .n_levels = 1,
	};
	struct xrl_bucket bucket;
	uint32_t id = add_rule("198.18.0.0/16", rule);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 3);
	cr_assert_eq(forget("198.18.1.1"), 1, "the source's own bucket");
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 0, "the /24 was refilled");
	cr_assert_eq(forget("198.18.1.0/25"), 1);
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.1.0", id, 0, &bucket),
		     0);
	cr_assert_eq(forget("198.18.1.0/24"), 1, "the /24's bucket");
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.1.0", id, 0, &bucket),
		     -ENOENT);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 3);
	cr_assert_eq(forget("198.18.0.0/16"), 2);
}

/* How many of @n copies of @pkt pass, one run each, now. */
static unsigned frames_pass(const struct packet *pkt, unsigned n)
{
	unsigned i, passed = 0;

	for (i = 0; i < n; i++)
		passed += fixture_run(&dp, pkt) == XDP_PASS;
	return passed;
}

/* An L4 rule's levels: its SYNs of one /24 share the level, and the
 * sources' other traffic (the plain rule's) none of it. */
Test(levels, an_l4_rule_has_levels_of_its_own)
{
	struct xrl_rule_spec syn = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.match = { .proto = IPPROTO_TCP, .flags = XRL_MATCH_SYN },
		.levels = { V4(24, 1, 3) }, .n_levels = 1,
	};
	struct xrl_rule_spec plain = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
	};
	struct packet syn_a = packet_l4("198.18.1.1", PACKET_TCP_SYN, 999, 80);
	struct packet syn_b = packet_l4("198.18.1.2", PACKET_TCP_SYN, 999, 80);
	struct packet ack_a = packet_l4("198.18.1.1", PACKET_TCP_ACK, 999, 80);

	add_rule("198.18.0.0/16", syn);
	add_rule("198.18.0.0/16", plain);
	fixture_apply(&dp, &policy);
	cr_assert_eq(frames_pass(&syn_a, 2), 2);
	cr_assert_eq(frames_pass(&syn_b, 5), 1, "the /24's SYNs: 3");
	cr_assert_eq(frames_pass(&ack_a, 10), 10, "the plain rule's traffic");
}

/* A level of bytes (bps, burst_bytes), with a packet limit on the
 * source: 128-byte frames, 1,000 bytes of the /24 at once: 7 frames. */
Test(levels, a_level_of_bytes_limits_the_subnet_bytes)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.n_levels = 1,
	};
	struct packet a = packet_l4("198.18.1.1", PACKET_UDP, 1, 2);
	struct packet b = packet_l4("198.18.1.2", PACKET_UDP, 1, 2);

	rule.levels[0] = (struct xrl_level_spec){
		.family = XRL_FAMILY_IPV4, .prefix = 24,
		.bps = 8, .burst_bytes = 1000,
	};
	add_rule("198.18.0.0/16", rule);
	fixture_apply(&dp, &policy);
	cr_assert_eq(a.len, 128);
	cr_assert_eq(frames_pass(&a, 5), 5);
	cr_assert_eq(frames_pass(&b, 5), 2, "1000 bytes: 7 of 128");
}

/* A leaky-bucket rule's levels are token buckets: the source paces at
 * one packet, its /24 holds a burst of 3. */
Test(levels, a_leaky_bucket_rule_has_token_bucket_levels)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT,
		.strategy = { .kind = XRL_STRATEGY_LEAKY_BUCKET,
			      .interval_ns = 10 * NS_PER_MS },
		.levels = { V4(24, 1, 3) }, .n_levels = 1,
	};

	add_rule("198.18.0.0/16", rule);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 3), 1, "a pace: burst 1");
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 3), 1);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.3", 3), 1);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.4", 3), 0, "the /24's 3");
}

/*
 * Each CPU keeps a copy of a rule's levels (bpf/levels.h, struct
 * level_cache), tagged with the rule's generation: a swap that changes
 * a level's limits, and only them, judges the very next packet by the
 * new ones, both looser and tighter.
 */
Test(levels, a_swap_changing_a_level_judges_the_next_packet_by_it)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 3) }, .n_levels = 1,
	};
	struct xrl_rule_spec *in_policy;

	add_rule("198.18.0.0/16", rule);
	in_policy = &policy.rules[policy.n_rules - 1];
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 10), 3);
	in_policy->levels[0].burst = 7;
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 10), 7, "the looser level");
	in_policy->levels[0].burst = 2;
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.3.1", 10), 2, "the tighter level");
}

/*
 * Rules whose ids share a way of the CPU's copy (ids 16 apart) take
 * turns in it: packets of the two, interleaved, are each judged by
 * their own rule's levels.
 */
Test(levels, rules_sharing_a_copy_of_levels_keep_their_own)
{
	struct xrl_rule_spec a = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { V4(24, 1, 3) }, .n_levels = 1,
	};
	struct xrl_rule_spec b = a, filler = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
	};
	struct packet from_a = packet_of("198.18.1.1");
	struct packet from_b = packet_of("198.18.129.1");
	unsigned i, n, passed_a = 0, passed_b = 0;
	uint32_t id_a, id_b;
	char cidr[32];

	b.levels[0].burst = 5;
	id_a = add_rule("198.18.0.0/17", a);
	for (n = 0; n < 15; n++) {
		snprintf(cidr, sizeof(cidr), "198.19.%u.0/24", n);
		add_rule(cidr, filler);
	}
	id_b = add_rule("198.18.128.0/17", b);
	cr_assert_eq(id_b - id_a, 16, "ids %u and %u share no way", id_a,
		     id_b);
	fixture_apply(&dp, &policy);
	for (i = 0; i < 8; i++) {
		passed_a += fixture_run(&dp, &from_a) == XDP_PASS;
		passed_b += fixture_run(&dp, &from_b) == XDP_PASS;
	}
	cr_assert_eq(passed_a, 3, "rule a's /24");
	cr_assert_eq(passed_b, 5, "rule b's /24");
}

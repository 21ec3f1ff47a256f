// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rules: longest prefix match, actions, per-rule counters, byte limits. */
#include <errno.h>
#include <stdio.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "fixture.h"
#include "loader.h"

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

TestSuite(rules, .init = setup, .fini = teardown);

static struct packet from(const char *src, size_t frame_len)
{
	struct packet_spec spec = { .src = src, .frame_len = frame_len };
	struct packet pkt;

	cr_assert_eq(packet_build(&pkt, &spec), 0, "%s", src);
	return pkt;
}

/* Verdicts of @n packets of @pkt: how many passed. */
static unsigned passes(const struct packet *pkt, unsigned n)
{
	unsigned passed = 0;

	while (n--)
		passed += fixture_run(&dp, pkt) == XDP_PASS;
	return passed;
}

static void assert_rule(uint32_t id, uint64_t passed, uint64_t dropped,
			uint64_t frame_len)
{
	struct xrl_rule_counters c = fixture_rule_counters(&dp, id);

	cr_assert_eq(c.outcome[XRL_RULE_PASSED].packets, passed,
		     "rule %u passed %lu", id,
		     c.outcome[XRL_RULE_PASSED].packets);
	cr_assert_eq(c.outcome[XRL_RULE_PASSED].bytes, passed * frame_len,
		     "rule %u passed bytes", id);
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].packets, dropped,
		     "rule %u dropped %lu", id,
		     c.outcome[XRL_RULE_DROPPED].packets);
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].bytes, dropped * frame_len,
		     "rule %u dropped bytes", id);
}

Test(rules, most_specific_rule_wins)
{
	struct packet dflt = from("198.19.0.1", 64),
		      wide = from("198.18.0.1", 64),
		      narrow = from("198.18.1.1", 64),
		      narrowest = from("198.18.1.200", 64),
		      v6 = from("fd00::1", 64),
		      v6_narrow = from("fd00:0:0:5::1", 64);
	uint32_t r_wide, r_narrow, r_narrowest, r_v6, r_v6_narrow;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 10, 2, 0, 0);
	r_wide = fixture_rule(&policy, "198.18.0.0/16", XRL_ACTION_ALLOW,
			      0, 0, 0, 0);
	r_narrow = fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_DENY,
				0, 0, 0, 0);
	r_narrowest = fixture_rule(&policy, "198.18.1.128/25",
				   XRL_ACTION_LIMIT, 10, 4, 0, 0);
	r_v6 = fixture_rule(&policy, "fd00::/8", XRL_ACTION_DENY, 0, 0, 0, 0);
	r_v6_narrow = fixture_rule(&policy, "fd00:0:0:5::/64",
				   XRL_ACTION_LIMIT, 10, 1, 0, 0);
	fixture_apply(&dp, &policy);

	cr_assert_eq(passes(&dflt, 5), 2, "default rule: burst 2");
	cr_assert_eq(passes(&wide, 5), 5, "/16 allows");
	cr_assert_eq(passes(&narrow, 5), 0, "/24 denies");
	cr_assert_eq(passes(&narrowest, 5), 4, "/25: burst 4");
	cr_assert_eq(passes(&v6, 5), 0, "fd00::/8 denies");
	cr_assert_eq(passes(&v6_narrow, 5), 1, "the /64 in it: burst 1");

	assert_rule(0, 2, 3, 64);
	assert_rule(r_wide, 5, 0, 64);
	assert_rule(r_narrow, 0, 5, 64);
	assert_rule(r_narrowest, 4, 1, 64);
	assert_rule(r_v6, 0, 5, 64);
	assert_rule(r_v6_narrow, 1, 4, 64);
}

Test(rules, limit_drops_over_the_limit_and_counts_both)
{
	struct packet pkt = from("198.18.0.1", 100);
	uint32_t id;

	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 10, 5,
			  0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(passes(&pkt, 8), 5);
	assert_rule(id, 5, 3, 100);
	assert_rule(0, 0, 0, 100);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), 5);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), 3);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MONITOR), 0);
}

Test(rules, monitor_passes_all_and_counts_what_it_would_drop)
{
	struct packet pkt = from("198.18.0.1", 100);
	struct xrl_bucket bucket;
	uint32_t id;

	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_MONITOR, 10, 5,
			  0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(passes(&pkt, 8), 8);
	assert_rule(id, 5, 3, 100);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), 5);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MONITOR), 3);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), 0);
	/* It measures as a limit would: the bucket is as full as one. */
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", id, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 10, 5, NS_PER_S), 5);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.0.1", id).dropped, 3);
	xrl_datapath_set_time(&dp, NS_PER_S + NS_PER_S / 10 + 100000);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 3);
	assert_rule(id, 6, 5, 100);
}

Test(rules, allow_is_never_limited)
{
	struct packet pkt = from("198.18.0.1", 100);
	uint32_t id;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 1, 0, 0);
	id = fixture_rule(&policy, "198.18.0.1", XRL_ACTION_ALLOW, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 10000), 10000);
	assert_rule(id, 10000, 0, 100);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 10000);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), 0);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", id,
				    &(struct xrl_bucket){ 0 }), -ENOENT,
		     "an allowed source needs no bucket");
}

Test(rules, deny_always_drops)
{
	struct packet pkt = from("198.18.0.1", 100);
	uint32_t id;

	id = fixture_rule(&policy, "198.18.0.1", XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 1000), 0);
	xrl_datapath_set_time(&dp, 1000 * NS_PER_S);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP);
	assert_rule(id, 0, 1001, 100);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 1001);
}

Test(rules, the_default_allow_policy_passes_everything)
{
	struct packet v4 = from("198.18.0.1", 64), v6 = from("fd00::1", 64);

	cr_assert_eq(fixture_run_many(&dp, &v4, 1000), 1000);
	cr_assert_eq(fixture_run_many(&dp, &v6, 1000), 1000);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 2000);
	assert_rule(0, 2000, 0, 64);
}

/* burst_bytes admits floor(burst_bytes / frame) frames at one instant,
 * then bytes at the rate: 240 kbit/s is 30000 bytes/s. */
Test(rules, bps_limit_admits_by_frame_size)
{
	const size_t sizes[] = { 64, 300, 333, 1000, 1001 };
	uint64_t now = NS_PER_S;
	char src[32];
	size_t i;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 0, 0, 240000, 1000);
	fixture_apply(&dp, &policy);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct packet pkt;

		snprintf(src, sizeof(src), "198.18.0.%zu", i + 1);
		pkt = from(src, sizes[i]);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 20), 1000 / sizes[i],
			     "%zu-byte frames", sizes[i]);
	}
	/* 300-byte frames: 100 bytes were left, so the k-th next frame is
	 * due when 300 k - 100 bytes have come back, at 33333.3 ns each
	 * (and the 0.1% the representation may lag). */
	{
		struct packet pkt = from("198.18.0.2", 300);

		for (int k = 1; k <= 20; k++) {
			now = NS_PER_S + (300 * k - 100) * 100000ULL / 3;
			xrl_datapath_set_time(&dp, now - 20000);
			cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 0,
				     "k=%d", k);
			xrl_datapath_set_time(&dp, now + k * 10000);
			cr_assert_eq(fixture_run_many(&dp, &pkt, 3), 1,
				     "k=%d", k);
		}
	}
}

/* 50 ms at 30000 bytes/s is 1500 bytes: 23 frames of 64 bytes. */
Test(rules, bps_limit_refills_bytes_not_frames)
{
	struct packet big = from("198.18.0.1", 1000),
		      small = from("198.18.0.1", 64);

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 0, 0, 240000, 2000);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &big, 5), 2);
	xrl_datapath_set_time(&dp, NS_PER_S + 50 * 1000000ULL + 100000);
	cr_assert_eq(fixture_run_many(&dp, &small, 40), 1500 / 64);
}

/*
 * A packet passes only when both limits admit it, and the one that
 * admitted gives back what it took: a refusal by bytes costs no packet
 * credit, a refusal by packets no byte credit.
 */
Test(rules, a_limit_that_refuses_does_not_consume_the_other)
{
	struct packet big = from("198.18.0.1", 600),
		      small = from("198.18.0.1", 64);
	struct xrl_rule_counters c;
	uint32_t id;

	/* 5 packets, 1000 bytes: one 600-byte frame, then bytes refuse. */
	id = fixture_rule(&policy, "198.18.0.1", XRL_ACTION_LIMIT, 10, 5, 8,
			  1000);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &big, 10), 1);
	/* 400 bytes left, 4 packets left: 4 small frames, not fewer. */
	cr_assert_eq(fixture_run_many(&dp, &small, 10), 4);
	c = fixture_rule_counters(&dp, id);
	cr_assert_eq(c.outcome[XRL_RULE_PASSED].packets, 5);
	cr_assert_eq(c.outcome[XRL_RULE_PASSED].bytes, 600 + 4 * 64);
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].packets, 9 + 6);
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].bytes, 9 * 600 + 6 * 64);
}

Test(rules, a_packet_refusal_leaves_the_bytes)
{
	struct packet small = from("198.18.0.1", 64),
		      mid = from("198.18.0.1", 436);

	/* 1000 pps, burst 2; 1 byte/s (no refill to speak of), 1000 bytes. */
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1000, 2, 8, 1000);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_run_many(&dp, &small, 20), 2);
	/* Packets refill; bytes have 1000 - 128 = 872 left: two 436-byte
	 * frames, had the 18 refused small ones taken nothing. */
	xrl_datapath_set_time(&dp, NS_PER_S + 10 * 1000000ULL);
	cr_assert_eq(fixture_run_many(&dp, &mid, 5), 2);
}

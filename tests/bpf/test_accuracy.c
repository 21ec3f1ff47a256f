// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Long-run accuracy at the ends of the supported range, driven by the
 * test clock: the clock advances in steps that are no multiple of the
 * interval, every step offers more than the rate allows, and over the
 * run the admitted amount must be burst + rate * time, never above and
 * at most 0.1% below (include/xrl.h promises 0.025%).
 */
#include <criterion/criterion.h>
#include "fixture.h"
#include "loader.h"

static struct xrl_datapath dp;
static struct xrl_policy policy;

static void setup(void)
{
	fixture_load(&dp, 4096);
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(accuracy, .init = setup, .fini = teardown);

struct run {
	uint64_t pps, burst;		/* or */
	uint64_t bps, burst_bytes;
	size_t frame_len;
	uint64_t step_ns;		/* clock step */
	uint32_t steps;
	uint32_t offered;		/* frames per step */
};

/* Runs @r; returns the frames admitted, as the rule's counter says. */
static uint64_t admitted_over(const struct run *r)
{
	struct packet_spec spec = { .src = "198.18.0.1",
				    .frame_len = r->frame_len };
	struct xrl_rule_counters c;
	struct packet pkt;
	uint32_t i;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, r->pps, r->burst, r->bps,
		     r->burst_bytes);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_build(&pkt, &spec), 0);
	/* The first step drains the burst too. */
	fixture_offer(&dp, &pkt, r->offered + r->burst +
				 r->burst_bytes / r->frame_len);
	for (i = 1; i <= r->steps; i++) {
		xrl_datapath_set_time(&dp, NS_PER_S + i * r->step_ns);
		fixture_offer(&dp, &pkt, r->offered);
	}
	c = fixture_rule_counters(&dp, 0);
	/* Every step offered more than came back: the limit was the cap. */
	cr_assert_geq(c.outcome[XRL_RULE_DROPPED].packets, r->steps,
		      "the run did not saturate the limit");
	return c.outcome[XRL_RULE_PASSED].packets;
}

/* @got against @burst + @per_s * elapsed, all in one unit (packets or
 * bytes); @grain is what one frame is worth in that unit. */
static void assert_accurate(double got, double burst, double per_s,
			    const struct run *r, double grain)
{
	double elapsed = (double)r->step_ns * r->steps / NS_PER_S;
	double ideal = burst + per_s * elapsed;

	cr_log_info("admitted %.0f of ideal %.1f (%+.4f%%)", got, ideal,
		    (got - ideal) / (per_s * elapsed) * 100);
	cr_assert(got <= ideal, "admitted %.0f, above burst + rate x time %.1f",
		  got, ideal);
	cr_assert(got >= ideal - 0.001 * per_s * elapsed - grain,
		  "admitted %.0f, more than 0.1%% below %.1f", got, ideal);
}

Test(accuracy, one_pps)
{
	/* 0.37 s steps for 5000 s: 5000 packets, 0.1% is 5. */
	struct run r = { .pps = 1, .burst = 10, .frame_len = 64,
			 .step_ns = 370000000, .steps = 13514, .offered = 2 };

	assert_accurate(admitted_over(&r), 10, 1, &r, 1);
}

Test(accuracy, hundred_mpps)
{
	/* 37 us steps (3700 packets) for 1 ms: 100000 packets. The burst
	 * must hold a step's worth. */
	struct run r = { .pps = 100000000, .burst = 10000, .frame_len = 64,
			 .step_ns = 37000, .steps = 27, .offered = 4000 };

	assert_accurate(admitted_over(&r), 10000, 100000000, &r, 1);
}

Test(accuracy, eight_kbit_per_s)
{
	/* 1000 bytes/s in 64-byte frames, 0.37 s steps for 1000 s. */
	struct run r = { .bps = 8000, .burst_bytes = 1500, .frame_len = 64,
			 .step_ns = 370000000, .steps = 2703, .offered = 8 };

	assert_accurate(admitted_over(&r) * 64.0, 1500, 1000, &r, 64);
}

Test(accuracy, four_hundred_gbit_per_s)
{
	/* 50 GB/s in 1500-byte frames (33.3 Mpps), 37 us steps (1233
	 * frames) for 3 ms: 100000 frames. */
	struct run r = { .bps = 400000000000ULL, .burst_bytes = 15000000,
			 .frame_len = 1500, .step_ns = 37000, .steps = 81,
			 .offered = 1300 };

	assert_accurate(admitted_over(&r) * 1500.0, 15000000, 50e9, &r, 1500);
}

Test(accuracy, both_limits_hold_the_tighter_one)
{
	/* 1000 pps and 8 Mbit/s (1 MB/s) in 1500-byte frames: bytes allow
	 * 666.7 frames/s, so bytes are the cap. */
	struct run r = { .pps = 1000, .burst = 10, .bps = 8000000,
			 .burst_bytes = 15000, .frame_len = 1500,
			 .step_ns = 3700000, .steps = 2703, .offered = 5 };

	assert_accurate(admitted_over(&r) * 1500.0, 15000, 1e6, &r, 1500);
}

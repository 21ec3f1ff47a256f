// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Limit events through the ring buffer, on the test clock: one per
 * source per quiet period, a global cap a spoofed flood cannot pass,
 * and a full ring counted rather than silent.
 */
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <bpf/libbpf.h>
#include "fixture.h"
#include "loader.h"
#include "stats.h"

#define MS	1000000ULL
#define FLOOD_SOURCES	100000

static struct xrl_datapath dp;
static struct xrl_policy policy;

struct seen {
	int n;
	struct xrl_limit_event last;
};

static int count_event(void *ctx, void *data, size_t size)
{
	struct seen *seen = ctx;

	cr_assert_eq(size, sizeof(struct xrl_limit_event));
	seen->n++;
	memcpy(&seen->last, data, sizeof(seen->last));
	return 0;
}

/* Reads every event in the ring; returns how many. */
static struct seen drain(void)
{
	struct seen seen = {};
	struct ring_buffer *ring;

	ring = ring_buffer__new(dp.events_fd, count_event, &seen, NULL);
	cr_assert_not_null(ring);
	cr_assert_geq(ring_buffer__consume(ring), 0);
	ring_buffer__free(ring);
	return seen;
}

static struct xrl_event_state counters(void)
{
	struct xrl_event_state state;

	cr_assert_eq(xrl_event_stats_read(&dp, &state), 0);
	return state;
}

static void setup(void)
{
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(events, .init = setup, .fini = teardown, .timeout = 300);

static void send_at(const char *src, __u64 now)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	xrl_datapath_set_time(&dp, now);
	fixture_run(&dp, &pkt);
}

Test(events, a_source_over_its_limit_yields_one_event_per_quiet_period)
{
	static const __u8 source[16] = {
		[10] = 0xff, [11] = 0xff, 198, 18, 1, 5,
	};
	struct xrl_event_state state;
	struct seen seen;
	double pps;
	int step;

	fixture_load(&dp, 0);
	fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, 10, 2, 0, 0);
	policy.event_quiet_ns = 10 * NS_PER_S;
	fixture_apply(&dp, &policy);

	/* 30 s at 100 pps, ten times the limit; a neighbour within its. */
	for (step = 0; step < 3000; step++) {
		send_at("198.18.1.5", NS_PER_S + step * 10 * MS);
		if (step % 20 == 0)
			send_at("198.18.1.6", NS_PER_S + step * 10 * MS);
	}
	seen = drain();
	/* Limited from 1.02 s on: events at 1.02 s, 11.0x s and 21.0x s. */
	cr_assert_eq(seen.n, 3, "events: %d", seen.n);
	cr_assert_eq(memcmp(seen.last.addr, source, sizeof(source)), 0);
	cr_assert_eq(seen.last.rule_id, policy.rules[1].id);
	cr_assert_eq(seen.last.action, XRL_ACTION_LIMIT);
	cr_assert_geq(seen.last.time_ns, 21 * NS_PER_S);
	cr_assert_lt(seen.last.time_ns, 22 * NS_PER_S);
	/* Observed since the previous event: 100 pps. */
	pps = seen.last.packets * 1e9 / seen.last.window_ns;
	cr_assert(pps > 95 && pps < 105, "observed %.1f pps", pps);
	state = counters();
	cr_assert_eq(state.count[XRL_EVENT_SENT], 3);
	cr_assert_eq(state.count[XRL_EVENT_SUPPRESSED], 0);
	cr_assert_eq(state.count[XRL_EVENT_LOST], 0);
}

Test(events, a_source_dropped_without_a_pass_stays_quiet)
{
	int step;

	fixture_load(&dp, 0);
	fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, 1, 1, 0, 0);
	policy.event_quiet_ns = 0;
	fixture_apply(&dp, &policy);
	/* One pass, then drops only, all at one instant: one event. */
	for (step = 0; step < 50; step++)
		send_at("198.18.1.5", NS_PER_S);
	cr_assert_eq(drain().n, 1);
	/* Two seconds later: one pass, then limited again: one more. */
	for (step = 0; step < 50; step++)
		send_at("198.18.1.5", 3 * NS_PER_S);
	cr_assert_eq(drain().n, 1);
}

/* Each of @n sources of 198.18.0.0/15 sends two packets (pass, drop) at
 * one instant. */
static void spoofed_flood(int n)
{
	struct packet pkt;
	char src[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.%d.%d.%d", 18 + (i >> 16),
			 (i >> 8) & 0xff, i & 0xff);
		cr_assert_eq(packet_from(&pkt, src), 0);
		fixture_offer(&dp, &pkt, 2);
	}
}

Test(events, a_spoofed_flood_yields_at_most_the_global_cap)
{
	struct xrl_event_state state;
	int n;

	fixture_load(&dp, 2 * FLOOD_SOURCES);
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 1, 0, 0);
	policy.new_sources_off = true;
	policy.events_per_second = 100;
	fixture_apply(&dp, &policy);
	spoofed_flood(FLOOD_SOURCES);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), FLOOD_SOURCES);
	n = drain().n;
	state = counters();
	cr_assert_gt(n, 0);
	cr_assert_leq(n, 100, "%d events over the cap of 100", n);
	cr_assert_eq(state.count[XRL_EVENT_SENT], (__u64)n);
	/* Every source was limited once; the rest are counted. */
	cr_assert_eq(state.count[XRL_EVENT_SUPPRESSED], FLOOD_SOURCES - n);
	cr_assert_eq(state.count[XRL_EVENT_LOST], 0);
}

Test(events, a_full_ring_counts_what_it_loses)
{
	struct xrl_event_state state;
	int n;

	fixture_load(&dp, 2 * FLOOD_SOURCES);
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 1, 0, 0);
	policy.new_sources_off = true;
	policy.events_per_second = 1000000;
	fixture_apply(&dp, &policy);
	/* Nobody reads the ring meanwhile: it fills up. */
	spoofed_flood(FLOOD_SOURCES);
	n = drain().n;
	state = counters();
	cr_assert_eq(state.count[XRL_EVENT_SENT], (__u64)n);
	cr_assert_lt(n, FLOOD_SOURCES);
	cr_assert_gt(state.count[XRL_EVENT_LOST], 0);
	cr_assert_eq(state.count[XRL_EVENT_SENT] +
		     state.count[XRL_EVENT_LOST], FLOOD_SOURCES);
}

Test(events, none_when_the_cap_is_zero)
{
	fixture_load(&dp, 0);
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 1, 0, 0);
	policy.events_per_second = 0;
	fixture_apply(&dp, &policy);
	spoofed_flood(10);
	cr_assert_eq(drain().n, 0);
	cr_assert_eq(counters().count[XRL_EVENT_SUPPRESSED], 0);
}

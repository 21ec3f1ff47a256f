// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Contention never refuses: two threads pinned to two CPUs judge tens of
 * millions of packets of one source whose limit cannot refuse (10^12 pps,
 * burst 2^32; with bps, 10^12 bps, burst 2^32 bytes), so every one of
 * them must pass, be counted as passed and raise no limit event, however
 * the two CPUs' atomic operations on the one bucket interleave.
 *
 * On the test clock time stands still, so the bucket stays in debt (the
 * packets' charges add up) and the CPUs race on a word ahead of now; the
 * instant is just before the packet limit's 58-bit clock wraps, so the
 * charges cross the wrap, and the bucket must then owe exactly the sum of
 * the admitted packets' costs, in its own units. On the real clock each
 * packet finds the bucket full and the CPUs race to write "now + cost".
 * Both races are run.
 */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cpu_pool.h"
#include "loader.h"
#include "stats.h"
#include "fixture.h"
#include "limit.h"

#define RUNS		5
#define REPEAT		1000000	/* packets per test run */
/* Scaled by $XRL_TEST_SCALE, to no fewer than 2 * 5 * 200000 packets:
 * 2 us of charges at 10^12 pps, still across the clock's wrap. */
#define REPEAT_RUN	fixture_scaled(REPEAT, 200000)
#define TOTAL		((uint64_t)CPU_POOL_SIZE * RUNS * REPEAT_RUN)
#define HUGE_RATE	1000000000000ULL	/* XRL_RATE_MAX */
#define HUGE_BURST	(1ULL << 32)		/* XRL_BURST_MAX */
#define SOURCE		"198.18.0.1"

static struct xrl_datapath dp;
static struct xrl_policy policy;
static struct cpu_pool pool;

static void teardown(void)
{
	cpu_pool_stop(&pool);
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(contention, .fini = teardown, .timeout = 120);

static void load(bool test_clock)
{
	struct xrl_load_opts opts = {
		.max_sources = 1024,
		.test_clock = test_clock,
		.hash_seed = FIXTURE_HASH_SEED,
	};
	int ret = xrl_datapath_load(&dp, &opts);

	cr_assert_eq(ret, 0, "loading: %s", strerror(-ret));
	cr_assert_eq(xrl_policy_init(&policy), 0);
	cpu_pool_start(&pool, &dp);
}

/* What a limit's word says is owed at @now_ns, in its units. */
static int64_t debt_units(uint64_t word, uint64_t now_ns)
{
	int shift = XRL_TAT_SHIFT(word);

	return XRL_TAT_AHEAD(word, shift >= 0 ? now_ns << shift :
					      now_ns >> -shift);
}

/* A microsecond before the 58-bit clock of @lim wraps. */
static uint64_t before_wrap_ns(const struct xrl_limit *lim)
{
	return (1ULL << (XRL_TAT_TIME_BITS - lim->shift)) - 1000;
}

/* On the test clock nothing moves but the charges: the words owe
 * exactly what the admitted packets cost, in the units of the rule. */
static void expect_charged(const struct xrl_bucket *bucket, uint64_t now,
			   const struct packet *pkt, bool with_bps)
{
	struct xrl_limit pps, bps;

	cr_assert_eq(xrl_limit_compile_pps(HUGE_RATE, HUGE_BURST, &pps), 0);
	cr_assert_eq(xrl_limit_compile_bps(HUGE_RATE, HUGE_BURST, &bps), 0);
	cr_expect_eq(XRL_TAT_SHIFT(bucket->tat[XRL_LIMIT_PACKETS]), pps.shift);
	cr_expect_eq(debt_units(bucket->tat[XRL_LIMIT_PACKETS], now),
		     (int64_t)(TOTAL * pps.interval));
	if (!with_bps)
		return;
	cr_expect_eq(XRL_TAT_SHIFT(bucket->tat[XRL_LIMIT_BYTES]), bps.shift);
	cr_expect_eq(debt_units(bucket->tat[XRL_LIMIT_BYTES], now),
		     (int64_t)(TOTAL * pkt->len * bps.interval));
}

static int count_event(void *ctx, void *data, size_t len)
{
	(*(uint64_t *)ctx)++;
	return 0;
}

static uint64_t events_in_ring(void)
{
	struct ring_buffer *ring;
	uint64_t seen = 0;

	ring = ring_buffer__new(dp.events_fd, count_event, &seen, NULL);
	cr_assert_not_null(ring);
	cr_assert_geq(ring_buffer__consume(ring), 0);
	ring_buffer__free(ring);
	return seen;
}

/* Both CPUs send TOTAL / 2 packets of one source at once; then nothing
 * may have been refused, counted as would-drop or reported. */
static void hammer(enum xrl_action action, bool test_clock, bool with_bps)
{
	struct xrl_event_state events;
	struct xrl_rule_counters rule;
	struct fixture_counts counts;
	struct xrl_bucket bucket;
	struct xrl_limit pps;
	struct packet pkt;
	uint64_t now;
	uint32_t id;
	int i;

	load(test_clock);
	cr_assert_eq(xrl_limit_compile_pps(HUGE_RATE, HUGE_BURST, &pps), 0);
	now = before_wrap_ns(&pps);
	xrl_datapath_set_time(&dp, now);
	id = fixture_rule(&policy, "198.18.0.0/24", action, HUGE_RATE,
			  HUGE_BURST, with_bps ? HUGE_RATE : 0,
			  with_bps ? HUGE_BURST : 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, SOURCE), 0);
	for (i = 0; i < CPU_POOL_SIZE; i++) {
		pool.workers[i].pkt = pkt;
		pool.workers[i].runs = RUNS;
		pool.workers[i].repeat = REPEAT_RUN;
	}
	cpu_pool_round(&pool);

	cr_assert_eq(fixture_bucket(&dp, SOURCE, id, &bucket), 0);
	counts = fixture_source_counts(&dp, SOURCE, id);
	cr_expect(!counts.refused, "%llu of %llu refused",
		  (unsigned long long)counts.dropped,
		  (unsigned long long)TOTAL);
	cr_expect(counts.flags & XRL_BUCKET_PASSED);
	if (test_clock)
		expect_charged(&bucket, now, &pkt, with_bps);
	rule = fixture_rule_counters(&dp, id);
	cr_expect_eq(rule.outcome[XRL_RULE_DROPPED].packets, 0);
	cr_expect_eq(rule.outcome[XRL_RULE_PASSED].packets, TOTAL);
	cr_expect_eq(fixture_count(&dp, XRL_VERDICT_DROP), 0);
	cr_expect_eq(fixture_count(&dp, XRL_VERDICT_MONITOR), 0);
	cr_expect_eq(fixture_count(&dp, XRL_VERDICT_PASS), TOTAL);
	cr_assert_eq(xrl_event_stats_read(&dp, &events), 0);
	for (i = 0; i < XRL_EVENT_OUTCOMES; i++)
		cr_expect_eq(events.count[i], 0, "event outcome %d: %llu", i,
			     (unsigned long long)events.count[i]);
	cr_expect_eq(events_in_ring(), 0);
}

Test(contention, a_pps_source_within_its_limit_is_never_refused)
{
	hammer(XRL_ACTION_LIMIT, true, false);
}

Test(contention, a_pps_and_bps_source_within_its_limits_is_never_refused)
{
	hammer(XRL_ACTION_LIMIT, true, true);
}

Test(contention, a_monitor_source_within_its_limit_never_counts_as_would_drop)
{
	hammer(XRL_ACTION_MONITOR, true, true);
}

Test(contention, a_pps_source_is_never_refused_on_the_real_clock)
{
	hammer(XRL_ACTION_LIMIT, false, false);
}

Test(contention, a_pps_and_bps_source_is_never_refused_on_the_real_clock)
{
	hammer(XRL_ACTION_LIMIT, false, true);
}

Test(contention, a_monitor_source_never_counts_as_would_drop_on_the_real_clock)
{
	hammer(XRL_ACTION_MONITOR, false, true);
}

/*
 * The race the real-clock runs above can hit, made exact on the test
 * clock: a CPU reads the clock, is held (an interrupt, a descheduled
 * virtual CPU) while another admits packets of the source for longer
 * than the limit's tolerance (2^32 packets at 10^12 pps: 4.3 ms), then
 * judges its packet at its older reading. Its packet is within the limit
 * and passes: the bucket's last admission tells it the time is later.
 */
Test(contention, a_packet_judged_at_an_older_clock_reading_is_not_refused)
{
	struct xrl_bucket bucket;
	struct packet pkt;
	uint64_t now = 10 * NS_PER_S;
	uint32_t id;

	load(true);
	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, HUGE_RATE,
			  HUGE_BURST, HUGE_RATE, HUGE_BURST);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, SOURCE), 0);
	xrl_datapath_set_time(&dp, now + 10 * 1000000ULL);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	xrl_datapath_set_time(&dp, now);	/* read 10 ms before */
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_bucket(&dp, SOURCE, id, &bucket), 0);
	cr_assert(!fixture_source_counts(&dp, SOURCE, id).refused);
}

/* A rule of huge limits for the source whose /24 level has @pps and
 * @burst: the level's bucket is judged at the source's clock reading,
 * made before the level's words are read. Returns the rule's id. */
static uint32_t rule_with_level(uint64_t pps, uint64_t burst)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = HUGE_RATE,
		.burst = HUGE_BURST, .n_levels = 1,
		.levels = { { .family = XRL_FAMILY_IPV4, .prefix = 24,
			      .pps = pps, .burst = burst } },
	};

	return fixture_rule_spec(&policy, "198.18.0.0/16", rule);
}

/*
 * The race the real-clock runs hit under preemption (issue 28), made
 * exact on the test clock: a CPU reads the clock, is held, and meanwhile
 * another admits packets for longer than the tolerance and has written
 * the bucket's TAT but not yet its last_seen_ns (the guard of the test
 * above). A source's own bucket is read before the clock (the next
 * test); a level's is judged at that reading, after which its words are
 * read. Judged at the held reading, the packet would see a debt past
 * the tolerance; the clock read again after the word (the test clock's
 * second reading) shows the time that debt belongs to, and the packet,
 * within its limit, passes. Without that second reading the same bucket
 * refuses it: the test can fail.
 */
Test(contention, a_packet_of_a_cpu_held_past_the_tolerance_is_not_refused)
{
	struct xrl_bucket bucket;
	struct packet pkt;
	uint64_t held = 10 * NS_PER_S, later = held + 10 * 1000000ULL;
	uint32_t id;

	load(true);
	id = rule_with_level(HUGE_RATE, HUGE_BURST);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, SOURCE), 0);
	xrl_datapath_set_time(&dp, later);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.0.0", id, 0, &bucket),
		     0);
	bucket.last_seen_ns = held - 1;	/* not yet written */
	fixture_level_bucket_write(&dp, "198.18.0.0", id, 0, &bucket);

	xrl_datapath_set_time(&dp, held);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP,
		     "control: judged at the held reading alone");
	fixture_level_bucket_write(&dp, "198.18.0.0", id, 0, &bucket);
	xrl_datapath_set_later_time(&dp, later + 1000);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS,
		     "read again after the word: within its limit");
	cr_assert_eq(fixture_level_bucket(&dp, "198.18.0.0", id, 0, &bucket),
		     0);
	cr_assert_eq(bucket.last_seen_ns, later + 1000);
}

/*
 * A source's own bucket: its words are read, then the clock, once
 * (bpf/gcra.h bucket_take_read()), so no CPU held before its reading
 * sees admissions made after it, and a refusal needs no second reading.
 * The same bucket as above, written by a CPU whose clock ran ahead of
 * this reading: refused at the one reading, with no second one asked.
 */
Test(contention, a_source_s_refusal_reads_the_clock_once)
{
	struct xrl_bucket bucket;
	struct packet pkt;
	uint64_t now = 10 * NS_PER_S, ahead = now + 10 * 1000000ULL;
	uint32_t id;

	load(true);
	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, HUGE_RATE,
			  HUGE_BURST, HUGE_RATE, HUGE_BURST);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, SOURCE), 0);
	xrl_datapath_set_time(&dp, ahead);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_bucket(&dp, SOURCE, id, &bucket), 0);
	bucket.last_seen_ns = now - 1;
	fixture_bucket_write(&dp, SOURCE, &bucket);
	xrl_datapath_set_time(&dp, now);
	xrl_datapath_set_later_time(&dp, ahead + 1000);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP,
		     "judged at its one reading, not at a second");
	/* At a reading of its own past the other CPU's, it passes. */
	fixture_bucket_write(&dp, SOURCE, &bucket);
	xrl_datapath_set_time(&dp, ahead + 1000);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_bucket(&dp, SOURCE, id, &bucket), 0);
	cr_assert_eq(bucket.last_seen_ns, ahead + 1000);
}

/* The second reading never turns a real refusal into an admission: a
 * bucket over its limit at the later time still refuses (a level's,
 * judged at a reading made before its words). */
Test(contention, a_clock_read_again_refuses_what_is_over_the_limit_then)
{
	struct packet pkt;
	uint64_t now = 10 * NS_PER_S;

	load(true);
	rule_with_level(1, 2);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, SOURCE), 0);
	xrl_datapath_set_time(&dp, now);
	xrl_datapath_set_later_time(&dp, now + NS_PER_S / 2);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "half a second later, "
		     "a 1 pps bucket of burst 2 still owes");
	xrl_datapath_set_later_time(&dp, now + NS_PER_S + NS_PER_S / 10);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS, "a second later: one");
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP);
}

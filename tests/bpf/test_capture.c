// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Capture through BPF_PROG_TEST_RUN on the test clock: nothing written
 * while none runs; only the frames of the rule and verdict asked for,
 * with that rule and verdict and their own bytes; no more than the
 * budget per CPU at one instant and its rate after; snaplen cutting a
 * frame, a frame shorter than it kept whole, with and without
 * bpf_xdp_load_bytes(); a capture past its lease disarmed by the
 * program.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "capture.h"
#include "fixture.h"
#include "kernel.h"
#include "limit.h"
#include "loader.h"
#include "stats.h"

#define MAX_SEEN	4096

static struct xrl_datapath dp;
static struct xrl_policy policy;
static uint32_t rule_a, rule_b;

struct seen {
	size_t n;
	struct xrl_capture_record recs[MAX_SEEN];
};

static struct seen seen;

static int keep_record(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;

	cr_assert_eq(size, sizeof(struct xrl_capture_record));
	if (s->n < MAX_SEEN)
		memcpy(&s->recs[s->n], data, sizeof(s->recs[0]));
	s->n++;
	return 0;
}

/* Every record in the ring, into seen (emptied first). */
static void drain(void)
{
	struct ring_buffer *ring;

	seen.n = 0;
	ring = ring_buffer__new(dp.capture_rb_fd, keep_record, &seen, NULL);
	cr_assert_not_null(ring);
	cr_assert_geq(ring_buffer__consume(ring), 0);
	ring_buffer__free(ring);
}

static struct xrl_capture_state counts(void)
{
	struct xrl_capture_state st;

	cr_assert_eq(xrl_capture_stats_read(&dp, &st), 0);
	return st;
}

static void arm(__u32 rule, __u32 verdicts, __u32 actions, __u32 snaplen)
{
	struct xrl_capture_config cfg = {
		.rule = rule, .verdicts = verdicts, .actions = actions,
		.snaplen = snaplen,
	};
	pid_t owner;

	cr_assert_eq(xrl_capture_arm(&dp, &cfg, &owner), 0);
}

static struct xrl_capture_config config(void)
{
	struct xrl_capture_config cfg;
	__u32 zero = 0;

	cr_assert_eq(bpf_map_lookup_elem(dp.capture_fd, &zero, &cfg), 0);
	return cfg;
}

static void send_n(const char *src, int n)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	fixture_offer(&dp, &pkt, n);
}

/* The whole test on one CPU: the budget is per CPU. */
static void pin_to_this_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void setup(void)
{
	pin_to_this_cpu();
	cr_assert_eq(xrl_policy_init(&policy), 0);
	fixture_load(&dp, 1024);
	rule_a = fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, 1, 2,
			      0, 0);
	rule_b = fixture_rule(&policy, "198.18.2.0/24", XRL_ACTION_LIMIT, 1, 2,
			      0, 0);
	fixture_apply(&dp, &policy);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(capture, .init = setup, .fini = teardown, .timeout = 120);

#define ALL_VERDICTS	((1U << XRL_VERDICT_COUNT) - 1)
#define ALL_ACTIONS	((1U << XDP_PASS) | (1U << XDP_DROP))
#define LIMITED		((1U << XRL_VERDICT_DROP) | (1U << XRL_VERDICT_MONITOR))

Test(capture, with_capture_off_nothing_is_written)
{
	struct xrl_capture_state st;

	send_n("198.18.1.1", 50);
	send_n("198.18.9.1", 50);
	drain();
	cr_assert_eq(seen.n, 0);
	st = counts();
	cr_assert_eq(st.budget.count[XRL_CAPTURE_TAKEN], 0);
	cr_assert_eq(st.budget.count[XRL_CAPTURE_SAMPLED_OUT], 0);
	cr_assert_eq(config().armed, 0);

	/* Armed and disarmed: off again. */
	arm(0, ALL_VERDICTS, ALL_ACTIONS, 64);
	cr_assert_eq(xrl_capture_disarm(&dp), 0);
	send_n("198.18.1.1", 10);
	drain();
	cr_assert_eq(seen.n, 0);
	cr_assert_eq(counts().budget.count[XRL_CAPTURE_TAKEN], 0);
}

Test(capture, only_the_rule_and_verdict_asked_for_with_their_bytes)
{
	struct packet pkt;
	size_t i;

	arm(rule_a + 1, LIMITED, ALL_ACTIONS, XRL_CAPTURE_SNAP_MAX);
	send_n("198.18.1.1", 5);	/* 2 of its burst passed, 3 dropped */
	send_n("198.18.2.1", 5);	/* another rule's */
	send_n("198.18.9.1", 5);	/* the default rule's, allowed */
	drain();
	cr_assert_eq(seen.n, 3);
	cr_assert_eq(packet_from(&pkt, "198.18.1.1"), 0);
	for (i = 0; i < seen.n; i++) {
		cr_assert_eq(seen.recs[i].rule, rule_a + 1);
		cr_assert_eq(seen.recs[i].verdict, XRL_VERDICT_DROP);
		cr_assert_eq(seen.recs[i].action, XDP_DROP);
		cr_assert_eq(seen.recs[i].frame_len, pkt.len);
		cr_assert_eq(seen.recs[i].cap_len, pkt.len);
		cr_assert_eq(memcmp(seen.recs[i].data, pkt.data, pkt.len), 0);
	}
	cr_assert_eq(counts().budget.count[XRL_CAPTURE_TAKEN], 3);

	/* What passed, of every rule: 2 of a new source of B's, then
	 * the default rule's. */
	arm(0, ALL_VERDICTS, 1U << XDP_PASS, XRL_CAPTURE_SNAP_MAX);
	send_n("198.18.2.2", 5);
	send_n("198.18.9.1", 3);
	drain();
	cr_assert_eq(seen.n, 5);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(seen.recs[i].rule, rule_b + 1);
		cr_assert_eq(seen.recs[i].verdict, XRL_VERDICT_PASS);
		cr_assert_eq(seen.recs[i].action, XDP_PASS);
	}
	for (; i < seen.n; i++) {
		cr_assert_eq(seen.recs[i].rule, 0 + 1, "the default rule");
		cr_assert_eq(seen.recs[i].verdict, XRL_VERDICT_ALLOW);
	}
}

Test(capture, a_frame_judged_before_any_rule_has_no_rule)
{
	struct packet pkt;

	arm(0, 1U << XRL_VERDICT_NONIP, ALL_ACTIONS, XRL_CAPTURE_SNAP_MAX);
	cr_assert_eq(packet_build(&pkt, &(struct packet_spec){
		.ethertype = 0x88cc }), 0);	/* LLDP */
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	send_n("198.18.9.1", 2);
	drain();
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.recs[0].rule, 0);
	cr_assert_eq(seen.recs[0].verdict, XRL_VERDICT_NONIP);
}

Test(capture, sampling_holds_the_budget_at_one_instant_and_over_time)
{
	struct xrl_capture_state st;
	struct xrl_limit share;
	uint64_t burst, rate_per_100ms;

	cr_assert_eq(xrl_limit_compile_pps_share(XRL_CAPTURE_PER_SECOND,
						 XRL_CAPTURE_BURST,
						 xrl_datapath_cpus(), &share),
		     0);
	burst = share.tolerance / share.interval;
	rate_per_100ms = (uint64_t)(xrl_limit_rate(&share) / 10 + 0.5);
	/* Its share of the rate: 1/ncpus of it (rounded by the compile). */
	cr_assert_leq(rate_per_100ms * 10 * xrl_datapath_cpus(),
		      XRL_CAPTURE_PER_SECOND + 10 * xrl_datapath_cpus());

	arm(0, ALL_VERDICTS, ALL_ACTIONS, 64);
	send_n("198.18.9.1", 3000);
	drain();
	st = counts();
	cr_assert_eq(seen.n, burst, "%zu taken of a burst of %llu", seen.n,
		     (unsigned long long)burst);
	cr_assert_eq(st.budget.count[XRL_CAPTURE_TAKEN], burst);
	cr_assert_eq(st.budget.count[XRL_CAPTURE_SAMPLED_OUT], 3000 - burst);
	cr_assert_eq(st.budget.count[XRL_CAPTURE_LOST], 0);

	/* 100 ms later: a tenth of a second's share, no more. */
	xrl_datapath_set_time(&dp, NS_PER_S + NS_PER_S / 10);
	send_n("198.18.9.1", 3000);
	drain();
	cr_assert_eq(seen.n, rate_per_100ms, "%zu taken in 100 ms at %llu",
		     seen.n, (unsigned long long)rate_per_100ms);
}

Test(capture, a_capture_past_its_lease_is_disarmed_by_the_program)
{
	struct xrl_capture_config cfg;

	arm(0, ALL_VERDICTS, ALL_ACTIONS, 64);
	cfg = config();
	cr_assert_eq(cfg.armed, 1);
	cr_assert_eq(cfg.owner, (__u32)getpid());
	xrl_datapath_set_time(&dp, cfg.until_ns + 1);
	send_n("198.18.9.1", 3);
	drain();
	cr_assert_eq(seen.n, 0);
	cr_assert_eq(config().armed, 0);
}

/* snaplen 20 of a longer frame, and a frame shorter than the snaplen. */
static void check_snaplen(void)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, "198.18.9.1"), 0);
	cr_assert_gt(pkt.len, 20);
	arm(0, ALL_VERDICTS, ALL_ACTIONS, 20);
	fixture_run(&dp, &pkt);
	drain();
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.recs[0].cap_len, 20);
	cr_assert_eq(seen.recs[0].frame_len, pkt.len);
	cr_assert_eq(memcmp(seen.recs[0].data, pkt.data, 20), 0);

	arm(0, ALL_VERDICTS, ALL_ACTIONS, XRL_CAPTURE_SNAP_MAX);
	fixture_run_prefix(&dp, &pkt, 14);	/* an Ethernet header only */
	drain();
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.recs[0].cap_len, 14);
	cr_assert_eq(seen.recs[0].frame_len, 14);
	cr_assert_eq(memcmp(seen.recs[0].data, pkt.data, 14), 0);
}

Test(capture, snaplen_cuts_a_frame_and_a_shorter_one_is_kept_whole)
{
	check_snaplen();
}

Test(capture, without_xdp_load_bytes_the_linear_copy_keeps_the_same_bytes)
{
	xrl_datapath_close(&dp);
	setenv(XRL_ENV_NO_BPF_LOOP, "1", 1);
	cr_assert_not(xrl_kernel_xdp_load_bytes());
	fixture_load(&dp, 1024);
	unsetenv(XRL_ENV_NO_BPF_LOOP);
	fixture_apply(&dp, &policy);
	check_snaplen();
}

Test(capture, a_full_ring_is_counted_as_lost_not_silent)
{
	struct xrl_capture_state st;
	uint64_t offered = 0, now = NS_PER_S;
	int step;

	arm(0, ALL_VERDICTS, ALL_ACTIONS, XRL_CAPTURE_SNAP_MAX);
	/* Within the budget (a second's share at a time), never read:
	 * more than the ring holds. */
	for (step = 0; step < 20; step++) {
		now += NS_PER_S;
		xrl_datapath_set_time(&dp, now);
		send_n("198.18.9.1", 400);
		offered += 400;
	}
	st = counts();
	cr_assert_gt(st.budget.count[XRL_CAPTURE_LOST], 0);
	cr_assert_eq(st.budget.count[XRL_CAPTURE_SAMPLED_OUT], 0);
	drain();
	cr_assert_eq(st.budget.count[XRL_CAPTURE_TAKEN], seen.n);
	cr_assert_eq(seen.n + st.budget.count[XRL_CAPTURE_LOST], offered);
	/* 1 MiB of records of 280 bytes and their 8-byte headers. */
	cr_assert_eq(seen.n,
		     XRL_CAPTURE_RING_BYTES / (8 + sizeof(seen.recs[0])));
}

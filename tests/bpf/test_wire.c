// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What Linux would deliver is judged: VLAN stacks of every depth Linux
 * strips, IPv6 sources that name IPv4 ones, and GRO/GSO aggregates
 * charged as the wire packets they carry.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/if.h>
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

TestSuite(vlan, .init = setup, .fini = teardown);
TestSuite(mapped, .init = setup, .fini = teardown);
TestSuite(gro, .init = setup, .fini = teardown);

/*
 * A frame from @src behind @n_vlan tags: VID 0 (priority tags, which
 * Linux strips one by one) and real VIDs, 802.1ad and 802.1Q mixed.
 */
static void tagged(struct packet *pkt, const char *src, int n_vlan)
{
	struct packet_spec spec = { .src = src, .n_vlan = n_vlan };
	int i;

	for (i = 0; i < n_vlan; i++) {
		spec.vlan_tags[i] = i % 3 ? 0 : 100 + i;
		spec.vlan_tpids[i] = i % 2 ? ETH_P_8021Q : ETH_P_8021AD;
	}
	cr_assert_eq(packet_build(pkt, &spec), 0);
}

/* Deny the sources: a frame not judged would pass (as non-IP). */
static void deny_test_sources(void)
{
	fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_rule(&policy, "fd00:1::/32", XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
}

Test(vlan, every_depth_up_to_eight_tags_is_judged_by_the_inner_source)
{
	struct packet pkt;
	int n;

	deny_test_sources();
	for (n = 0; n <= 8; n++) {
		tagged(&pkt, "198.18.1.1", n);
		cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "%d tags", n);
		tagged(&pkt, "fd00:1::1", n);
		cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "IPv6, %d tags",
			     n);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 18);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_NONIP), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_VLAN_OVERFLOW), 0);
}

/* Eight VID-0 tags, as Linux would strip them, and the IP inside. */
Test(vlan, eight_priority_tags_share_the_bucket_of_the_untagged_source)
{
	struct packet_spec spec = { .src = "198.18.1.7", .n_vlan = 8 };
	struct packet plain, deep;
	struct xrl_bucket bucket;
	uint32_t id;

	id = fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, 10, 4, 0,
			  0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_build(&deep, &spec), 0);
	cr_assert_eq(packet_from(&plain, "198.18.1.7"), 0);
	cr_assert_eq(fixture_run_many(&dp, &deep, 3), 3);
	cr_assert_eq(fixture_run_many(&dp, &plain, 3), 1);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.7", id, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 10, 4, NS_PER_S), 4);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.1.7", id).dropped, 2);
}

/* An allow-all policy: the only way to a drop is the overflow verdict. */
Test(vlan, nine_tags_or_more_are_dropped_and_counted_by_default)
{
	struct packet pkt;
	int n;

	for (n = 9; n <= PACKET_MAX_TAGS; n++) {
		tagged(&pkt, "198.18.1.1", n);
		cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "%d tags", n);
		tagged(&pkt, "fd00:1::1", n);
		cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "IPv6, %d tags",
			     n);
	}
	/* Cut right after the ninth tag: nothing to read, still too deep. */
	tagged(&pkt, "198.18.1.1", 9);
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, packet_ip_offset(9)),
		     XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_VLAN_OVERFLOW),
		     2 * (PACKET_MAX_TAGS - 8) + 1);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_NONIP), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 0);
}

Test(vlan, nine_tags_pass_counted_when_vlan_overflow_is_pass)
{
	struct packet pkt;

	/* Deny all: nothing judged as IP could pass. */
	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	policy.vlan_overflow = XRL_VLAN_OVERFLOW_PASS;
	fixture_apply(&dp, &policy);
	tagged(&pkt, "198.18.1.1", 9);
	cr_assert_eq(fixture_offer(&dp, &pkt, 5), XDP_PASS);
	tagged(&pkt, "198.18.1.1", 8);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "eight: judged");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_VLAN_OVERFLOW), 5);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 1);
}

Test(vlan, a_tag_cut_short_within_eight_is_malformed)
{
	struct packet pkt;

	policy.malformed = XRL_MALFORMED_DROP;
	fixture_apply(&dp, &policy);
	tagged(&pkt, "198.18.1.1", 8);
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, packet_ip_offset(8) - 1),
		     XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 1);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_VLAN_OVERFLOW), 0);
}

static const char *const mapped_sources[] = {
	"::ffff:198.18.5.1",	/* IPv4-mapped */
	"::ffff:0.0.0.0",
	"::ffff:255.255.255.255",
	"::198.18.5.1",		/* IPv4-compatible */
	"::0.0.0.2",
	"::255.255.255.255",
};

/* Neighbours of the two /96s, and :: and ::1: ordinary IPv6 sources. */
static const char *const unmapped_sources[] = {
	"::", "::1", "::fffe:c612:501", "::1:ffff:c612:501",
	"0:0:0:1::ffff:c612:501", "1::ffff:c612:501", "fd00::c612:501",
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

Test(mapped, ipv4_mapped_and_compatible_sources_are_dropped_and_counted)
{
	struct packet pkt;
	size_t i;

	/* Allow all: the only way to a drop is the mapped verdict. */
	for (i = 0; i < N_OF(mapped_sources); i++) {
		cr_assert_eq(packet_from(&pkt, mapped_sources[i]), 0);
		cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "%s",
			     mapped_sources[i]);
	}
	tagged(&pkt, "::ffff:198.18.5.1", 3);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "behind three tags");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_IPV4_MAPPED),
		     N_OF(mapped_sources) + 1);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 0);
}

Test(mapped, the_unspecified_loopback_and_neighbouring_sources_are_ipv6)
{
	struct packet pkt;
	size_t i;

	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	for (i = 0; i < N_OF(unmapped_sources); i++) {
		cr_assert_eq(packet_from(&pkt, unmapped_sources[i]), 0);
		cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP, "%s",
			     unmapped_sources[i]);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY),
		     N_OF(unmapped_sources));
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_IPV4_MAPPED), 0);
}

/*
 * ipv4_mapped: ipv6 judges them by IPv6 rules and limits, as ordinary
 * sources: a limit of burst 3 admits 3 of each, and nothing is counted
 * as ipv4_mapped.
 */
Test(mapped, with_ipv4_mapped_ipv6_they_are_judged_as_ipv6_sources)
{
	struct packet pkt;
	size_t i;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 3, 0, 0);
	policy.ipv4_mapped = XRL_IPV4_MAPPED_IPV6;
	policy.v6_prefix = 128;
	fixture_apply(&dp, &policy);
	for (i = 0; i < N_OF(mapped_sources); i++) {
		cr_assert_eq(packet_from(&pkt, mapped_sources[i]), 0);
		cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 3, "%s",
			     mapped_sources[i]);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS),
		     3 * N_OF(mapped_sources));
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP),
		     2 * N_OF(mapped_sources));
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_IPV4_MAPPED), 0);
}

/* The bypass of issue 11: an IPv6 frame naming an allowed IPv4 source. */
Test(mapped, a_mapped_source_never_takes_the_ipv4_allow_rule)
{
	struct packet pkt;
	uint32_t allow;
	struct xrl_rule_counters counters;

	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	allow = fixture_rule(&policy, "198.18.5.0/24", XRL_ACTION_ALLOW, 0, 0,
			     0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_from(&pkt, "198.18.5.1"), 0);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS, "control: IPv4");
	cr_assert_eq(packet_from(&pkt, "::ffff:198.18.5.1"), 0);
	cr_assert_eq(fixture_offer(&dp, &pkt, 10), XDP_DROP);
	cr_assert_eq(packet_from(&pkt, "::198.18.5.1"), 0);
	cr_assert_eq(fixture_offer(&dp, &pkt, 10), XDP_DROP);
	counters = fixture_rule_counters(&dp, allow);
	cr_assert_eq(counters.outcome[XRL_RULE_PASSED].packets, 1);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_IPV4_MAPPED), 20);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 1);
}

/*
 * Aggregates. BPF_PROG_TEST_RUN takes linear frames up to about 3.5 kB,
 * not the 60 kB of a GRO aggregate on a 1500-byte link, so the frames
 * are judged as received on a veth of this test's own network
 * namespace whose MTU scales the link down: an aggregate of 41 segments
 * of 68 bytes of payload on MTU 120 is the 60 kB one of 41 segments of
 * 1448 bytes on MTU 1500, and it takes the same arithmetic.
 */
static int device_with_mtu(int mtu)
{
	char name[IFNAMSIZ], cmd[128];
	int ifindex;

	cr_assert_eq(unshare(CLONE_NEWNET), 0, "unshare: %s", strerror(errno));
	snprintf(name, sizeof(name), "xrlw%d", getpid());
	snprintf(cmd, sizeof(cmd), "ip link add %s mtu %d type veth peer "
		 "name %sp mtu %d && ip link set %s up", name, mtu, name, mtu,
		 name);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	ifindex = if_nametoindex(name);
	cr_assert_gt(ifindex, 0);
	return ifindex;
}

#define IPV4_TCP_HDR (20 + PACKET_TCP_HDR)
#define IPV6_TCP_HDR (40 + PACKET_TCP_HDR)

/* A TCP aggregate of @segments full segments of @mss from @src. */
static void aggregate(struct packet *pkt, const char *src, int segments,
		      int mss)
{
	struct packet_spec spec = { .src = src, .tcp = 1 };

	spec.frame_len = ETH_HLEN + (strchr(src, ':') ? IPV6_TCP_HDR :
				     IPV4_TCP_HDR) + segments * mss;
	cr_assert_eq(packet_build(pkt, &spec), 0, "%d x %d", segments, mss);
}

/* A limit of @burst packets for @cidr, at one instant. */
static void packet_burst(const char *cidr, uint64_t burst)
{
	fixture_rule(&policy, cidr, XRL_ACTION_LIMIT, 1, burst, 0, 0);
}

Test(gro, a_60kB_aggregate_is_charged_its_41_wire_packets)
{
	int ifindex = device_with_mtu(120);
	struct packet agg, one;

	packet_burst("198.18.6.1/32", 41);
	packet_burst("198.18.6.2/32", 40);
	packet_burst("fd00:6::1/128", 41);
	fixture_apply(&dp, &policy);

	aggregate(&agg, "198.18.6.1", 41, 120 - IPV4_TCP_HDR);
	cr_assert_eq(fixture_run_on(&dp, &agg, ifindex), XDP_PASS);
	cr_assert_eq(packet_from(&one, "198.18.6.1"), 0);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_DROP,
		     "the burst is spent: the aggregate cost 41");
	/* One short of the burst: the aggregate does not fit at all. */
	aggregate(&agg, "198.18.6.2", 41, 120 - IPV4_TCP_HDR);
	cr_assert_eq(fixture_run_on(&dp, &agg, ifindex), XDP_DROP);
	cr_assert_eq(packet_from(&one, "198.18.6.2"), 0);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_PASS,
		     "a refused aggregate takes nothing");
	/* IPv6 alike: 40 bytes of IP header. */
	aggregate(&agg, "fd00:6::1", 41, 120 - IPV6_TCP_HDR);
	cr_assert_eq(fixture_run_on(&dp, &agg, ifindex), XDP_PASS);
	cr_assert_eq(packet_from(&one, "fd00:6::1"), 0);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_DROP);
}

/* The last segment short: ceil(payload / MSS). */
Test(gro, a_partial_last_segment_is_a_packet)
{
	int ifindex = device_with_mtu(1500);
	struct packet_spec spec = {
		.src = "198.18.6.3", .tcp = 1,
		.frame_len = ETH_HLEN + IPV4_TCP_HDR + 2 * 1448 + 1,
	};
	struct packet agg, one;

	packet_burst("198.18.6.3/32", 4);
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_build(&agg, &spec), 0);
	cr_assert_eq(fixture_run_on(&dp, &agg, ifindex), XDP_PASS);
	cr_assert_eq(packet_from(&one, "198.18.6.3"), 0);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_PASS);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_DROP,
		     "1448 + 1448 + 1 bytes are 3 packets");
}

/* Bytes: each segment carries the Ethernet, IP and TCP headers again. */
Test(gro, bytes_are_charged_as_the_segments_with_their_headers)
{
	int ifindex = device_with_mtu(120);
	uint64_t wire = 41 * (ETH_HLEN + 120);	/* 5494 */
	struct packet agg, one;

	fixture_rule(&policy, "198.18.6.4/32", XRL_ACTION_LIMIT, 0, 0, 8000,
		     wire);
	fixture_rule(&policy, "198.18.6.5/32", XRL_ACTION_LIMIT, 0, 0, 8000,
		     wire - 1);
	fixture_apply(&dp, &policy);
	aggregate(&agg, "198.18.6.4", 41, 120 - IPV4_TCP_HDR);
	cr_assert_eq(fixture_run_on(&dp, &agg, ifindex), XDP_PASS);
	cr_assert_eq(packet_from(&one, "198.18.6.4"), 0);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_DROP);
	aggregate(&agg, "198.18.6.5", 41, 120 - IPV4_TCP_HDR);
	cr_assert_eq(fixture_run_on(&dp, &agg, ifindex), XDP_DROP,
		     "one byte short of the segments' %llu",
		     (unsigned long long)wire);
}

/* Counted as one frame, so the counters match what the program saw. */
Test(gro, a_frame_within_the_mtu_is_one_packet)
{
	int ifindex = device_with_mtu(9000);
	struct packet jumbo, one;

	packet_burst("198.18.6.6/32", 2);
	fixture_apply(&dp, &policy);
	aggregate(&jumbo, "198.18.6.6", 41, 68);
	cr_assert_eq(fixture_run_on(&dp, &jumbo, ifindex), XDP_PASS);
	cr_assert_eq(packet_from(&one, "198.18.6.6"), 0);
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_PASS,
		     "a jumbo frame on a jumbo link is one packet");
	cr_assert_eq(fixture_run_on(&dp, &one, ifindex), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), 2);
}

/* An aggregate rule's share is charged the same wire packets. */
Test(gro, an_aggregate_scope_rule_is_charged_the_wire_packets_too)
{
	int ifindex = device_with_mtu(120);
	struct xrl_rule_spec *rule;
	struct packet agg;
	int i, passed = 0;

	packet_burst("198.18.7.0/24", 41 * 4);
	rule = &policy.rules[policy.n_rules - 1];
	rule->scope = XRL_SCOPE_AGGREGATE;
	fixture_apply(&dp, &policy);
	aggregate(&agg, "198.18.7.1", 41, 120 - IPV4_TCP_HDR);
	/* Whatever this CPU's share of the burst, it holds fewer
	 * aggregates of 41 than single packets: at most 4 pass. */
	for (i = 0; i < 10; i++)
		passed += fixture_run_on(&dp, &agg, ifindex) == XDP_PASS;
	cr_assert_geq(passed, 1);
	cr_assert_leq(passed, 4);
}

/*
 * IPv4 BIG TCP writes tot_len 0 in aggregates over 64 kB; only there is
 * 0 read as "the rest of the frame", as the kernel does. Frames that
 * long do not fit BPF_PROG_TEST_RUN: here, that 0 in a frame that could
 * have said its length stays malformed.
 */
Test(gro, tot_len_zero_below_64kB_is_malformed)
{
	struct packet_spec spec = {
		.src = "198.18.6.7", .tcp = 1, .frame_len = 3000,
	};
	struct packet pkt;

	policy.malformed = XRL_MALFORMED_DROP;
	fixture_apply(&dp, &policy);
	cr_assert_eq(packet_build(&pkt, &spec), 0);
	((struct iphdr *)packet_l3(&pkt, 0))->tot_len = 0;
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 1);
}

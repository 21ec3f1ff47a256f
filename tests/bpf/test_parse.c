// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Parsing: VLAN and QinQ, non-IP frames, every malformed shape. */
#include <arpa/inet.h>
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
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

TestSuite(parse, .init = setup, .fini = teardown);

static void build(struct packet *pkt, const char *src, int n_vlan, int qinq)
{
	struct packet_spec spec = {
		.src = src,
		.n_vlan = n_vlan,
		.qinq = qinq,
		.vlan_tags = { 100, 200 },
	};

	cr_assert_eq(packet_build(pkt, &spec), 0);
}

/*
 * A tagged frame is judged by its inner source: it shares the bucket of
 * the same source untagged, whatever the tags, and a tagged frame of
 * another source has its own.
 */
Test(parse, vlan_and_qinq_frames_are_keyed_by_the_inner_source)
{
	struct packet plain, vlan, qinq, dot1q_twice, other;
	struct xrl_bucket bucket;
	uint32_t id;

	id = fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, 10, 6, 0,
			  0);
	fixture_apply(&dp, &policy);
	build(&plain, "198.18.1.1", 0, 0);
	build(&vlan, "198.18.1.1", 1, 0);
	build(&qinq, "198.18.1.1", 2, 1);
	build(&dot1q_twice, "198.18.1.1", 2, 0);
	build(&other, "198.18.1.2", 2, 1);

	cr_assert_eq(fixture_run_many(&dp, &vlan, 2), 2);
	cr_assert_eq(fixture_run_many(&dp, &qinq, 2), 2);
	cr_assert_eq(fixture_run_many(&dp, &dot1q_twice, 1), 1);
	cr_assert_eq(fixture_run_many(&dp, &plain, 3), 1);
	cr_assert_eq(fixture_run_many(&dp, &qinq, 3), 0);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.1", id, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 10, 6, NS_PER_S), 6);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.1.1", id).dropped, 5);

	cr_assert_eq(fixture_run_many(&dp, &other, 10), 6);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.2", id, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 10, 6, NS_PER_S), 6);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.1.2", id).dropped, 4);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 0);
}

Test(parse, ipv6_behind_qinq_is_keyed_by_its_inner_source)
{
	struct packet plain, qinq;
	struct xrl_bucket bucket;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 10, 3, 0, 0);
	fixture_apply(&dp, &policy);
	build(&plain, "fd00:0:0:7::1", 0, 0);
	build(&qinq, "fd00:0:0:7::2", 2, 1);
	cr_assert_eq(fixture_run_many(&dp, &qinq, 2), 2);
	cr_assert_eq(fixture_run_many(&dp, &plain, 2), 1);
	cr_assert_eq(fixture_bucket(&dp, "fd00:0:0:7::", 0, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 10, 3, NS_PER_S), 3);
	cr_assert_eq(fixture_source_counts(&dp, "fd00:0:0:7::", 0).dropped, 1);
}

Test(parse, non_ip_frames_pass_untouched_and_are_counted)
{
	uint16_t types[] = { ETH_P_ARP, 0x88cc /* LLDP */, 0x8847 /* MPLS */ };
	struct packet_spec spec = { .frame_len = 60 };
	struct packet pkt;
	size_t i;
	int n_vlan;

	/* A deny-all policy: anything judged as IP would be dropped. */
	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (n_vlan = 0; n_vlan <= 2; n_vlan++) {
			spec.ethertype = types[i];
			spec.n_vlan = n_vlan;
			spec.qinq = n_vlan == 2;
			cr_assert_eq(packet_build(&pkt, &spec), 0);
			cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS,
				     "ethertype %#x, %d tags", types[i],
				     n_vlan);
		}
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_NONIP), 9);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 0);
}

/* Ethernet padding after a short IP packet is not malformed. */
Test(parse, padding_after_the_ip_packet_is_fine)
{
	struct packet pkt;
	struct iphdr *ip;

	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	build(&pkt, "198.18.0.1", 0, 0);
	ip = packet_l3(&pkt, 0);
	ip->tot_len = htons(28);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 1);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 0);
}

enum shape {
	TRUNCATED_ETHERNET,
	TRUNCATED_VLAN,
	TRUNCATED_INNER_VLAN,
	TRUNCATED_IPV4,
	TRUNCATED_IPV6,
	IHL_BELOW_5,
	IHL_PAST_THE_FRAME,
	IPV4_TOTAL_LENGTH_PAST_THE_FRAME,
	IPV4_TOTAL_LENGTH_BELOW_THE_HEADER,
	IPV6_PAYLOAD_LENGTH_PAST_THE_FRAME,
	IPV4_ETHERTYPE_VERSION_6,
	IPV6_ETHERTYPE_VERSION_4,
	TRUNCATED_IPV4_BEHIND_QINQ,
	SHAPES,
};

static const char *const shape_names[SHAPES] = {
	"truncated Ethernet", "truncated VLAN tag", "truncated inner VLAN tag",
	"truncated IPv4 header", "truncated IPv6 header", "IHL < 5",
	"IHL past the frame", "IPv4 total length past the frame",
	"IPv4 total length below the header",
	"IPv6 payload length past the frame", "IPv4 ethertype, version 6",
	"IPv6 ethertype, version 4", "truncated IPv4 behind QinQ",
};

/* Builds a frame of @shape; returns its length. */
static size_t malformed(struct packet *pkt, enum shape shape)
{
	struct packet_spec lldp = { .ethertype = 0x88cc, .frame_len = 60 };
	size_t eth = sizeof(struct ethhdr);
	struct ipv6hdr *ip6;
	struct iphdr *ip;

	switch (shape) {
	case TRUNCATED_ETHERNET:
		/* Non-IP: seen whole, it would be counted as such. */
		cr_assert_eq(packet_build(pkt, &lldp), 0);
		return eth - 1;
	case TRUNCATED_VLAN:
		build(pkt, "198.18.0.1", 1, 0);
		return eth + 3;
	case TRUNCATED_INNER_VLAN:
		build(pkt, "198.18.0.1", 2, 1);
		return eth + 4 + 2;
	case TRUNCATED_IPV4:
		build(pkt, "198.18.0.1", 0, 0);
		return eth + sizeof(*ip) - 1;
	case TRUNCATED_IPV6:
		build(pkt, "fd00::1", 0, 0);
		return eth + sizeof(*ip6) - 1;
	case IHL_BELOW_5:
		build(pkt, "198.18.0.1", 0, 0);
		ip = packet_l3(pkt, 0);
		ip->ihl = 4;
		return pkt->len;
	case IHL_PAST_THE_FRAME:
		build(pkt, "198.18.0.1", 0, 0);
		ip = packet_l3(pkt, 0);
		ip->ihl = 15;
		return eth + 40;
	case IPV4_TOTAL_LENGTH_PAST_THE_FRAME:
		build(pkt, "198.18.0.1", 0, 0);
		ip = packet_l3(pkt, 0);
		ip->tot_len = htons(pkt->len - eth + 1);
		return pkt->len;
	case IPV4_TOTAL_LENGTH_BELOW_THE_HEADER:
		build(pkt, "198.18.0.1", 0, 0);
		ip = packet_l3(pkt, 0);
		ip->tot_len = htons(19);
		return pkt->len;
	case IPV6_PAYLOAD_LENGTH_PAST_THE_FRAME:
		build(pkt, "fd00::1", 0, 0);
		ip6 = packet_l3(pkt, 0);
		ip6->payload_len = htons(pkt->len - eth - sizeof(*ip6) + 1);
		return pkt->len;
	case IPV4_ETHERTYPE_VERSION_6:
		build(pkt, "198.18.0.1", 0, 0);
		ip = packet_l3(pkt, 0);
		ip->version = 6;
		return pkt->len;
	case IPV6_ETHERTYPE_VERSION_4:
		build(pkt, "fd00::1", 0, 0);
		ip6 = packet_l3(pkt, 0);
		ip6->version = 4;
		return pkt->len;
	case TRUNCATED_IPV4_BEHIND_QINQ:
		build(pkt, "198.18.0.1", 2, 1);
		return packet_ip_offset(2) + 12;
	default:
		cr_assert_fail("no shape %d", shape);
	}
	return 0;
}

/* Every shape under a policy that would admit it if it parsed: the only
 * way to the expected verdict is the malformed path. */
static void judge_every_shape(int verdict)
{
	struct packet pkt;
	size_t len;
	int shape;

	for (shape = 0; shape < SHAPES; shape++) {
		len = malformed(&pkt, shape);
		cr_assert_eq(fixture_run_prefix(&dp, &pkt, len), verdict,
			     "%s", shape_names[shape]);
		cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED),
			     shape + 1, "%s not counted", shape_names[shape]);
	}
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_NONIP), 0);
}

Test(parse, malformed_frames_are_counted_and_passed_by_default)
{
	/* Deny all: a malformed frame parsed as IP would be dropped. */
	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	judge_every_shape(XDP_PASS);
}

Test(parse, malformed_frames_are_dropped_when_set)
{
	/* Allow all: a malformed frame parsed as IP would be passed. */
	policy.malformed = XRL_MALFORMED_DROP;
	fixture_apply(&dp, &policy);
	judge_every_shape(XDP_DROP);
}

/* The shapes are malformed because of what was broken, not by accident
 * of the crafting: the same frames unbroken are judged as IP. */
Test(parse, the_same_frames_unbroken_are_ip)
{
	struct packet pkt;

	policy.malformed = XRL_MALFORMED_DROP;
	fixture_apply(&dp, &policy);
	build(&pkt, "198.18.0.1", 0, 0);
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, pkt.len), XDP_PASS);
	build(&pkt, "fd00::1", 0, 0);
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, pkt.len), XDP_PASS);
	build(&pkt, "198.18.0.1", 2, 1);
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, pkt.len), XDP_PASS);
	/* Shortest whole headers: 20 and 40 bytes of IP, nothing after. */
	build(&pkt, "198.18.0.1", 0, 0);
	((struct iphdr *)packet_l3(&pkt, 0))->tot_len = htons(20);
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, 34), XDP_PASS);
	build(&pkt, "fd00::1", 0, 0);
	((struct ipv6hdr *)packet_l3(&pkt, 0))->payload_len = 0;
	cr_assert_eq(fixture_run_prefix(&dp, &pkt, 54), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 5);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_MALFORMED), 0);
}

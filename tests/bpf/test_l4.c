// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * L4 rules through BPF_PROG_TEST_RUN (docs/POLICY.md "Protocols and
 * ports"): each judges only its traffic, precedence between prefixes and
 * within one, headers cut short, bucket-first staying right, and swaps
 * to and from a policy without L4 rules. Fragments and header chains:
 * test_fragments.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include "fixture.h"
#include "loader.h"
#include "policy_read.h"

static struct xrl_datapath dp;
static struct fixture_yaml fy;

static void setup(void)
{
	fixture_load(&dp, 65536);
}

static void teardown(void)
{
	fixture_yaml_free(&fy);
	xrl_datapath_close(&dp);
}

TestSuite(l4, .init = setup, .fini = teardown);

static void apply_yaml(const char *yaml)
{
	fixture_yaml_apply(&dp, &fy, yaml);
}

static uint32_t rule_id(const char *name)
{
	return fixture_yaml_rule_id(&fy, name);
}

/* The frame kinds of tests/lib/packet.h, by their short names here. */
enum kind {
	TCP_SYN = PACKET_TCP_SYN,
	TCP_ACK = PACKET_TCP_ACK,
	TCP_SYNACK = PACKET_TCP_SYNACK,
	UDP = PACKET_UDP,
	ICMP = PACKET_ICMP,
};

static struct packet l4_packet(const char *src, enum kind kind,
			       uint16_t sport, uint16_t dport)
{
	struct packet pkt = packet_l4(src, (enum packet_kind)kind, sport,
				      dport);

	cr_assert_gt(pkt.len, 0, "%s", src);
	return pkt;
}

static unsigned passes(const struct packet *pkt, unsigned n)
{
	unsigned passed = 0;

	while (n--)
		passed += fixture_run(&dp, pkt) == XDP_PASS;
	return passed;
}

static uint64_t judged(uint32_t id)
{
	struct xrl_rule_counters c = fixture_rule_counters(&dp, id);

	return c.outcome[XRL_RULE_PASSED].packets +
	       c.outcome[XRL_RULE_DROPPED].packets;
}

#define SYN_POLICY							\
	"rules:\n"							\
	"  - name: syn\n    cidr: 198.18.0.0/24\n    proto: tcp\n"	\
	"    tcp_flags: syn\n    pps: 10\n    burst: 3\n"		\
	"  - name: plain\n    cidr: 198.18.0.0/24\n"			\
	"    pps: 1000\n    burst: 100\n"

Test(l4, a_syn_rule_judges_syns_only)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 40000, 80),
		      ack = l4_packet("198.18.0.1", TCP_ACK, 40000, 80),
		      synack = l4_packet("198.18.0.1", TCP_SYNACK, 80, 40000);

	apply_yaml(SYN_POLICY);
	cr_assert_eq(passes(&syn, 10), 3, "SYNs: the SYN rule's burst");
	cr_assert_eq(passes(&ack, 50), 50, "ACKs: the plain rule");
	cr_assert_eq(passes(&synack, 20), 20, "SYN+ACK is no SYN");
	cr_assert_eq(judged(rule_id("syn")), 10);
	cr_assert_eq(judged(rule_id("plain")), 70);
}

Test(l4, udp_sport_53_is_judged_apart_from_sport_54)
{
	struct packet s53 = l4_packet("198.18.0.1", UDP, 53, 40000),
		      s54 = l4_packet("198.18.0.1", UDP, 54, 40000),
		      in_range = l4_packet("198.18.0.1", UDP, 40000, 123);

	apply_yaml("rules:\n"
		   "  - name: dns\n    cidr: 198.18.0.0/24\n    proto: udp\n"
		   "    sport: 53\n    action: deny\n"
		   "  - name: ntp\n    cidr: 198.18.0.0/24\n    proto: udp\n"
		   "    dport: 100-200\n    pps: 10\n    burst: 2\n");
	cr_assert_eq(passes(&s53, 5), 0, "sport 53: denied");
	/* No plain rule at the prefix: the default (allow) takes the rest. */
	cr_assert_eq(passes(&s54, 5), 5, "sport 54: the default rule");
	cr_assert_eq(passes(&in_range, 5), 2, "dport 123 in 100-200");
	cr_assert_eq(judged(rule_id("dns")), 5);
	cr_assert_eq(judged(rule_id("ntp")), 5);
	cr_assert_eq(judged(0), 5);
}

Test(l4, icmp_rules_judge_icmp_only_in_either_family)
{
	struct packet icmp = l4_packet("198.18.0.1", ICMP, 0, 0),
		      udp = l4_packet("198.18.0.1", UDP, 1, 2),
		      icmp6 = l4_packet("fd00::1", ICMP, 0, 0),
		      tcp6 = l4_packet("fd00::1", TCP_ACK, 1, 2);

	apply_yaml("default:\n  pps: 1000\n  burst: 100\n"
		   "rules:\n"
		   "  - name: icmp\n    cidr: 0.0.0.0/0\n    proto: icmp\n"
		   "    pps: 1\n    burst: 2\n"
		   "  - name: icmp6\n    cidr: fd00::/16\n    proto: icmpv6\n"
		   "    pps: 1\n    burst: 1\n");
	cr_assert_eq(passes(&icmp, 5), 2);
	cr_assert_eq(passes(&udp, 5), 5);
	cr_assert_eq(passes(&icmp6, 5), 1);
	cr_assert_eq(passes(&tcp6, 5), 5);
	cr_assert_eq(judged(rule_id("icmp")), 5);
	cr_assert_eq(judged(rule_id("icmp6")), 5);
	cr_assert_eq(judged(0), 10);
}

Test(l4, a_longer_plain_prefix_beats_a_shorter_l4_rule)
{
	struct packet inner = l4_packet("198.18.0.1", TCP_SYN, 1, 80),
		      outer = l4_packet("198.18.0.2", TCP_SYN, 1, 80);

	apply_yaml("rules:\n"
		   "  - name: wide-syn\n    cidr: 198.18.0.0/24\n"
		   "    proto: tcp\n    tcp_flags: syn\n    action: deny\n"
		   "  - name: host\n    cidr: 198.18.0.1/32\n    action: allow\n");
	cr_assert_eq(passes(&inner, 4), 4, "the /32 is more specific");
	cr_assert_eq(passes(&outer, 4), 0, "the /24's SYN rule");
	cr_assert_eq(judged(rule_id("host")), 4);
	cr_assert_eq(judged(rule_id("wide-syn")), 4);
}

Test(l4, a_longer_l4_rule_that_does_not_match_falls_to_shorter_prefixes)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 1, 80),
		      ack = l4_packet("198.18.0.1", TCP_ACK, 1, 80);

	apply_yaml("rules:\n"
		   "  - name: host-syn\n    cidr: 198.18.0.1/32\n"
		   "    proto: tcp\n    tcp_flags: syn\n    action: deny\n"
		   "  - name: wide\n    cidr: 198.18.0.0/16\n    action: allow\n");
	cr_assert_eq(passes(&syn, 3), 0);
	cr_assert_eq(passes(&ack, 3), 3);
	cr_assert_eq(judged(rule_id("wide")), 3, "the /16 takes the rest");
}

Test(l4, rules_of_one_prefix_match_in_file_order_and_the_plain_one_last)
{
	struct packet syn22 = l4_packet("198.18.0.1", TCP_SYN, 1, 22),
		      ack22 = l4_packet("198.18.0.1", TCP_ACK, 1, 22),
		      syn80 = l4_packet("198.18.0.1", TCP_SYN, 1, 80);

	/* The plain rule is written first, yet takes only what no L4
	 * rule of the prefix takes; of the two L4 rules both matching a
	 * SYN to 22, the first written wins. */
	apply_yaml("rules:\n"
		   "  - name: plain\n    cidr: 198.18.0.0/24\n    action: allow\n"
		   "  - name: ssh\n    cidr: 198.18.0.0/24\n    proto: tcp\n"
		   "    dport: 22\n    action: deny\n"
		   "  - name: syn\n    cidr: 198.18.0.0/24\n    proto: tcp\n"
		   "    tcp_flags: syn\n    pps: 1\n    burst: 2\n");
	cr_assert_eq(passes(&syn22, 3), 0, "ssh, first in file order");
	cr_assert_eq(passes(&ack22, 3), 0, "ssh");
	cr_assert_eq(passes(&syn80, 3), 2, "syn");
	cr_assert_eq(judged(rule_id("ssh")), 6);
	cr_assert_eq(judged(rule_id("syn")), 3);
	cr_assert_eq(judged(rule_id("198.18.0.0/24")), 0);
}

Test(l4, a_truncated_l4_header_matches_no_l4_rule)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 1, 80);
	size_t l3 = packet_ip_offset(0);

	apply_yaml(SYN_POLICY);
	/* The IP packet ends 10 bytes into the TCP header (the frame goes
	 * on): the flags cannot be trusted, so the plain rule judges it. */
	packet_put16(&syn, l3 + offsetof(struct iphdr, tot_len),
	      sizeof(struct iphdr) + 10);
	cr_assert_eq(passes(&syn, 5), 5);
	cr_assert_eq(judged(rule_id("plain")), 5);
	cr_assert_eq(judged(rule_id("syn")), 0);
	/* And cut at the frame's end as well. */
	syn.len = l3 + sizeof(struct iphdr) + 10;
	cr_assert_eq(passes(&syn, 5), 5);
	cr_assert_eq(judged(rule_id("plain")), 10);
}

Test(l4, a_source_with_a_plain_bucket_then_sending_syns_gets_the_syn_rule)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 1, 80),
		      ack = l4_packet("198.18.0.1", TCP_ACK, 1, 80);
	unsigned i, syn_passed = 0;

	apply_yaml(SYN_POLICY);
	/* Established traffic first: the source gets its bucket. */
	cr_assert_eq(passes(&ack, 20), 20);
	/* Interleaved: every SYN is still the SYN rule's, never judged
	 * by the ACKs' bucket without classifying. */
	for (i = 0; i < 10; i++) {
		syn_passed += fixture_run(&dp, &syn) == XDP_PASS;
		cr_assert_eq(fixture_run(&dp, &ack), XDP_PASS);
	}
	cr_assert_eq(syn_passed, 3);
	cr_assert_eq(judged(rule_id("syn")), 10);
	cr_assert_eq(judged(rule_id("plain")), 30);
}

Test(l4, swapping_to_a_policy_without_l4_rules_and_back)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 1, 80),
		      ack = l4_packet("198.18.0.1", TCP_ACK, 1, 80);
	const char *plain_only = "rules:\n"
		"  - name: plain\n    cidr: 198.18.0.0/24\n"
		"    pps: 1000\n    burst: 100\n";

	apply_yaml(SYN_POLICY);
	cr_assert_eq(passes(&syn, 5), 3);
	cr_assert_eq(passes(&ack, 5), 5);
	apply_yaml(plain_only);
	/* No SYN rule: SYNs and ACKs share one plain bucket. The key is
	 * no longer split, so that bucket starts afresh (100). */
	cr_assert_eq(passes(&syn, 5), 5);
	cr_assert_eq(passes(&ack, 100), 95);
	apply_yaml(SYN_POLICY);
	/* The SYN rule is back. Its id named the plain rule in between
	 * (the file's numbering), so its bucket starts afresh; so does
	 * the plain rule's, whose id was gone for a generation. */
	cr_assert_eq(passes(&syn, 5), 3);
	cr_assert_eq(passes(&ack, 5), 5);
}

/*
 * Routes (bpf/routes.h): a CPU's last L4 flow goes straight to its
 * bucket. Each judged exactly as the classifier would: a route never
 * outlives its policy, nor takes another flow's packets.
 */
Test(l4, a_routed_flow_is_judged_by_the_policy_swapped_in_after_it)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 40000, 80);

	apply_yaml(SYN_POLICY);
	cr_assert_eq(passes(&syn, 10), 3, "the SYN rule's burst");
	apply_yaml("rules:\n"
		   "  - name: syn\n    cidr: 198.18.0.0/24\n    proto: tcp\n"
		   "    tcp_flags: syn\n    action: deny\n"
		   "  - name: plain\n    cidr: 198.18.0.0/24\n"
		   "    pps: 1000\n    burst: 100\n");
	cr_assert_eq(passes(&syn, 10), 0, "denied now, not routed to a bucket");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 10);
}

Test(l4, flows_of_one_source_taking_turns_are_each_judged_by_their_rule)
{
	struct packet syn = l4_packet("198.18.0.1", TCP_SYN, 40000, 80),
		      ack = l4_packet("198.18.0.1", TCP_ACK, 40000, 80),
		      other = l4_packet("198.18.0.2", TCP_SYN, 40000, 80);
	unsigned syns = 0, acks = 0, others = 0;

	apply_yaml(SYN_POLICY);
	for (int i = 0; i < 20; i++) {
		syns += passes(&syn, 1);
		acks += passes(&ack, 1);
		others += passes(&other, 1);
		acks += passes(&ack, 1);
	}
	cr_assert_eq(syns, 3, "the SYN rule's burst, whatever came between");
	cr_assert_eq(others, 3, "another source's SYNs: its own bucket");
	cr_assert_eq(acks, 40, "ACKs: the plain rule");
	cr_assert_eq(judged(rule_id("syn")), 40);
	cr_assert_eq(judged(rule_id("plain")), 40);
}

Test(l4, a_flood_from_random_ports_is_judged_as_one_source)
{
	unsigned passed = 0;

	apply_yaml("rules:\n"
		   "  - name: dns\n    cidr: 198.18.0.0/24\n    proto: udp\n"
		   "    dport: 53\n    pps: 10\n    burst: 5\n"
		   "  - name: plain\n    cidr: 198.18.0.0/24\n"
		   "    pps: 1000\n    burst: 1000\n");
	for (uint16_t sport = 1000; sport < 2000; sport++) {
		struct packet pkt = l4_packet("198.18.0.1", UDP, sport,
					      sport % 2 ? 53 : 54);

		passed += passes(&pkt, 1);
	}
	cr_assert_eq(passed, 5 + 500, "dport 53: its burst; 54: the plain rule");
	cr_assert_eq(judged(rule_id("dns")), 500);
	cr_assert_eq(judged(rule_id("plain")), 500);
}

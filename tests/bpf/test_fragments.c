// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * L4 rules fail closed (docs/POLICY.md "Fragments and header chains"),
 * through BPF_PROG_TEST_RUN: a packet an L4 rule cannot read is never
 * judged more permissively than the whole packet would be. Fragments of
 * a flow follow their first fragment's verdict and are charged once; a
 * tiny first fragment, a later one whose first was not seen and a chain
 * of too many extension headers get verdicts of their own.
 */
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <linux/in.h>
#include "fixture.h"
#include "frag.h"
#include "loader.h"

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

TestSuite(fragments, .init = setup, .fini = teardown);

/* The policy: everything allowed but TCP to 2222 and UDP to
 * 9999, from every source (0.0.0.0/0: of both families). */
#define DENY_POLICY							\
	"default:\n  action: allow\n"					\
	"rules:\n"							\
	"  - name: tcp\n    cidr: 0.0.0.0/0\n    proto: tcp\n"		\
	"    dport: 2222\n    action: deny\n"				\
	"  - name: udp\n    cidr: 0.0.0.0/0\n    proto: udp\n"		\
	"    dport: 9999\n    action: deny\n"

static uint32_t id_of(const char *name)
{
	return fixture_yaml_rule_id(&fy, name);
}

/* @spec's packet cut at @cuts into @out; asserts the count. */
static int build(const struct frag_spec *spec, const size_t *cuts,
		 int n_cuts, struct packet *out)
{
	int n = frag_build(spec, cuts, n_cuts, out);

	cr_assert_eq(n, n_cuts + 1, "frag_build");
	return n;
}

/* Verdicts of @n frames in order, as a string of P (pass) and D. */
static const char *verdicts(const struct packet *frames, int n)
{
	static char out[FRAG_MAX_PIECES * 8 + 1];
	int i;

	for (i = 0; i < n; i++)
		out[i] = fixture_run(&dp, &frames[i]) == XDP_PASS ? 'P' : 'D';
	out[n] = '\0';
	return out;
}

static uint64_t dropped(uint32_t id)
{
	return fixture_rule_counters(&dp, id).outcome[XRL_RULE_DROPPED].packets;
}

static uint64_t passed(uint32_t id)
{
	return fixture_rule_counters(&dp, id).outcome[XRL_RULE_PASSED].packets;
}

static const struct frag_spec syn4 = {
	.src = "198.18.0.1", .proto = IPPROTO_TCP, .sport = 40000,
	.dport = 2222, .id = 7,
};

static const struct frag_spec udp6 = {
	.src = "fd00::1", .proto = IPPROTO_UDP, .sport = 40000,
	.dport = 9999, .payload = 64, .id = 0x10203,
};

Test(fragments, whole_packets_to_a_denied_port_are_denied)
{
	struct frag_spec udp4 = udp6, tcp6 = syn4;
	struct packet pkt[4];

	udp4.src = "198.18.0.1";
	tcp6.src = "fd00::1";
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&syn4, NULL, 0, &pkt[0]);
	build(&udp4, NULL, 0, &pkt[1]);
	build(&tcp6, NULL, 0, &pkt[2]);
	build(&udp6, NULL, 0, &pkt[3]);
	cr_assert_str_eq(verdicts(pkt, 4), "DDDD");
	cr_assert_eq(dropped(id_of("tcp")), 2);
	cr_assert_eq(dropped(id_of("udp")), 2);
}

/* RFC 1858: the first fragment holds the ports, the flags come later. */
Test(fragments, a_tiny_first_fragment_and_its_rest_are_dropped)
{
	size_t cut = 8;
	struct packet pkt[2];

	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&syn4, &cut, 1, pkt);
	cr_assert_str_eq(verdicts(pkt, 2), "DD");
	/* The rest starts 8 bytes in: a TCP fragment at offset 1, which
	 * would rewrite the flags on reassembly, tiny as well. */
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_TINY_FRAGMENT), 2);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 0);
}

Test(fragments, a_tcp_fragment_at_offset_eight_is_dropped_as_tiny)
{
	struct frag_spec spec = syn4;
	size_t cut = 8;
	struct packet pkt[2];

	spec.dport = 80;	/* allowed: the overlap is what is refused */
	spec.payload = 16;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&spec, &cut, 1, pkt);
	/* The second piece at offset 1 (8 bytes) would rewrite the
	 * first's TCP flags on reassembly. */
	cr_assert_eq(fixture_run(&dp, &pkt[1]), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_TINY_FRAGMENT), 1);
}

Test(fragments, a_first_fragment_with_the_whole_header_takes_its_flow_along)
{
	struct frag_spec denied = syn4, allowed = syn4;
	size_t cut = 24;	/* the whole TCP header and 4 bytes */
	struct packet deny[2], pass[2];

	denied.payload = 40;
	allowed.payload = 40;
	allowed.dport = 22;
	allowed.id = 8;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&denied, &cut, 1, deny);
	build(&allowed, &cut, 1, pass);
	cr_assert_str_eq(verdicts(deny, 2), "DD", "the denied port's flow");
	cr_assert_str_eq(verdicts(pass, 2), "PP", "another port's flow");
	cr_assert_eq(dropped(id_of("tcp")), 2, "both pieces, the rule's");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 2);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 2);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_UNJUDGED_FRAGMENT), 0);
}

/* A fragmented DNS answer (or any large datagram) of an allowed flow
 * keeps working, whatever the number of pieces. */
Test(fragments, every_piece_of_an_allowed_datagram_passes)
{
	struct frag_spec dns = udp6;
	const size_t cuts[3] = { 1232, 2464, 3000 };
	struct packet pkt[4];

	dns.dport = 53;
	dns.payload = 3400;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&dns, cuts, 3, pkt);
	cr_assert_str_eq(verdicts(pkt, 4), "PPPP");
	dns.src = "198.18.0.9";
	build(&dns, cuts, 3, pkt);
	cr_assert_str_eq(verdicts(pkt, 4), "PPPP");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 8);
}

Test(fragments, a_later_fragment_before_its_first_is_unjudged)
{
	struct frag_spec dns = udp6;
	size_t cut = 64;
	struct packet pkt[2];

	dns.dport = 53;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&dns, &cut, 1, pkt);
	cr_assert_eq(fixture_run(&dp, &pkt[1]), XDP_DROP, "unseen first");
	cr_assert_eq(fixture_run(&dp, &pkt[0]), XDP_PASS);
	cr_assert_eq(fixture_run(&dp, &pkt[1]), XDP_PASS, "now it follows");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_UNJUDGED_FRAGMENT), 1);
}

Test(fragments, unjudged_fragments_plain_judges_them_without_l4_rules)
{
	struct frag_spec spec = udp6;
	size_t cut = 64;
	struct packet pkt[2];

	fixture_yaml_apply(&dp, &fy, DENY_POLICY
			   "unjudged_fragments: plain\n");
	build(&spec, &cut, 1, pkt);
	/* The permissive choice, made on purpose: a later piece of a
	 * denied flow whose first was never seen is the default's. */
	cr_assert_eq(fixture_run(&dp, &pkt[1]), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_UNJUDGED_FRAGMENT), 0);
	cr_assert_eq(passed(0), 1);
	/* Seen first, the flow's verdict still wins. */
	cr_assert_str_eq(verdicts(pkt, 2), "DD");
}

Test(fragments, an_ipv6_first_fragment_without_the_l4_header_is_tiny)
{
	struct frag_spec spec = udp6;
	size_t cut = 16;	/* two destination options, then UDP */
	struct packet pkt[2];

	spec.n_ext = 2;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&spec, &cut, 1, pkt);
	cr_assert_str_eq(verdicts(pkt, 2), "DD");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_TINY_FRAGMENT), 1);
	/* The later piece's fragment header names a destination options
	 * header, not UDP: any L4 rule could be its. */
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_UNJUDGED_FRAGMENT), 1);
}

Test(fragments, an_ipv6_first_fragment_with_the_l4_header_is_judged_by_it)
{
	struct frag_spec spec = udp6;
	size_t cut = 24;	/* a destination options header, UDP, 8 */
	struct packet pkt[2];

	spec.n_ext = 1;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&spec, &cut, 1, pkt);
	cr_assert_str_eq(verdicts(pkt, 2), "DD");
	cr_assert_eq(dropped(id_of("udp")), 2);
	spec.dport = 53;
	build(&spec, &cut, 1, pkt);
	cr_assert_str_eq(verdicts(pkt, 2), "PP");
}

/* @n destination options headers before UDP to 9999: verdict. */
static int chain_verdict(int n)
{
	struct frag_spec spec = udp6;
	struct packet pkt;

	spec.n_ext = n;
	build(&spec, NULL, 0, &pkt);
	return fixture_run(&dp, &pkt);
}

Test(fragments, extension_header_chains_up_to_the_limit_are_judged)
{
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	cr_assert_eq(chain_verdict(1), XDP_DROP);
	cr_assert_eq(chain_verdict(XRL_L4_EXT_MAX), XDP_DROP,
		     "exactly the limit: still its L4 rule's");
	cr_assert_eq(dropped(id_of("udp")), 2);
	cr_assert_eq(chain_verdict(XRL_L4_EXT_MAX + 1), XDP_DROP);
	cr_assert_eq(chain_verdict(16), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_HEADER_OVERFLOW), 2);
	cr_assert_eq(dropped(id_of("udp")), 2, "not the rule's");
}

/* The L4 header may start at most 2,048 bytes after the fixed header:
 * at exactly that it is read, past it the chain is too long. */
Test(fragments, an_l4_header_past_2048_bytes_of_headers_is_an_overflow)
{
	struct frag_spec spec = udp6;
	struct packet pkt;

	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	spec.n_ext = 1;
	spec.ext_len = 2048 - 40;	/* UDP at 2,048 */
	build(&spec, NULL, 0, &pkt);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP);
	cr_assert_eq(dropped(id_of("udp")), 1, "read, and denied");
	spec.n_ext = 2;
	spec.ext_len = 1024;		/* UDP at 2,088 */
	build(&spec, NULL, 0, &pkt);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_HEADER_OVERFLOW), 1);
	cr_assert_eq(dropped(id_of("udp")), 1);
}

Test(fragments, header_overflow_plain_judges_long_chains_without_l4_rules)
{
	fixture_yaml_apply(&dp, &fy, DENY_POLICY "header_overflow: plain\n");
	cr_assert_eq(chain_verdict(XRL_L4_EXT_MAX + 1), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_HEADER_OVERFLOW), 0);
	cr_assert_eq(passed(0), 1, "the default rule's");
}

Test(fragments, a_long_chain_where_no_l4_rule_is_stays_the_plain_rules)
{
	fixture_yaml_apply(&dp, &fy,
			   "default:\n  action: allow\n"
			   "rules:\n"
			   "  - name: udp6\n    cidr: fd00:1::/32\n"
			   "    proto: udp\n    dport: 9999\n    action: deny\n");
	/* fd00::1 is outside fd00:1::/32: no L4 rule at its prefixes. */
	cr_assert_eq(chain_verdict(16), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_HEADER_OVERFLOW), 0);
}

Test(fragments, ah_is_walked_in_both_families)
{
	struct frag_spec tcp4 = syn4, u6 = udp6;
	struct packet pkt[2];

	tcp4.ah = 1;
	u6.ah = 1;
	u6.n_ext = 2;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&tcp4, NULL, 0, &pkt[0]);
	build(&u6, NULL, 0, &pkt[1]);
	cr_assert_str_eq(verdicts(pkt, 2), "DD");
	cr_assert_eq(dropped(id_of("tcp")), 1);
	cr_assert_eq(dropped(id_of("udp")), 1);
}

/* ESP hides its payload: it is a packet of protocol 50, which no L4
 * rule (tcp, udp, icmp) names, so the plain rules judge it, as they
 * judge any other protocol. */
Test(fragments, esp_is_judged_by_the_plain_rules)
{
	struct frag_spec spec = udp6;
	struct packet pkt;

	spec.esp = 1;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&spec, NULL, 0, &pkt);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_assert_eq(passed(0), 1);
}

/* A SYN flood cut into fragments passes no more than whole SYNs would:
 * each SYN is charged once, on its first fragment, and the pieces of a
 * refused one are dropped with it. */
Test(fragments, a_fragmented_syn_flood_passes_no_more_than_the_burst)
{
	struct frag_spec spec = syn4;
	size_t cut = 24;
	struct packet pkt[2];
	char seen[64] = "";
	unsigned i;

	spec.payload = 40;
	fixture_yaml_apply(&dp, &fy,
			   "default:\n  action: allow\n"
			   "rules:\n"
			   "  - name: syn\n    cidr: 198.18.0.0/16\n"
			   "    proto: tcp\n    tcp_flags: syn\n"
			   "    pps: 1\n    burst: 3\n"
			   "  - name: plain\n    cidr: 198.18.0.0/16\n"
			   "    action: allow\n");
	for (i = 0; i < 10; i++) {
		spec.id = 100 + i;
		build(&spec, &cut, 1, pkt);
		strcat(seen, verdicts(pkt, 2));
		strcat(seen, " ");
	}
	cr_assert_str_eq(seen, "PP PP PP DD DD DD DD DD DD DD ");
	cr_assert_eq(passed(id_of("syn")), 6);
	cr_assert_eq(dropped(id_of("syn")), 14);
	/* A second (and a little: intervals round up) later: one more
	 * SYN, and one only. */
	xrl_datapath_set_time(&dp, 2 * NS_PER_S + NS_PER_S / 10);
	seen[0] = '\0';
	for (i = 0; i < 3; i++) {
		spec.id = 200 + i;
		build(&spec, &cut, 1, pkt);
		strcat(seen, verdicts(pkt, 2));
	}
	cr_assert_str_eq(seen, "PPDDDD");
}

/* A byte limit still counts every piece's bytes. */
Test(fragments, later_fragments_are_charged_their_bytes)
{
	struct frag_spec spec = udp6;
	const size_t cuts[2] = { 1000, 2000 };
	struct packet pkt[3];

	spec.dport = 53;
	spec.payload = 2900;
	fixture_yaml_apply(&dp, &fy,
			   "default:\n  action: allow\n"
			   "rules:\n"
			   "  - name: dns\n    cidr: fd00::/16\n    proto: udp\n"
			   "    bps: 8k\n    burst_bytes: 2500\n");
	build(&spec, cuts, 2, pkt);
	/* 1,062 + 1,062 bytes of frames fit the burst of 2,500; the
	 * third piece's 970 do not. */
	cr_assert_str_eq(verdicts(pkt, 3), "PPD");
}

Test(fragments, a_flow_cannot_carry_more_than_the_largest_ip_packet)
{
	struct frag_spec spec = udp6;
	const size_t cut = 1000;
	struct packet pkt[2];
	unsigned i, passes = 0;

	spec.dport = 53;
	spec.payload = 2000;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&spec, &cut, 1, pkt);
	cr_assert_eq(fixture_run(&dp, &pkt[0]), XDP_PASS);
	/* The same later piece over and over: 65,535 bytes' worth pass
	 * (the first's 1,000 bytes of UDP, then 1,016 each: the fragment
	 * header and 1,008), the rest of the stream is unjudged. */
	for (i = 0; i < 100; i++)
		passes += fixture_run(&dp, &pkt[1]) == XDP_PASS;
	cr_assert_eq(passes, (XRL_FRAG_BYTES_MAX - 1000) / 1016);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_UNJUDGED_FRAGMENT),
		     100 - passes);
}

/* A limit rule with levels charges the pieces of a packet once too. */
Test(fragments, levels_charge_a_fragmented_packet_once)
{
	struct frag_spec spec = syn4;
	size_t cut = 24;
	struct packet pkt[2];
	char seen[32] = "";
	unsigned i;

	spec.payload = 40;
	fixture_yaml_apply(&dp, &fy,
			   "default:\n  action: allow\n"
			   "rules:\n"
			   "  - name: syn\n    cidr: 198.18.0.0/16\n"
			   "    proto: tcp\n    tcp_flags: syn\n"
			   "    pps: 100\n    burst: 100\n"
			   "    levels:\n      - prefix: 24\n"
			   "        pps: 1\n        burst: 2\n");
	for (i = 0; i < 4; i++) {
		spec.id = 300 + i;
		build(&spec, &cut, 1, pkt);
		strcat(seen, verdicts(pkt, 2));
	}
	cr_assert_str_eq(seen, "PPPPDDDD");
}

/* Without an L4 rule at its prefixes a fragment is a packet of its
 * source like any other: judged and charged by its rule. */
Test(fragments, without_l4_rules_each_fragment_is_a_packet)
{
	struct frag_spec spec = syn4;
	size_t cut = 8;
	struct packet pkt[2];

	fixture_yaml_apply(&dp, &fy,
			   "rules:\n"
			   "  - name: plain\n    cidr: 198.18.0.0/16\n"
			   "    pps: 1\n    burst: 3\n");
	build(&spec, &cut, 1, pkt);
	cr_assert_str_eq(verdicts(pkt, 2), "PP");
	cr_assert_str_eq(verdicts(pkt, 2), "PD");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_TINY_FRAGMENT), 0);
}

/* A first fragment judged under one policy is not followed under
 * another: the rule it named may mean something else now. */
Test(fragments, a_swap_forgets_the_flows_of_the_policy_before)
{
	struct frag_spec dns = udp6;
	size_t cut = 64;
	struct packet pkt[2];

	dns.dport = 53;
	fixture_yaml_apply(&dp, &fy, DENY_POLICY);
	build(&dns, &cut, 1, pkt);
	cr_assert_eq(fixture_run(&dp, &pkt[0]), XDP_PASS);
	fixture_yaml_apply(&dp, &fy, DENY_POLICY "malformed: drop\n");
	cr_assert_eq(fixture_run(&dp, &pkt[1]), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_UNJUDGED_FRAGMENT), 1);
}

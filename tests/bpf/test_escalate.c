// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Escalation (escalate_prefix:, escalate_after:, escalate_within:,
 * escalate_ban:; bpf/escalate.h) through BPF_PROG_TEST_RUN on the test
 * clock: K distinct sources of a /24 banned by a rule ban the whole /24
 * from the K-th ban on (a fresh address of it dropped as banned, one of
 * another /24 not), K-1 do not, nor bans older than the window, nor one
 * source banned again and again; the prefix's ban ends on time, doubles
 * on a repeat up to ban_max; IPv6 /64 alike.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fixture.h"
#include "loader.h"
#include "rule.h"
#include "stats.h"

#define MS	1000000ULL
#define S	NS_PER_S

static struct xrl_datapath dp;
static struct xrl_policy policy;

static void setup(void)
{
	cr_assert_eq(xrl_policy_init(&policy), 0);
	fixture_load(&dp, 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(escalate, .init = setup, .fini = teardown, .timeout = 120);

/*
 * 10 pps, burst 5, for @cidr, banning for 10 s (at most @ban_max, 0: the
 * default 80 s) and escalating to /@prefix after 3 distinct sources
 * within 60 s for 100 s; returns its id.
 */
static uint32_t escalate_rule(const char *cidr, unsigned prefix,
			      uint64_t ban_max)
{
	struct xrl_rule_spec *rule;
	char err[160];

	fixture_rule(&policy, cidr, XRL_ACTION_LIMIT, 10, 5, 0, 0);
	rule = xrl_policy_find(&policy, cidr);
	rule->ban.ns = 10 * S;
	rule->ban.max_ns = ban_max;
	rule->ban.escalate.prefix = prefix;
	rule->ban.escalate.after = 3;
	rule->ban.escalate.within_ns = 60 * S;
	rule->ban.escalate.ns = 100 * S;
	cr_assert_eq(xrl_rule_check(rule, err, sizeof(err)), 0, "%s", err);
	fixture_apply(&dp, &policy);
	return rule->id;
}

static int at(const char *src, __u64 now)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	xrl_datapath_set_time(&dp, now);
	return fixture_run(&dp, &pkt);
}

static struct xrl_ban_counters ban_counters(void)
{
	struct xrl_ban_counters c;

	cr_assert_eq(xrl_ban_stats_read(&dp, &c), 0);
	return c;
}

/* Spends @src's burst of 5 at @t: the 6th packet, dropped, bans it. */
static void offend(const char *src, __u64 t)
{
	uint64_t started = ban_counters().started;
	int i;

	for (i = 0; i < 5; i++)
		cr_assert_eq(at(src, t), XDP_PASS, "%s packet %d at %llu",
			     src, i, (unsigned long long)t);
	cr_assert_eq(at(src, t), XDP_DROP, "%s", src);
	cr_assert_eq(ban_counters().started, started + 1, "%s not banned",
		     src);
}

/* The prefix record of @rule for the IPv4 /24 of @ipv4 (its .0). */
static int record_of(uint32_t rule, const char *net, unsigned prefix,
		     struct xrl_escalation *out)
{
	struct xrl_escalation_key key = { .rule_id = rule,
					  .prefixlen = (__u8)prefix };

	if (strchr(net, ':')) {
		key.family = XRL_FAMILY_IPV6;
		cr_assert_eq(inet_pton(AF_INET6, net, key.addr), 1);
	} else {
		key.family = XRL_FAMILY_IPV4;
		key.addr[10] = key.addr[11] = 0xff;
		cr_assert_eq(inet_pton(AF_INET, net, &key.addr[12]), 1);
	}
	return bpf_map_lookup_elem(dp.escalations_fd, &key, out);
}

static uint64_t escalated_until(uint32_t rule, const char *net)
{
	struct xrl_escalation e;

	cr_assert_eq(record_of(rule, net, 24, &e), 0, "no record of %s", net);
	return e.until_ns;
}

Test(escalate, the_third_source_banned_bans_its_24_and_only_it)
{
	uint32_t id = escalate_rule("198.18.0.0/16", 24, 0);
	struct xrl_rule_counters rc;
	uint64_t banned_before;

	offend("198.18.1.1", 1 * S);
	offend("198.18.1.2", 2 * S);
	cr_assert_eq(ban_counters().escalated, 0);
	cr_assert_eq(at("198.18.1.200", 2 * S + MS), XDP_PASS,
		     "two bans escalated");
	offend("198.18.1.3", 3 * S);
	/* From the third ban on, at once: the whole /24 is banned. */
	cr_assert_eq(ban_counters().escalated, 1);
	cr_assert_eq(escalated_until(id, "198.18.1.0"), 103 * S);
	banned_before = fixture_count(&dp, XRL_VERDICT_BANNED);
	rc = fixture_rule_counters(&dp, id);
	cr_assert_eq(at("198.18.1.201", 3 * S), XDP_DROP,
		     "a fresh address of the /24 passed");
	cr_assert_eq(at("198.18.1.200", 3 * S), XDP_DROP,
		     "an address with a bucket passed");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), banned_before + 2);
	cr_assert_eq(fixture_rule_counters(&dp, id)
		     .outcome[XRL_RULE_BANNED].packets,
		     rc.outcome[XRL_RULE_BANNED].packets + 2);
	/* Another /24 of the same rule is judged as before. */
	cr_assert_eq(at("198.18.2.1", 3 * S), XDP_PASS);
	cr_assert_eq(at("198.18.0.255", 3 * S), XDP_PASS);
	cr_assert_eq(ban_counters().escalated, 1);
}

Test(escalate, a_source_banned_again_and_again_counts_once)
{
	uint32_t id = escalate_rule("198.18.0.0/16", 24, 0);
	struct xrl_escalation e;

	/* The attacker alone: banned at 1 s (10 s), 11 s (20 s), 31 s
	 * (40 s), all within the 60 s. */
	offend("198.18.1.1", 1 * S);
	offend("198.18.1.1", 11 * S);
	offend("198.18.1.1", 31 * S);
	cr_assert_eq(ban_counters().escalated, 0);
	cr_assert_eq(at("198.18.1.9", 31 * S), XDP_PASS);
	cr_assert_eq(record_of(id, "198.18.1.0", 24, &e), 0);
	cr_assert_eq(e.until_ns, 0);
	/* One more source makes two, not three. */
	offend("198.18.1.2", 32 * S);
	cr_assert_eq(ban_counters().escalated, 0);
	cr_assert_eq(at("198.18.1.9", 32 * S), XDP_PASS);
}

Test(escalate, bans_older_than_the_window_do_not_count)
{
	escalate_rule("198.18.0.0/16", 24, 0);
	offend("198.18.1.1", 1 * S);
	offend("198.18.1.2", 2 * S);
	/* 60.5 s after the first (out), 59.5 s after the second: two. */
	offend("198.18.1.3", 61 * S + 500 * MS);
	cr_assert_eq(ban_counters().escalated, 0);
	cr_assert_eq(at("198.18.1.9", 61 * S + 500 * MS), XDP_PASS);
	/* The second is 60 s old now: out, so this is two again. */
	offend("198.18.1.4", 62 * S);
	cr_assert_eq(ban_counters().escalated, 0);
	cr_assert_eq(at("198.18.1.9", 62 * S), XDP_PASS);
	/* And a third within the window escalates. */
	offend("198.18.1.5", 62 * S + MS);
	cr_assert_eq(ban_counters().escalated, 1);
	cr_assert_eq(at("198.18.1.9", 62 * S + MS), XDP_DROP);
}

/* Bans three new sources of 198.18.@net.0/24 (.base to .base+2), 1 ms
 * apart from @t. */
static void three_bans_in(unsigned net, unsigned base, __u64 t)
{
	char src[32];
	unsigned i;

	for (i = 0; i < 3; i++) {
		snprintf(src, sizeof(src), "198.18.%u.%u", net, base + i);
		offend(src, t + i * MS);
	}
}

static void three_bans(unsigned base, __u64 t)
{
	three_bans_in(1, base, t);
}

Test(escalate, the_prefix_ban_ends_exactly_on_time)
{
	uint32_t id = escalate_rule("198.18.0.0/16", 24, 0);
	int i;

	three_bans(1, S);
	cr_assert_eq(escalated_until(id, "198.18.1.0"), S + 2 * MS + 100 * S);
	cr_assert_eq(at("198.18.1.77", 101 * S + 2 * MS - 1), XDP_DROP);
	for (i = 0; i < 5; i++)
		cr_assert_eq(at("198.18.1.77", 101 * S + 2 * MS), XDP_PASS,
			     "packet %d after the end", i);
}

Test(escalate, a_repeat_escalation_doubles_up_to_ban_max)
{
	uint32_t id = escalate_rule("198.18.0.0/16", 24, 250 * S);
	struct xrl_escalation e;
	__u64 end;

	three_bans(1, S);
	end = escalated_until(id, "198.18.1.0");
	cr_assert_eq(end, S + 2 * MS + 100 * S);
	/* After it ends, three new sources: a repeat, 200 s. */
	three_bans(11, end);
	cr_assert_eq(escalated_until(id, "198.18.1.0"),
		     end + 2 * MS + 200 * S);
	end = end + 2 * MS + 200 * S;
	/* Again: 400 s, held to ban_max's 250 s. */
	three_bans(21, end);
	cr_assert_eq(record_of(id, "198.18.1.0", 24, &e), 0);
	cr_assert_eq(e.until_ns, end + 2 * MS + 250 * S);
	cr_assert_eq(e.duration_ns, 250 * S);
	cr_assert_eq(e.escalations, 3);
	cr_assert_eq(ban_counters().escalated, 3);
	/* Long after (ban_max past its end), a first one again: 100 s. */
	end = e.until_ns + 250 * S;
	three_bans(31, end);
	cr_assert_eq(escalated_until(id, "198.18.1.0"),
		     end + 2 * MS + 100 * S);
}

Test(escalate, ipv6_sources_escalate_to_their_64)
{
	uint32_t id;
	struct xrl_escalation e;
	char src[64];
	int i;

	policy.v6_prefix = 128;
	id = escalate_rule("fd00::/48", 64, 0);
	for (i = 1; i <= 3; i++) {
		snprintf(src, sizeof(src), "fd00:0:0:1::%d", i);
		offend(src, i * S);
	}
	cr_assert_eq(ban_counters().escalated, 1);
	cr_assert_eq(record_of(id, "fd00:0:0:1::", 64, &e), 0);
	cr_assert_eq(e.until_ns, 103 * S);
	cr_assert_eq(at("fd00:0:0:1:ffff::99", 3 * S), XDP_DROP);
	cr_assert_eq(at("fd00:0:0:2::1", 3 * S), XDP_PASS);
}

Test(escalate, a_shorter_later_ban_elsewhere_leaves_a_longer_one_in_force)
{
	uint32_t id = escalate_rule("198.18.0.0/16", 24, 1000 * S);

	/* 198.18.1.0/24: 100 s from 1 s, then a repeat of 200 s from
	 * 102 s (+ 2 ms each: the third ban's). */
	three_bans_in(1, 1, S);
	three_bans_in(1, 11, 102 * S);
	cr_assert_eq(escalated_until(id, "198.18.1.0"), 302 * S + 2 * MS);
	/* 198.18.2.0/24: a first, 100 s from 110 s, ending before. */
	three_bans_in(2, 1, 110 * S);
	cr_assert_eq(escalated_until(id, "198.18.2.0"), 210 * S + 2 * MS);
	cr_assert_eq(ban_counters().escalated, 3);
	/* After the shorter one ended, the longer one still drops. */
	cr_assert_eq(at("198.18.2.99", 250 * S), XDP_PASS);
	cr_assert_eq(at("198.18.1.99", 250 * S), XDP_DROP);
	cr_assert_eq(at("198.18.1.98", 302 * S + 2 * MS), XDP_PASS);
}

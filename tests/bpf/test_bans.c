// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bans (ban:, ban_after:, ban_max:; bpf/bans.h) through BPF_PROG_TEST_RUN
 * on the test clock: when a ban starts, that a banned source's every
 * packet is dropped and counted as banned, that it ends exactly on time,
 * doubles for a repeat offence up to ban_max, and touches no other source.
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
static struct packet offender, neighbour;

static void setup(void)
{
	cr_assert_eq(xrl_policy_init(&policy), 0);
	cr_assert_eq(packet_from(&offender, "198.18.1.5"), 0);
	cr_assert_eq(packet_from(&neighbour, "198.18.1.6"), 0);
	fixture_load(&dp, 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(bans, .init = setup, .fini = teardown, .timeout = 120);

/* 10 pps, burst 5, for 198.18.1.0/24, banning as told; returns its id. */
static uint32_t ban_rule(uint64_t ban, uint64_t after, uint64_t max)
{
	struct xrl_rule_spec *rule;
	char err[128];

	fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_LIMIT, 10, 5, 0, 0);
	rule = xrl_policy_find(&policy, "198.18.1.0/24");
	rule->ban.ns = ban;
	rule->ban.after_ns = after;
	rule->ban.max_ns = max;
	cr_assert_eq(xrl_rule_check(rule, err, sizeof(err)), 0, "%s", err);
	fixture_apply(&dp, &policy);
	return rule->id;
}

static int at(const struct packet *pkt, __u64 now)
{
	xrl_datapath_set_time(&dp, now);
	return fixture_run(&dp, pkt);
}

static struct xrl_ban_counters ban_counters(void)
{
	struct xrl_ban_counters c;

	cr_assert_eq(xrl_ban_stats_read(&dp, &c), 0);
	return c;
}

static struct xrl_bucket_key key_of(const char *ipv4)
{
	struct xrl_bucket_key key = { .tag = XRL_BUCKET_TAG(4, 0) };

	key.addr[10] = key.addr[11] = 0xff;
	cr_assert_eq(inet_pton(AF_INET, ipv4, &key.addr[12]), 1);
	return key;
}

static struct xrl_ban record_of(const char *ipv4)
{
	struct xrl_bucket_key key = key_of(ipv4);
	struct xrl_ban ban;

	cr_assert_eq(bpf_map_lookup_elem(dp.bans_fd, &key, &ban), 0,
		     "no ban record for %s", ipv4);
	return ban;
}

/* Spends the burst of 5 at @t: the 6th packet is the first drop. */
static void offend(__u64 t)
{
	int i;

	for (i = 0; i < 5; i++)
		cr_assert_eq(at(&offender, t), XDP_PASS, "packet %d at %llu",
			     i, (unsigned long long)t);
	cr_assert_eq(at(&offender, t), XDP_DROP);
}

Test(bans, a_ban_starts_at_the_first_drop_and_drops_everything_counted_as_banned)
{
	uint32_t id = ban_rule(10 * S, 0, 0);
	struct xrl_rule_counters rc;
	__u64 t;

	offend(S);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), 1);
	cr_assert_eq(ban_counters().started, 1);
	cr_assert_eq(record_of("198.18.1.5").until_ns, 11 * S);
	/* Within the limit again many times over, and still dropped. */
	for (t = S + 100 * MS; t < 11 * S; t += 500 * MS)
		cr_assert_eq(at(&offender, t), XDP_DROP, "at %llu",
			     (unsigned long long)t);
	cr_assert_eq(at(&offender, 11 * S - 1), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 20 + 1);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), 1);
	rc = fixture_rule_counters(&dp, id);
	cr_assert_eq(rc.outcome[XRL_RULE_BANNED].packets, 21);
	cr_assert_eq(rc.outcome[XRL_RULE_BANNED].bytes, 21 * offender.len);
	cr_assert_eq(rc.outcome[XRL_RULE_DROPPED].packets, 1);
	cr_assert_eq(rc.outcome[XRL_RULE_PASSED].packets, 5);
}

Test(bans, a_ban_ends_exactly_on_time_with_a_full_bucket)
{
	int i;

	ban_rule(10 * S, 0, 0);
	offend(S);
	cr_assert_eq(at(&offender, 11 * S - 1), XDP_DROP);
	/* At 11 s the ban is over; the bucket, untouched, is full. */
	for (i = 0; i < 5; i++)
		cr_assert_eq(at(&offender, 11 * S), XDP_PASS, "packet %d", i);
	cr_assert_eq(at(&offender, 11 * S), XDP_DROP);
	/* That drop is a new offence: a second ban. */
	cr_assert_eq(ban_counters().started, 2);
}

Test(bans, other_sources_of_the_rule_are_unaffected)
{
	struct xrl_bucket_key key;
	struct packet other;
	struct xrl_ban ban;
	int i;

	ban_rule(10 * S, 0, 0);
	offend(S);
	for (i = 0; i < 5; i++)
		cr_assert_eq(at(&neighbour, S + MS), XDP_PASS, "packet %d", i);
	cr_assert_eq(at(&neighbour, S + MS), XDP_DROP);
	/* ...which bans the neighbour too, on its own offence only. */
	cr_assert_eq(ban_counters().started, 2);
	cr_assert_eq(record_of("198.18.1.6").until_ns, 11 * S + MS);
	/* A source of another rule (the default: allow) is not judged by
	 * the ban, nor given a record. */
	cr_assert_eq(packet_from(&other, "198.18.2.1"), 0);
	for (i = 0; i < 10; i++)
		cr_assert_eq(at(&other, S), XDP_PASS);
	key = key_of("198.18.2.1");
	cr_assert_neq(bpf_map_lookup_elem(dp.bans_fd, &key, &ban), 0);
}

Test(bans, ban_after_waits_until_the_source_has_been_over_that_long)
{
	__u64 t, first_drop = 0, banned_at = 0;
	int verdict;

	ban_rule(10 * S, 2 * S, 0);
	/* 100 pps from 1 s: the limit drops from the 6th packet on. */
	for (t = S; t < 5 * S; t += 10 * MS) {
		verdict = at(&offender, t);
		if (verdict == XDP_DROP && !first_drop)
			first_drop = t;
		if (!banned_at && ban_counters().started)
			banned_at = t;
	}
	cr_assert_eq(first_drop, S + 50 * MS);
	/* The first drop 2 s or more after the offence began bans. */
	cr_assert_geq(banned_at, first_drop + 2 * S);
	cr_assert_lt(banned_at, first_drop + 2 * S + 10 * MS);
	cr_assert_eq(record_of("198.18.1.5").until_ns, banned_at + 10 * S);
	/* Before the ban the source passed its 10 pps: about 20 in 2 s. */
	cr_assert_geq(fixture_count(&dp, XRL_VERDICT_PASS), 5 + 20);
	cr_assert_leq(fixture_count(&dp, XRL_VERDICT_PASS), 5 + 21);
}

Test(bans, an_offence_broken_by_a_quiet_second_starts_over)
{
	ban_rule(10 * S, 2 * S, 0);
	offend(S);
	/* Drops 1.5 s apart: each one a new offence, never 2 s long. */
	offend(S + 1500 * MS);
	offend(4 * S);
	cr_assert_eq(ban_counters().started, 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 0);
}

Test(bans, a_repeat_offence_doubles_up_to_ban_max)
{
	struct xrl_ban_counters c;
	__u64 t = S;

	ban_rule(S, 0, 3 * S);
	offend(t);
	cr_assert_eq(record_of("198.18.1.5").until_ns, t + S);
	t += S;				/* expired: offends again at once */
	offend(t);
	cr_assert_eq(record_of("198.18.1.5").until_ns, t + 2 * S);
	t += 2 * S;
	offend(t);			/* 4 s, capped at ban_max */
	cr_assert_eq(record_of("198.18.1.5").until_ns, t + 3 * S);
	t += 3 * S;
	offend(t);			/* still capped */
	cr_assert_eq(record_of("198.18.1.5").until_ns, t + 3 * S);
	c = ban_counters();
	cr_assert_eq(c.started, 4);
	cr_assert_eq(c.repeats, 3);
	/* Forgiven once ban_max has passed since the last ban ended. */
	t += 3 * S + 3 * S;
	offend(t);
	cr_assert_eq(record_of("198.18.1.5").until_ns, t + S);
	cr_assert_eq(record_of("198.18.1.5").bans, 5);
	cr_assert_eq(ban_counters().repeats, 3);
}

struct ban_events {
	int n;
	struct xrl_limit_event last;
};

static int take_ban_event(void *ctx, void *data, size_t size)
{
	const struct xrl_limit_event *e = data;
	struct ban_events *seen = ctx;

	cr_assert_eq(size, sizeof(*e));
	if (e->ban_ns) {
		seen->last = *e;
		seen->n++;
	}
	return 0;
}

Test(bans, a_ban_starts_with_an_event_naming_its_length)
{
	struct ban_events seen = {};
	struct xrl_limit_event event;
	struct ring_buffer *ring;

	ban_rule(10 * S, 0, 0);
	offend(S);
	ring = ring_buffer__new(dp.events_fd, take_ban_event, &seen, NULL);
	cr_assert_not_null(ring);
	cr_assert_geq(ring_buffer__consume(ring), 0);
	ring_buffer__free(ring);
	cr_assert_eq(seen.n, 1);
	event = seen.last;
	cr_assert_eq(event.ban_ns, 10 * S);
	cr_assert_eq(event.time_ns, S);
	cr_assert_eq(event.rule_id, policy.rules[1].id);
	cr_assert_eq(event.addr[12], 198);
	cr_assert_eq(event.addr[15], 5);
}

Test(bans, a_ban_outlives_its_bucket)
{
	struct xrl_bucket_key key = key_of("198.18.1.5");
	struct xrl_bucket bucket;

	ban_rule(10 * S, 0, 0);
	offend(S);
	/* As the table's LRU would: the bucket goes, the record stays. */
	cr_assert_eq(bpf_map_delete_elem(dp.buckets_fd, &key), 0);
	cr_assert_eq(at(&offender, 2 * S), XDP_DROP);
	cr_assert_eq(at(&offender, 11 * S - 1), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 2);
	/* Banned, it took nothing from the new-source budget. */
	cr_assert_neq(fixture_bucket(&dp, "198.18.1.5", policy.rules[1].id,
				     &bucket), 0);
	cr_assert_eq(at(&offender, 11 * S), XDP_PASS);
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.5", policy.rules[1].id,
				    &bucket), 0);
	/* Its record (kept: the bucket went, not it) holds the ban ended. */
	cr_assert_leq(fixture_source_counts(&dp, "198.18.1.5",
					    policy.rules[1].id).ban_until_ns,
		      11 * S);
}

Test(bans, a_ban_holds_across_a_reload_and_ends_with_the_rules_ban)
{
	struct xrl_rule_spec *rule;

	ban_rule(10 * S, 0, 0);
	offend(S);
	fixture_apply(&dp, &policy);	/* the same policy, a new generation */
	cr_assert_eq(at(&offender, 5 * S), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 1);
	/* The rule bans no more: its source is judged by the limit. */
	rule = xrl_policy_find(&policy, "198.18.1.0/24");
	memset(&rule->ban, 0, sizeof(rule->ban));
	fixture_apply(&dp, &policy);
	cr_assert_eq(at(&offender, 6 * S), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 1);
}

Test(bans, a_rule_without_ban_keeps_no_ban_state)
{
	struct xrl_bucket_key key = key_of("198.18.1.5"), next;
	struct xrl_bucket bucket;

	ban_rule(0, 0, 0);
	offend(S);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), 1);
	cr_assert_eq(ban_counters().started, 0);
	cr_assert_neq(bpf_map_get_next_key(dp.bans_fd, NULL, &next), 0,
		      "a ban record for a rule without ban");
	cr_assert_eq(bpf_map_lookup_elem(dp.buckets_fd, &key, &bucket), 0);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.1.5",
					   policy.rules[1].id).ban_until_ns, 0);
}

/* A manual ban as the daemon writes it (include/xrl.h). */
static void manual_ban(int family, const char *addr, int bits, __u64 until)
{
	struct xrl_manual_ban_key key = {
		.prefixlen = XRL_MANUAL_BAN_HDR_BITS + bits,
		.family = family,
	};
	struct xrl_manual_ban ban = { .until_ns = until };

	cr_assert_eq(inet_pton(family == 4 ? AF_INET : AF_INET6, addr,
			       key.addr), 1);
	cr_assert_eq(bpf_map_update_elem(dp.manual_bans_fd, &key, &ban, 0), 0);
}

Test(bans, a_manual_ban_wins_over_a_longer_allow_rule_and_ends_on_time)
{
	struct packet v6, other;

	fixture_rule(&policy, "198.18.1.5", XRL_ACTION_ALLOW, 0, 0, 0, 0);
	ban_rule(0, 0, 0);
	policy.manual_bans = true;
	fixture_apply(&dp, &policy);
	manual_ban(4, "198.18.1.0", 24, 5 * S);
	manual_ban(6, "fd00::", 64, 0);

	cr_assert_eq(at(&offender, S), XDP_DROP);	/* allowed by a /32 */
	cr_assert_eq(at(&offender, 5 * S - 1), XDP_DROP);
	cr_assert_eq(at(&neighbour, 2 * S), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 3);
	cr_assert_eq(at(&offender, 5 * S), XDP_PASS);	/* over on time */
	/* fd00::/64 is banned until lifted; the next /64 is not. */
	cr_assert_eq(packet_from(&v6, "fd00::1234"), 0);
	cr_assert_eq(at(&v6, 100 * S), XDP_DROP);
	cr_assert_eq(packet_from(&other, "fd00:0:0:1::1"), 0);
	cr_assert_eq(at(&other, 100 * S), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 4);
}

Test(bans, manual_bans_are_not_looked_at_unless_the_head_says_so)
{
	ban_rule(0, 0, 0);
	manual_ban(4, "198.18.1.0", 24, 0);
	cr_assert_eq(at(&offender, S), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 0);
}

/* fd00:0:HI:LO::1, the one source of its /64 key. */
static void flood_source(struct packet *pkt, __u32 n)
{
	char src[64];

	snprintf(src, sizeof(src), "fd00:0:%x:%x::1", n >> 16, n & 0xffff);
	cr_assert_eq(packet_from(pkt, src), 0);
}

/*
 * Refuses other sources (fd00::/16, burst 1: a pass, then a refusal
 * each, which makes each a record) until the offender map's LRU has
 * evicted @ipv4's record, as a flood of offenders would.
 */
static void evict_offender(const char *ipv4)
{
	struct xrl_bucket_key victim = key_of(ipv4);
	struct xrl_offender seen;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), n = 0, chunk;
	struct packet pkt;

	cr_assert_eq(bpf_obj_get_info_by_fd(dp.offenders_fd, &info, &len), 0);
	cr_assert_eq(bpf_map_lookup_elem(dp.offenders_fd, &victim, &seen), 0,
		     "%s has no offender record to evict", ipv4);
	while (n < 4 * info.max_entries &&
	       !bpf_map_lookup_elem(dp.offenders_fd, &victim, &seen)) {
		for (chunk = 0; chunk < info.max_entries / 4; chunk++, n++) {
			flood_source(&pkt, n);
			fixture_offer(&dp, &pkt, 2);
		}
	}
	cr_assert_neq(bpf_map_lookup_elem(dp.offenders_fd, &victim, &seen), 0,
		      "still there after %u offenders", n);
	cr_log_info("evicted after %u offenders of %u records", n,
		    info.max_entries);
}

/* The ban rule, with the flood's beside it; the ban rule's id. */
static uint32_t ban_rule_and_flood(uint64_t ban)
{
	policy.new_sources_off = true;	/* every flood source a bucket */
	fixture_rule(&policy, "fd00::/16", XRL_ACTION_LIMIT, 1, 1, 0, 0);
	return ban_rule(ban, 0, 0);
}

Test(bans, a_banned_source_whose_offender_record_was_evicted_stays_banned)
{
	struct xrl_bucket bucket;
	uint32_t id = ban_rule_and_flood(10 * S);

	offend(S);
	xrl_datapath_set_time(&dp, 2 * S);
	evict_offender("198.18.1.5");
	/* Its bucket still says it offended; the ban is read back from
	 * its ban record. */
	cr_assert_eq(fixture_bucket(&dp, "198.18.1.5", id, &bucket), 0);
	cr_assert(bucket.rule_id & XRL_BUCKET_OFFENDER);
	cr_assert_eq(at(&offender, 2 * S), XDP_DROP);
	cr_assert_eq(at(&offender, 11 * S - 1), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 2);
	cr_assert_eq(at(&offender, 11 * S), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BANNED), 2);
}

Test(bans, a_limited_source_whose_offender_record_was_evicted_stays_limited)
{
	uint32_t id = ban_rule_and_flood(0);
	struct fixture_counts counts;
	int i;

	offend(S);
	evict_offender("198.18.1.5");
	/* Its bucket is as empty as before: refused at the same instant,
	 * and counted in a new record from that refusal. */
	for (i = 0; i < 3; i++)
		cr_assert_eq(at(&offender, S), XDP_DROP, "packet %d", i);
	cr_assert_eq(fixture_rule_counters(&dp, id).outcome[XRL_RULE_DROPPED]
		     .packets, 4);
	cr_assert_eq(fixture_rule_counters(&dp, id).outcome[XRL_RULE_PASSED]
		     .packets, 5);
	counts = fixture_source_counts(&dp, "198.18.1.5", id);
	cr_assert(counts.refused);
	cr_assert_eq(counts.passed, 0);
	cr_assert_eq(counts.dropped, 3);
	/* And it regains its rate, no more: 10 pps, one per 100 ms. */
	cr_assert_eq(at(&offender, S + 101 * MS), XDP_PASS);
	cr_assert_eq(at(&offender, S + 101 * MS), XDP_DROP);
}

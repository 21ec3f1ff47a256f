// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Key spaces and the bucket-first lookup (issue 11, points 1 and 6):
 * IPv4 and IPv6 never share a rule or a bucket; a source with a bucket is
 * judged by the rule table, not the classifier; a swap reclassifies each
 * source once; a bucket never judges a rule other than the one it was
 * made for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "cidr.h"
#include "fixture.h"
#include "loader.h"
#include "mapwalk.h"
#include "policy_map.h"
#include "rule_counters.h"
#include "rulemaps.h"

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

TestSuite(families, .init = setup, .fini = teardown);
TestSuite(bucket_first, .init = setup, .fini = teardown);


static uint64_t rule_packets(uint32_t id, enum xrl_rule_outcome outcome)
{
	return fixture_rule_counters(&dp, id).outcome[outcome].packets;
}

Test(families, an_ipv6_rule_for_colon_colon_slash_8_leaves_ipv4_alone)
{
	uint32_t bogons = fixture_rule(&policy, "::/8", XRL_ACTION_DENY,
				       0, 0, 0, 0);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 5);
	cr_assert_eq(fixture_passes(&dp, "198.19.255.254", 5), 5);
	/* The rule still covers the IPv6 sources it names. */
	cr_assert_eq(fixture_passes(&dp, "::1", 3), 0);
	cr_assert_eq(rule_packets(bogons, XRL_RULE_DROPPED), 3);
	cr_assert_eq(fixture_passes(&dp, "fd00::1", 2), 2);
}

Test(families, an_ipv6_rule_for_the_mapped_range_leaves_ipv4_alone)
{
	uint32_t mapped = fixture_rule(&policy, "::ffff:0:0/96",
				       XRL_ACTION_DENY, 0, 0, 0, 0);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.5.1", 5), 5);
	cr_assert_eq(rule_packets(mapped, XRL_RULE_DROPPED), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_ALLOW), 5);
}

/* default deny, allow 198.18.5.0/24: the IPv6 frame naming an allowed
 * IPv4 source is not the IPv4 source. */
Test(families, an_ipv4_mapped_source_never_matches_the_ipv4_rule)
{
	uint32_t allowed;

	policy.ipv4_mapped = XRL_IPV4_MAPPED_IPV6;	/* else dropped */
	fixture_rule(&policy, NULL, XRL_ACTION_DENY, 0, 0, 0, 0);
	allowed = fixture_rule(&policy, "198.18.5.0/24", XRL_ACTION_ALLOW,
			       0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "::ffff:198.18.5.1", 10), 0);
	cr_assert_eq(fixture_passes(&dp, "::198.18.5.1", 10), 0);
	cr_assert_eq(rule_packets(allowed, XRL_RULE_PASSED), 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.5.1", 3), 3);
	cr_assert_eq(rule_packets(allowed, XRL_RULE_PASSED), 3);
}

/* With /128 IPv6 keys, ::ffff:198.18.5.1 has the very bits of the IPv4
 * key of 198.18.5.1: an IPv6 sender must not drain the IPv4 victim. */
Test(families, an_ipv4_mapped_source_never_shares_the_ipv4_bucket)
{
	struct xrl_bucket bucket;

	policy.v6_prefix = 128;
	policy.ipv4_mapped = XRL_IPV4_MAPPED_IPV6;
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 5, 0, 0);
	fixture_apply(&dp, &policy);
	fixture_passes(&dp, "::ffff:198.18.5.1", 20);
	fixture_passes(&dp, "::198.18.5.1", 20);
	cr_assert_eq(fixture_passes(&dp, "198.18.5.1", 5), 5, "the IPv4 victim was drained");
	cr_assert_eq(fixture_bucket(&dp, "198.18.5.1", 0, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 1, 5, NS_PER_S), 5);
	cr_assert(!fixture_source_counts(&dp, "198.18.5.1", 0).refused);
}

/*
 * Judged as IPv6 (ipv4_mapped: ipv6), IPv4-mapped sources keep the IPv4 key length of
 * the address they embed, so they do not share the /64 of ::ffff:0:0.
 */
Test(families, ipv4_mapped_sources_judged_as_ipv6_get_a_bucket_each)
{
	struct xrl_bucket bucket;

	policy.ipv4_mapped = XRL_IPV4_MAPPED_IPV6;
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 2, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "::ffff:198.18.5.1", 4), 2);
	cr_assert_eq(fixture_passes(&dp, "::ffff:198.18.5.2", 4), 2);
	cr_assert_eq(fixture_passes(&dp, "::198.18.5.3", 4), 2);
	cr_assert_eq(fixture_bucket(&dp, "::ffff:198.18.5.2", 0, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 1, 2, NS_PER_S), 2);
	cr_assert_eq(fixture_source_counts(&dp, "::ffff:198.18.5.2", 0).dropped,
		     2);
	cr_assert_eq(fixture_bucket(&dp, "198.18.5.2", 0, &bucket), -ENOENT,
		     "an IPv6 source made an IPv4 bucket");
}

Test(families, slash_128_keys_tell_every_ipv6_source_apart)
{
	struct xrl_bucket bucket;

	policy.v6_prefix = 128;
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "fd00::1", 5), 3);
	cr_assert_eq(fixture_passes(&dp, "fd00::2", 5), 3);
	cr_assert_eq(fixture_bucket(&dp, "fd00::2", 0, &bucket), 0);
	cr_assert_eq(fixture_source_counts(&dp, "fd00::2", 0).dropped, 2);
	cr_assert_eq(fixture_bucket(&dp, "fd00::", 0, &bucket), -ENOENT);
}

/*
 * The classifier's entry of the rule is removed behind the program's
 * back: a source with a bucket is still judged by its rule (from the
 * table), a new source under the same prefix is not (it falls to the
 * default rule). So the known source never looked at the classifier.
 */
Test(bucket_first, a_source_with_a_bucket_is_judged_without_the_classifier)
{
	struct xrl_rule_key key;
	struct xrl_lpm_key prefix;
	uint32_t limited;
	int fd;

	limited = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1,
			       3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 2), 2);

	cr_assert_eq(xrl_cidr_parse("198.18.0.0/24", &prefix), 0);
	xrl_rule_key_of(&prefix, &key);
	fd = xrl_datapath_rules_fd(&dp);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bpf_map_delete_elem(fd, &key), 0);
	close(fd);

	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 1, "not judged by its bucket");
	cr_assert_eq(rule_packets(limited, XRL_RULE_PASSED), 3);
	cr_assert_eq(rule_packets(limited, XRL_RULE_DROPPED), 4);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.2", 5), 5, "a new source found the rule");
	cr_assert_eq(rule_packets(limited, XRL_RULE_PASSED), 3);
}

/* A more specific rule added by a swap takes the source at its first
 * packet after the swap, and the bucket it leaves is removed. */
Test(bucket_first, after_a_swap_the_first_packet_reclassifies)
{
	struct xrl_bucket bucket;
	uint32_t wide, narrow;

	wide = fixture_rule(&policy, "198.18.0.0/16", XRL_ACTION_LIMIT, 1, 3,
			    0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 2), 2);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", wide, &bucket), 0);

	narrow = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_DENY, 0, 0,
			      0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 1), 0);
	cr_assert_eq(rule_packets(narrow, XRL_RULE_DROPPED), 1);
	cr_assert_eq(rule_packets(wide, XRL_RULE_PASSED), 2);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", wide, &bucket), -ENOENT);
}

/* A swap that keeps the rule (same id, same prefix) keeps the state: the
 * limited source stays limited. */
Test(bucket_first, a_kept_rule_keeps_its_bucket_across_a_swap)
{
	uint32_t limited;

	limited = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1,
			       3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);
	fixture_rule(&policy, "fd00::/16", XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 0, "the swap refilled a bucket");
	cr_assert_eq(rule_packets(limited, XRL_RULE_DROPPED), 7);
}

/*
 * Rule 198.18.0.0/24 (id 1) is deleted and a new rule 198.18.0.0/16
 * takes id 1: the source's bucket, made for the old rule and empty, must
 * not judge the new one, which starts the source with a full burst.
 */
Test(bucket_first, a_deleted_and_reused_rule_id_never_inherits_a_bucket)
{
	struct fixture_counts counts;
	struct xrl_bucket bucket;
	uint32_t old_id, new_id;

	old_id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1,
			      3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);

	cr_assert_eq(xrl_policy_del(&policy, "198.18.0.0/24"), 0);
	new_id = fixture_rule(&policy, "198.18.0.0/16", XRL_ACTION_LIMIT, 1, 4,
			      0, 0);
	policy.rules[policy.n_rules - 1].id = old_id;
	fixture_apply(&dp, &policy);
	cr_assert_neq(new_id, 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 6), 4,
		     "the new rule was judged by the old rule's bucket");
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", old_id, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 1, 4, NS_PER_S), 4);
	/* The old rule's record counts for it no more: only the new
	 * rule's refusals. */
	counts = fixture_source_counts(&dp, "198.18.0.1", old_id);
	cr_assert_eq(counts.passed, 0);
	cr_assert_eq(counts.dropped, 2);
}

/* A rule whose prefix grew covers a source that was under the default
 * rule: the source moves to it at its next packet. */
Test(bucket_first, a_source_under_a_rule_that_changed_prefix_moves_to_it)
{
	uint32_t grown;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 10, 0, 0);
	grown = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1, 2,
			     0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 3), 3);
	cr_assert_eq(rule_packets(0, XRL_RULE_PASSED), 3);

	cr_assert_eq(xrl_cidr_parse("198.18.0.0/23",
				    &policy.rules[policy.n_rules - 1].prefix), 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 4), 2);
	cr_assert_eq(rule_packets(grown, XRL_RULE_PASSED), 2);
	cr_assert_eq(rule_packets(grown, XRL_RULE_DROPPED), 2);
	cr_assert_eq(rule_packets(0, XRL_RULE_PASSED), 3);
}

/*
 * A /128 rule under /64 keys: fd00::1 and fd00::2 share a key but not a
 * rule, so their subnet is split and each (key, rule) has its bucket, as
 * the rules say. Without the /128 rule they share the /64's bucket again.
 */
Test(bucket_first, a_rule_longer_than_the_key_splits_the_key)
{
	struct xrl_bucket bucket;
	uint32_t host;

	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 2, 0, 0);
	host = fixture_rule(&policy, "fd00::1/128", XRL_ACTION_LIMIT, 1, 5, 0,
			    0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "fd00::1", 7), 5);
	cr_assert_eq(fixture_passes(&dp, "fd00::2", 4), 2);
	cr_assert_eq(fixture_passes(&dp, "fd00::3", 4), 0, "shares fd00::2's /64 bucket");
	cr_assert_eq(fixture_passes(&dp, "fd00::1", 1), 0);
	cr_assert_eq(fixture_bucket(&dp, "fd00::", host, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 1, 5, NS_PER_S), 5);
	cr_assert_eq(fixture_source_counts(&dp, "fd00::", host).dropped, 3);
	cr_assert_eq(fixture_bucket(&dp, "fd00::", 0, &bucket), 0);
	cr_assert_eq(fixture_packets_owed(&bucket, 1, 2, NS_PER_S), 2);
	cr_assert_eq(fixture_source_counts(&dp, "fd00::", 0).dropped, 6);

	/* Unsplit again: one fresh bucket for the /64. */
	cr_assert_eq(xrl_policy_del(&policy, "fd00::1/128"), 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "fd00::1", 3), 2);
	cr_assert_eq(fixture_passes(&dp, "fd00::2", 2), 0, "not one bucket for the /64");
}

Test(bucket_first, a_short_key_subnet_split_by_a_host_rule_still_limits_both)
{
	uint32_t host;

	policy.v4_prefix = 24;
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 2, 0, 0);
	host = fixture_rule(&policy, "198.18.7.9", XRL_ACTION_DENY, 0, 0, 0,
			    0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.7.9", 3), 0);
	cr_assert_eq(rule_packets(host, XRL_RULE_DROPPED), 3);
	cr_assert_eq(fixture_passes(&dp, "198.18.7.1", 3), 2);
	cr_assert_eq(fixture_passes(&dp, "198.18.7.2", 3), 0, "shares 198.18.7.0/24");
	cr_assert_eq(fixture_passes(&dp, "198.18.8.1", 3), 2);
}

/*
 * A policy of 1,000,000 rules: 131,070 IPv4 /32s (every address of
 * 198.18.0.0/15 but the first and the last) and 868,929 IPv6 /64s in fd00::/16 (each
 * with its own action: deny, allow, or a limit whose burst is 1 to 5),
 * and the default rule; every 997th rule is checked with a source inside
 * it, and sources outside every rule get the default.
 */
#define MILLION		1000000
#define V4_RULES	131070

/* A data path of @max_rules rules (0: the default) and 65,536 sources. */
static void load_for_rules(__u32 max_rules)
{
	struct xrl_load_opts opts = {
		.max_sources = 65536,
		.max_rules = max_rules,
		.test_clock = true,
		.hash_seed = FIXTURE_HASH_SEED,
	};
	int ret = xrl_datapath_load(&dp, &opts);

	cr_assert_eq(ret, 0, "loading: %s", strerror(-ret));
	xrl_datapath_set_time(&dp, NS_PER_S);
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void million_setup(void)
{
	load_for_rules(XRL_MAX_RULES);
}

TestSuite(million, .init = million_setup, .fini = teardown,
	  .timeout = 300);

static void million_source(size_t i, char *text, size_t len)
{
	if (i <= V4_RULES)
		snprintf(text, len, "198.%u.%u.%u", 18 + (unsigned)(i >> 16),
			 (unsigned)(i >> 8) & 0xff, (unsigned)i & 0xff);
	else
		snprintf(text, len, "fd00:%x:%x::1", (unsigned)(i >> 16),
			 (unsigned)i & 0xffff);
}

static void million_rule(size_t i, struct xrl_rule_spec *rule)
{
	char text[64];
	int ret;

	memset(rule, 0, sizeof(*rule));
	if (i <= V4_RULES)
		million_source(i, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "fd00:%x:%x::/64",
			 (unsigned)(i >> 16), (unsigned)i & 0xffff);
	ret = xrl_cidr_parse(text, &rule->prefix);
	cr_assert_eq(ret, 0, "%s", text);
	snprintf(rule->name, sizeof(rule->name), "r%zu", i);
	rule->action = i % 3 == 0 ? XRL_ACTION_DENY :
		       i % 3 == 1 ? XRL_ACTION_ALLOW : XRL_ACTION_LIMIT;
	if (rule->action == XRL_ACTION_LIMIT) {
		rule->pps = 1;
		rule->burst = 1 + i % 5;
	}
}

static unsigned expected_passes(size_t i, unsigned offered)
{
	if (i % 3 == 0)
		return 0;
	if (i % 3 == 1)
		return offered;
	return 1 + i % 5;
}

Test(million, a_million_rule_policy_loads_and_judges_sampled_sources)
{
	struct xrl_rule_spec *rules = calloc(MILLION, sizeof(*rules));
	char text[64], err[256] = "";
	size_t i, clash;
	int ret;

	cr_assert_not_null(rules);
	fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 1, 7, 0, 0);
	for (i = 1; i < MILLION; i++)
		million_rule(i, &rules[i - 1]);
	ret = xrl_policy_add_many(&policy, rules, MILLION - 1, &clash);
	cr_assert_eq(ret, 0, "adding: %s (rule %zu)", strerror(-ret), clash);
	free(rules);
	cr_assert_eq(policy.n_rules, MILLION);
	ret = xrl_policy_apply(&dp, &policy, err, sizeof(err));
	cr_assert_eq(ret, 0, "applying: %s", err);

	for (i = 1; i < MILLION; i += 997) {
		million_source(i, text, sizeof(text));
		cr_assert_eq(fixture_passes(&dp, text, 6), expected_passes(i, 6),
			     "rule %zu, source %s", i, text);
		cr_assert_eq(rule_packets(policy.rules[i].id,
					  i % 3 == 0 ? XRL_RULE_DROPPED :
					  XRL_RULE_PASSED),
			     i % 3 == 0 ? 6 : expected_passes(i, 6),
			     "rule %zu counters", i);
	}
	cr_assert_eq(fixture_passes(&dp, "198.19.255.255", 9), 7, "the default rule");
	cr_assert_eq(fixture_passes(&dp, "fd01::1", 9), 7, "the default rule");
}

/* A policy past the id space the data path was loaded with (twice its
 * rule capacity) is refused whole, with the capacity in the message; the
 * ids below it are all a policy's to take. */
Test(bucket_first, a_policy_past_the_rule_capacity_is_refused_whole)
{
	char err[256] = "";

	fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_DENY, 0, 0, 0, 0);
	policy.rules[1].id = 2 * XRL_DEFAULT_RULES - 1;
	cr_assert_eq(xrl_policy_apply(&dp, &policy, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 2), 0, "the last id's rule");
	fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_DENY, 0, 0, 0, 0);
	policy.rules[2].id = 2 * XRL_DEFAULT_RULES;
	cr_assert_eq(xrl_policy_apply(&dp, &policy, err, sizeof(err)), -ENOSPC);
	cr_assert(strstr(err, "131072 rules"), "%s", err);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 2), 2, "the refused policy applied");
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 2), 0, "the policy in force changed");
}

/*
 * Two processes install policies on one data path (the daemon and a CLI
 * run): each must take a generation neither used, or a bucket made under
 * the other's policy would pass for one of its own. "other" shares the
 * maps, as a process adopting the pins does.
 */
Test(bucket_first, two_installers_never_reuse_a_generation)
{
	struct xrl_datapath other = dp;
	struct xrl_policy wide;
	char err[256] = "";

	other.skel = NULL;
	other.known = NULL;
	fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1, 3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 1), 1);

	cr_assert_eq(xrl_policy_init(&wide), 0);
	fixture_rule(&wide, "198.18.0.0/16", XRL_ACTION_LIMIT, 1, 5, 0, 0);
	cr_assert_eq(wide.rules[1].id, policy.rules[1].id);
	cr_assert_eq(xrl_policy_apply(&other, &wide, err, sizeof(err)), 0,
		     "%s", err);
	xrl_rules_forget(&other);
	xrl_policy_free(&wide);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 6), 5);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 4), 3,
		     "judged by the other installer's bucket");
}

/*
 * The walk tries only the lengths the policy holds, longest first, in
 * every word of an IPv6 address (bits 1..64, 65..127, and 128): nested
 * prefixes of alternating verdicts, each source judged by its longest.
 */
Test(families, the_longest_of_many_lengths_wins_in_every_word)
{
	static const struct {
		const char *cidr;
		enum xrl_action action;
	} nested[] = {
		{ "fd00::/8", XRL_ACTION_DENY },
		{ "fd00::/48", XRL_ACTION_ALLOW },
		{ "fd00::/64", XRL_ACTION_DENY },
		{ "fd00::/65", XRL_ACTION_ALLOW },
		{ "fd00::/127", XRL_ACTION_DENY },
		{ "fd00::1/128", XRL_ACTION_ALLOW },
		{ "198.18.0.0/15", XRL_ACTION_DENY },
		{ "198.18.7.0/24", XRL_ACTION_ALLOW },
		{ "198.18.7.7/32", XRL_ACTION_DENY },
	};
	static const struct {
		const char *src;
		unsigned rule;	/* index into nested[] */
	} sources[] = {
		{ "fd00::1", 5 },		/* the /128 */
		{ "fd00::", 4 },		/* the /127 */
		{ "fd00::4000:0:0:0", 3 },	/* bit 65 clear: the /65 */
		{ "fd00::8000:0:0:0", 2 },	/* bit 65 set: the /64 */
		{ "fd00:0:0:1::", 1 },		/* the /48 */
		{ "fd00:1::", 0 },		/* the /8 */
		{ "198.18.7.7", 8 },
		{ "198.18.7.8", 7 },
		{ "198.19.0.1", 6 },
	};
	uint32_t ids[sizeof(nested) / sizeof(nested[0])];
	enum xrl_rule_outcome outcome;
	unsigned i, rule;
	bool pass;

	fixture_rule(&policy, NULL, XRL_ACTION_ALLOW, 0, 0, 0, 0);
	for (i = 0; i < sizeof(nested) / sizeof(nested[0]); i++)
		ids[i] = fixture_rule(&policy, nested[i].cidr, nested[i].action,
				      0, 0, 0, 0);
	fixture_apply(&dp, &policy);
	for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		rule = sources[i].rule;
		pass = nested[rule].action == XRL_ACTION_ALLOW;
		outcome = pass ? XRL_RULE_PASSED : XRL_RULE_DROPPED;
		cr_assert_eq(fixture_passes(&dp, sources[i].src, 1), pass, "%s judged by %s",
			     sources[i].src, nested[rule].cidr);
		cr_assert_eq(rule_packets(ids[rule], outcome), 1,
			     "%s counted on %s", sources[i].src,
			     nested[rule].cidr);
	}
}

/* ---- a full policy replaces a disjoint full one (issue 23, item 4) --- */

static void full_setup(void)
{
	load_for_rules(0);
}

TestSuite(full_swap, .init = full_setup, .fini = teardown, .timeout = 300);

/* A policy of the default rule and deny rules for fd00:@side:N::/64,
 * N = 1 .. XRL_DEFAULT_RULES - 1: the capacity, whole. */
static void full_policy(struct xrl_policy *p, unsigned side)
{
	size_t n = XRL_DEFAULT_RULES - 1, i, clash;
	struct xrl_rule_spec *rules = calloc(n, sizeof(*rules));
	char text[64];
	int ret;

	cr_assert_not_null(rules);
	cr_assert_eq(xrl_policy_init(p), 0);
	fixture_rule(p, NULL, XRL_ACTION_LIMIT, 100, 100, 0, 0);
	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "fd00:%x:%x:%x::/64", side,
			 (unsigned)(i + 1) >> 16, (unsigned)(i + 1) & 0xffff);
		cr_assert_eq(xrl_cidr_parse(text, &rules[i].prefix), 0);
		snprintf(rules[i].name, sizeof(rules[i].name), "s%u-%zu", side,
			 i + 1);
		rules[i].action = XRL_ACTION_DENY;
	}
	ret = xrl_policy_add_many(p, rules, n, &clash);
	cr_assert_eq(ret, 0, "adding: %s (rule %zu)", strerror(-ret), clash);
	free(rules);
	cr_assert_eq(p->n_rules, XRL_DEFAULT_RULES);
}

/* Puts @p in force as the daemon does: ids handed out by the data path
 * (a rule not in force gets one no rule in force holds), then one swap. */
static void put_in_force(struct xrl_policy *p)
{
	char err[256] = "";
	int ret;

	ret = xrl_policy_take_ids(&dp, p, NULL, err, sizeof(err));
	cr_assert_eq(ret, 0, "ids: %s", err);
	ret = xrl_policy_apply(&dp, p, err, sizeof(err));
	cr_assert_eq(ret, 0, "applying: %s", err);
}

/* Entries of the per-rule counters maps (both: rule_counters.h). */
static long counter_entries(void)
{
	long first = xrl_map_count(dp.rule_stats_fd, sizeof(__u32));
	long spill = xrl_map_count(dp.rule_spill_fd, sizeof(__u32));

	cr_assert_geq(first, 0);
	cr_assert_geq(spill, 0);
	return first + spill;
}

Test(full_swap, a_full_policy_replaces_a_disjoint_full_one_both_ways)
{
	struct xrl_policy a, b;
	unsigned round;

	full_policy(&a, 0xa);
	full_policy(&b, 0xb);
	for (round = 0; round < 3; round++) {
		struct xrl_policy *in = round % 2 ? &b : &a;
		const char *deny = round % 2 ? "fd00:b:1:2345::1" :
					       "fd00:a:1:2345::1";
		const char *other = round % 2 ? "fd00:a:1:2345::1" :
						"fd00:b:1:2345::1";

		put_in_force(in);
		cr_assert_eq(fixture_passes(&dp, deny, 3), 0, "round %u: %s", round, deny);
		cr_assert_eq(fixture_passes(&dp, other, 3), 3, "round %u: %s", round, other);
		cr_assert_eq(fixture_passes(&dp, "fd00:a:0:1::1", 1),
			     round % 2 ? 1 : 0, "round %u: the first rule",
			     round);
		/* Counters for the rules in force and, one swap more, for
		 * those just gone out: never more than two policies'. */
		cr_assert_leq(counter_entries(), 2 * XRL_DEFAULT_RULES,
			      "round %u", round);
		cr_assert_geq(counter_entries(), XRL_DEFAULT_RULES,
			      "round %u", round);
	}
	xrl_policy_free(&a);
	xrl_policy_free(&b);
}

/* ---- swaps back to an edited policy (issue 25, item 5) -------------- */

#define EDIT_RULES	48

/* The prefix of rule @n of side @side, and a source inside it. */
static void edit_prefix(unsigned side, unsigned n, char *cidr, char *src,
			size_t len)
{
	snprintf(cidr, len, "fd00:%x:0:%x::/64", side, n);
	snprintf(src, len, "fd00:%x:0:%x::1", side, n);
}

/* The default rule and rules @first .. @last of side @side: deny, or
 * allow for those of @allow_from on. */
static void edit_policy(struct xrl_policy *p, unsigned side, unsigned first,
			unsigned last, unsigned allow_from)
{
	char cidr[64], src[64];
	unsigned n;

	cr_assert_eq(xrl_policy_init(p), 0);
	fixture_rule(p, NULL, XRL_ACTION_LIMIT, 1000, 1000, 0, 0);
	for (n = first; n <= last; n++) {
		edit_prefix(side, n, cidr, src, sizeof(cidr));
		fixture_rule(p, cidr, n >= allow_from ? XRL_ACTION_ALLOW :
					       XRL_ACTION_DENY, 0, 0, 0, 0);
	}
}

/* The id in force of the rule of @cidr in @p (after put_in_force()). */
static uint32_t id_of(struct xrl_policy *p, const char *cidr)
{
	struct xrl_rule_spec *rule = xrl_policy_find(p, cidr);

	cr_assert_not_null(rule, "%s", cidr);
	return rule->id;
}

/*
 * Every rule of side @side from 1 to @upto judged as @p says: a source
 * of a rule of @p by that rule (its verdict, counted on its id), one of
 * a rule not in @p by the default rule.
 */
static void expect_judged_by(struct xrl_policy *p, unsigned side,
			     unsigned upto)
{
	char cidr[64], src[64];
	struct xrl_rule_spec *rule;
	uint64_t before;
	bool pass;
	unsigned n;

	for (n = 1; n <= upto; n++) {
		edit_prefix(side, n, cidr, src, sizeof(cidr));
		rule = xrl_policy_find(p, cidr);
		if (!rule) {
			before = rule_packets(p->rules[0].id, XRL_RULE_PASSED);
			cr_assert_eq(fixture_passes(&dp, src, 1), 1, "%s: no rule", src);
			cr_assert_eq(rule_packets(p->rules[0].id,
						  XRL_RULE_PASSED),
				     before + 1, "%s: on the default rule", src);
			continue;
		}
		pass = rule->action == XRL_ACTION_ALLOW;
		before = rule_packets(rule->id, pass ? XRL_RULE_PASSED :
						       XRL_RULE_DROPPED);
		cr_assert_eq(fixture_passes(&dp, src, 1), pass, "%s judged by %s", src,
			     cidr);
		cr_assert_eq(rule_packets(rule->id, pass ? XRL_RULE_PASSED :
							   XRL_RULE_DROPPED),
			     before + 1, "%s counted on %s (id %u)", src, cidr,
			     rule->id);
	}
}

/* Whether either counters map holds an entry for @id. */
static bool has_counters(uint32_t id)
{
	struct xrl_rule_counters values[256];

	cr_assert_leq(libbpf_num_possible_cpus(), 256);
	return !xrl_rule_counters_lookup(&dp, id, values);
}

Test(full_swap, back_to_an_edited_policy_every_rule_is_judged_by_its_own)
{
	struct xrl_policy a, b, edited, again;
	char cidr[64], src[64];
	uint32_t kept_id, gone_id;
	uint64_t kept_drops;
	unsigned n;

	/* A: rules 1..48 deny; B: another side; A': A without rules 1..4,
	 * rules 5..8 now allow, rules 49..52 new; A'': A' with 9..12 allow. */
	edit_policy(&a, 0xc, 1, EDIT_RULES, EDIT_RULES + 1);
	edit_policy(&b, 0xd, 1, EDIT_RULES, EDIT_RULES + 1);
	edit_policy(&edited, 0xc, 5, EDIT_RULES + 4, EDIT_RULES + 1);
	for (n = 5; n <= 8; n++) {
		edit_prefix(0xc, n, cidr, src, sizeof(cidr));
		xrl_policy_find(&edited, cidr)->action = XRL_ACTION_ALLOW;
	}
	put_in_force(&a);
	expect_judged_by(&a, 0xc, EDIT_RULES + 4);
	edit_prefix(0xc, 2, cidr, src, sizeof(cidr));
	gone_id = id_of(&a, cidr);
	put_in_force(&b);
	expect_judged_by(&b, 0xd, EDIT_RULES);
	expect_judged_by(&b, 0xc, EDIT_RULES + 4);
	put_in_force(&edited);
	expect_judged_by(&edited, 0xc, EDIT_RULES + 4);
	expect_judged_by(&edited, 0xd, EDIT_RULES);
	/* A's rules went out a swap ago and are not back under their ids:
	 * their counters are gone; B's stay one swap more. */
	cr_assert(!has_counters(gone_id), "id %u of a deleted rule", gone_id);
	cr_assert(has_counters(id_of(&b, "fd00:d:0:1::/64")));
	cr_assert_eq(id_of(&edited, "::/0"), id_of(&b, "::/0"));
	cr_assert_eq(counter_entries(),
		     (long)(b.n_rules + edited.n_rules - 1),
		     "the counters of B and A' only (one default rule)");

	/* An edit of A' in place: the rules it keeps keep their ids, and
	 * their counters count on. */
	edit_prefix(0xc, 20, cidr, src, sizeof(cidr));
	kept_id = id_of(&edited, cidr);
	kept_drops = rule_packets(kept_id, XRL_RULE_DROPPED);
	cr_assert_geq(kept_drops, 1);
	edit_policy(&again, 0xc, 5, EDIT_RULES + 4, EDIT_RULES + 1);
	for (n = 5; n <= 12; n++) {
		edit_prefix(0xc, n, cidr, src, sizeof(cidr));
		xrl_policy_find(&again, cidr)->action = XRL_ACTION_ALLOW;
	}
	put_in_force(&again);
	edit_prefix(0xc, 20, cidr, src, sizeof(cidr));
	cr_assert_eq(id_of(&again, cidr), kept_id, "an id carried over");
	cr_assert_eq(rule_packets(kept_id, XRL_RULE_DROPPED), kept_drops);
	expect_judged_by(&again, 0xc, EDIT_RULES + 4);
	expect_judged_by(&again, 0xd, EDIT_RULES);
	/* B went out a swap ago: only the ids of A' and A'' count now. */
	cr_assert(!has_counters(id_of(&b, "fd00:d:0:1::/64")));
	cr_assert_eq(counter_entries(), (long)edited.n_rules,
		     "A'' holds the ids of A'");
	xrl_policy_free(&again);
	xrl_policy_free(&edited);
	xrl_policy_free(&b);
	xrl_policy_free(&a);
}

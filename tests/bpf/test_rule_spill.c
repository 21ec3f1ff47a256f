// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The per-rule counters in two maps (include/xrl.h,
 * XRL_RULE_STATS_FIRST; user/datapath/rule_counters.c): the first ids
 * made in xrl_rule_stats, the rest in xrl_rule_spill. Loaded here with
 * room for 8 in the first, so most rules of a small policy spill: every
 * rule counts exactly, whichever map holds it, as read by rule and by
 * /metrics; no id ever has an entry in both; a swap keeps the counts of
 * the rules it keeps, a rule out and back one swap later counts on, and
 * an id given to a new rule starts at zero where its entry is.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "fixture.h"
#include "loader.h"
#include "mapwalk.h"
#include "metrics.h"
#include "metrics_collect.h"
#include "policy_map.h"
#include "rule_counters.h"
#include "stats.h"

#define FIRST		8	/* xrl_rule_stats entries, for this suite */
#define N_RULES		100	/* more than XRL_RULE_CACHE_WAYS: ways churn */

static struct xrl_datapath dp;
static struct xrl_policy policy;
#define MAX_RULE	255
static uint32_t ids[MAX_RULE + 1];	/* [i]: rule 198.18.i.0/24 */
static uint64_t sent[MAX_RULE + 1];	/* packets of rule i so far */
static char pin_dir[64];		/* pinned by a test: removed after */

static void setup(void)
{
	struct xrl_load_opts opts = {
		.test_clock = true,
		.hash_seed = FIXTURE_HASH_SEED,
		.rule_stats_first = FIRST,
	};
	cpu_set_t cpus;
	int ret;

	/* The copies are per CPU: the packets are judged on one. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	cr_assert_eq(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
	ret = xrl_datapath_load(&dp, &opts);
	cr_assert_eq(ret, 0, "loading: %s", strerror(-ret));
	xrl_datapath_set_time(&dp, NS_PER_S);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	memset(sent, 0, sizeof(sent));
}

static void teardown(void)
{
	if (pin_dir[0]) {
		xrl_datapath_unpin(&dp);
		rmdir(pin_dir);
		pin_dir[0] = '\0';
	}
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(rule_spill, .init = setup, .fini = teardown);

/* Rule i's burst: 1 to 5, so every rule both passes and drops. */
static uint64_t burst_of(unsigned i)
{
	return i % 5 + 1;
}

static void add_rule(unsigned i)
{
	char cidr[32];

	snprintf(cidr, sizeof(cidr), "198.18.%u.0/24", i);
	ids[i] = fixture_rule(&policy, cidr, XRL_ACTION_LIMIT, 1, burst_of(i),
			      0, 0);
}

/* Rules 1..@n, put in force. */
static void rules_in_force(unsigned n)
{
	unsigned i;

	for (i = 1; i <= n; i++)
		add_rule(i);
	fixture_apply(&dp, &policy);
}

/* @rounds rounds of a few packets of each rule @from..@to in turn (its
 * one source, 198.18.i.1), so the rules sharing a way take it from each
 * other on every round. */
static void send_rounds(unsigned from, unsigned to, unsigned rounds)
{
	char src[32];
	unsigned r, i, n;

	for (r = 0; r < rounds; r++)
		for (i = from; i <= to; i++) {
			n = (i + r) % 3 + 1;
			snprintf(src, sizeof(src), "198.18.%u.1", i);
			fixture_passes(&dp, src, n);
			sent[i] += n;
		}
}

/* On the frozen test clock a source's bucket never refills: of what
 * rule i's one source sent, its burst passed and the rest dropped. */
static uint64_t passed_of(unsigned i)
{
	return sent[i] < burst_of(i) ? sent[i] : burst_of(i);
}

/* Rule i's counts, read by rule, are exactly what it judged. */
static void assert_counted(unsigned i)
{
	struct xrl_rule_counters c = fixture_rule_counters(&dp, ids[i]);

	cr_assert_eq(c.outcome[XRL_RULE_PASSED].packets, passed_of(i),
		     "rule %u (id %u): passed %llu of %llu", i, ids[i],
		     (unsigned long long)c.outcome[XRL_RULE_PASSED].packets,
		     (unsigned long long)passed_of(i));
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].packets,
		     sent[i] - passed_of(i), "rule %u (id %u): dropped", i,
		     ids[i]);
}

static bool spilled(unsigned i);

/* The same read by /metrics through @d, every rule of rules @from..@to
 * at once (with @first_only, those whose entry is in the first map). */
static void assert_metrics_counted_by(const struct xrl_datapath *d,
				      unsigned from, unsigned to,
				      bool first_only)
{
	struct xrl_metrics m = { .tracked_sources = -1 };
	struct xrl_metrics_rule rules[MAX_RULE + 1];
	unsigned i, r;
	int ret;

	memset(rules, 0, sizeof(rules));
	for (i = from; i <= to; i++)
		if (!first_only || !spilled(i))
			rules[m.n_rules++].id = ids[i];
	cr_assert_gt(m.n_rules, 0);
	m.rules = rules;
	ret = xrl_metrics_collect(d, &m);
	cr_assert_eq(ret, 0, "collecting: %s", strerror(-ret));
	/* Sorted by id now: found by it. */
	for (i = from; i <= to; i++) {
		if (first_only && spilled(i))
			continue;
		for (r = 0; r < m.n_rules && rules[r].id != ids[i]; r++)
			;
		cr_assert_lt(r, m.n_rules);
		cr_assert_eq(rules[r].counters.outcome[XRL_RULE_PASSED].packets,
			     passed_of(i), "/metrics, rule %u: passed", i);
		cr_assert_eq(rules[r].counters.outcome[XRL_RULE_DROPPED].packets,
			     sent[i] - passed_of(i), "/metrics, rule %u: dropped",
			     i);
	}
}

static void assert_metrics_counted(unsigned from, unsigned to)
{
	assert_metrics_counted_by(&dp, from, to, false);
}

static long entries(int fd)
{
	long n = xrl_map_count(fd, sizeof(__u32));

	cr_assert_geq(n, 0, "walking: %s", strerror((int)-n));
	return n;
}

/* No id has an entry in both maps. */
static int in_spill_too(const void *key, const void *value, void *ctx)
{
	struct xrl_rule_counters values[256];

	(void)value;
	(void)ctx;
	cr_assert_leq(libbpf_num_possible_cpus(), 256);
	cr_assert_neq(bpf_map_lookup_elem(dp.rule_spill_fd, key, values), 0,
		      "id %u has an entry in both maps", *(const __u32 *)key);
	cr_assert_eq(errno, ENOENT);
	return 0;
}

static void assert_each_id_in_one_map(void)
{
	cr_assert_eq(xrl_map_walk(dp.rule_stats_fd, sizeof(__u32), 0,
				  in_spill_too, NULL), 0);
}

/* Whether rule i's entry is in the spill map. */
static bool spilled(unsigned i)
{
	struct xrl_rule_counters values[256];

	return !bpf_map_lookup_elem(dp.rule_spill_fd, &ids[i], values);
}

/*
 * A policy of the default rule and 100 more: 8 entries in the first
 * map, 93 in the spill map, and every rule counts exactly through
 * three rounds that move every way's counters back and forth.
 */
Test(rule_spill, rules_past_the_first_map_count_exactly)
{
	struct xrl_datapath blind;
	unsigned i, n_spilled = 0;

	rules_in_force(N_RULES);
	cr_assert_eq(entries(dp.rule_stats_fd), FIRST);
	cr_assert_eq(entries(dp.rule_spill_fd), N_RULES + 1 - FIRST);
	assert_each_id_in_one_map();
	send_rounds(1, N_RULES, 3);
	for (i = 1; i <= N_RULES; i++) {
		assert_counted(i);
		n_spilled += spilled(i);
	}
	cr_assert_geq(n_spilled, N_RULES - FIRST, "%u rules spilled",
		      n_spilled);
	assert_metrics_counted(1, N_RULES);
	/* Rules of the first map only: /metrics reads no spill map, so a
	 * data path with none to read reads them all the same. */
	blind = dp;
	blind.rule_spill_fd = -1;
	assert_metrics_counted_by(&blind, 1, N_RULES, true);
	cr_assert_eq(fixture_table_counters(&dp).events[XRL_TABLE_REFUSED], 0,
		     "every source got its own bucket");
}

/*
 * Swaps: 30 rules out, 30 new in, twice over (the first swap's leavers
 * are removed by the second). The rules kept count on wherever their
 * entry is, the new ones from zero, each id in one map, and the maps
 * hold the rules in force and those a swap put out, no more.
 */
Test(rule_spill, swaps_keep_the_counts_of_the_rules_they_keep)
{
	unsigned i, round;
	char cidr[32];

	rules_in_force(N_RULES);
	send_rounds(1, N_RULES, 2);
	for (round = 0; round < 2; round++) {
		unsigned out_from = 1 + round * 30, out_to = out_from + 29;

		for (i = out_from; i <= out_to; i++) {
			snprintf(cidr, sizeof(cidr), "198.18.%u.0/24", i);
			cr_assert_eq(xrl_policy_del(&policy, cidr), 0);
		}
		for (i = N_RULES + 1 + round * 30;
		     i <= N_RULES + 30 + round * 30; i++)
			add_rule(i);
		fixture_apply(&dp, &policy);
		assert_each_id_in_one_map();
		cr_assert_eq(entries(dp.rule_stats_fd) +
				     entries(dp.rule_spill_fd),
			     (long)policy.n_rules + 30,
			     "round %u: in force and put out", round);
	}
	send_rounds(61, N_RULES, 2);
	send_rounds(N_RULES + 1, N_RULES + 60, 2);
	for (i = 61; i <= N_RULES + 60; i++)
		assert_counted(i);
	assert_metrics_counted(61, N_RULES + 60);
}

/* The first rule (from 1) whose entry is in the spill map (@want) or in
 * the first. */
static unsigned rule_where(bool want)
{
	unsigned i;

	for (i = 1; i <= N_RULES; i++)
		if (spilled(i) == want)
			return i;
	cr_assert_fail("no rule %s", want ? "spilled" : "in the first map");
	return 0;
}

static uint64_t total_of(uint32_t id)
{
	struct xrl_rule_counters c = fixture_rule_counters(&dp, id);

	return c.outcome[XRL_RULE_PASSED].packets +
	       c.outcome[XRL_RULE_DROPPED].packets +
	       c.outcome[XRL_RULE_BANNED].packets;
}

/* Room in the first map: a rule of it out, and gone a swap later.
 * Returns that rule. */
static unsigned make_room_in_first(void)
{
	unsigned f = rule_where(false);
	char cidr[32];

	snprintf(cidr, sizeof(cidr), "198.18.%u.0/24", f);
	cr_assert_eq(xrl_policy_del(&policy, cidr), 0);
	fixture_apply(&dp, &policy);
	fixture_apply(&dp, &policy);
	cr_assert_eq(entries(dp.rule_stats_fd), FIRST - 1, "room in the first");
	return f;
}

/*
 * A process that adopts the pins (a restarted daemon) and puts the
 * same policy in force knows none of the ids: every rule is new to it,
 * and keeps the entry it finds, in whichever map, while the first map
 * has room for new ones.
 */
Test(rule_spill, a_process_adopting_the_pins_keeps_every_rules_counts)
{
	struct xrl_datapath adopted;
	char err[256] = "";
	unsigned i, gone;
	int ret;

	rules_in_force(N_RULES);
	send_rounds(1, N_RULES, 2);
	gone = make_room_in_first();
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/xrl-test-spill-%d",
		 getpid());
	cr_assert_eq(xrl_datapath_pin(&dp, pin_dir), 0, "pinning");
	ret = xrl_datapath_open_pinned(&adopted, pin_dir);
	cr_assert_eq(ret, 0, "adopting: %s", strerror(-ret));
	ret = xrl_policy_apply(&adopted, &policy, err, sizeof(err));
	xrl_datapath_close(&adopted);
	cr_assert_eq(ret, 0, "applying from the adopter: %s", err);
	assert_each_id_in_one_map();
	for (i = 1; i <= N_RULES; i++)
		if (i != gone)
			cr_assert_eq(total_of(ids[i]), sent[i],
				     "rule %u (id %u) counts on", i, ids[i]);
}

/*
 * The id of a spilled rule given to a new rule (another prefix) in the
 * same swap: its entry is zeroed where it is, and the new rule counts
 * from zero by its own burst.
 */
Test(rule_spill, an_id_given_to_a_new_rule_starts_at_zero)
{
	struct xrl_rule_counters c;
	unsigned r;
	char cidr[32];

	rules_in_force(N_RULES);
	send_rounds(1, N_RULES, 2);
	make_room_in_first();
	r = rule_where(true);
	cr_assert_gt(total_of(ids[r]), 0);
	snprintf(cidr, sizeof(cidr), "198.18.%u.0/24", r);
	cr_assert_eq(xrl_policy_del(&policy, cidr), 0);
	fixture_rule(&policy, "198.19.0.0/24", XRL_ACTION_LIMIT, 1, 2, 0, 0);
	policy.rules[policy.n_rules - 1].id = ids[r];
	fixture_apply(&dp, &policy);
	assert_each_id_in_one_map();
	cr_assert_eq(total_of(ids[r]), 0, "the new rule's counts");
	cr_assert_eq(fixture_passes(&dp, "198.19.0.1", 5), 2);
	c = fixture_rule_counters(&dp, ids[r]);
	cr_assert_eq(c.outcome[XRL_RULE_PASSED].packets, 2);
	cr_assert_eq(c.outcome[XRL_RULE_DROPPED].packets, 3);
}

/* CPU 0's passed packets in the entry of @id in map @fd; -1: none. */
static long long passed_in(int fd, __u32 id)
{
	struct xrl_rule_counters values[256];

	if (bpf_map_lookup_elem(fd, &id, values))
		return -1;
	return (long long)values[0].outcome[XRL_RULE_PASSED].packets;
}

/*
 * xrl_rule_counters_make() straight on the maps, with no rule in force
 * but the default: an id's entry stays in the map that holds it, kept
 * or zeroed there, even once the first map has room again; a new id
 * goes to the first map while it has room, to the spill map when not.
 */
Test(rule_spill, an_entry_stays_in_the_map_that_holds_it)
{
	struct xrl_rule_counters values[256] = {}, zeros[256] = {};
	__u32 id;

	cr_assert_leq(libbpf_num_possible_cpus(), 256);
	for (id = 1000; entries(dp.rule_stats_fd) < FIRST; id++)
		cr_assert_eq(xrl_rule_counters_make(&dp, id, zeros, true), 0);
	values[0].outcome[XRL_RULE_PASSED].packets = 7;
	cr_assert_eq(xrl_rule_counters_make(&dp, 2000, values, true), 0);
	cr_assert_eq(passed_in(dp.rule_spill_fd, 2000), 7, "spilled");
	cr_assert_eq(xrl_rule_counters_remove(&dp, 1000), 0);
	cr_assert_eq(passed_in(dp.rule_stats_fd, 1000), -1);

	cr_assert_eq(xrl_rule_counters_make(&dp, 2000, zeros, true), 0);
	cr_assert_eq(passed_in(dp.rule_spill_fd, 2000), 7, "kept");
	cr_assert_eq(passed_in(dp.rule_stats_fd, 2000), -1, "made twice");
	cr_assert_eq(xrl_rule_counters_make(&dp, 2000, zeros, false), 0);
	cr_assert_eq(passed_in(dp.rule_spill_fd, 2000), 0, "zeroed");
	cr_assert_eq(passed_in(dp.rule_stats_fd, 2000), -1, "made twice");

	cr_assert_eq(xrl_rule_counters_make(&dp, 2001, values, true), 0);
	cr_assert_eq(passed_in(dp.rule_stats_fd, 2001), 7, "the room used");
	cr_assert_eq(xrl_rule_counters_lookup(&dp, 2000, values), 0);
	cr_assert_eq(xrl_rule_counters_remove(&dp, 2000), 0);
	cr_assert_eq(xrl_rule_counters_lookup(&dp, 2000, values), -ENOENT);
	cr_assert_eq(xrl_rule_counters_remove(&dp, 2000), 0, "none is no error");
}

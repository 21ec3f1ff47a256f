// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A CPU's copies of the rules its known sources are bound to, and the
 * counters they hold (bpf/rule_cache.h; include/xrl.h, struct
 * xrl_rule_copy): a swap's new rule judges the next packet, rules that
 * share a way keep their own limits and counts, an id given to a new
 * rule starts its counts at zero, and a reader's counts never go down
 * or miss a packet while two rules take turns in a way.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "fixture.h"
#include "loader.h"
#include "metrics.h"
#include "metrics_collect.h"
#include "stats.h"

static struct xrl_datapath dp;
static struct xrl_policy policy;

/* The copies are per CPU: every test judges its packets on one. */
static void pin_to(int cpu)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	cr_assert_eq(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
}

static void setup(void)
{
	pin_to(0);
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(rule_copies, .init = setup, .fini = teardown);


static uint64_t rule_packets(uint32_t id, enum xrl_rule_outcome outcome)
{
	return fixture_rule_counters(&dp, id).outcome[outcome].packets;
}

/*
 * Rule a, 63 fillers, rule b: ids a and b share a way (XRL_RULE_CACHE_WAYS
 * apart). Returns a's id; b's is a + XRL_RULE_CACHE_WAYS.
 */
static uint32_t rules_sharing_a_way(uint64_t burst_a, uint64_t burst_b)
{
	uint32_t id_a, id_b;
	char cidr[32];
	unsigned i;

	id_a = fixture_rule(&policy, "198.18.0.0/17", XRL_ACTION_LIMIT, 1,
			    burst_a, 0, 0);
	for (i = 0; i < XRL_RULE_CACHE_WAYS - 1; i++) {
		snprintf(cidr, sizeof(cidr), "198.19.%u.0/24", i);
		fixture_rule(&policy, cidr, XRL_ACTION_LIMIT, 1, 10, 0, 0);
	}
	id_b = fixture_rule(&policy, "198.18.128.0/17", XRL_ACTION_LIMIT, 1,
			    burst_b, 0, 0);
	cr_assert_eq(id_b - id_a, XRL_RULE_CACHE_WAYS,
		     "ids %u and %u share no way", id_a, id_b);
	fixture_apply(&dp, &policy);
	return id_a;
}

/*
 * A swap that changes a kept rule's action (same id, same prefix, same
 * bucket): the source's next packet is judged by the new rule, not by
 * the CPU's copy of the old one, and counted on.
 */
Test(rule_copies, a_swap_changing_a_kept_rule_judges_the_next_packet_by_it)
{
	uint32_t limited;
	size_t i;

	limited = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1,
			       3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);
	for (i = 0; i < policy.n_rules; i++)
		if (policy.rules[i].id == limited)
			policy.rules[i].action = XRL_ACTION_MONITOR;
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 4), 4, "judged by the old rule");
	cr_assert_eq(rule_packets(limited, XRL_RULE_PASSED), 3);
	cr_assert_eq(rule_packets(limited, XRL_RULE_DROPPED), 2 + 4,
		     "the monitor rule counts what it would have dropped");
}

/* Packets of two rules sharing a way, interleaved: each judged by its
 * own rule, each counted to its own rule, read exact after every one. */
Test(rule_copies, rules_sharing_a_way_keep_their_own_limits_and_counts)
{
	unsigned i, passed_a = 0, passed_b = 0;
	uint32_t id_a = rules_sharing_a_way(3, 6);
	uint32_t id_b = id_a + XRL_RULE_CACHE_WAYS;

	for (i = 1; i <= 8; i++) {
		passed_a += fixture_passes(&dp, "198.18.1.1", 1);
		cr_assert_eq(rule_packets(id_a, XRL_RULE_PASSED), passed_a);
		cr_assert_eq(rule_packets(id_a, XRL_RULE_DROPPED), i - passed_a);
		passed_b += fixture_passes(&dp, "198.18.129.1", 1);
		cr_assert_eq(rule_packets(id_b, XRL_RULE_PASSED), passed_b);
		cr_assert_eq(rule_packets(id_b, XRL_RULE_DROPPED), i - passed_b);
	}
	cr_assert_eq(passed_a, 3, "rule a's burst");
	cr_assert_eq(passed_b, 6, "rule b's burst");
}

/* /metrics reads the copies as a rule's read does. */
Test(rule_copies, metrics_count_what_the_copies_hold)
{
	uint32_t id_a = rules_sharing_a_way(3, 6);
	struct xrl_metrics m = { .tracked_sources = -1 };
	struct xrl_metrics_rule rules[2] = {
		{ .id = id_a }, { .id = id_a + XRL_RULE_CACHE_WAYS },
	};

	fixture_passes(&dp, "198.18.1.1", 5);
	fixture_passes(&dp, "198.18.129.1", 9);
	fixture_passes(&dp, "198.18.1.2", 2);	/* rule a's copy is back in the way */
	m.rules = rules;
	m.n_rules = 2;
	cr_assert_eq(xrl_metrics_collect(&dp, &m), 0);
	cr_assert_eq(rules[0].counters.outcome[XRL_RULE_PASSED].packets, 3 + 2);
	cr_assert_eq(rules[0].counters.outcome[XRL_RULE_DROPPED].packets, 2);
	cr_assert_eq(rules[1].counters.outcome[XRL_RULE_PASSED].packets, 6);
	cr_assert_eq(rules[1].counters.outcome[XRL_RULE_DROPPED].packets, 3);
}

/*
 * Rule 198.18.0.0/24 is deleted and a new rule, 198.18.0.0/16, takes its
 * id: the CPU's way still holds the old rule's counts, which must not
 * become the new rule's.
 */
Test(rule_copies, a_reused_id_starts_its_counts_at_zero)
{
	uint32_t old_id;

	old_id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1,
			      3, 0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);
	cr_assert_eq(rule_packets(old_id, XRL_RULE_PASSED), 3);

	cr_assert_eq(xrl_policy_del(&policy, "198.18.0.0/24"), 0);
	fixture_rule(&policy, "198.18.0.0/16", XRL_ACTION_LIMIT, 1, 4, 0, 0);
	policy.rules[policy.n_rules - 1].id = old_id;
	fixture_apply(&dp, &policy);
	cr_assert_eq(rule_packets(old_id, XRL_RULE_PASSED), 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 6), 4);
	cr_assert_eq(rule_packets(old_id, XRL_RULE_PASSED), 4);
	cr_assert_eq(rule_packets(old_id, XRL_RULE_DROPPED), 2);
}

/* A sender on one CPU alternating between two rules of one way: every
 * packet moves the way's counters from one rule to the other. */
struct turns {
	pthread_t thread;
	int cpu;
	unsigned n;		/* packets of each rule */
	atomic_uint sent;	/* packets of rule a judged so far */
	atomic_bool failed;
};

static void *take_turns(void *arg)
{
	struct turns *t = arg;
	struct packet a, b;
	cpu_set_t cpus;
	unsigned i;

	CPU_ZERO(&cpus);
	CPU_SET(t->cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) ||
	    packet_from(&a, "198.18.1.1") || packet_from(&b, "198.18.129.1")) {
		atomic_store(&t->failed, true);
		return NULL;
	}
	for (i = 0; i < t->n; i++) {
		if (fixture_run(&dp, &a) != XDP_PASS ||
		    fixture_run(&dp, &b) != XDP_PASS) {
			atomic_store(&t->failed, true);
			return NULL;
		}
		atomic_fetch_add(&t->sent, 1);
	}
	return NULL;
}

/*
 * While the sender's two rules take turns in their way on one CPU, a
 * reader on another reads rule a again and again: its count never goes
 * down, never passes what was sent, and ends exact.
 */
Test(rule_copies, a_read_while_two_rules_take_turns_in_a_way_is_exact,
     .timeout = 120)
{
	uint32_t id_a = rules_sharing_a_way(1000000, 1000000);
	struct turns t = { .n = 20000 };
	uint64_t seen = 0, now, reads = 0;
	unsigned sent;

	t.cpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	cr_assert_eq(pthread_create(&t.thread, NULL, take_turns, &t), 0);
	do {
		sent = atomic_load(&t.sent);
		now = rule_packets(id_a, XRL_RULE_PASSED);
		cr_assert_geq(now, seen, "read %lu after %lu", (unsigned long)now,
			      (unsigned long)seen);
		cr_assert_leq(now, (uint64_t)atomic_load(&t.sent) + 1,
			      "read %lu of %u sent", (unsigned long)now, sent);
		seen = now;
		reads++;
	} while (sent < t.n && !atomic_load(&t.failed));
	pthread_join(t.thread, NULL);
	cr_assert(!atomic_load(&t.failed), "the sender failed");
	cr_assert_eq(rule_packets(id_a, XRL_RULE_PASSED), t.n);
	cr_assert_eq(rule_packets(id_a + XRL_RULE_CACHE_WAYS, XRL_RULE_PASSED),
		     t.n);
	cr_assert_gt(reads, 10, "only %lu reads", (unsigned long)reads);
}

/*
 * A rule out of the policy for one swap and back as it was (same id,
 * prefix and match) keeps its since, so the counts its CPU's way still
 * holds are its own: they count on, as its xrl_rule_stats entry does.
 */
Test(rule_copies, a_rule_back_after_a_swap_away_counts_on)
{
	uint32_t id;

	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1, 3, 0,
			  0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);

	cr_assert_eq(xrl_policy_del(&policy, "198.18.0.0/24"), 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 2), 2, "the default rule's");
	cr_assert_eq(rule_packets(id, XRL_RULE_PASSED), 3, "while away");

	fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1, 3, 0, 0);
	policy.rules[policy.n_rules - 1].id = id;
	fixture_apply(&dp, &policy);
	cr_assert_eq(rule_packets(id, XRL_RULE_PASSED), 3);
	cr_assert_eq(rule_packets(id, XRL_RULE_DROPPED), 2);
	fixture_passes(&dp, "198.18.0.1", 4);
	cr_assert_eq(rule_packets(id, XRL_RULE_PASSED) +
		     rule_packets(id, XRL_RULE_DROPPED), 5 + 4);
}

/*
 * A process that adopted the pins (the CLI, a restarted daemon) finds
 * the copies through the program, unpinned (64 values a CPU are for
 * readers, not for a bpftool dump), and reads what they hold.
 */
Test(rule_copies, a_reader_of_the_pins_reads_what_the_copies_hold)
{
	uint32_t id_a = rules_sharing_a_way(3, 6);
	struct xrl_rule_counters counts;
	struct xrl_datapath adopted;
	bool pinned, found = false;
	char dir[64], path[96];
	int ret;

	fixture_passes(&dp, "198.18.1.1", 5);
	fixture_passes(&dp, "198.18.129.1", 9);
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/xrl-test-copies-%d", getpid());
	cr_assert_eq(xrl_datapath_pin(&dp, dir), 0, "pinning in %s", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, XRL_MAP_RULE_CACHE);
	pinned = !access(path, F_OK);
	ret = xrl_datapath_open_pinned(&adopted, dir);
	if (!ret) {
		found = adopted.rule_cache_fd >= 0;
		/* Rule b took the way last: its counts are in the copies. */
		ret = xrl_rule_stats_read(&adopted,
					  id_a + XRL_RULE_CACHE_WAYS, &counts);
		xrl_datapath_close(&adopted);
	}
	cr_assert_eq(xrl_datapath_unpin(&dp), 0);
	rmdir(dir);
	cr_assert_eq(ret, 0, "adopting and reading: %s", strerror(-ret));
	cr_expect(!pinned, "%s is pinned", path);
	cr_expect(found, "no copies found through the program");
	cr_assert_eq(counts.outcome[XRL_RULE_PASSED].packets, 6);
	cr_assert_eq(counts.outcome[XRL_RULE_DROPPED].packets, 3);
}

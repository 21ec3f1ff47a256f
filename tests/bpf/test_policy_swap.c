// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Settings swap with the rules: a packet is judged by one policy whole,
 * rules and settings, however the swaps and the packets interleave, and
 * a daemon killed at any instant leaves one whole policy in force.
 *
 * The two policies differ in rules and in every setting a verdict can
 * show, so that a packet judged by the rules of one and the settings of
 * the other leaves a bucket neither could make:
 *
 *   A: rule fd00::/16 (id RULE_A), IPv6 keys /64, no new-source budget,
 *      malformed frames passed
 *   B: rule fd00::/8 (id RULE_B), IPv6 keys /32 (IPv4 /16), the derived
 *      budget with unknown_sources: drop, malformed frames dropped
 *
 * Sources are fd00:0:X:Y:: with X:Y never 0 (bpf/test_flood.bpf.c), so
 * A makes buckets (fd00:0:X:Y::, RULE_A) and B the one (fd00::, RULE_B);
 * B's rule under A's settings would key (fd00:0:X:Y::, RULE_B), A's rule
 * under B's settings (fd00::, RULE_A) or a drop of an unknown source.
 * Both limits admit everything, so every packet must pass.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cpu_pool.h"
#include "fixture.h"
#include "loader.h"
#include "policy_map.h"
#include "stats.h"
#include "test_flood.skel.h"

#define RULE_A		1
#define RULE_B		2
#define SWAPS		((int)fixture_scaled(1000, 20))	/* by $XRL_TEST_SCALE */
#define REPEAT		2000	/* packets per test run of a worker */
#define SOURCES_MAX	50000	/* distinct sources before they repeat */
#define KILLS		((int)fixture_scaled(100, 10))	/* by $XRL_TEST_SCALE */
#define HUGE_RATE	1000000000000ULL
#define HUGE_BURST	(1ULL << 32)

static struct xrl_datapath dp;
static struct xrl_policy policy_a, policy_b;
static struct test_flood_bpf *flood;
static struct cpu_pool pool;

static void rule(struct xrl_policy *policy, const char *cidr, uint32_t id)
{
	fixture_rule(policy, cidr, XRL_ACTION_LIMIT, HUGE_RATE, HUGE_BURST,
		     0, 0);
	policy->rules[policy->n_rules - 1].id = id;
}

static void setup(void)
{
	__u32 slot = 0;
	int target;

	fixture_load(&dp, 1 << 18);
	cr_assert_eq(xrl_policy_init(&policy_a), 0);
	policy_a.v6_prefix = 64;
	policy_a.new_sources_off = true;
	policy_a.malformed = XRL_MALFORMED_PASS;
	rule(&policy_a, "fd00::/16", RULE_A);

	cr_assert_eq(xrl_policy_init(&policy_b), 0);
	policy_b.v4_prefix = 16;
	policy_b.v6_prefix = 32;
	policy_b.unknown = XRL_UNKNOWN_DROP;
	policy_b.malformed = XRL_MALFORMED_DROP;
	rule(&policy_b, "fd00::/8", RULE_B);

	flood = test_flood_bpf__open_and_load();
	cr_assert_not_null(flood, "loading the flood wrapper");
	flood->bss->next_source = 1;
	/* Sources repeat in the program itself, however slow an apply is,
	 * so the table never evicts a bucket. */
	flood->bss->source_span = SOURCES_MAX;
	target = dp.prog_fd;
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(flood->maps.flood_target),
					 &slot, &target, 0), 0);
}

static void teardown(void)
{
	cpu_pool_stop(&pool);
	test_flood_bpf__destroy(flood);
	xrl_policy_free(&policy_a);
	xrl_policy_free(&policy_b);
	xrl_datapath_close(&dp);
}

TestSuite(policy_swap, .init = setup, .fini = teardown, .timeout = 300);

/* Which whole policy a bucket belongs to: 'A', 'B' or 0 for none. Its
 * rule is the one it was classified to (struct xrl_bucket). */
static char bucket_policy(const struct xrl_bucket_key *key,
			  const struct xrl_bucket *bucket)
{
	static const __u8 zero[16];
	bool host_bits = memcmp(key->addr + 4, zero, 4) != 0;

	if (key->addr[0] != 0xfd || memcmp(key->addr + 1, zero, 3) ||
	    memcmp(key->addr + 8, zero, 8))
		return 0;
	if (key->tag != XRL_FAMILY_IPV6)
		return 0;
	if (XRL_BUCKET_RULE(bucket->rule_id) == RULE_A && host_bits)
		return 'A';
	if (XRL_BUCKET_RULE(bucket->rule_id) == RULE_B && !host_bits)
		return 'B';
	return 0;
}

/* Every bucket is one of a whole policy; counts them per policy. */
static void expect_whole_buckets(uint64_t *n_a, uint64_t *n_b)
{
	struct xrl_bucket_key key, next;
	struct xrl_bucket bucket;
	void *prev = NULL;
	char owner;

	*n_a = *n_b = 0;
	while (!bpf_map_get_next_key(dp.buckets_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(dp.buckets_fd, &key, &bucket))
			continue;
		owner = bucket_policy(&key, &bucket);
		cr_expect_neq(owner, 0, "bucket of rule %u keyed %02x%02x:"
			      "%02x%02x:%02x%02x:%02x%02x:: belongs to no "
			      "whole policy", bucket.rule_id, key.addr[0],
			      key.addr[1], key.addr[2], key.addr[3],
			      key.addr[4], key.addr[5], key.addr[6],
			      key.addr[7]);
		*(owner == 'B' ? n_b : n_a) += 1;
	}
}

static void apply(const struct xrl_policy *policy)
{
	fixture_apply(&dp, policy);
}

Test(policy_swap, every_packet_is_judged_by_one_whole_policy)
{
	uint64_t n_a, n_b, passed_a, passed_b, total;
	struct xrl_table_counters table;
	struct packet pkt;
	int i, swap;

	cr_assert_eq(packet_from(&pkt, "fd00::"), 0);
	apply(&policy_a);
	cpu_pool_start(&pool, &dp);
	for (i = 0; i < CPU_POOL_SIZE; i++) {
		pool.workers[i].pkt = pkt;
		pool.workers[i].prog_fd =
			bpf_program__fd(flood->progs.test_flood);
		pool.workers[i].runs = UINT32_MAX;
		pool.workers[i].repeat = REPEAT;
	}
	cpu_pool_begin(&pool);
	for (swap = 0; swap < SWAPS; swap++)
		apply(swap % 2 ? &policy_a : &policy_b);
	cpu_pool_end(&pool, true);

	/* Every bucket ever made is still there to be looked at. */
	cr_assert_eq(xrl_table_stats_read(&dp, &table), 0);
	expect_whole_buckets(&n_a, &n_b);
	cr_assert_eq(table.events[XRL_TABLE_INSERT], n_a + n_b,
		     "buckets were evicted");
	cr_expect_gt(n_a, 0, "no packet was judged by policy A");
	cr_expect_eq(n_b, 1, "policy B keys every source to one bucket");
	passed_a = fixture_rule_counters(&dp, RULE_A)
		.outcome[XRL_RULE_PASSED].packets;
	passed_b = fixture_rule_counters(&dp, RULE_B)
		.outcome[XRL_RULE_PASSED].packets;
	total = fixture_count(&dp, XRL_VERDICT_PASS);
	cr_log_info("%d swaps, %lu packets judged: %lu by A (%lu buckets), "
		    "%lu by B", SWAPS, total, passed_a, n_a, passed_b);
	cr_expect_gt(passed_b, 0, "no packet was judged by policy B");
	cr_expect_eq(passed_a + passed_b, total);
	cr_expect_eq(fixture_rule_counters(&dp, RULE_A)
		     .outcome[XRL_RULE_DROPPED].packets, 0);
	cr_expect_eq(fixture_rule_counters(&dp, RULE_B)
		     .outcome[XRL_RULE_DROPPED].packets, 0);
	for (i = 0; i < XRL_VERDICT_COUNT; i++)
		if (i != XRL_VERDICT_PASS)
			cr_expect_eq(fixture_count(&dp, i), 0,
				     "verdict %d counted", i);
}

/* The bucket a packet from @src makes under policy A or B. */
static void judge_one(const char *src, const char *key_a, const char *key_b,
		      char whole)
{
	struct xrl_bucket bucket;
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	cr_expect_eq(fixture_bucket(&dp, key_a, RULE_A, &bucket),
		     whole == 'A' ? 0 : -ENOENT, "policy %c, bucket %s", whole,
		     key_a);
	cr_expect_eq(fixture_bucket(&dp, key_b, RULE_B, &bucket),
		     whole == 'B' ? 0 : -ENOENT, "policy %c, bucket %s", whole,
		     key_b);
}

/* What a malformed frame gets: passed under A, dropped under B. */
static int malformed_verdict(void)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, "fd00::1"), 0);
	return fixture_run_prefix(&dp, &pkt, packet_ip_offset(0) + 20);
}

/*
 * An apply stopped before its last step, as a daemon killed there would
 * leave it: the rules and the head of B are built in the slot A does not
 * use, and A is still in force, whole. The next apply (a restarted
 * daemon's) puts B in force, whole.
 */
Test(policy_swap, an_apply_stopped_before_its_swap_leaves_the_old_policy_whole)
{
	struct xrl_staged_policy staged;
	char err[256] = "";

	apply(&policy_a);
	cr_assert_eq(xrl_policy_stage(&dp, &policy_b, &staged, err,
				      sizeof(err)), 0, "%s", err);
	judge_one("fd00:0:1:2::", "fd00:0:1:2::", "fd00::", 'A');
	cr_expect_eq(malformed_verdict(), XDP_PASS);
	cr_expect_eq(xrl_policy_matches_map(&dp, &policy_a), 0);
	xrl_policy_unstage(&staged);

	judge_one("fd00:0:1:3::", "fd00:0:1:3::", "fd00::", 'A');
	apply(&policy_b);
	cr_expect_eq(xrl_policy_matches_map(&dp, &policy_b), 0);
	judge_one("fd00:0:2:4::", "fd00:0:2:4::", "fd00::", 'B');
	cr_expect_eq(malformed_verdict(), XDP_DROP);
}

/*
 * A process applying A and B in turn is killed at a random instant, a
 * hundred times; each time the data path holds A or B whole (its head's
 * settings and the rules in the slot the head names, as the program
 * reads them). The child inherits the data path's descriptors.
 */
Test(policy_swap, a_daemon_killed_at_any_instant_leaves_one_whole_policy)
{
	unsigned seed = getpid(), in_a = 0, in_b = 0;
	char err[256], ready;
	int i, status, sync[2];
	pid_t pid;

	apply(&policy_a);
	for (i = 0; i < KILLS; i++) {
		cr_assert_eq(pipe(sync), 0);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			close(sync[0]);
			for (;;) {
				xrl_policy_apply(&dp, &policy_b, err,
						 sizeof(err));
				if (sync[1] >= 0) {
					(void)!write(sync[1], "", 1);
					close(sync[1]);
					sync[1] = -1;
				}
				xrl_policy_apply(&dp, &policy_a, err,
						 sizeof(err));
			}
		}
		close(sync[1]);
		cr_assert_eq(read(sync[0], &ready, 1), 1);
		close(sync[0]);
		usleep(rand_r(&seed) % 20000);
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		if (!xrl_policy_matches_map(&dp, &policy_a))
			in_a++;
		else if (!xrl_policy_matches_map(&dp, &policy_b))
			in_b++;
		else
			cr_assert_fail("kill %d left neither policy whole", i);
	}
	cr_log_info("%d kills: A whole in force %u times, B %u", KILLS, in_a,
		    in_b);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The refusal tally (include/xrl.h, struct xrl_refusal_tally): a flood of
 * one source writes its offender record once per XRL_TALLY_NS per CPU,
 * and every count read stays exact meanwhile. Test clock throughout.
 */
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include "bucket.h"
#include "fixture.h"
#include "loader.h"

static struct xrl_datapath dp;
static struct xrl_policy policy;
static uint32_t rule_id;

static void setup(void)
{
	cpu_set_t one;

	/* The tally is per CPU: every packet from CPU 0 unless a test
	 * moves. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	fixture_load(&dp, 4096);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	/* 10 pps, burst 5: a packet every 100 ms, far apart from 1 ms. */
	rule_id = fixture_rule(&policy, NULL, XRL_ACTION_LIMIT, 10, 5, 0, 0);
	fixture_apply(&dp, &policy);
}

static void teardown(void)
{
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(tally, .init = setup, .fini = teardown);

static void on_cpu(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
}

/* The dropped count the record itself holds, tallies not added. */
static __u64 record_dropped(const char *addr)
{
	struct xrl_bucket_key key = { .tag = XRL_FAMILY_IPV4 };
	struct xrl_offender off;

	key.addr[10] = key.addr[11] = 0xff;
	cr_assert_eq(inet_pton(AF_INET, addr, key.addr + 12), 1);
	cr_assert_eq(bpf_map_lookup_elem(dp.offenders_fd, &key, &off), 0,
		     "no record of %s", addr);
	return off.dropped;
}

static __u64 counted_dropped(const char *addr)
{
	return fixture_source_counts(&dp, addr, rule_id).dropped;
}

static void flood(const struct packet *pkt, __u64 t, unsigned n)
{
	xrl_datapath_set_time(&dp, t);
	cr_assert_eq(fixture_offer(&dp, pkt, n), XDP_DROP);
}

Test(tally, a_flood_of_one_source_writes_its_record_once_a_millisecond)
{
	__u64 t = NS_PER_S;
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	xrl_datapath_set_time(&dp, t);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 5);
	flood(&pkt, t, 1000);
	/* The first refusal made the record; the 999 after it are
	 * tallied, and read with it. */
	cr_assert_eq(record_dropped("198.18.0.1"), 1);
	cr_assert_eq(counted_dropped("198.18.0.1"), 1000);
	/* Just before the millisecond is up: still tallied. */
	flood(&pkt, t + XRL_TALLY_NS - 1, 10);
	cr_assert_eq(record_dropped("198.18.0.1"), 1);
	cr_assert_eq(counted_dropped("198.18.0.1"), 1010);
	/* Then the next refusal takes the whole path and carries the
	 * tally into the record. */
	flood(&pkt, t + XRL_TALLY_NS, 1);
	cr_assert_eq(record_dropped("198.18.0.1"), 1011);
	cr_assert_eq(counted_dropped("198.18.0.1"), 1011);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DROP), 1011);
	cr_assert_eq(fixture_rule_counters(&dp, rule_id)
			     .outcome[XRL_RULE_DROPPED].packets, 1011);
}

Test(tally, another_source_refused_moves_the_tally_into_its_record)
{
	struct packet a, b;

	cr_assert_eq(packet_from(&a, "198.18.0.1"), 0);
	cr_assert_eq(packet_from(&b, "198.18.0.2"), 0);
	xrl_datapath_set_time(&dp, NS_PER_S);
	cr_assert_eq(fixture_run_many(&dp, &a, 5), 5);
	cr_assert_eq(fixture_run_many(&dp, &b, 5), 5);
	flood(&a, NS_PER_S, 100);
	cr_assert_eq(record_dropped("198.18.0.1"), 1);
	flood(&b, NS_PER_S, 1);
	cr_assert_eq(record_dropped("198.18.0.1"), 100);
	cr_assert_eq(counted_dropped("198.18.0.1"), 100);
	/* Interleaved, no source stays hot: every refusal is recorded. */
	for (int i = 0; i < 10; i++) {
		flood(&a, NS_PER_S, 1);
		flood(&b, NS_PER_S, 1);
	}
	cr_assert_eq(record_dropped("198.18.0.1"), 110);
	cr_assert_eq(counted_dropped("198.18.0.1"), 110);
	cr_assert_eq(counted_dropped("198.18.0.2"), 11);
}

Test(tally, a_pass_ends_the_tally_so_the_next_refusal_is_recorded)
{
	__u64 t = NS_PER_S;
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	xrl_datapath_set_time(&dp, t);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 5);
	flood(&pkt, t, 50);
	cr_assert_eq(record_dropped("198.18.0.1"), 1);
	/* 100 ms on, one packet is due: it passes, and the refusal right
	 * after it takes the whole path (it reports the source limited
	 * again), carrying the tally. */
	t += 150 * 1000000ULL;
	xrl_datapath_set_time(&dp, t);
	cr_assert_eq(fixture_run(&dp, &pkt), XDP_PASS);
	flood(&pkt, t, 1);
	cr_assert_eq(record_dropped("198.18.0.1"), 51);
	cr_assert_eq(fixture_source_counts(&dp, "198.18.0.1", rule_id).passed, 1);
}

Test(tally, the_tallies_of_two_cpus_add_up)
{
	struct packet pkt;

	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), 2, "needs 2 CPUs");
	cr_assert_eq(packet_from(&pkt, "198.18.0.1"), 0);
	xrl_datapath_set_time(&dp, NS_PER_S);
	cr_assert_eq(fixture_run_many(&dp, &pkt, 5), 5);
	flood(&pkt, NS_PER_S, 300);
	on_cpu(1);
	flood(&pkt, NS_PER_S, 200);
	/* One whole refusal on each CPU; the rest in their tallies. */
	cr_assert_eq(record_dropped("198.18.0.1"), 2);
	cr_assert_eq(counted_dropped("198.18.0.1"), 500);
	on_cpu(0);
	flood(&pkt, NS_PER_S + XRL_TALLY_NS, 1);
	cr_assert_eq(record_dropped("198.18.0.1"), 2 + 299 + 1);
	cr_assert_eq(counted_dropped("198.18.0.1"), 501);
}

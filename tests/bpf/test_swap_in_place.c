// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Swaps in place (user/datapath/rulemaps.c; include/xrl.h, "How a policy
 * is installed"): a swap that changes only numbers keeps every rule's
 * generation, so known sources stay bound and are judged by the new
 * numbers from their next packet (the CPU's copies of rules and levels
 * are made again under each head); a swap that reshapes the policy
 * classifies every source again; and after any sequence of both, the
 * slot in force holds exactly the compiled policy, no entry more, though
 * only what changed was written.
 */
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "compiled.h"
#include "datapath.h"
#include "fixture.h"
#include "loader.h"
#include "mapwalk.h"
#include "policy_map.h"
#include "rulemaps.h"

static struct xrl_datapath dp;
static struct xrl_policy policy;

/* The CPU's copies are per CPU: every packet is judged on one. */
static void setup(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	cr_assert_eq(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_policy_init(&policy), 0);
	policy.new_sources_off = true;
}

/* Pins of a test that adopts them, and the process adopting them:
 * removed here, so that a failing test leaves none behind. */
static char pin_dir[64];
static struct xrl_datapath adopted;
static bool adopted_open;

static void teardown(void)
{
	if (adopted_open)
		xrl_datapath_close(&adopted);
	if (pin_dir[0]) {
		xrl_datapath_unpin(&dp);
		rmdir(pin_dir);
	}
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
}

TestSuite(swap_in_place, .init = setup, .fini = teardown);


static struct xrl_rule_spec *rule_of(uint32_t id)
{
	size_t i;

	for (i = 0; i < policy.n_rules; i++)
		if (policy.rules[i].id == id)
			return &policy.rules[i];
	cr_assert_fail("no rule %u", id);
	return NULL;
}

static uint32_t head_gen(void)
{
	struct xrl_policy_head head;

	cr_assert_eq(xrl_datapath_head(&dp, &head), 0);
	return head.gen;
}

/* The id of the map the outer map @outer_fd holds in the slot in force. */
static uint32_t in_force_map_id(int fd)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	return info.id;
}

static uint32_t classifier_id(void)
{
	return in_force_map_id(xrl_datapath_rules_fd(&dp));
}

/*
 * A source whose bucket a rule's burst emptied; the rule's burst raised
 * by a swap of numbers only: the source is judged at once by the new
 * burst, out of the same bucket (its binding kept, its state too: not
 * classified again, not a fresh bucket), and the rule's counts go on.
 */
Test(swap_in_place, a_swap_of_numbers_keeps_the_binding_and_judges_by_them)
{
	struct xrl_bucket before, after;
	uint32_t id, gen;

	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1, 3, 0,
			  0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", id, &before), 0);
	gen = head_gen();
	rule_of(id)->burst = 10;
	fixture_apply(&dp, &policy);
	cr_assert_eq(head_gen(), gen + 1, "a new head");
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 10), 7,
		     "the new burst, less the 3 the bucket took");
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", id, &after), 0);
	cr_assert_eq(after.gen, before.gen, "the binding moved: classified "
		     "again");
	rule_of(id)->burst = 2;
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 3), 0, "the lower burst at once");
	cr_assert_eq(fixture_rule_counters(&dp, id)
		     .outcome[XRL_RULE_PASSED].packets, 3 + 7);
	cr_assert_eq(fixture_rule_counters(&dp, id)
		     .outcome[XRL_RULE_DROPPED].packets, 2 + 3 + 3);
}

/*
 * Known sources bound to a broad rule through swaps of numbers; then a
 * swap that adds a longer rule inside it (a reshape): the source in the
 * new rule's prefix is judged by it from its next packet, the others
 * stay with the broad rule.
 */
Test(swap_in_place, a_reshape_after_swaps_of_numbers_classifies_again)
{
	uint32_t broad, narrow;
	unsigned swap;

	broad = fixture_rule(&policy, "198.18.0.0/16", XRL_ACTION_LIMIT, 1, 2,
			     0, 0);
	fixture_apply(&dp, &policy);
	for (swap = 0; swap < 3; swap++) {
		cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 1) + fixture_passes(&dp, "198.18.2.1", 1),
			     swap < 2 ? 2 : 0);
		rule_of(broad)->pps = 1 + swap % 2;	/* numbers only */
		fixture_apply(&dp, &policy);
	}
	narrow = fixture_rule(&policy, "198.18.1.0/24", XRL_ACTION_ALLOW, 0, 0,
			      0, 0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 5), 5, "judged by the new rule");
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 5), 0, "still the broad rule's");
	cr_assert_eq(fixture_rule_counters(&dp, narrow)
		     .outcome[XRL_RULE_PASSED].packets, 5);
}

/* A level's numbers changed by a swap: the CPU's copy of the rule's
 * levels is made again, and the next packet meets the new level. */
Test(swap_in_place, a_swap_of_a_levels_numbers_judges_the_next_packet_by_them)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 1, .burst = 10,
		.levels = { { .family = XRL_FAMILY_IPV4, .prefix = 24,
			      .pps = 1, .burst = 4 } },
		.n_levels = 1,
	};
	uint32_t id = fixture_rule_spec(&policy, "198.18.0.0/16", rule);

	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.1", 6), 4, "the /24's burst");
	rule_of(id)->levels[0].burst = 7;
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.2", 6), 3, "the new burst, less 4");
	rule_of(id)->levels[0].burst = 1;
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.1.3", 3), 0);
	cr_assert_eq(fixture_passes(&dp, "198.18.2.1", 3), 1, "another /24: burst 1");
}

/* ---- what the slot in force holds, against the policy compiled ---- */

static void expect_entry(int fd, const void *key, const struct xrl_rule *want,
			 uint32_t gen, const char *what, size_t at)
{
	union xrl_classifier_value got;
	struct xrl_rule norm = *want;

	cr_assert_eq(bpf_map_lookup_elem(fd, key, &got), 0,
		     "%s %zu: missing", what, at);
	cr_assert_eq(got.rule.gen, gen, "%s %zu: generation %u, not the "
		     "rules' %u", what, at, got.rule.gen, gen);
	norm.gen = got.rule.gen;
	norm.since = got.rule.since;
	cr_assert_eq(memcmp(&norm, &got.rule, sizeof(norm)), 0,
		     "%s %zu (rule %u): not the compiled value", what, at,
		     want->id);
}

/*
 * Every entry of the table and the classifier in force is the compiled
 * @policy's (generations aside: all one, the rules'), and there are no
 * more of them than it has; the meta names the head's generation.
 */
static void expect_slot_holds_policy(void)
{
	struct xrl_compile_input in = {
		.gen = 1, .max_sources = xrl_datapath_max_sources(&dp),
		.n_cpus = xrl_datapath_cpus(),
	};
	struct xrl_compiled c;
	union xrl_classifier_value meta;
	int rules_fd, table_fd;
	char err[256];
	uint32_t gen = 0;
	size_t i;

	cr_assert_eq(xrl_policy_compile(&policy, &in, &c, err, sizeof(err)), 0,
		     "%s", err);
	rules_fd = xrl_datapath_rules_fd(&dp);
	table_fd = xrl_rules_table_open(&dp);
	cr_assert_geq(rules_fd, 0);
	cr_assert_geq(table_fd, 0);
	cr_assert_eq(xrl_map_count(rules_fd, sizeof(struct xrl_rule_key)),
		     (long)c.n, "classifier entries");
	cr_assert_eq(xrl_map_count(table_fd, sizeof(__u32)), (long)c.n_rules,
		     "table entries");
	for (i = 0; i < c.n; i++) {
		if (c.keys[i].family == XRL_KEY_META) {
			cr_assert_eq(bpf_map_lookup_elem(rules_fd, &c.keys[i],
							 &meta), 0);
			cr_assert_eq(meta.meta.gen, head_gen());
			meta.meta.gen = c.values[i].meta.gen;
			cr_assert_eq(memcmp(&meta.meta, &c.values[i].meta,
					    sizeof(meta.meta)), 0, "meta");
			continue;
		}
		if (!gen) {
			cr_assert_eq(bpf_map_lookup_elem(rules_fd, &c.keys[i],
							 &meta), 0);
			gen = meta.rule.gen;
		}
		expect_entry(rules_fd, &c.keys[i], &c.values[i].rule, gen,
			     "classifier entry", i);
	}
	for (i = 0; i < c.n_rules; i++)
		expect_entry(table_fd, &c.ids[i], &c.rules[i], gen,
			     "table entry", i);
	close(rules_fd);
	close(table_fd);
	xrl_compiled_free(&c);
}

static uint32_t l4_rule(const char *cidr, __u8 proto, __u16 dport)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 100, .burst = 10,
		.match = { .proto = proto, .flags = XRL_MATCH_DPORT,
			   .dport_lo = dport, .dport_hi = dport },
	};

	return fixture_rule_spec(&policy, cidr, rule);
}

/* A policy of every kind of entry: plain rules, a chain of two L4
 * rules and a plain one at one prefix, a rule with two levels, a rule
 * longer than the source key (a split marker). */
static void varied_policy(uint32_t *ids, size_t *n)
{
	struct xrl_rule_spec levels = {
		.action = XRL_ACTION_LIMIT, .pps = 50, .burst = 10,
		.levels = { { .family = XRL_FAMILY_IPV4, .prefix = 24,
			      .pps = 100, .burst = 20 },
			    { .family = XRL_FAMILY_IPV4, .prefix = 20,
			      .pps = 500, .burst = 40 } },
		.n_levels = 2,
	};
	char cidr[32];
	unsigned i;

	*n = 0;
	for (i = 0; i < 40; i++) {
		snprintf(cidr, sizeof(cidr), "198.19.%u.0/24", i);
		ids[(*n)++] = fixture_rule(&policy, cidr, XRL_ACTION_LIMIT,
					   10 + i, 5, 0, 0);
	}
	ids[(*n)++] = l4_rule("198.18.0.0/24", IPPROTO_UDP, 53);
	ids[(*n)++] = l4_rule("198.18.0.0/24", IPPROTO_TCP, 22);
	ids[(*n)++] = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT,
				   7, 3, 0, 0);
	ids[(*n)++] = fixture_rule_spec(&policy, "198.18.64.0/18", levels);
	ids[(*n)++] = fixture_rule(&policy, "198.18.200.0/30",
				   XRL_ACTION_LIMIT, 9, 4, 0, 0);
}

/*
 * Thirty swaps, seeded: most change only numbers (rates, bursts, a
 * level's limits) of a few rules, which after two of them in a row are
 * written in place into the slot's own maps (the map stays the same
 * one); every fifth reshapes (adds a rule, or takes the last added
 * away), which writes new maps. After each, the slot in force holds the
 * policy exactly.
 */
Test(swap_in_place, any_sequence_of_swaps_leaves_the_slot_holding_the_policy,
     .timeout = 120)
{
	uint32_t ids[64], map_ids[32] = { 0 };
	unsigned swap, k, added = 0, in_place = 0;
	size_t n;
	char cidr[32];
	uint64_t seed = 0x5eed;

	policy.v4_prefix = 24;	/* the /30 splits its /24 */
	varied_policy(ids, &n);
	fixture_apply(&dp, &policy);
	expect_slot_holds_policy();
	map_ids[0] = classifier_id();
	for (swap = 1; swap < 31; swap++) {
		bool reshape = swap % 5 == 0;

		if (reshape && added && swap % 10 == 0) {
			policy.n_rules--;	/* the last added away */
			added--;
		} else if (reshape) {
			snprintf(cidr, sizeof(cidr), "198.18.%u.0/24",
				 100 + added++);
			fixture_rule(&policy, cidr, XRL_ACTION_LIMIT, 3, 3, 0,
				     0);
		}
		for (k = 0; !reshape && k < 3; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			rule_of(ids[(seed >> 33) % n])->pps = 1 + (seed >> 40) % 1000;
			rule_of(ids[(seed >> 20) % n])->burst = 1 + (seed >> 50) % 64;
		}
		if (!reshape && swap % 3 == 0)
			rule_of(ids[n - 2])->levels[swap % 2].pps += swap;
		fixture_apply(&dp, &policy);
		expect_slot_holds_policy();
		map_ids[swap] = classifier_id();
		/* Two swaps of numbers in a row after a reshape: the slot's
		 * own maps again, written in place. */
		if (swap >= 2 && swap % 5 >= 2) {
			cr_assert_eq(map_ids[swap], map_ids[swap - 2],
				     "swap %u wrote new maps", swap);
			in_place++;
		} else if (swap % 5 == 0) {
			cr_assert_neq(map_ids[swap], map_ids[swap - 2],
				      "swap %u, a reshape, in place", swap);
		}
	}
	cr_assert_eq(in_place, 18);
}

/*
 * Two processes applying by turns (a daemon and a restarted one, or the
 * CLI): one that adopted the pins keeps the installer's bindings through
 * its swaps of numbers, and neither writes in place into maps the other
 * replaced (each finds the policy in force is not the one it applied
 * last, and reads it back). After every swap the slot in force holds the
 * policy exactly, and the source is judged by the rule's numbers then.
 */
Test(swap_in_place, processes_applying_by_turns_keep_the_slot_whole)
{
	static const uint64_t bursts[] = { 5, 7, 9, 11, 13, 15, 17, 19 };
	struct xrl_bucket first, now;
	struct xrl_datapath *by;
	char err[256];
	unsigned swap, passed = 3;
	uint32_t id;
	int ret;

	id = fixture_rule(&policy, "198.18.0.0/24", XRL_ACTION_LIMIT, 1, 3, 0,
			  0);
	fixture_apply(&dp, &policy);
	cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 5), 3);
	cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", id, &first), 0);
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/xrl-test-inplace-%d",
		 getpid());
	cr_assert_eq(xrl_datapath_pin(&dp, pin_dir), 0, "pinning in %s",
		     pin_dir);
	ret = xrl_datapath_open_pinned(&adopted, pin_dir);
	cr_assert_eq(ret, 0, "adopting: %s", strerror(-ret));
	adopted_open = true;
	for (swap = 0; swap < 8; swap++) {
		/* Two swaps each, by turns: 0-1 adopted, 2-3 installer... */
		by = swap / 2 % 2 ? &dp : &adopted;
		rule_of(id)->burst = bursts[swap];
		ret = xrl_policy_apply(by, &policy, err, sizeof(err));
		cr_assert_eq(ret, 0, "swap %u: %s", swap, err);
		expect_slot_holds_policy();
		cr_assert_eq(fixture_passes(&dp, "198.18.0.1", 3), 2, "swap %u: the burst "
			     "of %llu, less the %u taken", swap,
			     (unsigned long long)bursts[swap], passed);
		passed += 2;
		cr_assert_eq(fixture_bucket(&dp, "198.18.0.1", id, &now), 0);
		cr_assert_eq(now.gen, first.gen, "swap %u: bound again", swap);
	}
}

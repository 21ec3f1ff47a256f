// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One policy lifecycle, seen from the maps: a change applies whole or
 * leaves everything in force as it was. The case that broke it: a policy
 * of XRL_MAX_AGGREGATES aggregate rules, one of them replaced by a
 * reload. The replacement's shares must be written without rewriting
 * any share in force, and a policy one aggregate too many must be
 * refused with every rule, setting and share left byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include "cidr.h"
#include "daemon.h"
#include "rulemaps.h"
#include "fixture.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(lifecycle, .init = setup, .fini = teardown, .timeout = 240);

/* 198.18.0.0/15 in /28s: rule @i of a file. */
static void rule_cidr(unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, "198.%u.%u.%u/28", 18 + i / 4096, i / 16 % 256,
		 i % 16 * 16);
}

/* A policy file of aggregate rules @first..@first+@n-1 but @skip. */
static void write_aggregates(unsigned first, unsigned n, unsigned skip)
{
	size_t cap = 128 * (n + 1), used;
	char *yaml = malloc(cap), cidr[32];
	unsigned i;

	cr_assert_not_null(yaml);
	used = snprintf(yaml, cap, "default:\n  action: allow\nrules:\n");
	for (i = first; i < first + n; i++) {
		if (i == skip)
			continue;
		rule_cidr(i, cidr, sizeof(cidr));
		used += snprintf(yaml + used, cap - used,
				 "  - name: agg-%u\n    cidr: %s\n"
				 "    action: limit\n    scope: aggregate\n"
				 "    pps: 500\n    burst: 500\n",
				 i, cidr);
	}
	env_write(&env, NULL, yaml);
	free(yaml);
}

/* Every share in the map: its id and its per-CPU values, by id. */
struct shares {
	size_t n, value_size;
	__u32 *ids;
	unsigned char *values;
};

static int by_id(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static void read_shares(struct shares *s)
{
	__u32 key, *prev = NULL, prev_key;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->value_size = xrl_datapath_cpus() * sizeof(struct xrl_agg_share);
	s->ids = calloc(XRL_AGG_MAP_ENTRIES, sizeof(*s->ids));
	cr_assert_not_null(s->ids);
	while (!bpf_map_get_next_key(env.dp.agg_shares_fd, prev, &key)) {
		cr_assert_lt(s->n, XRL_AGG_MAP_ENTRIES);
		s->ids[s->n++] = key;
		prev_key = key;
		prev = &prev_key;
	}
	qsort(s->ids, s->n, sizeof(*s->ids), by_id);
	s->values = calloc(s->n ? s->n : 1, s->value_size);
	cr_assert_not_null(s->values);
	for (i = 0; i < s->n; i++)
		cr_assert_eq(bpf_map_lookup_elem(env.dp.agg_shares_fd,
						 &s->ids[i],
						 s->values + i * s->value_size),
			     0);
}

static const unsigned char *share_of(const struct shares *s, __u32 id)
{
	__u32 *found = bsearch(&id, s->ids, s->n, sizeof(id), by_id);

	return found ? s->values + (found - s->ids) * s->value_size : NULL;
}

static void shares_free(struct shares *s)
{
	free(s->ids);
	free(s->values);
}

static __u32 id_of(unsigned i)
{
	struct xrl_lpm_key prefix;
	struct xrl_rule_key key;
	struct xrl_rule rule;
	char cidr[32];
	int fd;

	rule_cidr(i, cidr, sizeof(cidr));
	cr_assert_eq(xrl_cidr_parse(cidr, &prefix), 0);
	xrl_rule_key_of(&prefix, &key);
	fd = xrl_datapath_rules_fd(&env.dp);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bpf_map_lookup_elem(fd, &key, &rule), 0, "%s", cidr);
	close(fd);
	return rule.id;
}

Test(lifecycle, replacing_one_of_4096_aggregates_applies_whole)
{
	struct shares before, after;
	__u32 gone_id, new_id;
	size_t i;

	write_aggregates(0, XRL_MAX_AGGREGATES, ~0u);
	daemon_start(&env, NULL);
	read_shares(&before);
	cr_assert_eq(before.n, XRL_MAX_AGGREGATES);
	gone_id = id_of(0);

	/* Rule 0 goes, rule 4096 comes: 4096 aggregates again. */
	write_aggregates(0, XRL_MAX_AGGREGATES + 1, 0);
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));
	new_id = id_of(XRL_MAX_AGGREGATES);
	read_shares(&after);
	cr_assert_eq(after.n, XRL_MAX_AGGREGATES, "%zu shares", after.n);
	cr_assert_null(share_of(&after, gone_id), "the rule gone has none");
	cr_assert_not_null(share_of(&after, new_id), "the new rule has its");
	for (i = 0; i < before.n; i++) {
		if (before.ids[i] == gone_id)
			continue;
		cr_assert_not_null(share_of(&after, before.ids[i]));
		cr_assert_eq(memcmp(share_of(&after, before.ids[i]),
				    share_of(&before, before.ids[i]),
				    before.value_size),
			     0, "rule id %u: its share changed", before.ids[i]);
	}
	/* The new rule's share is the same even split as the others'. */
	cr_assert_eq(memcmp(share_of(&after, new_id),
			    share_of(&before, before.ids[1]),
			    before.value_size),
		     0);
	shares_free(&before);
	shares_free(&after);
}

Test(lifecycle, one_aggregate_too_many_is_refused_and_nothing_changes)
{
	struct policy_dump policy_before, policy_after;
	struct shares before, after;
	const char *error;

	write_aggregates(0, XRL_MAX_AGGREGATES, ~0u);
	daemon_start(&env, NULL);
	dump_policy(&env, &policy_before);
	read_shares(&before);

	write_aggregates(0, XRL_MAX_AGGREGATES + 1, ~0u);
	error = request_fail(&env, "{\"cmd\":\"reload\"}");
	cr_assert(strstr(error, "4097 aggregate rules, more than the maximum "
				"4096"),
		  "%s", error);
	dump_policy(&env, &policy_after);
	read_shares(&after);
	cr_assert(dump_equal(&policy_before, &policy_after),
		  "the rules and settings in force changed");
	cr_assert_eq(after.n, before.n);
	cr_assert_eq(memcmp(after.ids, before.ids, before.n * sizeof(__u32)),
		     0);
	cr_assert_eq(memcmp(after.values, before.values,
			    before.n * before.value_size),
		     0, "a share in force changed");
	dump_free(&policy_before);
	dump_free(&policy_after);
	shares_free(&before);
	shares_free(&after);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * top tells the truth: a source is listed under the rule and the key
 * prefix that judge it now. Buckets an older policy left (of a rule
 * removed, or keyed under another prefix length) are not listed as if
 * current; the response says how many were passed over.
 */
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
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

TestSuite(top, .init = setup, .fini = teardown, .timeout = 120);

static void offer(const char *src, uint32_t n)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	fixture_run_many(&env.dp, &pkt, n);
}

/* The top list as "source rule dropped;" items, and the stale count. */
static void top(char *buf, size_t len, long *stale)
{
	json_t *resp = request_ok(&env, "{\"cmd\":\"top\",\"n\":10}");
	json_t *entry;
	size_t i, used = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(resp, "top"), i, entry)
		used += snprintf(
			buf + used, len - used, "%s %s %lld;",
			json_string_value(json_object_get(entry, "source")),
			json_string_value(json_object_get(entry, "rule")),
			json_integer_value(json_object_get(entry, "dropped")));
	*stale = json_integer_value(json_object_get(resp, "stale_hidden"));
	json_decref(resp);
}

Test(top, lists_a_source_under_the_rule_and_prefix_that_judge_it_now)
{
	char list[2048];
	long stale;

	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: x\n    cidr: 198.18.200.0/24\n    action: limit\n"
		  "    pps: 1\n    burst: 1\n"
		  "  - name: z\n    cidr: 198.18.202.0/24\n    action: limit\n"
		  "    pps: 1\n    burst: 1\n");
	daemon_start(&env, NULL);
	offer("198.18.200.5", 10);
	offer("198.18.202.7", 5);
	top(list, sizeof(list), &stale);
	cr_assert_str_eq(list, "198.18.200.5/32 x 9;198.18.202.7/32 z 4;");
	cr_assert_eq(stale, 0);

	/* x goes, y comes: 198.18.200.5's bucket is no rule's now. */
	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: y\n    cidr: 198.18.201.0/24\n    action: limit\n"
		  "    pps: 1\n    burst: 1\n"
		  "  - name: z\n    cidr: 198.18.202.0/24\n    action: limit\n"
		  "    pps: 1\n    burst: 1\n");
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));
	top(list, sizeof(list), &stale);
	cr_assert_str_eq(list, "198.18.202.7/32 z 4;");
	cr_assert_eq(stale, 1);

	/* /24 keys now: the /32 bucket of 198.18.202.7 is an older key's;
	 * new drops land in the /24 one. */
	env_write(&env, NULL,
		  "keys:\n  ipv4_prefix: 24\n"
		  "default:\n  action: allow\nrules:\n"
		  "  - name: z\n    cidr: 198.18.202.0/24\n    action: limit\n"
		  "    pps: 1\n    burst: 1\n");
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));
	offer("198.18.202.9", 3);
	top(list, sizeof(list), &stale);
	cr_assert_str_eq(list, "198.18.202.0/24 z 2;");
	cr_assert_eq(stale, 2);

	/* A more specific rule now judges part of z: z's old buckets
	 * there are not shown under z. */
	json_decref(request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
				     "\"198.18.202.0/25\",\"name\":\"zz\","
				     "\"action\":\"allow\"}"));
	top(list, sizeof(list), &stale);
	cr_assert_str_eq(list, "", "%s", list);
	cr_assert_eq(stale, 3);
}

/* A rule's levels keep buckets of subnets: not sources, so top lists
 * neither them nor counts them as stale (docs/POLICY.md "Levels"). */
Test(top, lists_sources_not_the_buckets_of_a_rules_levels)
{
	char list[2048];
	long stale;

	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: tiers\n    cidr: 198.18.210.0/23\n    pps: 1\n"
		  "    burst: 5\n    levels: [{prefix: 24, pps: 1, burst: 6}]\n");
	daemon_start(&env, NULL);
	offer("198.18.210.5", 10);	/* 5 pass, 5 refused by its own */
	offer("198.18.210.6", 10);	/* the /24's last 1, 9 refused */
	top(list, sizeof(list), &stale);
	cr_assert_str_eq(list, "198.18.210.6/32 tiers 9;"
			 "198.18.210.5/32 tiers 5;", "%s", list);
	cr_assert_eq(stale, 0);
}

/* A ban by hand drops before any bucket: top lists it, marked, with what
 * it dropped, among the sources by drops (issue 24 item 3). */
Test(top, lists_a_ban_by_hand_marked_with_what_it_dropped)
{
	static char out[8192];
	char list[2048];
	long stale;

	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.40.0/24\n    pps: 1\n    burst: 1\n");
	daemon_start(&env, NULL);
	offer("198.18.40.1", 4);	/* 3 dropped by its limit */
	cr_assert_eq(env_cli(&env, out, sizeof(out), "ban 198.18.41.0/24",
			     true), 0, "%s", out);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "ban fd00:41::/48 "
			     "--for 1h", true), 0, "%s", out);
	offer("198.18.41.7", 5);
	offer("fd00:41::1", 1);
	top(list, sizeof(list), &stale);
	cr_assert_str_eq(list, "198.18.41.0/24 (null) 5;198.18.40.1/32 "
			 "198.18.40.0/24 3;fd00:41::/48 (null) 1;");
	cr_assert_eq(env_cli(&env, out, sizeof(out), "top", true), 0, "%s",
		     out);
	cr_assert(strstr(out, "198.18.41.0/24               (ban by hand)"
			 "                   5            0  banned until "
			 "unban\n"), "%s", out);
	cr_assert(strstr(out, "fd00:41::/48                 (ban by hand)"
			 "                   1            0  banned 3"),
		  "%s", out);
}

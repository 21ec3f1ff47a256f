// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit check FILE as an operator runs it before a reload: the
 * daemon keeps a policy in force, the CLI checks other files against
 * it. A valid file: exit 0 and every change listed; a bad one: exit 1
 * and the loader's FILE:LINE: FIELD: line; in both cases the maps hold
 * exactly what they held before.
 */
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include "daemon.h"

static struct daemon_env env;
static char out[8192];
static char other[PATH_MAX];

static const char in_force[] =
	"default:\n  action: allow\nrules:\n"
	"  - name: scanners\n    cidr: 198.18.1.0/24\n    action: deny\n"
	"  - name: web\n    cidr: 198.18.2.0/24\n    pps: 10\n    burst: 5\n"
	"  - name: lab\n    cidr: 198.18.4.0/24\n    pps: 10\n    burst: 5\n";

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, in_force);
	snprintf(other, sizeof(other), "%s/other.yaml", env.dir);
	daemon_start(&env, NULL);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(check, .init = setup, .fini = teardown, .timeout = 60);

static int check(const char *yaml)
{
	char args[PATH_MAX + 16];

	env_write(&env, other, yaml);
	snprintf(args, sizeof(args), "check %s", other);
	return env_cli(&env, out, sizeof(out), args, false);
}

Test(check, lists_what_would_change_and_applies_nothing)
{
	struct policy_dump before, after;
	char expect[PATH_MAX * 2 + 1024];

	dump_policy(&env, &before);
	cr_assert_eq(check("malformed: drop\n"
			   "default:\n  action: limit\n  pps: 1k\n  burst: 2k\n"
			   "rules:\n"
			   "  - name: web\n    cidr: 198.18.2.0/24\n"
			   "    pps: 20\n    burst: 5\n"
			   "  - name: new\n    cidr: 198.18.3.0/24\n"
			   "    action: deny\n"
			   "  - name: lab\n    cidr: 198.18.4.0/24\n"
			   "    pps: 10\n    burst: 5\n"), 0, "%s", out);
	snprintf(expect, sizeof(expect),
		 "%s: valid, 4 rules\n"
		 "against the policy in force in %s:\n", other, env.pin_dir);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	/* The map's walk order is the kernel's: look for each line. */
	cr_assert(strstr(out, "\n  change  default                  limit pps "
			 "1000/s burst 2000 (was allow)\n"), "%s", out);
	cr_assert(strstr(out, "\n  remove  198.18.1.0/24            deny\n"),
		  "%s", out);
	cr_assert(strstr(out, "\n  change  198.18.2.0/24            limit pps "
			 "20/s burst 5 (limits or scope)\n"), "%s", out);
	cr_assert(strstr(out, "\n  add     198.18.3.0/24            deny\n"),
		  "%s", out);
	cr_assert(strstr(out, "\n  settings change: malformed\n"), "%s", out);
	cr_assert(strstr(out, "\n  1 added, 1 removed, 2 changed, 1 unchanged "
			 "(of 4 in force)\nnothing applied\n"), "%s", out);
	cr_assert_not(strstr(out, "198.18.4.0/24"), "%s", out);

	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "check changed the maps");
	dump_free(&before);
	dump_free(&after);
}

Test(check, the_policy_in_force_itself_changes_nothing)
{
	cr_assert_eq(check(in_force), 0, "%s", out);
	cr_assert(strstr(out, "\n  settings unchanged\n  0 added, 0 removed, "
			 "0 changed, 4 unchanged (of 4 in force)\n"), "%s", out);
}

Test(check, a_bad_file_is_the_loaders_line_and_exit_1)
{
	struct policy_dump before, after;
	char expect[PATH_MAX + 128];

	dump_policy(&env, &before);
	cr_assert_eq(check("rules:\n  - cidr: 198.18.1.0/24\n    pps: 1.5\n"
			   "    burst: 1\n"), 1, "%s", out);
	snprintf(expect, sizeof(expect),
		 "%s:3: rules[0].pps: not a whole number (1.5)\n", other);
	cr_assert_str_eq(out, expect);
	cr_assert_eq(check("rules:\n  - cidr: 198.18.1.1/24\n"), 1);
	snprintf(expect, sizeof(expect), "%s:2: rules[0].cidr: host bits set "
		 "after the prefix length (198.18.1.1/24)\n", other);
	cr_assert_str_eq(out, expect);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "check /nonexistent.yaml",
			     false), 1);
	cr_assert_str_eq(out, "/nonexistent.yaml: cannot read: No such file "
			 "or directory\n");
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "check changed the maps");
	dump_free(&before);
	dump_free(&after);
}

Test(check, without_a_data_path_says_what_attach_would_apply)
{
	char args[PATH_MAX * 2];

	env_write(&env, other, in_force);
	snprintf(args, sizeof(args), "-P %s/none check %s", env.dir, other);
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, false), 0, "%s",
		     out);
	cr_assert(strstr(out, "valid, 4 rules\nno policy in force (nothing "
			 "pinned in "), "%s", out);
	cr_assert(strstr(out, "/none): attach would apply all 4 rules\n"
			 "nothing applied\n"), "%s", out);
}

Test(check, shows_the_levels_of_a_rule_it_would_add)
{
	cr_assert_eq(check("default:\n  action: allow\nrules:\n"
			   "  - name: scanners\n    cidr: 198.18.1.0/24\n"
			   "    action: deny\n"
			   "  - name: web\n    cidr: 198.18.2.0/24\n"
			   "    pps: 10\n    burst: 5\n"
			   "  - name: lab\n    cidr: 198.18.4.0/24\n"
			   "    pps: 10\n    burst: 5\n"
			   "  - name: new\n    cidr: 198.18.3.0/24\n"
			   "    pps: 10\n    burst: 5\n"
			   "    levels: [{prefix: 28, pps: 100, burst: 200},"
			   " {prefix: 26, bps: 8M, burst_bytes: 1M}]\n"),
		     0, "%s", out);
	cr_assert(strstr(out, "\n  add     198.18.3.0/24            limit pps "
			 "10/s burst 5 level 28:pps=100,burst=200 level "
			 "26:bps=8M,burst_bytes=1M\n"), "%s", out);
}

/* A level's limits are their own classifier entries: a change of them
 * alone is a change of the rule, and the same levels are none. */
Test(check, a_change_of_a_level_alone_is_a_change)
{
	static const char levelled[] =
		"default:\n  action: allow\nrules:\n"
		"  - name: lab\n    cidr: 198.18.4.0/24\n    pps: 10\n"
		"    burst: 5\n    levels: [{prefix: 28, pps: %s, burst: 200}]\n";
	char yaml[512];

	snprintf(yaml, sizeof(yaml), levelled, "100");
	env_write(&env, NULL, yaml);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reload", true), 0,
		     "%s", out);
	cr_assert_eq(check(yaml), 0, "%s", out);
	cr_assert(!strstr(out, "change  198.18.4.0/24"), "%s", out);
	snprintf(yaml, sizeof(yaml), levelled, "101");
	cr_assert_eq(check(yaml), 0, "%s", out);
	cr_assert(strstr(out, "\n  change  198.18.4.0/24"), "%s", out);
}

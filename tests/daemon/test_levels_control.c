// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Levels through the daemon's socket and the CLI (docs/POLICY.md
 * "Levels", docs/PROTOCOL.md rule.add): `rule add --level` and rule.add
 * "levels" put them in force, `rule list` and rule.list show them, a bad
 * level is refused in one line with nothing applied, and a runtime rule
 * keeps its levels through a restart (the overlay) and the policy file's
 * keys are checked against them on reload.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "fixture.h"

static struct daemon_env env;
static char out[16384];

static const char policy[] =
	"default:\n  action: allow\nrules:\n"
	"  - name: web\n    cidr: 198.18.190.0/24\n    pps: 10\n"
	"    burst: 10\n"
	"    levels: [{prefix: 28, pps: 100, burst: 200}]\n";

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, policy);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(levels_control, .init = setup, .fini = teardown, .timeout = 120);

static int cli(const char *args)
{
	return env_cli(&env, out, sizeof(out), args, true);
}

static json_t *rule_named(json_t *resp, const char *name)
{
	json_t *rules = json_object_get(resp, "rules"), *rule;
	size_t i;

	json_array_foreach(rules, i, rule)
		if (!strcmp(json_string_value(json_object_get(rule, "name")),
			    name))
			return rule;
	return NULL;
}

/* The "levels" of rule @name in rule.list, joined by spaces (static). */
static const char *levels_of(const char *name)
{
	static char text[512];
	json_t *resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	json_t *rule = rule_named(resp, name), *level;
	size_t i, used = 0;

	text[0] = '\0';
	cr_assert_not_null(rule, "no rule %s", name);
	json_array_foreach(json_object_get(rule, "levels"), i, level)
		used += snprintf(text + used, sizeof(text) - used, "%s%s",
				 i ? " " : "", json_string_value(level));
	json_decref(resp);
	return text;
}

Test(levels_control, rule_add_with_levels_is_listed_with_them)
{
	json_t *resp, *rule;

	daemon_start(&env, NULL);
	cr_assert_str_eq(levels_of("web"), "28:pps=100,burst=200");

	cr_assert_eq(cli("rule add 198.18.191.0/24 --name lab --pps 10 "
			 "--burst 10 --level 28:pps=100,burst=100 "
			 "--level 26:pps=1k,burst=2k,bps=8M,burst_bytes=1M"),
		     0, "%s", out);
	cr_assert(strstr(out, "added: ") && strstr(out, " level "
		  "28:pps=100,burst=100 level 26:pps=1k,burst=2k,bps=8M,"
		  "burst_bytes=1M"), "%s", out);
	cr_assert_str_eq(levels_of("lab"), "28:pps=100,burst=100 "
			 "26:pps=1k,burst=2k,bps=8M,burst_bytes=1M");
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert(strstr(out, " level 28:pps=100,burst=200"), "%s", out);

	/* docs/OPERATIONS.md's example, as it shows. */
	cr_assert_eq(cli("rule add 198.18.0.0/15 --name v4 --pps 100 "
			 "--burst 100 --level 24:pps=1k,burst=1k"), 0, "%s",
		     out);
	cr_assert_str_eq(out, "added:     3  v4                   "
			 "198.18.0.0/15          limit    runtime pps 100/s "
			 "burst 100 level 24:pps=1k,burst=1k  (passed 0, "
			 "dropped 0)\n");

	/* The JSON way, in the default rule: each level says its family. */
	resp = request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":\"0.0.0.0/0\","
			  "\"replace\":true,\"pps\":\"1k\",\"burst\":\"1k\","
			  "\"levels\":[\"ipv4/24:pps=10k,burst=10k\","
			  "\"ipv6/48:pps=5k,burst=5k\"]}");
	rule = json_object_get(resp, "rule");
	cr_assert_eq(json_array_size(json_object_get(rule, "levels")), 2);
	json_decref(resp);
	cr_assert_str_eq(levels_of("default"), "ipv4/24:pps=10k,burst=10k "
			 "ipv6/48:pps=5k,burst=5k");

	/* A replace without levels has none. */
	cr_assert_eq(cli("rule add 198.18.191.0/24 --replace --pps 10 "
			 "--burst 10"), 0, "%s", out);
	cr_assert_str_eq(levels_of("lab"), "");
}

static void refused(const char *request, const char *expected)
{
	const char *error = request_fail(&env, "%s", request);

	cr_assert_str_eq(error, expected);
}

Test(levels_control, a_bad_level_is_refused_in_one_line_and_not_applied)
{
	struct policy_dump before, after;
	const char *nl;

	env_write(&env, NULL, "keys: {ipv4_prefix: 24}\n"
		  "default:\n  action: allow\n");
	daemon_start(&env, NULL);
	dump_policy(&env, &before);
#define ADD "{\"cmd\":\"rule.add\",\"cidr\":\"198.18.0.0/16\",\"pps\":1," \
	    "\"burst\":1,"
	refused(ADD "\"levels\":[\"20:pps=fast,burst=1\"]}",
		"rule.add: levels[0].pps: \"fast\" is not a quantity (like "
		"1500, 10k, 2.5M, 1G)");
	refused(ADD "\"levels\":\"20:pps=1,burst=1\"}",
		"rule.add: levels: must be a list of levels like "
		"\"24:pps=1k,burst=2k\"");
	refused(ADD "\"levels\":[]}",
		"rule.add: levels: an empty list (leave levels out for none)");
	refused(ADD "\"levels\":[20]}",
		"rule.add: levels[0]: must be a string like "
		"\"24:pps=1k,burst=2k\"");
	refused(ADD "\"levels\":[\"17:pps=1,burst=1\",\"18:pps=1,burst=1\","
		"\"19:pps=1,burst=1\",\"20:pps=1,burst=1\","
		"\"21:pps=1,burst=1\"]}",
		"rule.add: levels: 5 levels, more than the maximum 4");
	refused(ADD "\"levels\":[\"20:pps=1,burst=1\",\"8:pps=1,burst=1\"]}",
		"rule.add: levels[1].prefix: /8 is shorter than the rule's /16 "
		"(one bucket for the whole rule is scope: aggregate)");
	refused(ADD "\"levels\":[\"ipv6/48:pps=1,burst=1\"]}",
		"rule.add: levels[0].prefix: an IPv6 level in a rule for IPv4 "
		"sources");
	refused(ADD "\"levels\":[\"24:pps=1,burst=1\"]}",
		"rule.add: levels[0].prefix: /24 is not shorter than the IPv4 "
		"source key /24 (keys.ipv4_prefix)");
	refused(ADD "\"scope\":\"aggregate\",\"levels\":[\"20:pps=1,burst=1\"]}",
		"rule.add: levels: only with scope: source (one budget for the "
		"whole rule has no levels)");
	refused("{\"cmd\":\"rule.add\",\"cidr\":\"0.0.0.0/0\",\"replace\":"
		"true,\"pps\":1,\"burst\":1,\"levels\":[\"16:pps=1,burst=1\"]}",
		"rule.add: levels[0].prefix: a rule for every source covers "
		"IPv4 and IPv6 sources: write ipv4/16 or ipv6/16");
	refused("{\"cmd\":\"rule.add\",\"cidr\":\"198.18.0.0/16\",\"action\":"
		"\"deny\",\"levels\":[\"20:pps=1,burst=1\"]}",
		"rule.add: levels: only for limit and monitor rules, not "
		"action: deny");

	/* The CLI's words: one line, exit 1. */
	cr_assert_eq(cli("rule add 198.18.0.0/16 --pps 1 --burst 1 "
			 "--level 20:pps=1,burst"), 1, "%s", out);
	cr_assert(strstr(out, "levels[0]: \"burst\" is not KEY=VALUE (pps, "
			 "burst, bps, burst_bytes)"), "%s", out);
	nl = strchr(out, '\n');
	cr_assert(nl && !nl[1], "one line: %s", out);
	cr_assert_eq(cli("rule add 198.18.0.0/16 --pps 1 --burst 1 "
			 "--level 17:pps=1,burst=1 --level 18:pps=1,burst=1 "
			 "--level 19:pps=1,burst=1 --level 20:pps=1,burst=1 "
			 "--level 21:pps=1,burst=1"), 1, "%s", out);
	cr_assert_str_eq(out, "xdp-ratelimit: rule: --level: 5 levels, more "
			 "than the maximum 4\n");

	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "the policy in force changed");
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert_null(strstr(out, "198.18.0.0/16"), "%s", out);
	dump_free(&before);
	dump_free(&after);
}

Test(levels_control, a_runtime_rule_keeps_its_levels_through_a_restart)
{
	struct policy_dump before, after;
	const char *error;
	int status;

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add fd00:18::/32 --name v6 --pps 500 "
			 "--burst 500 --level 56:pps=2k,burst=2k "
			 "--level 48:pps=5k,burst=5k"), 0, "%s", out);
	cr_assert_eq(cli("rule add 198.18.191.0/24 --name lab --pps 10 "
			 "--burst 10 --level 28:pps=100,burst=100"),
		     0, "%s", out);
	dump_policy(&env, &before);

	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	cr_assert(log_contains(&env, "runtime changes from"), "%s",
		  daemon_log(&env));
	cr_assert_str_eq(levels_of("v6"), "56:pps=2k,burst=2k "
			 "48:pps=5k,burst=5k");
	cr_assert_str_eq(levels_of("lab"), "28:pps=100,burst=100");
	cr_assert_str_eq(levels_of("web"), "28:pps=100,burst=200");
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "the policy in force differs "
		  "after the restart");
	dump_free(&after);

	/* A file whose keys the runtime levels no longer fit: refused,
	 * naming the runtime rule, and nothing changes. */
	env_write(&env, NULL, "keys: {ipv6_prefix: 48}\n"
		  "default:\n  action: allow\n");
	error = request_fail(&env, "{\"cmd\":\"reload\"}");
	cr_assert_str_eq(error, "reload: the runtime rule v6 (fd00:18::/32): "
			 "levels[0].prefix: /56 is not shorter than the IPv6 "
			 "source key /48 (keys.ipv6_prefix)");
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "the policy in force changed");
	dump_free(&after);

	/* And a start with that file: refused, the policy left in force. */
	daemon_stop(&env, SIGTERM);
	status = daemon_run_to_exit(&env, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0, "%d", status);
	cr_assert(log_contains(&env, "runtime changes: the runtime rule v6 "
			       "(fd00:18::/32): levels[0].prefix: /56 is not "
			       "shorter than the IPv6 source key /48 "
			       "(keys.ipv6_prefix)"), "%s", daemon_log(&env));
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "the policy in force changed");
	dump_free(&before);
	dump_free(&after);
}

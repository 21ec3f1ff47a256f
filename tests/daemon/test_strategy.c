// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Strategies through the daemon: a sliding window and a leaky bucket
 * from the file and from `rule add` (the CLI's options and the control
 * socket's fields), listed with their values, judged by the data path,
 * kept across a restart (the runtime overlay), and bad values refused
 * whole with the field named.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"
#include "loader.h"

static struct daemon_env env;
static char out[16384];

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(strategy, .init = setup, .fini = teardown, .timeout = 120);

static const char policy[] =
	"default:\n"
	"  action: allow\n"
	"rules:\n"
	"  - name: tight\n"
	"    cidr: 198.18.1.0/24\n"
	"    strategy: sliding_window\n"
	"    limit: 3\n"
	"    window: 1s\n"
	"  - name: pace\n"
	"    cidr: 198.18.2.0/24\n"
	"    strategy: leaky_bucket\n"
	"    interval: 100ms\n";

static int cli(const char *args)
{
	return env_cli(&env, out, sizeof(out), args, true);
}

static unsigned passed_of(const char *src, unsigned n)
{
	struct packet pkt;
	unsigned i, passed = 0;

	cr_assert_eq(packet_from(&pkt, src), 0);
	for (i = 0; i < n; i++)
		passed += fixture_run(&env.dp, &pkt) == XDP_PASS;
	return passed;
}

/* The line of `rule list` naming @name, or NULL. */
static const char *listed(const char *name)
{
	static char line[1024];
	char key[80];
	const char *at, *end;

	cr_assert_eq(cli("rule list"), 0, "%s", out);
	snprintf(key, sizeof(key), " %s ", name);
	at = strstr(out, key);
	if (!at)
		return NULL;
	while (at > out && at[-1] != '\n')
		at--;
	end = strchr(at, '\n');
	snprintf(line, sizeof(line), "%.*s", end ? (int)(end - at) : 1000, at);
	return line;
}

Test(strategy, file_and_runtime_strategies_are_listed_judged_and_kept)
{
	const char *line;
	json_t *resp, *rule;
	size_t i;

	env_write(&env, NULL, policy);
	daemon_start(&env, NULL);
	cr_assert_eq(passed_of("198.18.1.1", 10), 3, "limit 3 in 1s");
	cr_assert_eq(passed_of("198.18.2.1", 10), 1, "burst 1 unless set");

	cr_assert_eq(cli("rule add 198.18.3.0/24 --name burst-window "
			 "--strategy sliding_window --limit 5 --window 2s"),
		     0, "%s", out);
	cr_assert_eq(cli("rule add 198.18.4.0/24 --name fast-pace "
			 "--strategy leaky_bucket --interval 500us --burst 2"),
		     0, "%s", out);
	cr_assert_eq(passed_of("198.18.3.1", 10), 5);
	cr_assert_eq(passed_of("198.18.4.1", 10), 2);

	line = listed("tight");
	cr_assert(line && strstr(line, "sliding_window limit 3 window 1s"),
		  "%s", out);
	line = listed("fast-pace");
	cr_assert(line && strstr(line, "leaky_bucket interval 500us"),
		  "%s", out);

	/* JSON: the values as the file writes them. */
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	json_array_foreach(json_object_get(resp, "rules"), i, rule) {
		const char *name = json_string_value(json_object_get(rule,
								     "name"));

		if (strcmp(name, "burst-window"))
			continue;
		cr_assert_str_eq(json_string_value(json_object_get(rule,
			"strategy")), "sliding_window");
		cr_assert_eq(json_integer_value(json_object_get(rule, "limit")),
			     5);
		cr_assert_str_eq(json_string_value(json_object_get(rule,
			"window")), "2s");
	}
	json_decref(resp);

	/* A restart reads the runtime rules back with their strategy. */
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	line = listed("burst-window");
	cr_assert(line && strstr(line, "sliding_window limit 5 window 2s"),
		  "%s", out);
	line = listed("fast-pace");
	cr_assert(line && strstr(line, "leaky_bucket interval 500us"),
		  "%s", out);
	xrl_datapath_set_time(&env.dp, 100 * NS_PER_S);
	cr_assert_eq(passed_of("198.18.3.9", 10), 5);
}

static void refused(const char *args, const char *expect)
{
	struct policy_dump before, after;

	dump_policy(&env, &before);
	cr_assert_eq(cli(args), 1, "%s: %s", args, out);
	cr_assert(strstr(out, expect), "%s: \"%s\" lacks \"%s\"", args, out,
		  expect);
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "%s changed the policy", args);
	dump_free(&before);
	dump_free(&after);
}

Test(strategy, bad_strategies_are_refused_whole)
{
	env_write(&env, NULL, policy);
	daemon_start(&env, NULL);
	refused("rule add 198.18.5.0/24 --strategy fixed_window --limit 5 "
		"--window 1s", "--strategy: unknown strategy \"fixed_window\"");
	refused("rule add 198.18.5.0/24 --pps 10 --burst 5 --limit 5",
		"--limit: only with strategy: sliding_window");
	refused("rule add 198.18.5.0/24 --strategy sliding_window --limit 5 "
		"--window 1s --pps 10", "--pps: not with strategy: "
		"sliding_window");
	refused("rule add 198.18.5.0/24 --strategy sliding_window --limit 5",
		"--window: a sliding_window needs limit and window");
	refused("rule add 198.18.5.0/24 --strategy sliding_window --limit 5 "
		"--window 1s --scope aggregate", "--scope: a sliding_window "
		"counts each source");
	refused("rule add 198.18.5.0/24 --strategy leaky_bucket --interval 1x",
		"--interval: \"1x\" is not a duration");
	refused("rule add 198.18.5.0/24 --strategy leaky_bucket --interval 2h",
		"--interval: over the maximum 1h");
	cr_assert_null(listed("198.18.5.0/24"));
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What an operator watches during an attack, through the daemon: the
 * limit events (log line, `events` command and CLI) and `top --json`.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "fixture.h"
#include "loader.h"

static struct daemon_env env;
static char out[1 << 16];

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\n"
		  "events: {quiet_period: 10s, max_per_second: 50}\nrules:\n"
		  "  - name: web-default\n    cidr: 198.18.1.0/24\n"
		  "    action: limit\n    pps: 1k\n    burst: 2\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(observe, .init = setup, .fini = teardown, .timeout = 120);

static int cli_run(const char *args, bool with_socket)
{
	return env_cli(&env, out, sizeof(out), args, with_socket);
}

static int cli(const char *args)
{
	return cli_run(args, true);
}

static void send_from(const char *src, int count)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	fixture_offer(&env.dp, &pkt, count);
}

/* Waits (bounded) for the daemon to log @text. */
static void wait_for_log(const char *text)
{
	int i;

	for (i = 0; i < 500 && !log_contains(&env, text); i++)
		poll(NULL, 0, 10);
	cr_assert(log_contains(&env, text), "no \"%s\" in:\n%s", text,
		  daemon_log(&env));
}

Test(observe, a_limited_source_is_logged_listed_and_counted)
{
	json_t *response, *events, *event;

	daemon_start(&env, NULL);
	/* The burst of 2 passes; 1 ms later the next token is not quite
	 * back (intervals round up): the event comes at that first drop,
	 * without an observed rate (a source keeps counts only from its
	 * first refusal: docs/OPERATIONS.md "Per-source state"). */
	xrl_datapath_set_time(&env.dp, 2 * NS_PER_S);
	send_from("198.18.1.7", 2);
	xrl_datapath_set_time(&env.dp, 2 * NS_PER_S + 1000000);
	send_from("198.18.1.7", 4);
	wait_for_log("info: source 198.18.1.7 limited by rule web-default: "
		     "over 1,000 pps\n");

	response = request_ok(&env, "{\"cmd\":\"events\"}");
	events = json_object_get(response, "events");
	cr_assert_eq(json_array_size(events), 1);
	event = json_array_get(events, 0);
	cr_assert_str_eq(json_string_value(json_object_get(event, "source")),
			 "198.18.1.7");
	cr_assert_str_eq(json_string_value(json_object_get(event, "rule")),
			 "web-default");
	cr_assert_eq(json_integer_value(json_object_get(event, "limit_pps")),
		     1000);
	cr_assert(json_is_null(json_object_get(event, "pps")));
	cr_assert_eq(json_integer_value(json_object_get(response, "sent")), 1);
	cr_assert_eq(json_integer_value(json_object_get(response,
							"last_seq")), 1);
	json_decref(response);

	/* Nothing after seq 1; within the quiet period, no second event. */
	send_from("198.18.1.7", 6);
	response = request_ok(&env, "{\"cmd\":\"events\",\"since\":1}");
	cr_assert_eq(json_array_size(json_object_get(response, "events")), 0);
	json_decref(response);

	cr_assert_eq(cli("events"), 0, "%s", out);
	cr_assert(strstr(out, "  source 198.18.1.7 limited by rule "
			 "web-default: ") && strstr(out, "over 1,000 pps\n"),
		  "%s", out);
	/* stats, from the pins, counts it too. */
	cr_assert_eq(cli_run("stats", false), 0, "%s", out);
	cr_assert(strstr(out, "events:     at most 1 per source per 10 s, 50 "
			 "per second in all; 1 sent, 0 suppressed (cap), 0 "
			 "lost (ring full)\n"), "%s", out);
	cr_assert_eq(cli_run("stats --json", false), 0, "%s", out);
	cr_assert(strstr(out, "\"sent\": 1"), "%s", out);
	cr_assert_eq(cli("events --json"), 0, "%s", out);
	cr_assert(strstr(out, "\"source\": \"198.18.1.7\""), "%s", out);
	cr_assert_str_eq(request_fail(&env, "{\"cmd\":\"events\",\"n\":0}"),
			 "events: n: must be an integer from 1 to 1024");
}

Test(observe, top_json_lists_the_heaviest_dropped_sources_first)
{
	json_t *top, *entry;
	json_error_t error;
	const char *order[] = { "198.18.1.3/32", "198.18.1.1/32",
				"198.18.1.2/32" };
	size_t i;

	daemon_start(&env, NULL);
	send_from("198.18.1.1", 12);	/* 10 dropped */
	send_from("198.18.1.2", 5);	/* 3 */
	send_from("198.18.1.3", 40);	/* 38 */
	send_from("198.18.1.4", 2);	/* none: not listed */
	cr_assert_eq(cli("top --json"), 0, "%s", out);
	top = json_loads(out, 0, &error);
	cr_assert_not_null(top, "%s: %s", error.text, out);
	cr_assert_eq(json_array_size(json_object_get(top, "top")), 3, "%s",
		     out);
	json_array_foreach(json_object_get(top, "top"), i, entry)
		cr_assert_str_eq(json_string_value(json_object_get(entry,
								   "source")),
				 order[i]);
	entry = json_array_get(json_object_get(top, "top"), 0);
	cr_assert_eq(json_integer_value(json_object_get(entry, "dropped")), 38);
	cr_assert_str_eq(json_string_value(json_object_get(entry, "rule")),
			 "web-default");
	json_decref(top);
}

Test(observe, stats_watch_prints_rates_not_totals)
{
	char *line, *save;
	int lines = 0;

	/* 500 packets before the watch starts: totals, not rates. */
	send_from("198.18.9.9", 500);
	cr_assert_eq(cli_run("stats --watch --count 2", false), 0, "%s", out);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		if (lines == 0) {
			cr_assert(strstr(line, "time") &&
				  strstr(line, "pass/s") &&
				  strstr(line, "drop/s") &&
				  strstr(line, "allow/s") &&
				  strstr(line, "Mbit/s"), "%s", line);
			continue;
		}
		cr_assert_eq(strspn(line + 8, " 0.") , strlen(line + 8),
			     "not all rates 0: %s", line);
	}
	cr_assert_eq(lines, 3);
	cr_assert_neq(cli_run("stats --count 2", false), 0);
	cr_assert(strstr(out, "--count goes with --watch"), "%s", out);
}

/* The lines of the verdict table in out[] (from its "verdict" header to
 * the blank line) all end at one column: each right-aligned number under
 * its heading, vlan_overflow and unjudged_fragment included. */
static void verdict_table_lines_up(const char *what)
{
	const char *at = strstr(out, "verdict "), *end;
	size_t width = 0, lines = 0;

	cr_assert_not_null(at, "%s: %s", what, out);
	for (; *at && *at != '\n'; at = end + 1, lines++) {
		end = strchr(at, '\n');
		cr_assert_not_null(end, "%s: %s", what, out);
		if (!width)
			width = end - at;
		cr_assert_eq((size_t)(end - at), width, "%s: \"%.*s\"", what,
			     (int)(end - at), at);
	}
	cr_assert_eq(lines, 1 + XRL_VERDICT_COUNT, "%s: %s", what, out);
}

Test(observe, stats_and_status_tables_line_up_from_the_longest_name)
{
	send_from("198.18.9.9", 3);
	cr_assert_eq(cli_run("stats", false), 0, "%s", out);
	verdict_table_lines_up("stats");
	cr_assert_eq(cli_run("status", false), 0, "%s", out);
	verdict_table_lines_up("status");
}

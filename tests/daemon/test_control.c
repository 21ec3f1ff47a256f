// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon driven through its socket as a client would: every command
 * round trip, every bad request refused with its error and the policy in
 * force left byte for byte as it was, rule ids that survive changes,
 * reload by request and by SIGHUP, restart and adoption.
 *
 * The test loads the program with the test clock and pins it; the daemon
 * adopts those pins, so packets judged here (BPF_PROG_TEST_RUN) meet the
 * policy the daemon applied.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "client.h"
#include "control.h"
#include "daemon.h"
#include "fixture.h"
#include "loader.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(control, .init = setup, .fini = teardown, .timeout = 120);

static const char base_policy[] =
	"keys:\n"
	"  ipv4_prefix: 32\n"
	"  ipv6_prefix: 64\n"
	"malformed: pass\n"
	"default:\n"
	"  action: allow\n"
	"rules:\n"
	"  - name: limited\n"
	"    cidr: 198.18.1.0/24\n"
	"    action: limit\n"
	"    pps: 10\n"
	"    burst: 5\n"
	"  - name: blocked\n"
	"    cidr: 198.18.2.0/24\n"
	"    action: deny\n"
	"  - name: six\n"
	"    cidr: fd00:1::/48\n"
	"    action: monitor\n"
	"    pps: 1k\n"
	"    burst: 2k\n";

static json_t *rule_named(json_t *list, const char *name)
{
	json_t *rule;
	size_t i;

	json_array_foreach(json_object_get(list, "rules"), i, rule)
		if (!strcmp(json_string_value(json_object_get(rule, "name")),
			    name))
			return rule;
	return NULL;
}

static json_int_t int_field(json_t *obj, const char *field)
{
	json_t *item = json_object_get(obj, field);

	cr_assert(json_is_integer(item), "no integer \"%s\"", field);
	return json_integer_value(item);
}

static const char *str_field(json_t *obj, const char *field)
{
	json_t *item = json_object_get(obj, field);

	cr_assert(json_is_string(item), "no string \"%s\"", field);
	return json_string_value(item);
}

static int judge(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	return fixture_run(&env.dp, &pkt);
}

Test(control, every_command_round_trips)
{
	json_t *resp, *rule, *top, *entry;
	int i;

	env_write(&env, NULL, base_policy);
	daemon_start(&env, NULL);

	resp = request_ok(&env, "{\"cmd\":\"version\"}");
	cr_assert_str_eq(str_field(resp, "version"), XRL_VERSION);
	cr_assert_eq(int_field(resp, "protocol"), XRL_PROTOCOL_VERSION);
	json_decref(resp);

	/* rule.list: the file's rules, with the ids the file gave them. */
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	cr_assert_eq(json_array_size(json_object_get(resp, "rules")), 4);
	rule = rule_named(resp, "limited");
	cr_assert_not_null(rule);
	cr_assert_str_eq(str_field(rule, "cidr"), "198.18.1.0/24");
	cr_assert_str_eq(str_field(rule, "action"), "limit");
	cr_assert_eq(int_field(rule, "pps"), 10);
	cr_assert_eq(int_field(rule, "burst"), 5);
	cr_assert_eq(int_field(resp, "v4_prefix"), 32);
	json_decref(resp);

	/* rule.add: in force at once, for the data path. */
	cr_assert_eq(judge("198.18.3.1"), XDP_PASS);
	resp = request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":\"198.18.3.0/24\","
			  "\"name\":\"new\",\"action\":\"deny\"}");
	rule = json_object_get(resp, "rule");
	cr_assert_str_eq(str_field(rule, "name"), "new");
	cr_assert_str_eq(str_field(rule, "action"), "deny");
	json_decref(resp);
	cr_assert_eq(judge("198.18.3.1"), XDP_DROP);

	/* rule.add with replace: a new version of the rule, same id. */
	resp = request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":\"198.18.3.0/24\","
			  "\"action\":\"limit\",\"pps\":\"2k\",\"burst\":3,"
			  "\"bps\":\"1M\",\"burst_bytes\":\"1500\","
			  "\"replace\":true}");
	rule = json_object_get(resp, "rule");
	cr_assert_str_eq(str_field(rule, "name"), "new");
	cr_assert_eq(int_field(rule, "pps"), 2000);
	cr_assert_eq(int_field(rule, "bps"), 1000000);
	cr_assert_eq(int_field(rule, "burst_bytes"), 1500);
	json_decref(resp);
	for (i = 0; i < 3; i++)
		cr_assert_eq(judge("198.18.3.1"), XDP_PASS, "packet %d", i);
	cr_assert_eq(judge("198.18.3.1"), XDP_DROP, "over the burst of 3");

	/* top: the sources with most drops, most first. */
	for (i = 0; i < 8; i++)
		judge("198.18.1.7");	/* 5 pass, 3 dropped */
	for (i = 0; i < 10; i++)
		judge("198.18.1.9");	/* 5 pass, 5 dropped */
	resp = request_ok(&env, "{\"cmd\":\"top\",\"n\":2}");
	top = json_object_get(resp, "top");
	cr_assert_eq(json_array_size(top), 2);
	entry = json_array_get(top, 0);
	cr_assert_str_eq(str_field(entry, "source"), "198.18.1.9/32");
	cr_assert_str_eq(str_field(entry, "rule"), "limited");
	cr_assert_eq(int_field(entry, "dropped"), 5);
	/* Counted since its first refusal: no pass since. */
	cr_assert_eq(int_field(entry, "passed"), 0);
	entry = json_array_get(top, 1);
	cr_assert_str_eq(str_field(entry, "source"), "198.18.1.7/32");
	cr_assert_eq(int_field(entry, "dropped"), 3);
	json_decref(resp);

	/* stats: the program's counters, per rule with names. */
	resp = request_ok(&env, "{\"cmd\":\"stats\"}");
	cr_assert_eq(int_field(json_object_get(json_object_get(resp, "counters"),
					       "drop"), "packets"), 1 + 3 + 5);
	cr_assert_eq(int_field(json_object_get(json_object_get(resp, "counters"),
					       "deny"), "packets"), 1);
	json_decref(resp);
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	rule = rule_named(resp, "limited");
	cr_assert_eq(int_field(json_object_get(rule, "dropped"), "packets"), 8);
	cr_assert_eq(int_field(json_object_get(rule, "passed"), "packets"), 10);
	json_decref(resp);

	/* status: the daemon's own state beside the data path's. */
	resp = request_ok(&env, "{\"cmd\":\"status\"}");
	cr_assert_eq(int_field(json_object_get(resp, "daemon"), "pid"), env.pid);
	cr_assert_str_eq(str_field(resp, "pin_dir"), env.pin_dir);
	cr_assert_eq(int_field(resp, "rules"), 5);
	json_decref(resp);

	/* rule.del, by name and by CIDR. */
	resp = request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":\"new\"}");
	cr_assert_str_eq(str_field(json_object_get(resp, "deleted"), "cidr"),
			 "198.18.3.0/24");
	json_decref(resp);
	json_decref(request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":"
			       "\"198.18.2.0/24\"}"));
	cr_assert_eq(judge("198.18.3.1"), XDP_PASS);
	cr_assert_eq(judge("198.18.2.1"), XDP_PASS);

	/* reload: the file again, with the runtime changes on top (the
	 * file's rule deleted at runtime stays deleted). */
	resp = request_ok(&env, "{\"cmd\":\"reload\"}");
	cr_assert_eq(int_field(resp, "rules"), 3);
	json_decref(resp);
	cr_assert_eq(judge("198.18.2.1"), XDP_PASS);

	/* reload of another file, named in the request. */
	char other[PATH_MAX + 16];

	snprintf(other, sizeof(other), "%s/other.yaml", env.dir);
	env_write(&env, other, "default:\n  action: deny\n");
	resp = request_ok(&env, "{\"cmd\":\"reload\",\"path\":\"%s\"}", other);
	cr_assert_eq(int_field(resp, "rules"), 1);
	json_decref(resp);
	cr_assert_eq(judge("198.18.1.1"), XDP_DROP);
}

/* One bad request: refused with an error holding @expect, and the policy
 * in force untouched, byte for byte. */
static void refused(const char *expect, const char *request)
{
	struct policy_dump before, after;
	const char *error;

	dump_policy(&env, &before);
	error = request_fail(&env, "%s", request);
	cr_assert(strstr(error, expect), "%s: error \"%s\" lacks \"%s\"",
		  request, error, expect);
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "%s changed the policy",
		  request);
	dump_free(&before);
	dump_free(&after);
}

Test(control, bad_requests_are_refused_whole_and_change_nothing)
{
	char bad_file[PATH_MAX + 16], request[PATH_MAX * 2];

	env_write(&env, NULL, base_policy);
	daemon_start(&env, NULL);

	refused("not JSON", "garbage");
	refused("not JSON", "{\"cmd\":");
	refused("must be a JSON object", "[1,2]");
	refused("no \"cmd\"", "{\"command\":\"version\"}");
	refused("unknown command \"rule.mod\"", "{\"cmd\":\"rule.mod\"}");
	refused("rule.add: unknown field \"rate\"",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\",\"rate\":5}");
	refused("cidr: missing", "{\"cmd\":\"rule.add\",\"pps\":5,\"burst\":1}");
	refused("cidr: \"198.18.9.1/24\" has host bits set",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.1/24\","
		"\"action\":\"deny\"}");
	refused("cidr: \"198.18.9.0/33\" has a bad prefix length",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/33\","
		"\"action\":\"deny\"}");
	refused("is not an IPv4 or IPv6 address",
		"{\"cmd\":\"rule.add\",\"cidr\":\"example.org\","
		"\"action\":\"deny\"}");
	refused("cidr: \"::ffff:198.18.9.0/120\" is an IPv4 prefix written as "
		"IPv6, which matches no IPv4 source: write 198.18.9.0/24",
		"{\"cmd\":\"rule.add\",\"cidr\":\"::ffff:198.18.9.0/120\","
		"\"action\":\"deny\"}");
	refused("action: unknown action \"block\"",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"action\":\"block\"}");
	refused("pps",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"pps\":0,\"burst\":5}");
	refused("burst: pps needs a burst of at least 1",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"pps\":100,\"burst\":0}");
	refused("pps: 2000000000000 is over the maximum",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"pps\":\"2000G\",\"burst\":5}");
	refused("pps: -5 is negative",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"pps\":-5,\"burst\":5}");
	refused("bps: \"fast\" is not a quantity",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"bps\":\"fast\",\"burst_bytes\":5}");
	refused("pps: must be a number",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"pps\":[1],\"burst\":5}");
	refused("a rule for 198.18.1.0/24 already exists (\"limited\")",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.1.0/24\","
		"\"action\":\"deny\"}");
	refused("name: \"limited\" is already the name",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"name\":\"limited\",\"action\":\"deny\"}");
	refused("replace: must be true or false",
		"{\"cmd\":\"rule.add\",\"cidr\":\"198.18.1.0/24\","
		"\"action\":\"deny\",\"replace\":\"yes\"}");
	refused("duplicate", "{\"cmd\":\"rule.add\",\"cidr\":\"198.18.9.0/24\","
		"\"cidr\":\"198.18.8.0/24\",\"action\":\"deny\"}");
	refused("no rule is named or has the CIDR \"nothing\"",
		"{\"cmd\":\"rule.del\",\"rule\":\"nothing\"}");
	refused("the default rule cannot be removed",
		"{\"cmd\":\"rule.del\",\"rule\":\"default\"}");
	refused("rule: missing", "{\"cmd\":\"rule.del\"}");
	refused("n: must be an integer from 1",
		"{\"cmd\":\"top\",\"n\":0}");
	refused("version: unknown field \"x\"", "{\"cmd\":\"version\",\"x\":1}");

	/* Files: each error names the file, the line and the field. */
	snprintf(bad_file, sizeof(bad_file), "%s/bad.yaml", env.dir);
	env_write(&env, bad_file, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.5.0/24\n    action: limit\n"
		  "    pps: 10\n    burst: 0\n");
	snprintf(request, sizeof(request),
		 "{\"cmd\":\"reload\",\"path\":\"%s\"}", bad_file);
	refused(":7: rules[0].burst", request);
	env_write(&env, bad_file, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.5.1/24\n    action: deny\n");
	refused(":4: rules[0].cidr", request);
	env_write(&env, bad_file, "default:\n  action: allow\n  colour: red\n");
	refused(":3: default.colour", request);
	refused("No such file", "{\"cmd\":\"reload\",\"path\":\"/nonexistent/p.yaml\"}");
	refused("not a regular file", "{\"cmd\":\"reload\",\"path\":\"/dev/null\"}");
	cr_assert(log_contains(&env, "change refused, the policy in force stays: reload:"));

	/* And the daemon is still there, serving the same policy. */
	json_decref(request_ok(&env, "{\"cmd\":\"version\"}"));
	cr_assert_eq(judge("198.18.2.1"), XDP_DROP);
}

Test(control, rule_ids_survive_changes_so_counters_and_buckets_stay)
{
	json_t *resp;
	json_int_t limited_id, blocked_id, six_id;
	int i;

	env_write(&env, NULL, base_policy);
	daemon_start(&env, NULL);
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	limited_id = int_field(rule_named(resp, "limited"), "id");
	blocked_id = int_field(rule_named(resp, "blocked"), "id");
	six_id = int_field(rule_named(resp, "six"), "id");
	json_decref(resp);

	/* Empty the bucket of one source of "limited": 5 pass, then drops. */
	for (i = 0; i < 5; i++)
		cr_assert_eq(judge("198.18.1.1"), XDP_PASS);
	cr_assert_eq(judge("198.18.1.1"), XDP_DROP);

	/* Rules around it come and go; the blocked rule (listed before it)
	 * is removed, a file drops another and adds new ones. */
	json_decref(request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			       "\"198.18.4.0/24\",\"action\":\"deny\"}"));
	json_decref(request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":"
			       "\"blocked\"}"));
	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: first\n    cidr: 198.18.6.0/24\n    action: deny\n"
		  "  - name: limited-renamed\n    cidr: 198.18.1.0/24\n"
		  "    action: limit\n    pps: 10\n    burst: 5\n"
		  "  - name: six\n    cidr: fd00:1::/48\n    action: allow\n");
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));

	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	cr_assert_eq(int_field(rule_named(resp, "limited-renamed"), "id"),
		     limited_id, "the 198.18.1.0/24 rule kept its id");
	cr_assert_eq(int_field(rule_named(resp, "six"), "id"), six_id);
	cr_assert_neq(int_field(rule_named(resp, "first"), "id"), blocked_id);
	cr_assert_neq(int_field(rule_named(resp, "first"), "id"), limited_id);
	/* Its counters went on. */
	cr_assert_eq(int_field(json_object_get(rule_named(resp,
		"limited-renamed"), "passed"), "packets"), 5);
	json_decref(resp);
	/* And its bucket: still empty, at the same instant. */
	cr_assert_eq(judge("198.18.1.1"), XDP_DROP);
	xrl_datapath_set_time(&env.dp, NS_PER_S + NS_PER_S / 4);
	cr_assert_eq(judge("198.18.1.1"), XDP_PASS);
}

/* A signal is handled in the daemon's loop: each request answered is one
 * more turn of it, so a few suffice; the bound only stops a broken one. */
static void wait_for_log(const char *text)
{
	for (int i = 0; i < 1000 && !log_contains(&env, text); i++)
		json_decref(request_ok(&env, "{\"cmd\":\"version\"}"));
	cr_assert(log_contains(&env, text), "no \"%s\" in the log: %s", text,
		  daemon_log(&env));
}

Test(control, sighup_reloads_and_an_invalid_file_is_refused_whole)
{
	struct policy_dump before, after;

	env_write(&env, NULL, base_policy);
	daemon_start(&env, NULL);
	cr_assert_eq(judge("198.18.7.1"), XDP_PASS);

	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.7.0/24\n    action: deny\n");
	kill(env.pid, SIGHUP);
	wait_for_log("SIGHUP: reloaded");
	cr_assert_eq(judge("198.18.7.1"), XDP_DROP);

	dump_policy(&env, &before);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.7.0/24\n    action: deny\n"
		  "  - cidr: 198.18.8.0/24\n    action: throttle\n");
	kill(env.pid, SIGHUP);
	wait_for_log("the policy in force stays: SIGHUP:");
	cr_assert(log_contains(&env, "policy.yaml:7: rules[1].action"),
		  "the log names file, line and field: %s", daemon_log(&env));
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after));
	dump_free(&before);
	dump_free(&after);
}

Test(control, the_socket_is_private_and_a_second_daemon_is_refused)
{
	struct stat st;
	int status;

	env_write(&env, NULL, base_policy);
	daemon_start(&env, NULL);
	cr_assert_eq(stat(env.socket, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(st.st_uid, geteuid());

	pid_t first = env.pid;

	status = daemon_run_to_exit(&env, NULL);
	env.pid = first;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
	cr_assert(log_contains(&env, "another daemon is listening on"));
	json_decref(request_ok(&env, "{\"cmd\":\"version\"}"));
}

Test(control, an_invalid_config_stops_a_fresh_start_with_file_line_field)
{
	int status;

	/* Nothing pinned yet: the daemon would have to load; it refuses. */
	xrl_datapath_unpin(&env.dp);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.1.0/24\n    action: limit\n"
		  "    pps: 0\n    burst: 5\n");
	status = daemon_run_to_exit(&env, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
	cr_assert(log_contains(&env, "policy.yaml:6: rules[0].pps"),
		  "the error names file, line and field");
}

Test(control, the_client_says_when_no_daemon_runs_and_names_the_socket)
{
	char *response, err[512];
	int ret;

	ret = xrl_client_request(env.socket, "{\"cmd\":\"version\"}",
				 &response, err, sizeof(err));
	cr_assert_lt(ret, 0);
	cr_assert(strstr(err, "xdp-ratelimitd is not running"), "%s", err);
	cr_assert(strstr(err, env.socket), "%s", err);
	cr_assert_null(strchr(err, '\n'));
}

Test(control, a_policy_swapped_in_behind_the_daemon_is_never_undone_silently)
{
	struct policy_dump before, after;
	struct xrl_policy other;
	json_t *resp, *rule;
	json_int_t id;

	env_write(&env, NULL, base_policy);
	daemon_start(&env, NULL);
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	id = int_field(rule_named(resp, "blocked"), "id");
	json_decref(resp);

	/* As `xdp-ratelimit attach --policy` would: another policy, with
	 * the blocked rule kept (under the id the daemon gave it). */
	cr_assert_eq(xrl_policy_init(&other), 0);
	fixture_rule(&other, "198.18.2.0/24", XRL_ACTION_DENY, 0, 0, 0, 0);
	other.rules[1].id = id;
	fixture_rule(&other, "198.18.8.0/24", XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&env.dp, &other);
	xrl_policy_free(&other);

	dump_policy(&env, &before);
	cr_assert(strstr(request_fail(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
				      "\"198.18.9.0/24\",\"action\":\"deny\"}"),
			 "replaced outside the daemon"));
	cr_assert(strstr(request_fail(&env, "{\"cmd\":\"rule.del\",\"rule\":"
				      "\"limited\"}"),
			 "reload to take it over"));
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after));
	cr_assert_eq(judge("198.18.8.1"), XDP_DROP);

	/* A reload takes over, carrying the ids of what is in force. */
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));
	cr_assert(log_contains(&env, "replaced outside the daemon"));
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	rule = rule_named(resp, "blocked");
	cr_assert_eq(int_field(rule, "id"), id);
	json_decref(resp);
	cr_assert_eq(judge("198.18.8.1"), XDP_PASS);
	json_decref(request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":"
			       "\"limited\"}"));
}

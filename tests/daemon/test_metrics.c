// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * /metrics as Prometheus sees it: scraped with curl from a daemon run by
 * the test while the test judges packets (BPF_PROG_TEST_RUN on the
 * pinned program), parsed by prometheus_client's strict parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"
#include "loader.h"

#define PARSER "tests/data/parse_metrics.py"

static struct daemon_env env;
static char listen_at[64];
static char samples[1 << 18];

static void setup(void)
{
	env_setup(&env);
	/* A port of this test's own: two runs at once never share one. */
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d",
		 20000 + getpid() % 30000);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: limited\n    cidr: 198.18.1.0/24\n"
		  "    action: limit\n    pps: 10\n    burst: 2\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(metrics, .init = setup, .fini = teardown, .timeout = 120);

/* Scrapes /metrics into samples[] as "name{labels} value" lines, after
 * the strict parser accepted the whole exposition. */
static void scrape(void)
{
	char command[PATH_MAX * 3];
	size_t len;
	FILE *pipe;
	int status;

	snprintf(command, sizeof(command),
		 "curl -sS --fail --max-time 10 -o %s/metrics.txt "
		 "http://%s/metrics && /usr/bin/python3 " PARSER " < %s/metrics.txt 2>&1",
		 env.dir, listen_at, env.dir);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	len = fread(samples, 1, sizeof(samples) - 1, pipe);
	samples[len] = '\0';
	status = pclose(pipe);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "scrape refused: %s", samples);
}

/* The value of sample @key ("name{a=\"b\"}") in the last scrape. */
static double sample(const char *key)
{
	char line[512];
	const char *at;

	snprintf(line, sizeof(line), "%s ", key);
	for (at = samples; (at = strstr(at, line)); at++)
		if (at == samples || at[-1] == '\n')
			return strtod(at + strlen(line), NULL);
	cr_assert_fail("no sample %s in:\n%s", key, samples);
	return -1;
}

static bool has_sample(const char *key)
{
	return strstr(samples, key) != NULL;
}

static void send_from(const char *src, int count)
{
	struct packet pkt;
	int i;

	cr_assert_eq(packet_from(&pkt, src), 0);
	for (i = 0; i < count; i++)
		fixture_run(&env.dp, &pkt);
}

Test(metrics, counters_rise_as_packets_are_judged)
{
	time_t started = time(NULL);

	daemon_start(&env, "--metrics", listen_at, NULL);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"drop\"}"), 0);
	cr_assert_eq(sample("xdp_ratelimit_policy_generation{}"), 1);
	cr_assert_geq(sample("xdp_ratelimit_policy_reload_timestamp_seconds{}"),
		      started - 1);
	cr_assert_eq(sample("xdp_ratelimit_bucket_map_capacity{}"),
		     xrl_datapath_max_sources(&env.dp));
	cr_assert_eq(sample("xdp_ratelimit_tracked_sources{}"), 0);

	/* Burst 2 at one instant: 2 pass, 4 drop; the default allows. */
	send_from("198.18.1.5", 6);
	send_from("198.18.9.9", 3);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"pass\"}"), 2);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"drop\"}"), 4);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"allow\"}"), 3);
	cr_assert_eq(sample("xdp_ratelimit_bytes_total{verdict=\"drop\"}"),
		     4 * 64);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"limited\","
			    "verdict=\"drop\"}"), 4);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"limited\","
			    "verdict=\"pass\"}"), 2);
	cr_assert_eq(sample("xdp_ratelimit_rule_bytes_total{rule=\"limited\","
			    "verdict=\"pass\"}"), 2 * 64);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"default\","
			    "verdict=\"pass\"}"), 3);
	cr_assert_eq(sample("xdp_ratelimit_bucket_inserts_total{}"), 1);
	/* The source started being limited: one event, none lost. */
	cr_assert_eq(sample("xdp_ratelimit_limit_events_total{outcome="
			    "\"sent\"}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_limit_events_total{outcome="
			    "\"lost\"}"), 0);

	/* 150 ms later, one more token (one per 100 ms): 1 pass, 9 drop. */
	xrl_datapath_set_time(&env.dp, NS_PER_S + 150000000ULL);
	send_from("198.18.1.5", 10);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"pass\"}"), 3);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"drop\"}"), 13);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"limited\","
			    "verdict=\"drop\"}"), 13);
}

Test(metrics, a_policy_change_renames_rules_and_bumps_the_generation)
{
	json_t *response;

	daemon_start(&env, "--metrics", listen_at, NULL);
	response = request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			      "\"198.18.2.0/24\",\"name\":\"lab\",\"action\":"
			      "\"deny\"}");
	json_decref(response);
	send_from("198.18.2.1", 5);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_policy_generation{}"), 2);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"lab\","
			    "verdict=\"drop\"}"), 5);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"deny\"}"), 5);

	json_decref(request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":\"lab\"}"));
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_policy_generation{}"), 3);
	cr_assert_not(has_sample("rule=\"lab\""), "%s", samples);
}

Test(metrics, off_unless_asked_and_a_bad_address_is_refused)
{
	int status;

	status = daemon_run_to_exit(&env, "--metrics", "localhost", NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
	cr_assert(log_contains(&env, "--metrics localhost: expected "
			       "ADDRESS:PORT"), "%s", daemon_log(&env));
}

Test(metrics, the_last_reload_says_whether_it_was_applied_and_when)
{
	time_t before = time(NULL);

	daemon_start(&env, "--metrics", listen_at, NULL);
	scrape();
	/* No reload yet: the start is not one. */
	cr_assert_not(has_sample("xdp_ratelimit_last_reload_success"));

	env_write(&env, NULL, "rules: [\n");
	request_fail(&env, "{\"cmd\":\"reload\"}");
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_last_reload_success{}"), 0);
	cr_assert_geq(sample("xdp_ratelimit_last_reload_timestamp_seconds{}"),
		      before);
	cr_assert_leq(sample("xdp_ratelimit_last_reload_timestamp_seconds{}"),
		      time(NULL));
	/* The refused file changed nothing: still the first policy. */
	cr_assert_eq(sample("xdp_ratelimit_policy_generation{}"), 1);

	env_write(&env, NULL, "default:\n  action: allow\n");
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_last_reload_success{}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_policy_generation{}"), 2);
}

Test(metrics, a_monitor_rules_would_drops_have_their_own_verdict)
{
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: watch\n    cidr: 198.18.1.0/24\n"
		  "    action: monitor\n    pps: 10\n    burst: 2\n");
	daemon_start(&env, "--metrics", listen_at, NULL);
	/* Burst 2 at one instant: 2 pass, 4 would have been dropped, and
	 * all 6 pass. */
	send_from("198.18.1.5", 6);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"watch\","
			    "verdict=\"would_drop\"}"), 4);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"watch\","
			    "verdict=\"pass\"}"), 2);
	cr_assert(!has_sample("{rule=\"watch\",verdict=\"drop\"}"),
		  "a monitor rule drops nothing: %s", samples);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"drop\"}"), 0);
}

/* metrics: in the policy file serves it without --metrics (the unit
 * need not be edited); --metrics wins; a bad one refuses the start in one
 * line naming the file and line; a reload that changes it needs a
 * restart (issue 24, smaller). */
Test(metrics, the_policy_file_s_metrics_key_serves_them)
{
	char yaml[256], other[64];
	int status;

	snprintf(yaml, sizeof(yaml), "default:\n  action: allow\nmetrics: "
		 "%s\n", listen_at);
	env_write(&env, NULL, yaml);
	daemon_start(&env, NULL);
	scrape();
	cr_assert(has_sample("xdp_ratelimit_packets_total"), "%s", samples);
	cr_assert(log_contains(&env, "serving metrics on http://"),
		  "%s", daemon_log(&env));

	snprintf(other, sizeof(other), "127.0.0.1:%d",
		 20000 + (getpid() + 11) % 30000);
	snprintf(yaml, sizeof(yaml), "default:\n  action: allow\nmetrics: "
		 "%s\n", other);
	env_write(&env, NULL, yaml);
	cr_assert(strstr(request_fail(&env, "{\"cmd\":\"reload\"}"),
			 "metrics: changed since the daemon started; restart "
			 "xdp-ratelimitd to apply it"), "%s", daemon_log(&env));
	scrape();	/* still there */
	daemon_stop(&env, SIGTERM);

	/* --metrics wins: the file's address is not served. */
	daemon_start(&env, "--metrics", listen_at, NULL);
	scrape();
	snprintf(yaml, sizeof(yaml), "curl -s --max-time 5 -o /dev/null "
		 "http://%s/metrics", other);
	cr_assert_neq(system(yaml), 0, "%s answers", other);
	daemon_stop(&env, SIGTERM);

	env_write(&env, NULL, "default:\n  action: allow\n\nmetrics: "
		  "localhost\n");
	status = daemon_run_to_exit(&env, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
	cr_assert(log_contains(&env, ":4: metrics: \"localhost\": expected "
			       "ADDRESS:PORT (127.0.0.1:9101, [::1]:9101)"),
		  "%s", daemon_log(&env));
}

/* The table's evictions are its LRU's, not the buckets reset forgot
 * (issue 24 item 5): status from the pins and /metrics both. */
Test(metrics, a_reset_is_no_eviction)
{
	static char out[1 << 16];
	json_t *status;

	daemon_start(&env, "--metrics", listen_at, NULL);
	send_from("198.18.1.5", 1);
	send_from("198.18.1.6", 1);
	send_from("198.18.1.7", 1);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reset 198.18.1.0/24",
			     false), 0, "%s", out);
	cr_assert_str_eq(out, "198.18.1.0/24: forgot 3 buckets\n");
	send_from("198.18.1.5", 1);	/* a new bucket, no eviction */
	cr_assert_eq(env_cli(&env, out, sizeof(out), "status --json", false),
		     0, "%s", out);
	status = json_loads(out, 0, NULL);
	cr_assert_not_null(status, "%s", out);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
			     status, "table"), "inserts")), 4, "%s", out);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
			     status, "table"), "evictions")), 0, "%s", out);
	json_decref(status);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_bucket_evictions_total{}"), 0);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Aggregate and global budgets through the daemon, as an operator meets
 * them: the split re-made by demand every sync_interval and shown by
 * status; a global rule without Redis refused naming its line; a Redis
 * that accepts connections and never answers, which must not stall the
 * control socket, and shows up as degraded in status, stats, rule list
 * and the log.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "fixture.h"
#include "redis_testbed.h"

static struct daemon_env env;
static int fake_fd = -1;

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
	if (fake_fd >= 0)
		close(fake_fd);
	fake_fd = -1;
}

TestSuite(budgets, .init = setup, .fini = teardown, .timeout = 120);

static json_t *path(json_t *obj, const char *a, const char *b)
{
	json_t *item = json_object_get(obj, a);

	cr_assert_not_null(item, "no \"%s\"", a);
	if (b) {
		item = json_object_get(item, b);
		cr_assert_not_null(item, "no \"%s.%s\"", a, b);
	}
	return item;
}

static double real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

Test(budgets, the_daemon_resplits_an_aggregate_by_demand)
{
	struct packet pkt;
	json_t *status = NULL, *weights;
	cpu_set_t cpus;
	int round, i;

	env_write(&env, NULL,
		  "default:\n  action: allow\n"
		  "rules:\n"
		  "  - name: botnet\n"
		  "    cidr: 198.18.0.0/16\n"
		  "    pps: 10M\n"		/* above the pool: split by demand */
		  "    burst: 100\n"
		  "    scope: aggregate\n");
	daemon_start(&env, "--sync-interval", "20ms", NULL);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	cr_assert_eq(packet_from(&pkt, "198.18.3.4"), 0);
	/* Traffic on CPU 0 only, until a sync has seen it (bounded). */
	for (round = 0; round < 200; round++) {
		for (i = 0; i < 20; i++)
			fixture_run(&env.dp, &pkt);
		json_decref(status);
		status = request_ok(&env, "{\"cmd\":\"status\"}");
		weights = json_object_get(json_array_get(
			path(status, "budgets", "aggregates"), 0),
			"cpu_weights");
		cr_assert(json_is_array(weights));
		if (json_integer_value(json_array_get(weights, 0)) >
		    json_integer_value(json_array_get(weights, 1)))
			break;
		poll(NULL, 0, 10);
	}
	cr_assert_lt(round, 200, "the split never followed CPU 0's demand");
	cr_assert_eq(json_integer_value(path(status, "budgets",
					     "sync_interval_ms")), 20);
	json_decref(status);
}

Test(budgets, a_global_rule_without_redis_is_refused_naming_its_line)
{
	const char *error;
	int status;

	env_write(&env, NULL,
		  "rules:\n"
		  "  - name: fleet\n"
		  "    cidr: 198.18.0.0/16\n"
		  "    pps: 1000\n"
		  "    burst: 100\n"
		  "    scope: aggregate\n"
		  "    global: true\n");
	status = daemon_run_to_exit(&env, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	cr_assert(log_contains(&env, "rule fleet (198.18.0.0/16): global: "
			       "needs a Redis address (redis: in the config, "
			       "or --redis), line 7"), "%s", daemon_log(&env));

	/* Running, the same file is refused by reload and nothing changes. */
	env_write(&env, NULL, "default:\n  action: allow\n");
	daemon_start(&env, NULL);
	env_write(&env, NULL,
		  "rules:\n"
		  "  - name: fleet\n"
		  "    cidr: 198.18.0.0/16\n"
		  "    pps: 1000\n"
		  "    burst: 100\n"
		  "    global: true\n");
	error = request_fail(&env, "{\"cmd\":\"reload\"}");
	cr_assert(strstr(error, "rules[0].global: needs scope: aggregate"),
		  "%s", error);
}

/* /metrics as curl gets it (bounded by --max-time). */
static void scrape(const char *at, char *out, size_t len)
{
	char command[256];
	size_t got;
	FILE *pipe;
	int status;

	snprintf(command, sizeof(command),
		 "curl -sS --fail --max-time 10 http://%s/metrics 2>&1", at);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	got = fread(out, 1, len - 1, pipe);
	out[got] = '\0';
	status = pclose(pipe);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "scrape refused: %s", out);
}

Test(budgets, a_silent_redis_does_not_stall_the_control_socket)
{
	char config[512], address[32], metrics_at[32];
	static char scraped[1 << 16];
	json_t *response, *rule;
	double started, slowest = 0, took;
	bool degraded = false;
	uint16_t port;
	size_t i;
	int n, found = 0;

	fake_fd = fake_redis_listen(&port);
	snprintf(address, sizeof(address), "127.0.0.1:%u", port);
	snprintf(config, sizeof(config),
		 "redis: %s\n"
		 "default:\n  action: allow\n"
		 "rules:\n"
		 "  - name: fleet\n"
		 "    cidr: 198.18.0.0/16\n"
		 "    pps: 1000\n"
		 "    burst: 100\n"
		 "    scope: aggregate\n"
		 "    global: true\n"
		 "  - name: local\n"
		 "    cidr: 198.19.0.0/16\n"
		 "    pps: 1000\n"
		 "    burst: 100\n"
		 "    scope: aggregate\n", address);
	env_write(&env, NULL, config);
	snprintf(metrics_at, sizeof(metrics_at), "127.0.0.1:%u",
		 redis_free_port());
	daemon_start(&env, "--sync-interval", "20ms", "--node", "edge-1",
		     "--metrics", metrics_at, NULL);
	/* Requests keep being answered while syncs meet the silent Redis;
	 * bounded: 100 requests. */
	for (n = 0; n < 100 && !degraded; n++) {
		started = real_ms();
		response = request_ok(&env, "{\"cmd\":\"status\"}");
		took = real_ms() - started;
		slowest = took > slowest ? took : slowest;
		degraded = json_is_true(path(response, "budgets", "global") ?
			json_object_get(path(response, "budgets", "global"),
					"degraded") : NULL);
		if (degraded) {
			cr_assert_str_eq(json_string_value(json_object_get(
				path(response, "budgets", "global"),
				"degraded_reason")), "timed out");
			cr_assert_not_null(json_object_get(path(response,
				"budgets", "global"), "degraded_since"));
			cr_assert_str_eq(json_string_value(json_object_get(
				path(response, "budgets", "global"), "node")),
				"edge-1");
		}
		json_decref(response);
		poll(NULL, 0, 10);
	}
	fprintf(stderr, "silent Redis: %d status requests, slowest %.0f ms\n",
		n, slowest);
	cr_assert(degraded, "never degraded: %s", daemon_log(&env));
	cr_assert(log_contains(&env, "timed out: degraded"), "%s",
		  daemon_log(&env));
	/* Far below any stall: one 50 ms timeout at most per request. */
	cr_assert_lt(slowest, 2000);

	response = request_ok(&env, "{\"cmd\":\"stats\"}");
	cr_assert(json_is_true(json_object_get(path(response, "budgets",
						    "global"), "degraded")));
	json_decref(response);
	response = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	json_array_foreach(json_object_get(response, "rules"), i, rule) {
		const char *name = json_string_value(json_object_get(rule,
								     "name"));

		if (!strcmp(name, "fleet")) {
			cr_assert(json_is_true(json_object_get(rule,
							       "degraded")));
			found++;
		}
		if (!strcmp(name, "local"))
			cr_assert_null(json_object_get(rule, "degraded"));
	}
	cr_assert_eq(found, 1, "no rule fleet in rule.list");
	json_decref(response);

	scrape(metrics_at, scraped, sizeof(scraped));
	cr_assert(strstr(scraped, "xdp_ratelimit_sync_degraded{rule=\"fleet\"}"
			 " 1\n"), "%s", scraped);
	cr_assert(strstr(scraped, "xdp_ratelimit_budget_local_pps{rule=\"local\"}"
			 " 1000\n"), "%s", scraped);
	/* The silent Redis made every exchange so far a missed sync. */
	cr_assert(strstr(scraped, "\nxdp_ratelimit_sync_failures_total ") &&
		  !strstr(scraped, "\nxdp_ratelimit_sync_failures_total 0\n"),
		  "%s", scraped);
}

/* The CLI's rule add passes scope and global on; rule list shows them. */
static int cli(char *out, size_t len, const char *args)
{
	return env_cli(&env, out, len, args, true);
}

Test(budgets, the_cli_adds_aggregate_rules)
{
	char out[4096];

	env_write(&env, NULL, "default:\n  action: allow\n");
	daemon_start(&env, NULL);
	cr_assert_eq(cli(out, sizeof(out), "rule add 198.18.4.0/24 --name agg "
			 "--pps 1k --burst 10 --scope aggregate"), 0, "%s",
		     out);
	cr_assert(strstr(out, "agg") && strstr(out, "aggregate"), "%s", out);
	cr_assert_eq(cli(out, sizeof(out), "rule add 198.18.5.0/24 --pps 1k "
			 "--burst 10 --global"), 1);
	cr_assert(strstr(out, "global: needs scope: aggregate"), "%s", out);
	cr_assert_eq(cli(out, sizeof(out), "rule add 198.18.5.0/24 --pps 1k "
			 "--burst 10 --scope aggregate --global"), 1);
	cr_assert(strstr(out, "needs a Redis address"), "%s", out);
	cr_assert_eq(cli(out, sizeof(out), "rule add 198.18.5.0/24 --pps 1k "
			 "--burst 10 --scope everything"), 1);
	cr_assert(strstr(out, "scope: unknown scope"), "%s", out);
	cr_assert_eq(cli(out, sizeof(out), "rule list"), 0);
	cr_assert(strstr(out, "aggregate"), "%s", out);
}

/*
 * redis:, sync_interval: and interfaces: are read at start: a reload that
 * changes one is refused whole, with a line saying a restart is needed,
 * and the policy in force stays; the same file with only rules changed
 * reloads.
 */
Test(budgets, reload_refuses_what_needs_a_restart_and_applies_the_rest)
{
	static const char *const changed[][2] = {
		{ "redis: 127.0.0.1:1\nsync_interval: 200ms\n", "redis" },
		{ "redis: 127.0.0.1:2\nsync_interval: 300ms\n",
		  "sync_interval" },
		{ "redis: 127.0.0.1:2\nsync_interval: 200ms\n"
		  "interfaces: [lo]\n", "interfaces" },
	};
	static const char rules[] =
		"default:\n  action: allow\n"
		"rules:\n"
		"  - name: local\n"
		"    cidr: 198.18.0.0/16\n"
		"    pps: %s\n"
		"    burst: 100\n"
		"    scope: aggregate\n";
	char yaml[512], rule_text[300], expected[PATH_MAX + 128];
	const char *error;
	json_t *resp;
	size_t i;

	snprintf(rule_text, sizeof(rule_text), rules, "1000");
	snprintf(yaml, sizeof(yaml), "redis: 127.0.0.1:2\n"
		 "sync_interval: 200ms\n%s", rule_text);
	env_write(&env, NULL, yaml);
	daemon_start(&env, NULL);
	for (i = 0; i < sizeof(changed) / sizeof(changed[0]); i++) {
		snprintf(yaml, sizeof(yaml), "%s%s", changed[i][0], rule_text);
		env_write(&env, NULL, yaml);
		error = request_fail(&env, "{\"cmd\":\"reload\"}");
		snprintf(expected, sizeof(expected), "%s: %s: changed since "
			 "the daemon started; restart xdp-ratelimitd",
			 env.config, changed[i][1]);
		cr_assert(strstr(error, expected), "%s", error);
	}
	/* Only the rules changed: applied. */
	snprintf(rule_text, sizeof(rule_text), rules, "2000");
	snprintf(yaml, sizeof(yaml), "redis: 127.0.0.1:2\n"
		 "sync_interval: 200ms\n%s", rule_text);
	env_write(&env, NULL, yaml);
	resp = request_ok(&env, "{\"cmd\":\"reload\"}");
	json_decref(resp);
	resp = request_ok(&env, "{\"cmd\":\"status\"}");
	cr_assert_eq(json_integer_value(path(resp, "budgets",
					     "sync_interval_ms")), 200);
	json_decref(resp);
}

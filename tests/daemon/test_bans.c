// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bans through a real daemon, as an operator meets them: a rule added
 * with --ban bans a source over its limit, which `rule list`, `top`, the
 * limit events and /metrics show; the rule and its ban survive a restart;
 * bad ban input is refused in one line and nothing is applied.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "bucket.h"
#include "daemon.h"
#include "fixture.h"

#define PARSER "tests/data/parse_metrics.py"

static struct daemon_env env;
static __u64 clock_ns;
static char out[1 << 16];
static char listen_at[64];
static char samples[1 << 18];

static void setup(void)
{
	env_setup(&env);
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d",
		 20000 + (getpid() + 7) % 30000);
	env_write(&env, NULL, "default:\n  action: allow\n"
		  "events: {quiet_period: 10s, max_per_second: 50}\n");
	/* The program's clock where the daemon's is, so that a ban's end
	 * is judged alike on both sides. */
	clock_ns = xrl_datapath_now_ns();
	xrl_datapath_set_time(&env.dp, clock_ns);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(bans_daemon, .init = setup, .fini = teardown, .timeout = 120);

static int cli(const char *args)
{
	return env_cli(&env, out, sizeof(out), args, true);
}

static int send_from(const char *src, int count)
{
	struct packet pkt;
	int i, verdict = -1;

	cr_assert_eq(packet_from(&pkt, src), 0);
	for (i = 0; i < count; i++)
		verdict = fixture_run(&env.dp, &pkt);
	return verdict;
}

/* The line of @what's output that holds @needle, or NULL (static). */
static const char *line_with(const char *needle)
{
	static char line[512];
	const char *at = strstr(out, needle), *end;

	if (!at)
		return NULL;
	while (at > out && at[-1] != '\n')
		at--;
	end = strchr(at, '\n');
	snprintf(line, sizeof(line), "%.*s",
		 (int)(end ? end - at : (long)strlen(at)), at);
	return line;
}

static void wait_for_log(const char *text)
{
	int i;

	for (i = 0; i < 500 && !log_contains(&env, text); i++)
		poll(NULL, 0, 10);
	cr_assert(log_contains(&env, text), "no \"%s\" in:\n%s", text,
		  daemon_log(&env));
}

static void scrape(void)
{
	char command[PATH_MAX * 3];
	size_t len;
	FILE *pipe;
	int status;

	snprintf(command, sizeof(command),
		 "curl -sS --fail --max-time 10 -o %s/metrics.txt "
		 "http://%s/metrics && /usr/bin/python3 " PARSER
		 " < %s/metrics.txt 2>&1", env.dir, listen_at, env.dir);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	len = fread(samples, 1, sizeof(samples) - 1, pipe);
	samples[len] = '\0';
	status = pclose(pipe);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "scrape refused: %s", samples);
}

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

/* A second later (within the hour's ban, a token more for the rest). */
static void ban_holds(const char *when)
{
	const char *line;

	clock_ns += NS_PER_S;
	xrl_datapath_set_time(&env.dp, clock_ns);
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	line = line_with(" login ");
	cr_assert(line && strstr(line, " ban 1h max 4h"), "%s: %s", when, out);
	cr_assert_eq(send_from("198.18.50.7", 1), XDP_DROP, "%s: %s", when,
		     out);
	/* A neighbour of the banned source is within its limit. */
	cr_assert_eq(send_from("198.18.50.8", 1), XDP_PASS, "%s", when);
}

Test(bans_daemon, a_rule_with_a_ban_bans_shows_everywhere_and_survives_restart)
{
	const char *line;

	daemon_start(&env, "--metrics", listen_at, NULL);
	cr_assert_eq(cli("rule add 198.18.50.0/24 --name login --pps 10 "
			 "--burst 2 --ban 1h --ban-max 4h"), 0, "%s", out);
	/* The burst of 2 passes, the third packet is the first drop: the
	 * ban starts; the next five are banned. */
	cr_assert_eq(send_from("198.18.50.7", 3), XDP_DROP);
	cr_assert_eq(send_from("198.18.50.7", 5), XDP_DROP);
	wait_for_log("info: source 198.18.50.7 banned by rule login for 1h\n");

	cr_assert_eq(cli("rule list"), 0, "%s", out);
	line = line_with(" login ");
	cr_assert(line && strstr(line, "(passed 2, dropped 1, banned 5)"),
		  "%s", out);
	cr_assert_eq(cli("top"), 0, "%s", out);
	line = line_with("198.18.50.7");
	cr_assert(line && strstr(line, "banned 3600s more"), "%s", out);

	scrape();
	cr_assert_eq(sample("xdp_ratelimit_bans_started_total{}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_ban_repeats_total{}"), 0);
	cr_assert_eq(sample("xdp_ratelimit_active_bans{}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"banned\"}"),
		     5);
	cr_assert_eq(sample("xdp_ratelimit_rule_packets_total{rule=\"login\","
			    "verdict=\"banned\"}"), 5);
	cr_assert_eq(sample("xdp_ratelimit_packets_total{verdict=\"drop\"}"),
		     1);
	ban_holds("after the change");

	cr_assert_eq(cli("reload"), 0, "%s", out);
	ban_holds("after reload");
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, "--metrics", listen_at, NULL);
	ban_holds("after a restart");

	/* Replaced without --ban, the rule lets its banned source go. */
	cr_assert_eq(cli("rule add 198.18.50.0/24 --name login --pps 10 "
			 "--burst 2 --replace"), 0, "%s", out);
	cr_assert_eq(send_from("198.18.50.7", 1), XDP_PASS);
}

/* Each refused in one line naming the option; the policy unchanged. */
Test(bans_daemon, bad_ban_input_is_one_line_and_nothing_is_applied)
{
	static const struct {
		const char *args, *said;
	} bad[] = {
		{ "--pps 10 --burst 2 --ban 30",
		  "--ban: \"30\" is not a duration such as 30s, 500ms, 10m, "
		  "1h or 7d" },
		{ "--pps 10 --burst 2 --ban 31d",
		  "--ban: \"31d\" is over the maximum 30d" },
		{ "--pps 10 --burst 2 --ban 0s",
		  "--ban: a ban lasts at least 1ms" },
		{ "--pps 10 --burst 2 --ban 1m --ban-max 30s",
		  "--ban-max: shorter than ban:" },
		{ "--pps 10 --burst 2 --ban-after 5s",
		  "--ban-after: needs ban: (how long a ban lasts)" },
		{ "--action allow --ban 1m",
		  "--ban: only a limit rule bans (this one is allow)" },
		{ "--action monitor --pps 10 --burst 2 --ban 1m",
		  "--ban: only a limit rule bans (this one is monitor)" },
		{ "--pps 10 --burst 2 --scope aggregate --ban 1m",
		  "--ban: only a rule of scope source bans (an aggregate has "
		  "no source to ban)" },
	};
	char args[256];
	const char *nl;
	size_t i;

	daemon_start(&env, NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "rule add 198.18.51.0/24 %s",
			 bad[i].args);
		cr_assert_eq(cli(args), 1, "%s: %s", args, out);
		cr_assert(strstr(out, bad[i].said), "%s: %s", args, out);
		nl = strchr(out, '\n');
		cr_assert(nl && !nl[1], "one line: %s", out);
	}
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert_null(strstr(out, "198.18.51.0/24"), "%s", out);
	cr_assert_eq(send_from("198.18.51.1", 10), XDP_PASS);
}

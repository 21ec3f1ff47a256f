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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "bucket.h"
#include "cidr.h"
#include "clock.h"
#include "daemon.h"
#include "fixture.h"
#include "loader.h"
#include "manual_bans.h"

#define PARSER "tests/data/parse_metrics.py"

static struct daemon_env env;
static __u64 clock_ns;
static char out[1 << 16];
static char listen_at[64];
static char samples[1 << 18];
static char ro_dir[PATH_MAX];

static void setup(void)
{
	env_setup(&env);
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d",
		 20000 + (getpid() + 7) % 30000);
	env_write(&env, NULL, "default:\n  action: allow\n"
		  "events: {quiet_period: 10s, max_per_second: 50}\n");
	/* The program's clock where the daemon's is, so that a ban's end
	 * is judged alike on both sides. */
	clock_ns = xrl_clock_ns(CLOCK_MONOTONIC);
	xrl_datapath_set_time(&env.dp, clock_ns);
}

static void teardown(void)
{
	if (ro_dir[0]) {
		umount2(ro_dir, MNT_DETACH);
		rmdir(ro_dir);
		ro_dir[0] = '\0';
	}
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

/*
 * Whether @line says a ban of @total_s has @total_s left, as the daemon
 * words it before @suffix ("s more", " s left"): it counts on the real
 * clock, the program's ban on the test clock set from it, so a loaded
 * machine may show a second or a few less (never more).
 */
static bool ban_left_is(const char *line, const char *suffix, long total_s)
{
	const char *end = line ? strstr(line, suffix) : NULL;
	const char *start;
	long left;

	if (!end)
		return false;
	for (start = end; start > line && start[-1] >= '0' && start[-1] <= '9';
	     start--)
		;
	if (start == end)
		return false;
	left = strtol(start, NULL, 10);
	return left <= total_s && left >= total_s - 30;
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
	cr_assert(ban_left_is(line, "s more", 3600), "%s", out);

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
		{ "--pps 10 --burst 2 --escalate-prefix 28 --escalate-after 3 "
		  "--escalate-within 1m --escalate-ban 1h",
		  "--escalate-prefix: needs ban: (escalation counts the "
		  "rule's bans)" },
		{ "--pps 10 --burst 2 --ban 1m --escalate-prefix 16 "
		  "--escalate-after 3 --escalate-within 1m --escalate-ban 1h",
		  "--escalate-prefix: /16 is wider than the rule's /24" },
		{ "--pps 10 --burst 2 --ban 1m --escalate-prefix 28",
		  "--escalate-after: escalation needs escalate_prefix:, "
		  "escalate_after:, escalate_within: and escalate_ban:" },
		{ "--pps 10 --burst 2 --ban 1m --escalate-prefix 28 "
		  "--escalate-after 99 --escalate-within 1m --escalate-ban 1h",
		  "--escalate-after: \"99\" must be 2 to 16" },
		{ "--pps 10 --burst 2 --ban 1m --escalate-prefix 28 "
		  "--escalate-after 3 --escalate-within 1m --escalate-ban x",
		  "--escalate-ban: \"x\" is not a duration" },
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

/* ---- bans by hand ---------------------------------------------------- */

static const char manual_policy[] =
	"default:\n  action: allow\nrules:\n"
	"  - name: trusted\n    cidr: 198.18.60.5\n    action: allow\n"
	"  - name: net\n    cidr: 198.18.60.0/24\n    pps: 1k\n    burst: 1k\n";

static void manual_bans_hold(const char *when)
{
	cr_assert_eq(send_from("198.18.60.5", 1), XDP_DROP, "%s", when);
	cr_assert_eq(send_from("198.18.60.77", 1), XDP_DROP, "%s", when);
	cr_assert_eq(send_from("fd00:60::1", 1), XDP_DROP, "%s", when);
	cr_assert_eq(send_from("198.18.61.1", 1), XDP_PASS, "%s", when);
	cr_assert_eq(cli("bans"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "198.18.60.0/24"), "%s: %s", when, out);
	cr_assert_not_null(line_with("fd00:60::/48"), "%s: %s", when, out);
	cr_assert(strstr(line_with("fd00:60::/48"), "until unban"), "%s", out);
}

Test(bans_daemon, a_manual_ban_wins_survives_reload_and_restart_and_expires)
{
	struct xrl_settings settings;
	const char *line;

	env_write(&env, NULL, manual_policy);
	daemon_start(&env, NULL);
	cr_assert_eq(send_from("198.18.60.5", 1), XDP_PASS);
	cr_assert_eq(cli("ban 198.18.60.0/24 --for 1h"), 0, "%s", out);
	cr_assert(strstr(out, "banned: 198.18.60.0/24") &&
		  strstr(out, "3600 s left"), "%s", out);
	cr_assert_eq(cli("ban fd00:60::/48"), 0, "%s", out);
	/* The /32 allow rule is longer, and loses to the ban. */
	manual_bans_hold("after the bans");
	cr_assert_eq(cli("bans"), 0, "%s", out);
	line = line_with("198.18.60.0/24");
	cr_assert(line && strstr(line, "(dropped 2)"), "%s", out);
	cr_assert_eq(fixture_count(&env.dp, XRL_VERDICT_BANNED), 3);

	cr_assert_eq(cli("reload"), 0, "%s", out);
	manual_bans_hold("after reload");
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	manual_bans_hold("after a restart");
	cr_assert(log_contains(&env, "2 bans from"), "%s", daemon_log(&env));
	daemon_stop(&env, SIGKILL);
	daemon_start(&env, NULL);
	manual_bans_hold("after a kill and a start");

	/* An hour on, by the program's clock, the first ban is over. */
	xrl_datapath_set_time(&env.dp, xrl_clock_ns(CLOCK_MONOTONIC) + 3601 * NS_PER_S);
	cr_assert_eq(send_from("198.18.60.5", 1), XDP_PASS);
	cr_assert_eq(send_from("fd00:60::1", 1), XDP_DROP);

	cr_assert_eq(cli("unban fd00:60::/48"), 0, "%s", out);
	cr_assert_eq(send_from("fd00:60::1", 1), XDP_PASS);
	cr_assert_eq(cli("unban fd00:60::/48"), 1, "%s", out);
	cr_assert(strstr(out, "fd00:60::/48 is not banned"), "%s", out);

	/* Lifting the last ban turns the program's lookup off. */
	cr_assert_eq(xrl_datapath_settings(&env.dp, &settings), 0);
	cr_assert_eq(settings.manual_bans, 1);
	cr_assert_eq(cli("unban 198.18.60.0/24"), 0, "%s", out);
	cr_assert_eq(xrl_datapath_settings(&env.dp, &settings), 0);
	cr_assert_eq(settings.manual_bans, 0);
	cr_assert_eq(cli("bans"), 0, "%s", out);
	cr_assert_str_eq(out, "");
}

Test(bans_daemon, bad_manual_bans_are_one_line_and_nothing_is_applied)
{
	static const struct {
		const char *args, *said;
	} bad[] = {
		{ "ban 198.18.60.1/24", "has host bits set" },
		{ "ban 198.18.300.0/24", "is not an IPv4 or IPv6 address" },
		{ "ban 0.0.0.0/0", "would ban every source of its family" },
		{ "ban ::/0", "would ban every source of its family" },
		{ "ban 198.18.60.0/24 --for 10", "--for: \"10\" is not a "
		  "duration" },
		{ "ban 198.18.60.0/24 --for 31d", "--for: \"31d\" is not a "
		  "duration" },
		{ "ban", "expected one ADDR[/LEN]" },
		{ "unban 198.18.60.0/24", "198.18.60.0/24 is not banned" },
	};
	const char *nl;
	size_t i;

	env_write(&env, NULL, manual_policy);
	daemon_start(&env, NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(cli(bad[i].args), 1, "%s: %s", bad[i].args, out);
		cr_assert(strstr(out, bad[i].said), "%s: %s", bad[i].args,
			  out);
		nl = strchr(out, '\n');
		cr_assert(nl && !nl[1], "one line: %s", out);
	}
	cr_assert_eq(cli("bans"), 0, "%s", out);
	cr_assert_str_eq(out, "");
	cr_assert_eq(send_from("198.18.60.77", 1), XDP_PASS);
}

Test(bans_daemon, a_ban_that_cannot_be_saved_is_refused_and_not_applied)
{
	char state[PATH_MAX + 32];
	const char *nl;

	snprintf(ro_dir, sizeof(ro_dir), "%s/ro", env.dir);
	cr_assert_eq(mkdir(ro_dir, 0700), 0);
	cr_assert_eq(mount("xrl-test-ro", ro_dir, "tmpfs", MS_RDONLY,
			   "size=64k,mode=0700"), 0, "mount: %m");
	snprintf(state, sizeof(state), "%s/policy.applied.yaml", ro_dir);
	env_write(&env, NULL, manual_policy);
	daemon_start(&env, "--state", state, NULL);

	cr_assert_eq(cli("ban 198.18.60.0/24 --for 1h"), 1, "%s", out);
	cr_assert(strstr(out, "policy.bans.json: Read-only file system; "
			 "nothing changed"), "%s", out);
	nl = strchr(out, '\n');
	cr_assert(nl && !nl[1], "one line: %s", out);
	cr_assert_eq(send_from("198.18.60.77", 1), XDP_PASS);
	cr_assert_eq(cli("bans"), 0, "%s", out);
	cr_assert_str_eq(out, "");
}

/* Entries of the pinned xrl_manual_bans, walked key by key with libbpf. */
static long pinned_ban_entries(void)
{
	struct xrl_manual_ban_key key, next;
	char path[PATH_MAX + 32];
	long n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", env.pin_dir,
		 XRL_MAP_MANUAL_BANS);
	fd = bpf_obj_get(path);
	cr_assert_geq(fd, 0, "%s: %m", path);
	while (!bpf_map_get_next_key(fd, n ? &key : NULL, &next)) {
		key = next;
		n++;
	}
	close(fd);
	return n;
}

/* The bans `bans --json` lists. */
static size_t listed_bans(void)
{
	json_t *response = request_ok(&env, "{\"cmd\":\"bans\"}");
	size_t n = json_array_size(json_object_get(response, "bans"));

	json_decref(response);
	return n;
}

#define SHORT_BANS 300

Test(bans_daemon, ended_bans_leave_the_map_and_a_new_one_still_fits)
{
	json_t *status, *fill;
	long long started;
	long entries;
	int i;

	env_write(&env, NULL, manual_policy);
	daemon_start(&env, NULL);
	json_decref(request_ok(&env, "{\"cmd\":\"ban\", "
			       "\"cidr\":\"198.18.60.0/24\"}"));
	started = xrl_clock_ns(CLOCK_MONOTONIC) / XRL_NS_PER_MS;
	for (i = 0; i < SHORT_BANS; i++)
		json_decref(request_ok(&env, "{\"cmd\":\"ban\", \"cidr\":"
				       "\"10.%d.%d.0/24\", \"for\":\"1ms\"}",
				       i / 256, i % 256));
	/* Each ends a millisecond after it was made: the daemon's timer
	 * lifts it, within a second of the last. */
	while (listed_bans() > 1 || pinned_ban_entries() > 1) {
		cr_assert_lt(xrl_clock_ns(CLOCK_MONOTONIC) / XRL_NS_PER_MS -
			     started, 5000, "still %zu listed, %ld in the map",
			     listed_bans(), pinned_ban_entries());
		poll(NULL, 0, 10);
	}
	entries = pinned_ban_entries();
	cr_assert_eq(entries, 1, "the map holds %ld", entries);
	cr_assert_eq(listed_bans(), 1);
	cr_assert(log_contains(&env, "ended"), "%s", daemon_log(&env));

	/* A new ban still fits, and the one until unban still holds. */
	cr_assert_eq(cli("ban 198.18.61.0/24 --for 1h"), 0, "%s", out);
	cr_assert_eq(send_from("198.18.61.1", 1), XDP_DROP);
	cr_assert_eq(send_from("198.18.60.77", 1), XDP_DROP);
	cr_assert_eq(send_from("10.0.5.1", 1), XDP_PASS);
	cr_assert_eq(pinned_ban_entries(), 2);
	cr_assert_eq(listed_bans(), 2);

	/* status shows the map's fill and capacity, text and JSON. */
	cr_assert_eq(cli("status"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "bans:       2 by hand in "
				  "xrl_manual_bans of 16384"), "%s", out);
	status = request_ok(&env, "{\"cmd\":\"status\"}");
	fill = json_object_get(status, "manual_bans");
	cr_assert_eq(json_integer_value(json_object_get(fill, "entries")), 2);
	cr_assert_eq(json_integer_value(json_object_get(fill, "max_entries")),
		     XRL_MANUAL_BANS);
	json_decref(status);
	/* The file keeps the two in force and none that ended. */
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	cr_assert(log_contains(&env, "2 bans from"), "%s", daemon_log(&env));
	cr_assert_eq(pinned_ban_entries(), 2);
}

Test(bans_daemon, the_map_s_fill_and_capacity_are_in_metrics)
{
	daemon_start(&env, "--metrics", listen_at, NULL);
	cr_assert_eq(cli("ban 198.18.62.0/24 --for 1h"), 0, "%s", out);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_manual_bans{}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_manual_bans_capacity{}"),
		     XRL_MANUAL_BANS);
}

/* /metrics counts the bans by hand in force among the active bans, not
 * one that ended (issue 24 item 5). */
Test(bans_daemon, bans_by_hand_in_force_are_active_bans_in_metrics)
{
	daemon_start(&env, "--metrics", listen_at, NULL);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_active_bans{}"), 0);
	cr_assert_eq(cli("ban 198.18.62.0/24 --for 1h"), 0, "%s", out);
	cr_assert_eq(cli("ban fd00:62::/48"), 0, "%s", out);
	cr_assert_eq(send_from("198.18.62.1", 1), XDP_DROP);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_active_bans{}"), 2);
	cr_assert_eq(cli("unban fd00:62::/48"), 0, "%s", out);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_active_bans{}"), 1);
}

Test(bans_daemon, bans_that_ended_while_stopped_leave_the_map_at_start)
{
	struct xrl_manual_ban_entry gone = { .until_ms = 1 };
	struct xrl_manual_ban_key key;
	struct xrl_manual_ban value = {};
	char bans[PATH_MAX + 32], text[256];
	uint64_t ended = (uint64_t)time(NULL) * 1000 - 60000;

	env_write(&env, NULL, manual_policy);
	daemon_start(&env, NULL);
	daemon_stop(&env, SIGTERM);
	/* A minute ago, by the file; and an entry a run left in the map. */
	snprintf(bans, sizeof(bans), "%s/policy.bans.json", env.dir);
	snprintf(text, sizeof(text), "{\"version\": 1, \"bans\": [{\"cidr\": "
		 "\"198.18.63.0/24\", \"until_ms\": %llu}, {\"cidr\": "
		 "\"198.18.64.0/24\"}]}\n", (unsigned long long)ended);
	env_write(&env, bans, text);
	cr_assert_eq(xrl_cidr_parse("198.18.63.0/24", &gone.prefix), 0);
	xrl_manual_ban_key(&gone.prefix, &key);
	cr_assert_eq(bpf_map_update_elem(env.dp.manual_bans_fd, &key, &value,
					 0), 0);
	cr_assert_eq(pinned_ban_entries(), 1);

	daemon_start(&env, NULL);
	cr_assert(log_contains(&env, "1 ban from"), "%s", daemon_log(&env));
	cr_assert_eq(listed_bans(), 1);
	cr_assert_eq(pinned_ban_entries(), 1);
	cr_assert_eq(send_from("198.18.63.1", 1), XDP_PASS);
	cr_assert_eq(send_from("198.18.64.1", 1), XDP_DROP);
}

/* The program's id and the ids of every map in force, inner maps too
 * (status's memory list), as one line to compare. */
static void ids_in_force(char *ids, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	char pin[PATH_MAX + 32];
	json_t *status, *maps, *m;
	size_t i, at;
	int fd;

	snprintf(pin, sizeof(pin), "%s/xdp_ratelimit", env.pin_dir);
	fd = bpf_obj_get(pin);
	cr_assert_geq(fd, 0, "%s", pin);
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &info_len), 0);
	close(fd);
	at = (size_t)snprintf(ids, len, "prog %u maps", info.id);
	cr_assert_eq(cli("status --json"), 0, "%s", out);
	status = json_loads(out, 0, NULL);
	cr_assert_not_null(status, "%s", out);
	maps = json_object_get(json_object_get(status, "memory"), "maps");
	cr_assert_gt(json_array_size(maps), 0, "%s", out);
	json_array_foreach(maps, i, m)
		at += (size_t)snprintf(ids + at, len - at, " %lld",
				       (long long)json_integer_value(
					       json_object_get(m, "id")));
	json_decref(status);
}

/* README and docs/PROTOCOL.md: a restart carries on with what is in
 * force; a manual ban's lookup is part of it (issue 24 item 8). */
Test(bans_daemon, a_restart_with_a_manual_ban_carries_on_with_the_same_maps)
{
	char before[4096], after[4096];

	env_write(&env, NULL, manual_policy);
	daemon_start(&env, NULL);
	cr_assert_eq(cli("ban 198.18.60.0/24"), 0, "%s", out);
	cr_assert_eq(send_from("198.18.60.5", 1), XDP_DROP);
	ids_in_force(before, sizeof(before));
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	ids_in_force(after, sizeof(after));
	cr_assert_str_eq(after, before);
	cr_assert(log_contains(&env, "carrying on with the policy in force"),
		  "%s", daemon_log(&env));
	cr_assert_eq(send_from("198.18.60.5", 1), XDP_DROP);
	cr_assert_eq(send_from("198.18.61.5", 1), XDP_PASS);
	cr_assert_eq(fixture_count(&env.dp, XRL_VERDICT_BANNED), 2);
}

/* Escalation (docs/POLICY.md "Escalation") as an operator meets it: the
 * rule added with its options, three sources of a /24 banned, the /24
 * banned whole, listed by bans, counted in /metrics, lifted by unban of
 * the prefix (not of an address inside it). */
Test(bans_daemon, three_banned_sources_escalate_to_their_24_until_unban)
{
	const char *line;

	daemon_start(&env, "--metrics", listen_at, NULL);
	cr_assert_eq(cli("rule add 198.18.0.0/16 --name edge --pps 10 "
			 "--burst 2 --ban 1h --escalate-prefix 24 "
			 "--escalate-after 3 --escalate-within 10m "
			 "--escalate-ban 2h"), 0, "%s", out);
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	line = line_with(" edge ");
	cr_assert(line && strstr(line, " ban 1h escalate /24 after 3 within "
				 "10m for 2h"), "%s", out);
	/* The program's clock at the daemon's now: times left read whole. */
	clock_ns = xrl_clock_ns(CLOCK_MONOTONIC);
	xrl_datapath_set_time(&env.dp, clock_ns);
	cr_assert_eq(send_from("198.18.60.1", 3), XDP_DROP);
	cr_assert_eq(send_from("198.18.60.2", 3), XDP_DROP);
	cr_assert_eq(send_from("198.18.60.99", 1), XDP_PASS, "two escalated");
	cr_assert_eq(send_from("198.18.60.3", 3), XDP_DROP);
	/* A fresh address of the /24 is banned, one of another /24 not. */
	cr_assert_eq(send_from("198.18.60.200", 1), XDP_DROP);
	cr_assert_eq(send_from("198.18.60.99", 1), XDP_DROP);
	cr_assert_eq(send_from("198.18.61.1", 1), XDP_PASS);
	/* The escalation is a limit event of its own. */
	wait_for_log("info: prefix 198.18.60.0/24 banned by rule edge for 2h "
		     "(escalated: 3 of its sources banned)\n");

	cr_assert_eq(cli("bans"), 0, "%s", out);
	line = line_with("198.18.60.0/24");
	cr_assert(ban_left_is(line, " s left", 7200) &&
		  strstr(line, "escalated by rule edge"), "%s", out);
	/* top: a banned source of it is banned as long as its prefix. */
	cr_assert_eq(cli("top"), 0, "%s", out);
	line = line_with("198.18.60.1/32 ");
	cr_assert(ban_left_is(line, "s more (198.18.60.0/24 escalated)", 7200),
		  "%s", out);
	/* explain says why a fresh address is dropped. */
	cr_assert_eq(cli("explain 198.18.60.77"), 0, "%s", out);
	line = line_with("escalated");
	cr_assert(line && strstr(line, "its prefix 198.18.60.0/24, escalated "
				 "(1 time)"), "%s", out);
	cr_assert(strstr(out, "next packet: dropped, counted as banned"),
		  "%s", out);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_escalations_total{}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_escalated_bans{}"), 1);
	cr_assert_eq(sample("xdp_ratelimit_rule_escalated_bans{rule=\"edge\"}"),
		     1);
	cr_assert_eq(sample("xdp_ratelimit_bans_started_total{}"), 3);

	/* An address inside is not the prefix: nothing lifted. */
	cr_assert_neq(cli("unban 198.18.60.200"), 0, "%s", out);
	cr_assert(strstr(out, "198.18.60.200/32 is not banned"), "%s", out);
	cr_assert_eq(send_from("198.18.60.200", 1), XDP_DROP);
	cr_assert_eq(cli("unban 198.18.60.0/24"), 0, "%s", out);
	/* The ban ends at the daemon's now: the program's clock is the
	 * same monotonic clock (the test's, caught up). */
	clock_ns = xrl_clock_ns(CLOCK_MONOTONIC);
	xrl_datapath_set_time(&env.dp, clock_ns);
	cr_assert_eq(send_from("198.18.60.200", 1), XDP_PASS);
	cr_assert_eq(cli("bans"), 0, "%s", out);
	cr_assert_null(line_with("198.18.60.0/24"), "%s", out);
	scrape();
	cr_assert_eq(sample("xdp_ratelimit_escalated_bans{}"), 0);
	cr_assert_eq(sample("xdp_ratelimit_rule_escalated_bans{rule=\"edge\"}"),
		     0);
	wait_for_log("unbanned 198.18.60.0/24 (escalated, 1 rule)");
}

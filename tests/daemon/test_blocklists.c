// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Blocklists through a real daemon, as an operator meets them: a list of
 * the policy file in force from the start, shown by status (text and
 * JSON; /metrics: tests/bpf); `xdp-ratelimit blocklist reload NAME` swapping one
 * list alone while the policy stays; a bad line refusing the whole list,
 * the list in force kept; a reload of the policy re-reading its lists;
 * reloads under traffic, every frame judged by the old list or the new.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "daemon.h"
#include "fixture.h"

static struct daemon_env env;
static char out[1 << 16];
static char drop_path[PATH_MAX + 16], spam_path[PATH_MAX + 16];
static char listen_at[64];

static void setup(void)
{
	char yaml[2 * PATH_MAX + 256];

	env_setup(&env);
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d",
		 20000 + (getpid() + 11) % 30000);
	snprintf(drop_path, sizeof(drop_path), "%s/drop.txt", env.dir);
	snprintf(spam_path, sizeof(spam_path), "%s/spam.txt", env.dir);
	fixture_write_file(drop_path, "# drop\n198.18.4.0/24\nfd00:4::/64\n");
	fixture_write_file(spam_path, "198.18.6.0/24\n");
	snprintf(yaml, sizeof(yaml),
		 "default: {pps: 1000, burst: 1000}\n"
		 "rules:\n  - {cidr: 198.18.9.0/24, action: deny}\n"
		 "blocklists:\n"
		 "  - {name: drop, file: %s}\n"
		 "  - {name: spam, file: %s, action: monitor}\n",
		 drop_path, spam_path);
	env_write(&env, NULL, yaml);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(blocklists_daemon, .init = setup, .fini = teardown,
	  .timeout = 120);

static int cli(const char *args)
{
	return env_cli(&env, out, sizeof(out), args, true);
}

static int judge(const char *src)
{
	return fixture_run_from(&env.dp, src);
}

Test(blocklists_daemon, in_force_from_the_start_and_shown)
{
	json_t *status, *lists, *drop;

	daemon_start(&env, "--metrics", listen_at, NULL);
	cr_assert_eq(judge("198.18.4.1"), XDP_DROP);
	cr_assert_eq(judge("fd00:4::1"), XDP_DROP);
	cr_assert_eq(judge("198.18.6.1"), XDP_PASS, "monitor: judged on");
	cr_assert_eq(judge("198.18.5.1"), XDP_PASS);

	cr_assert_eq(cli("status"), 0, "%s", out);
	cr_assert(strstr(out, "  drop             deny     2 of 1048576 "
			      "entries, 2 hits\n"), "%s", out);
	cr_assert(strstr(out, "  spam             monitor  1 of 1048576 "
			      "entries, 1 hits\n"), "%s", out);
	status = request_ok(&env, "{\"cmd\":\"status\"}");
	lists = json_object_get(status, "blocklists");
	cr_assert_eq(json_array_size(lists), 2);
	drop = json_array_get(lists, 0);
	cr_assert_str_eq(json_string_value(json_object_get(drop, "name")),
			 "drop");
	cr_assert_eq(json_integer_value(json_object_get(drop, "entries")), 2);
	cr_assert_eq(json_integer_value(json_object_get(drop, "capacity")),
		     1048576);
	cr_assert_eq(json_integer_value(json_object_get(
			json_object_get(drop, "hits"), "packets")), 2);
	json_decref(status);

	cr_assert_eq(cli("stats"), 0, "%s", out);
	cr_assert(strstr(out, "blocklisted"), "%s", out);
}

Test(blocklists_daemon, one_list_reloaded_alone_the_policy_stays)
{
	json_t *before, *after, *reply;

	daemon_start(&env, NULL);
	before = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	fixture_write_file(drop_path, "198.18.5.0/24\n198.18.7.7\n");
	cr_assert_eq(cli("blocklist reload drop"), 0, "%s", out);
	cr_assert(strstr(out, "reloaded blocklist drop: 2 entries from "),
		  "%s", out);
	after = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	cr_assert(json_equal(json_object_get(before, "rules"),
			     json_object_get(after, "rules")));
	cr_assert_eq(judge("198.18.5.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.7.7"), XDP_DROP);
	cr_assert_eq(judge("198.18.4.1"), XDP_PASS, "the old list is gone");
	cr_assert_eq(judge("198.18.9.1"), XDP_DROP, "the rules stay");
	reply = request_ok(&env, "{\"cmd\":\"blocklist.reload\", "
			   "\"name\":\"spam\"}");
	cr_assert_eq(json_integer_value(json_object_get(reply, "entries")), 1);
	json_decref(reply);
	json_decref(before);
	json_decref(after);
}

Test(blocklists_daemon, a_bad_line_refuses_the_list_the_old_one_stays)
{
	char want[PATH_MAX + 128], args[PATH_MAX + 16];

	daemon_start(&env, NULL);
	fixture_write_file(drop_path, "198.18.5.0/24\n\n1.2.3.4/33\n");
	cr_assert_neq(cli("blocklist reload drop"), 0, "%s", out);
	snprintf(want, sizeof(want), "blocklist drop: %s:3: \"1.2.3.4/33\": "
		 "prefix longer than 32", drop_path);
	cr_assert(strstr(out, want), "%s", out);
	/* check reads the lists as a reload would. */
	snprintf(args, sizeof(args), "check %s", env.config);
	cr_assert_neq(cli(args), 0, "%s", out);
	cr_assert(strstr(out, want + strlen("blocklist ")), "%s", out);
	cr_assert(strstr(out, "blocklists: drop: "), "%s", out);
	cr_assert_eq(judge("198.18.4.1"), XDP_DROP, "the list in force stays");
	cr_assert_eq(judge("198.18.5.1"), XDP_PASS);
	cr_assert_str_eq(request_fail(&env, "{\"cmd\":\"blocklist.reload\", "
				      "\"name\":\"nope\"}"),
			 "blocklist.reload: no blocklist named nope in the "
			 "policy in force");
	/* The daemon serves on. */
	json_decref(request_ok(&env, "{\"cmd\":\"status\"}"));
}

Test(blocklists_daemon, a_policy_reload_reads_the_lists_again)
{
	daemon_start(&env, NULL);
	fixture_write_file(drop_path, "198.18.5.0/24\n");
	cr_assert_eq(cli("reload"), 0, "%s", out);
	cr_assert_eq(judge("198.18.5.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.4.1"), XDP_PASS);
	/* A rule added keeps the tries in force without reading them. */
	fixture_write_file(drop_path, "198.18.8.0/24\n");
	cr_assert_eq(cli("rule add 198.18.10.0/24 --action deny"), 0, "%s",
		     out);
	cr_assert_eq(judge("198.18.5.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.8.1"), XDP_PASS);
	cr_assert_eq(judge("198.18.10.1"), XDP_DROP);
	/* A policy reload refused by a list leaves everything in force. */
	fixture_write_file(drop_path, "not an address\n");
	cr_assert_neq(cli("reload"), 0, "%s", out);
	cr_assert(strstr(out, "drop.txt:1: \"not an address\": not an IPv4 "
			      "or IPv6 address or CIDR"), "%s", out);
	cr_assert_eq(judge("198.18.5.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.10.1"), XDP_DROP);
}

/*
 * 40 reloads of one list through the daemon under traffic from a source
 * both versions of the file hold: every frame met the old trie or the
 * new one, whole (dropped), never neither (passed).
 */
Test(blocklists_daemon, reloads_under_traffic_judge_every_frame)
{
	struct fixture_traffic t;
	json_t *reply;
	int i;

	daemon_start(&env, NULL);
	fixture_traffic_start(&t, &env.dp, "198.18.4.7");
	for (i = 0; i < 40; i++) {
		fixture_write_file(drop_path, i % 2 ? "198.18.4.0/24\n" :
			   "198.18.4.7\n198.18.5.0/24\n");
		reply = request_ok(&env, "{\"cmd\":\"blocklist.reload\", "
				   "\"name\":\"drop\"}");
		cr_assert_eq(json_integer_value(json_object_get(reply,
							       "entries")),
			     i % 2 ? 1 : 2);
		json_decref(reply);
	}
	fixture_traffic_stop(&t);
	cr_log_info("%llu frames through 40 reloads",
		    (unsigned long long)t.frames);
	cr_assert_gt(t.frames, 0);
	cr_assert_eq(t.dropped, t.frames, "every frame met a whole list");
	cr_assert_eq(judge("198.18.5.1"), XDP_PASS, "the last file in force");
}

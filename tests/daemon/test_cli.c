// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The CLI's daemon commands (rule add|del|list, reload, top) as an
 * operator types them, against a daemon run by the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"

static struct daemon_env env;
static char out[1 << 16];

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: limited\n    cidr: 198.18.1.0/24\n"
		  "    action: limit\n    pps: 10\n    burst: 2\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(cli, .init = setup, .fini = teardown, .timeout = 120);

static int cli_run(const char *args, bool with_socket)
{
	return env_cli(&env, out, sizeof(out), args, with_socket);
}

static int cli(const char *args)
{
	return cli_run(args, true);
}

Test(cli, rule_add_list_del_reload_and_top_go_through_the_daemon)
{
	struct packet pkt;
	char args[PATH_MAX + 64];
	int i;

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add 198.18.3.0/24 --name lab --action limit "
			 "--pps 1k --burst 3"), 0, "%s", out);
	cr_assert(strstr(out, "added:") && strstr(out, "lab") &&
		  strstr(out, "pps 1000/s burst 3"), "%s", out);
	cr_assert_eq(cli("rule add 198.18.3.0/24 --action deny"), 1);
	cr_assert(strstr(out, "already exists"), "%s", out);
	cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s",
		     out);

	cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert(strstr(out, "limited") && strstr(out, "198.18.1.0/24") &&
		  strstr(out, "lab"), "%s", out);
	cr_assert_eq(cli("rule list --json"), 0);
	cr_assert(strstr(out, "\"name\": \"lab\""), "%s", out);

	for (i = 0; i < 6; i++) {
		cr_assert_eq(packet_from(&pkt, "198.18.1.5"), 0);
		fixture_run(&env.dp, &pkt);
	}
	cr_assert_eq(cli("top -n 1"), 0, "%s", out);
	cr_assert(strstr(out, "198.18.1.5/32") && strstr(out, "limited") &&
		  strstr(out, " 4 "), "%s", out);

	cr_assert_eq(cli("rule del lab"), 0, "%s", out);
	cr_assert(strstr(out, "deleted:"), "%s", out);
	env_write(&env, NULL, "default:\n  action: deny\n");
	cr_assert_eq(cli("reload"), 0, "%s", out);
	cr_assert(strstr(out, ": 1 rules"), "%s", out);
	cr_assert_eq(fixture_run(&env.dp, &pkt), XDP_DROP);

	snprintf(args, sizeof(args), "reload %s/nothing.yaml", env.dir);
	cr_assert_eq(cli(args), 1);
	cr_assert(strstr(out, "nothing.yaml: No such file"), "%s", out);
}

Test(cli, without_a_daemon_the_cli_says_so_in_one_line_naming_the_socket)
{
	cr_assert_eq(cli("rule list"), 1);
	cr_assert(strstr(out, "xdp-ratelimitd is not running") &&
		  strstr(out, env.socket), "%s", out);
	cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "%s", out);
	/* The read-only commands need no daemon. */
	cr_assert_eq(cli_run("stats --json", false), 0, "%s", out);
}

/* The parser's verdicts, from the file through the daemon to the data
 * path, and shown by rule list. */
Test(cli, vlan_overflow_and_ipv4_mapped_settings_are_applied_and_listed)
{
	struct packet_spec deep = { .src = "198.18.1.5", .n_vlan = 9 };
	struct packet pkt;

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert(strstr(out, "vlan_overflow: drop; ipv4_mapped: drop"), "%s",
		  out);
	cr_assert_eq(packet_build(&pkt, &deep), 0);
	cr_assert_eq(fixture_run(&env.dp, &pkt), XDP_DROP);
	cr_assert_eq(packet_from(&pkt, "::ffff:198.18.1.5"), 0);
	cr_assert_eq(fixture_run(&env.dp, &pkt), XDP_DROP);

	env_write(&env, NULL, "vlan_overflow: pass\nipv4_mapped: ipv6\n"
		  "default:\n  action: allow\n");
	cr_assert_eq(cli("reload"), 0, "%s", out);
	cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert(strstr(out, "vlan_overflow: pass; ipv4_mapped: ipv6"), "%s",
		  out);
	cr_assert_eq(cli("rule list --json"), 0);
	cr_assert(strstr(out, "\"vlan_overflow\": \"pass\"") &&
		  strstr(out, "\"ipv4_mapped\": \"ipv6\""), "%s", out);
	cr_assert_eq(fixture_run(&env.dp, &pkt), XDP_PASS, "judged: allowed");
	cr_assert_eq(packet_build(&pkt, &deep), 0);
	cr_assert_eq(fixture_run(&env.dp, &pkt), XDP_PASS);
	cr_assert_eq(fixture_count(&env.dp, XRL_VERDICT_VLAN_OVERFLOW), 2);
	cr_assert_eq(fixture_count(&env.dp, XRL_VERDICT_IPV4_MAPPED), 1);
}

static bool one_line(void)
{
	return strchr(out, '\n') == out + strlen(out) - 1;
}

Test(cli, rule_verbs_take_a_unique_prefix_and_ambiguous_ones_name_the_candidates)
{
	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule ad 198.18.4.0/24 --name pre --action deny"), 0,
		     "%s", out);
	cr_assert(strstr(out, "added:") && strstr(out, "pre"), "%s", out);
	cr_assert_eq(cli("ru l"), 0, "%s", out);
	cr_assert(strstr(out, "198.18.4.0/24") && strstr(out, "limited"),
		  "%s", out);
	cr_assert_eq(cli("rule de pre"), 0, "%s", out);
	cr_assert(strstr(out, "deleted:") && strstr(out, "pre"), "%s", out);

	cr_assert_eq(cli("rule ''"), 1, "%s", out);
	cr_assert(strstr(out, "xdp-ratelimit: rule: ambiguous '' (add, del, "
			      "list, revert)") && one_line(), "%s", out);
	/* "rev" is revert: nothing runtime is left to revert here. */
	cr_assert_eq(cli("rule rev --all"), 1, "%s", out);
	cr_assert(strstr(out, "no runtime change to revert") && one_line(),
		  "%s", out);
	cr_assert_eq(cli("rule adx 198.18.4.0/24"), 1, "%s", out);
	cr_assert(strstr(out, "expected 'add CIDR") && one_line(), "%s", out);
	cr_assert_eq(cli("st"), 1, "%s", out);
	cr_assert(strstr(out, "ambiguous command 'st' (status, stats)") &&
		  one_line(), "%s", out);
}

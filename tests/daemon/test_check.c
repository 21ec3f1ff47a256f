// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit check FILE as an operator runs it before a reload: the
 * daemon keeps a policy in force, the CLI checks other files against
 * it. A valid file: exit 0 and every change listed; a bad one: exit 1
 * and the loader's FILE:LINE: FIELD: line; in both cases the maps hold
 * exactly what they held before.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"

static struct daemon_env env;
static char out[8192];
static char other[PATH_MAX];

static const char in_force[] =
	"default:\n  action: allow\nrules:\n"
	"  - name: scanners\n    cidr: 198.18.1.0/24\n    action: deny\n"
	"  - name: web\n    cidr: 198.18.2.0/24\n    pps: 10\n    burst: 5\n"
	"  - name: lab\n    cidr: 198.18.4.0/24\n    pps: 10\n    burst: 5\n";

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, in_force);
	snprintf(other, sizeof(other), "%s/other.yaml", env.dir);
	daemon_start(&env, NULL);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(check, .init = setup, .fini = teardown, .timeout = 60);

static int check(const char *yaml)
{
	char args[PATH_MAX + 16];

	env_write(&env, other, yaml);
	snprintf(args, sizeof(args), "check %s", other);
	return env_cli(&env, out, sizeof(out), args, false);
}

Test(check, lists_what_would_change_and_applies_nothing)
{
	struct policy_dump before, after;
	char expect[PATH_MAX * 2 + 1024];

	dump_policy(&env, &before);
	cr_assert_eq(check("malformed: drop\n"
			   "default:\n  action: limit\n  pps: 1k\n  burst: 2k\n"
			   "rules:\n"
			   "  - name: web\n    cidr: 198.18.2.0/24\n"
			   "    pps: 20\n    burst: 5\n"
			   "  - name: new\n    cidr: 198.18.3.0/24\n"
			   "    action: deny\n"
			   "  - name: lab\n    cidr: 198.18.4.0/24\n"
			   "    pps: 10\n    burst: 5\n"), 0, "%s", out);
	snprintf(expect, sizeof(expect),
		 "%s: valid, 4 rules\n"
		 "against the policy in force in %s:\n", other, env.pin_dir);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	/* The map's walk order is the kernel's: look for each line. */
	cr_assert(strstr(out, "\n  change  default                  limit pps "
			 "1000/s burst 2000 (was allow)\n"), "%s", out);
	cr_assert(strstr(out, "\n  remove  198.18.1.0/24            deny\n"),
		  "%s", out);
	cr_assert(strstr(out, "\n  change  198.18.2.0/24            limit pps "
			 "20/s burst 5 (limits or scope)\n"), "%s", out);
	cr_assert(strstr(out, "\n  add     198.18.3.0/24            deny\n"),
		  "%s", out);
	cr_assert(strstr(out, "\n  settings change: malformed\n"), "%s", out);
	cr_assert(strstr(out, "\n  1 added, 1 removed, 2 changed, 1 unchanged "
			 "(of 4 in force)\nnothing applied\n"), "%s", out);
	cr_assert_not(strstr(out, "198.18.4.0/24"), "%s", out);

	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "check changed the maps");
	dump_free(&before);
	dump_free(&after);
}

Test(check, the_policy_in_force_itself_changes_nothing)
{
	cr_assert_eq(check(in_force), 0, "%s", out);
	cr_assert(strstr(out, "\n  settings unchanged\n  0 added, 0 removed, "
			 "0 changed, 4 unchanged (of 4 in force)\n"), "%s", out);
}

Test(check, a_bad_file_is_the_loaders_line_and_exit_1)
{
	struct policy_dump before, after;
	char expect[PATH_MAX + 128];

	dump_policy(&env, &before);
	cr_assert_eq(check("rules:\n  - cidr: 198.18.1.0/24\n    pps: 1.5\n"
			   "    burst: 1\n"), 1, "%s", out);
	snprintf(expect, sizeof(expect),
		 "%s:3: rules[0].pps: not a whole number (1.5)\n", other);
	cr_assert_str_eq(out, expect);
	cr_assert_eq(check("rules:\n  - cidr: 198.18.1.1/24\n"), 1);
	snprintf(expect, sizeof(expect), "%s:2: rules[0].cidr: host bits set "
		 "after the prefix length (198.18.1.1/24)\n", other);
	cr_assert_str_eq(out, expect);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "check /nonexistent.yaml",
			     false), 1);
	cr_assert_str_eq(out, "/nonexistent.yaml: cannot read: No such file "
			 "or directory\n");
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "check changed the maps");
	dump_free(&before);
	dump_free(&after);
}

Test(check, without_a_data_path_says_what_attach_would_apply)
{
	char args[PATH_MAX * 2];

	env_write(&env, other, in_force);
	snprintf(args, sizeof(args), "-P %s/none check %s", env.dir, other);
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, false), 0, "%s",
		     out);
	cr_assert(strstr(out, "valid, 4 rules\nno policy in force (nothing "
			 "pinned in "), "%s", out);
	cr_assert(strstr(out, "/none): attach would apply all 4 rules\n"
			 "nothing applied\n"), "%s", out);
}

Test(check, shows_the_levels_of_a_rule_it_would_add)
{
	cr_assert_eq(check("default:\n  action: allow\nrules:\n"
			   "  - name: scanners\n    cidr: 198.18.1.0/24\n"
			   "    action: deny\n"
			   "  - name: web\n    cidr: 198.18.2.0/24\n"
			   "    pps: 10\n    burst: 5\n"
			   "  - name: lab\n    cidr: 198.18.4.0/24\n"
			   "    pps: 10\n    burst: 5\n"
			   "  - name: new\n    cidr: 198.18.3.0/24\n"
			   "    pps: 10\n    burst: 5\n"
			   "    levels: [{prefix: 28, pps: 100, burst: 200},"
			   " {prefix: 26, bps: 8M, burst_bytes: 1M}]\n"),
		     0, "%s", out);
	cr_assert(strstr(out, "\n  add     198.18.3.0/24            limit pps "
			 "10/s burst 5 level 28:pps=100,burst=200 level "
			 "26:bps=8M,burst_bytes=1M\n"), "%s", out);
}

/* A level's limits are their own classifier entries: a change of them
 * alone is a change of the rule, and the same levels are none. */
Test(check, a_change_of_a_level_alone_is_a_change)
{
	static const char levelled[] =
		"default:\n  action: allow\nrules:\n"
		"  - name: lab\n    cidr: 198.18.4.0/24\n    pps: 10\n"
		"    burst: 5\n    levels: [{prefix: 28, pps: %s, burst: 200}]\n";
	char yaml[512];

	snprintf(yaml, sizeof(yaml), levelled, "100");
	env_write(&env, NULL, yaml);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reload", true), 0,
		     "%s", out);
	cr_assert_eq(check(yaml), 0, "%s", out);
	cr_assert(!strstr(out, "change  198.18.4.0/24"), "%s", out);
	snprintf(yaml, sizeof(yaml), levelled, "101");
	cr_assert_eq(check(yaml), 0, "%s", out);
	cr_assert(strstr(out, "\n  change  198.18.4.0/24"), "%s", out);
}

/* ---- check predicts reload, runtime changes included (issue 24 item 2) */

static char predicted[8192];
static char plan[8192];		/* its plan lines */

/* The plan lines of a check or reload output ("  add ...", "  settings
 * ...", "  N added, ..."), in order, into @buf. */
static void plan_lines(const char *text, char *buf, size_t len)
{
	const char *line, *end;
	size_t n = 0;

	buf[0] = '\0';
	for (line = text; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			break;
		if (strncmp(line, "  reload would", 14) && line[0] == ' ' &&
		    n + (end - line) + 2 < len) {
			memcpy(buf + n, line, end - line + 1);
			n += end - line + 1;
			buf[n] = '\0';
		}
	}
}

/*
 * Checks @yaml as the config file with the daemon's socket, reloads it,
 * and asserts that reload did what check said: the same plan lines, the
 * same count and runtime summary, and a second check that finds nothing
 * left to change. The check's output stays in @predicted.
 */
static void check_then_reload(const char *yaml, const char *summary)
{
	char args[PATH_MAX + 16], did[8192], head[PATH_MAX + 600];
	char want_check[700];
	long rules;

	env_write(&env, NULL, yaml);
	snprintf(args, sizeof(args), "check %s", env.config);
	cr_assert_eq(env_cli(&env, predicted, sizeof(predicted), args, true),
		     0, "%s", predicted);
	cr_assert(sscanf(strstr(predicted, "  reload would put ") ?: "",
			 "  reload would put %ld rules", &rules) == 1, "%s",
		  predicted);
	snprintf(want_check, sizeof(want_check),
		 "  reload would put %ld rules in force%s%s%s\n", rules,
		 summary[0] ? " (" : "", summary, summary[0] ? ")" : "");
	cr_assert(strstr(predicted, want_check), "%s", predicted);
	plan_lines(predicted, did, sizeof(did));
	strcpy(plan, did);

	cr_assert_eq(env_cli(&env, out, sizeof(out), "reload", true), 0, "%s",
		     out);
	snprintf(head, sizeof(head), "reloaded %s: %ld rules%s%s%s\n",
		 env.config, rules, summary[0] ? " (" : "", summary,
		 summary[0] ? ")" : "");
	cr_assert(!strncmp(out, head, strlen(head)), "%s", out);
	plan_lines(out, did, sizeof(did));
	cr_assert_str_eq(did, plan, "check said:\n%s\nreload did:\n%s", plan,
			 did);

	snprintf(args, sizeof(args), "check %s", env.config);
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, true), 0, "%s",
		     out);
	cr_assert(strstr(out, " 0 added, 0 removed, 0 changed, "), "after the "
		  "reload, check still finds changes:\n%s", out);
}

static void cli_ok(const char *args)
{
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, true), 0, "%s",
		     out);
}

static int judge(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	return fixture_run(&env.dp, &pkt);
}

/* The case: with a runtime rule in force, check predicted
 * "remove" of it; reload kept it. */
Test(check, a_runtime_rule_is_kept_as_reload_keeps_it)
{
	cli_ok("rule add 198.18.9.0/24 --name emergency --action deny");
	check_then_reload("default:\n  action: allow\nrules:\n"
			  "  - name: web\n    cidr: 198.18.2.0/24\n"
			  "    pps: 10\n    burst: 5\n"
			  "  - name: lab\n    cidr: 198.18.4.0/24\n"
			  "    pps: 10\n    burst: 5\n",
			  "1 runtime change kept: add 198.18.9.0/24");
	cr_assert(strstr(predicted, "\n  remove  198.18.1.0/24            "
			 "deny\n"), "%s", predicted);
	cr_assert_null(strstr(plan, "198.18.9.0/24   "), "%s", predicted);
	cr_assert_eq(judge("198.18.9.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.1.1"), XDP_PASS);
}

Test(check, a_runtime_deletion_is_kept_as_reload_keeps_it)
{
	cli_ok("rule del web");
	check_then_reload("default:\n  action: allow\nrules:\n"
			  "  - name: scanners\n    cidr: 198.18.1.0/24\n"
			  "    action: deny\n"
			  "  - name: web\n    cidr: 198.18.2.0/24\n"
			  "    pps: 10\n    burst: 5\n"
			  "  - name: lab\n    cidr: 198.18.4.0/24\n"
			  "    pps: 20\n    burst: 5\n",
			  "1 runtime change kept: delete 198.18.2.0/24");
	cr_assert(strstr(predicted, "\n  change  198.18.4.0/24            "
			 "limit pps 20/s burst 5 (limits or scope)\n"), "%s",
		  predicted);
	cr_assert_null(strstr(plan, "198.18.2.0/24"), "%s", predicted);
}

Test(check, a_runtime_change_of_a_file_rule_wins_as_in_reload)
{
	cli_ok("rule add 198.18.4.0/24 --pps 99 --burst 9 --replace");
	check_then_reload("default:\n  action: allow\nrules:\n"
			  "  - name: scanners\n    cidr: 198.18.1.0/24\n"
			  "    action: deny\n"
			  "  - name: web\n    cidr: 198.18.2.0/24\n"
			  "    pps: 10\n    burst: 5\n"
			  "  - name: lab\n    cidr: 198.18.4.0/24\n"
			  "    pps: 20\n    burst: 5\n"
			  "  - name: new\n    cidr: 198.18.3.0/24\n"
			  "    action: deny\n",
			  "1 runtime change kept: change 198.18.4.0/24");
	cr_assert(strstr(predicted, "\n  add     198.18.3.0/24            "
			 "deny\n"), "%s", predicted);
	cr_assert_null(strstr(plan, "198.18.4.0/24"), "%s", predicted);
	cli_ok("rule list");
	cr_assert(strstr(out, "pps 99/s burst 9"), "%s", out);
}

/* A file rule for a prefix the overlay deleted: not added while the
 * deletion stands (and said so); a runtime-only rule deleted leaves
 * nothing, so the file's rule for its prefix is added. */
Test(check, a_file_rule_the_overlay_deleted_as_in_reload)
{
	static const char with_new[] =
		"default:\n  action: allow\nrules:\n"
		"  - name: scanners\n    cidr: 198.18.1.0/24\n"
		"    action: deny\n"
		"  - name: web\n    cidr: 198.18.2.0/24\n"
		"    pps: 10\n    burst: 5\n"
		"  - name: lab\n    cidr: 198.18.4.0/24\n"
		"    pps: 10\n    burst: 5\n"
		"  - name: new\n    cidr: 198.18.3.0/24\n"
		"    action: deny\n";

	cli_ok("rule del scanners");
	cli_ok("rule add 198.18.3.0/24 --name trial --action deny");
	cli_ok("rule del trial");
	check_then_reload(with_new, "1 runtime change kept: delete "
			  "198.18.1.0/24");
	cr_assert(strstr(predicted, "\n  add     198.18.3.0/24            "
			 "deny\n"), "%s", predicted);
	cr_assert_null(strstr(plan, "198.18.1.0/24"), "%s", predicted);
	cr_assert_eq(judge("198.18.3.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.1.1"), XDP_PASS);

	/* The file drops scanners: the deletion goes, said by both. */
	check_then_reload("default:\n  action: allow\nrules:\n"
			  "  - name: web\n    cidr: 198.18.2.0/24\n"
			  "    pps: 10\n    burst: 5\n",
			  "1 runtime change dropped (no longer in the file): "
			  "delete 198.18.1.0/24");
}

/* build/xdp-ratelimit run as uid/gid nobody (65534); its exit code. */
static int cli_as_nobody(const char *args)
{
	char command[PATH_MAX * 4];
	size_t got;
	FILE *pipe;
	int status;

	snprintf(command, sizeof(command),
		 "setpriv --reuid=65534 --regid=65534 --clear-groups "
		 "build/xdp-ratelimit -P %s -S %s %s 2>&1", env.pin_dir,
		 env.socket, args);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	got = fread(out, 1, sizeof(out) - 1, pipe);
	out[got] = '\0';
	status = pclose(pipe);
	cr_assert(WIFEXITED(status), "%s did not exit", command);
	return WEXITSTATUS(status);
}

/* Issue 24, smaller: check as non-root printed "valid" and exited 1. It
 * works through the daemon (which reads the text it is sent, not the
 * file), and without one says in one line why it cannot compare. */
Test(check, as_non_root_works_through_the_daemon_or_says_why_not)
{
	char args[PATH_MAX + 16];
	const char *nl;

	cr_assert_eq(chmod(env.dir, 0755), 0);
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, "--socket-group", "nogroup", NULL);
	cli_ok("rule add 198.18.9.0/24 --name emergency --action deny");
	env_write(&env, other, in_force);
	cr_assert_eq(chmod(other, 0644), 0);
	snprintf(args, sizeof(args), "check %s", other);
	cr_assert_eq(cli_as_nobody(args), 0, "%s", out);
	cr_assert(strstr(out, "valid, 4 rules\n"), "%s", out);
	cr_assert(strstr(out, "  reload would put 5 rules in force (1 runtime "
			 "change kept: add 198.18.9.0/24)\n"), "%s", out);
	cr_assert(strstr(out, "  0 added, 0 removed, 0 changed, 5 unchanged "
			 "(of 5 in force)\nnothing applied\n"), "%s", out);

	/* A file nobody may read is refused by the CLI, not read by the
	 * daemon for it. */
	cr_assert_eq(chmod(other, 0600), 0);
	cr_assert_eq(cli_as_nobody(args), 1, "%s", out);
	cr_assert(strstr(out, ": cannot read: Permission denied\n"), "%s", out);

	/* No daemon: root is needed to read the pins; one line, exit 1. */
	cr_assert_eq(chmod(other, 0644), 0);
	daemon_stop(&env, SIGTERM);
	cr_assert_eq(cli_as_nobody(args), 1, "%s", out);
	nl = strchr(out, '\n');
	cr_assert(nl && !nl[1], "one line: %s", out);
	cr_assert_null(strstr(out, "valid"), "%s", out);
	cr_assert(strstr(out, "xdp-ratelimit: check: comparing with the policy "
			 "in force needs xdp-ratelimitd on ") &&
		  strstr(out, " or root: permission denied"), "%s", out);
}

/* What reload would refuse, check refuses with reload's line. */
Test(check, a_file_reload_would_refuse_is_refused_the_same_way)
{
	char args[PATH_MAX + 16], expect[PATH_MAX + 256];

	cli_ok("rule add 198.18.9.0/24 --name web2 --action deny");
	env_write(&env, other, "default:\n  action: allow\nrules:\n"
		  "  - name: web2\n    cidr: 198.18.2.0/24\n"
		  "    pps: 10\n    burst: 5\n");
	snprintf(args, sizeof(args), "check %s", other);
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, true), 1, "%s",
		     out);
	snprintf(expect, sizeof(expect), "xdp-ratelimit: check: the runtime "
		 "rule web2 (198.18.9.0/24) has the name of the file's rule "
		 "for 198.18.2.0/24 (line 4); rename one or delete the "
		 "runtime rule\n");
	cr_assert_str_eq(out, expect);
	snprintf(args, sizeof(args), "reload %s", other);
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, true), 1, "%s",
		     out);
	snprintf(expect, sizeof(expect), "xdp-ratelimit: reload: the runtime "
		 "rule web2 (198.18.9.0/24) has the name of the file's rule "
		 "for 198.18.2.0/24 (line 4); rename one or delete the "
		 "runtime rule\n");
	cr_assert_str_eq(out, expect);
}

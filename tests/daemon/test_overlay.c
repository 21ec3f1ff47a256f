// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Runtime changes as an operator makes them with the CLI: a rule added
 * or deleted through the socket stays through `reload`, SIGHUP and a
 * restart, `rule list` says where each rule comes from, and a change
 * that cannot be saved (a read-only state directory) is refused in one
 * line and not applied.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libgen.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"

static struct daemon_env env;
static char out[16384];
static char ro_dir[PATH_MAX];

static const char policy[] =
	"default:\n  action: allow\nrules:\n"
	"  - name: web\n    cidr: 198.18.180.0/24\n    action: limit\n"
	"    pps: 1\n    burst: 3\n"
	"  - name: lab\n    cidr: 198.18.182.0/24\n    action: deny\n";

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, policy);
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

TestSuite(overlay, .init = setup, .fini = teardown, .timeout = 120);

static int cli(const char *args)
{
	return env_cli(&env, out, sizeof(out), args, true);
}

static int judge(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	return fixture_run(&env.dp, &pkt);
}

/* The line of `rule list` for rule @name, or NULL (static). */
static const char *listed(const char *name)
{
	static char line[512];
	char want[80], *at, *end;

	cr_assert_eq(cli("rule list"), 0, "%s", out);
	snprintf(want, sizeof(want), " %s ", name);
	at = strstr(out, want);
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
	for (int i = 0; i < 1000 && !log_contains(&env, text); i++)
		cr_assert_eq(cli("rule list"), 0, "%s", out);
	cr_assert(log_contains(&env, text), "no \"%s\" in the log: %s", text,
		  daemon_log(&env));
}

/* The ban and the deletion are there, and judge as they should. */
static void runtime_changes_hold(const char *when)
{
	const char *line = listed("emergency-ban");

	cr_assert_not_null(line, "%s: the runtime rule is gone: %s", when, out);
	cr_assert(strstr(line, " deny ") && strstr(line, " runtime "), "%s: %s",
		  when, line);
	line = listed("lab");
	cr_assert(line && strstr(line, " deleted at runtime"),
		  "%s: the deleted file rule is not listed as deleted: %s",
		  when, out);
	line = listed("web");
	cr_assert(line && strstr(line, " file "), "%s: %s", when, out);
	cr_assert_eq(judge("198.18.181.9"), XDP_DROP, "%s", when);
	cr_assert_eq(judge("198.18.182.9"), XDP_PASS, "%s", when);
}

Test(overlay, a_runtime_rule_survives_reload_sighup_and_restart)
{
	cr_assert_eq(judge("198.18.182.9"), XDP_PASS);
	daemon_start(&env, NULL);
	cr_assert_eq(judge("198.18.182.9"), XDP_DROP);
	cr_assert_eq(cli("rule add 198.18.181.0/24 --name emergency-ban "
			 "--action deny"),
		     0, "%s", out);
	cr_assert_eq(cli("rule del lab"), 0, "%s", out);
	runtime_changes_hold("after the change");

	cr_assert_eq(cli("reload"), 0, "%s", out);
	runtime_changes_hold("after reload");

	/* The file changes under it, then SIGHUP. */
	env_write(
		&env, NULL,
		"default:\n  action: allow\nrules:\n"
		"  - name: web\n    cidr: 198.18.180.0/24\n    action: limit\n"
		"    pps: 100\n    burst: 300\n"
		"  - name: lab\n    cidr: 198.18.182.0/24\n    action: deny\n"
		"  - name: more\n    cidr: 198.18.183.0/24\n    action: deny\n");
	kill(env.pid, SIGHUP);
	wait_for_log("SIGHUP: reloaded");
	runtime_changes_hold("after SIGHUP");
	cr_assert(strstr(listed("web"), "pps 100/s"), "the file's new rate");
	cr_assert_not_null(listed("more"), "the file's new rule");

	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	runtime_changes_hold("after a restart");
	cr_assert(log_contains(&env, "runtime changes from"), "%s",
		  daemon_log(&env));

	/* Deleting the runtime rule is a runtime change too. */
	cr_assert_eq(cli("rule del emergency-ban"), 0, "%s", out);
	daemon_stop(&env, SIGKILL);
	daemon_start(&env, NULL);
	cr_assert_null(listed("emergency-ban"), "%s", out);
	cr_assert_eq(judge("198.18.181.9"), XDP_PASS);
}

Test(overlay, a_change_that_cannot_be_saved_is_refused_and_not_applied)
{
	struct policy_dump before, after;
	char state[PATH_MAX + 32];
	const char *nl;

	snprintf(ro_dir, sizeof(ro_dir), "%s/ro", env.dir);
	cr_assert_eq(mkdir(ro_dir, 0700), 0);
	cr_assert_eq(mount("xrl-test-ro", ro_dir, "tmpfs", MS_RDONLY,
			   "size=64k,mode=0700"),
		     0, "mount: %m");
	snprintf(state, sizeof(state), "%s/policy.applied.yaml", ro_dir);
	daemon_start(&env, "--state", state, NULL);
	dump_policy(&env, &before);

	cr_assert_eq(cli("rule add 198.18.181.0/24 --name emergency-ban "
			 "--action deny"),
		     1, "%s", out);
	cr_assert(strstr(out, "xdp-ratelimit") &&
			  strstr(out,
				 "policy.runtime.json: Read-only file system"),
		  "%s", out);
	nl = strchr(out, '\n');
	cr_assert(nl && !nl[1], "one line: %s", out);
	cr_assert_eq(cli("rule del lab"), 1, "%s", out);
	cr_assert(strstr(out, "Read-only file system"), "%s", out);

	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "the policy in force changed");
	cr_assert_null(listed("emergency-ban"), "%s", out);
	cr_assert_not_null(listed("lab"), "%s", out);
	cr_assert_eq(judge("198.18.181.9"), XDP_PASS);
	cr_assert_eq(judge("198.18.182.9"), XDP_DROP);
	dump_free(&before);
	dump_free(&after);
}

/* The overlay file the daemon keeps beside its socket, whole (static);
 * "" when there is none. */
static const char *overlay_text(void)
{
	static char text[16384];
	char dir[PATH_MAX], path[PATH_MAX + 32];
	size_t got;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", env.socket);
	snprintf(path, sizeof(path), "%s/policy.runtime.json", dirname(dir));
	text[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return text;
	got = fread(text, 1, sizeof(text) - 1, f);
	text[got] = '\0';
	fclose(f);
	return text;
}

static const char policy_with_181[] =
	"default:\n  action: allow\nrules:\n"
	"  - name: web\n    cidr: 198.18.180.0/24\n    action: limit\n"
	"    pps: 1\n    burst: 3\n"
	"  - name: lab\n    cidr: 198.18.182.0/24\n    action: deny\n"
	"  - name: blocked\n    cidr: 198.18.181.0/24\n    action: deny\n";

/* Issue 24 item 1: a rule added, then deleted at runtime, left a deletion
 * behind, and the file's later rule for its CIDR was never applied. */
Test(overlay, deleting_a_runtime_only_rule_leaves_nothing_behind)
{
	char expect[PATH_MAX + 64];

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add 198.18.181.0/24 --name trial "
			 "--action deny"), 0, "%s", out);
	cr_assert_eq(cli("rule del trial"), 0, "%s", out);
	cr_assert_null(strstr(overlay_text(), "198.18.181"), "%s",
		       overlay_text());
	cr_assert_null(strstr(listed("web") ? out : "", "deleted at runtime"),
		       "%s", out);

	env_write(&env, NULL, policy_with_181);
	cr_assert_eq(cli("reload"), 0, "%s", out);
	snprintf(expect, sizeof(expect), "reloaded %s: 4 rules\n", env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	cr_assert(strstr(out, "\n  add     198.18.181.0/24          deny\n"),
		  "%s", out);
	cr_assert_eq(judge("198.18.181.9"), XDP_DROP);
	cr_assert(strstr(listed("blocked"), " file "), "%s", out);
}

/* A file rule deleted at runtime is listed as such, and a reload says
 * it keeps the deletion, or drops it once the file has no such rule. */
Test(overlay, a_reload_says_which_runtime_changes_it_keeps_or_drops)
{
	char expect[PATH_MAX + 512];

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule del lab"), 0, "%s", out);
	cr_assert(strstr(listed("lab"), "198.18.182.0/24        deny     "
			 "runtime deleted at runtime"), "%s", out);

	cr_assert_eq(cli("reload"), 0, "%s", out);
	snprintf(expect, sizeof(expect), "reloaded %s: 2 rules (1 runtime "
		 "change kept: delete 198.18.182.0/24)\n", env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	cr_assert(log_contains(&env, expect), "%s", daemon_log(&env));
	cr_assert_eq(judge("198.18.182.9"), XDP_PASS);

	/* SIGHUP says it in the log too. */
	kill(env.pid, SIGHUP);
	wait_for_log("SIGHUP: reloaded");
	snprintf(expect, sizeof(expect), "SIGHUP: reloaded %s: 2 rules (1 "
		 "runtime change kept: delete 198.18.182.0/24)", env.config);
	cr_assert(log_contains(&env, expect), "%s", daemon_log(&env));

	/* The file drops lab: the deletion means nothing any more. */
	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: web\n    cidr: 198.18.180.0/24\n"
		  "    action: limit\n    pps: 1\n    burst: 3\n");
	cr_assert_eq(cli("reload"), 0, "%s", out);
	snprintf(expect, sizeof(expect), "reloaded %s: 2 rules (1 runtime "
		 "change dropped (no longer in the file): delete "
		 "198.18.182.0/24)\n", env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	cr_assert_null(strstr(overlay_text(), "198.18.182"), "%s",
		       overlay_text());

	/* ...so the file's rule, back, is applied. */
	env_write(&env, NULL, policy);
	cr_assert_eq(cli("reload"), 0, "%s", out);
	snprintf(expect, sizeof(expect), "reloaded %s: 3 rules\n", env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	cr_assert_eq(judge("198.18.182.9"), XDP_DROP);
}

Test(overlay, rule_revert_drops_runtime_changes_and_applies_the_file)
{
	char expect[PATH_MAX + 512];
	const char *line;

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule del lab"), 0, "%s", out);
	cr_assert_eq(cli("rule add 198.18.181.0/24 --name emergency-ban "
			 "--action deny"), 0, "%s", out);
	cr_assert_eq(cli("rule add 198.18.180.0/24 --action deny --replace"),
		     0, "%s", out);
	line = listed("web");
	cr_assert(line && strstr(line, " runtime ") &&
		  strstr(line, "(replaces the file's rule)"), "%s", out);

	/* revert takes one of NAME|CIDR and --all, nothing else. */
	cr_assert_eq(cli("rule revert lab --all"), 1, "%s", out);
	cr_assert(strstr(out, "'revert NAME|CIDR|--all'"), "%s", out);
	cr_assert_eq(cli("rule revert lab --pps 5"), 1, "%s", out);
	cr_assert_eq(cli("rule revert"), 1, "%s", out);

	/* One prefix, by its name. */
	cr_assert_eq(cli("rule revert lab"), 0, "%s", out);
	snprintf(expect, sizeof(expect), "reverted: delete 198.18.182.0/24; "
		 "%s applied: 4 rules (2 runtime changes kept: change "
		 "198.18.180.0/24, add 198.18.181.0/24)\n"
		 "  add     198.18.182.0/24          deny\n", env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	cr_assert_eq(judge("198.18.182.9"), XDP_DROP);
	cr_assert(strstr(listed("lab"), " file "), "%s", out);

	/* Nothing to revert there any more: one line, exit 1. */
	cr_assert_eq(cli("rule revert 198.18.182.0/24"), 1, "%s", out);
	cr_assert_str_eq(out, "xdp-ratelimit: rule: no runtime change for "
			 "198.18.182.0/24 (rule list marks them)\n");

	/* The rest at once; it holds through a restart. */
	cr_assert_eq(cli("rule revert --all"), 0, "%s", out);
	cr_assert(strstr(out, "reverted: change 198.18.180.0/24, add "
			 "198.18.181.0/24; "), "%s", out);
	cr_assert_null(listed("emergency-ban"), "%s", out);
	cr_assert(strstr(listed("web"), " file "), "%s", out);
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	cr_assert_null(listed("emergency-ban"), "%s", out);
	cr_assert(strstr(listed("web"), " limit ") &&
		  strstr(listed("web"), " file "), "%s", out);
	cr_assert(strstr(listed("lab"), " file "), "%s", out);
	cr_assert_eq(judge("198.18.181.9"), XDP_PASS);
	cr_assert_eq(judge("198.18.182.9"), XDP_DROP);
	cr_assert_eq(cli("rule revert --all"), 1, "%s", out);
	cr_assert(strstr(out, "no runtime change to revert"), "%s", out);
}

/* Many runtime changes: the count is whole, the list ends in "...". */
Test(overlay, a_reload_with_many_runtime_changes_says_one_line)
{
	char args[128], expect[PATH_MAX + 160];
	const char *nl;
	int i;

	daemon_start(&env, NULL);
	for (i = 0; i < 12; i++) {
		snprintf(args, sizeof(args), "rule add 198.18.%d.0/24 "
			 "--action deny", 200 + i);
		cr_assert_eq(cli(args), 0, "%s", out);
	}
	cr_assert_eq(cli("reload"), 0, "%s", out);
	snprintf(expect, sizeof(expect), "reloaded %s: 15 rules (12 runtime "
		 "changes kept: add 198.18.200.0/24, add 198.18.201.0/24, ",
		 env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	nl = strchr(out, '\n');
	cr_assert(nl && nl - out > 6 && !strncmp(nl - 6, ", ...)", 6), "%s",
		  out);
}

/* revert applies the file: a file that is refused reverts nothing. */
Test(overlay, a_revert_with_a_bad_file_changes_nothing)
{
	char expect[PATH_MAX + 128];

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule del lab"), 0, "%s", out);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: lab\n    cidr: 198.18.182.0/24\n    pps: fast\n");
	cr_assert_eq(cli("rule revert lab"), 1, "%s", out);
	snprintf(expect, sizeof(expect), "xdp-ratelimit: rule: %s:6: "
		 "rules[0].pps: ", env.config);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	cr_assert(strstr(listed("lab"), "deleted at runtime"), "%s", out);
	cr_assert(strstr(overlay_text(), "198.18.182.0/24"), "%s",
		  overlay_text());
	cr_assert_eq(judge("198.18.182.9"), XDP_PASS);
}

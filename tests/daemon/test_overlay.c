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
	cr_assert_null(listed("lab"), "%s: the deleted file rule is back",
		       when);
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

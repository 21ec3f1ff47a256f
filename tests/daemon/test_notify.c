// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon as systemd runs it (Type=notify): the test plays the
 * service manager, a datagram socket named by NOTIFY_SOCKET, and reads
 * what sd_notify(3) sends: READY=1 once the policy is in force, and only
 * then; RELOADING=1 and READY=1 around a SIGHUP, with a STATUS= line
 * saying how the reload went; STOPPING=1 on SIGTERM. (Its log as the
 * journal reads it: tests/daemon/test_logs.c.)
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"

static struct daemon_env env;
static int notify_fd = -1;

static void setup(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	env_setup(&env);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%.90s/notify", env.dir);
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(notify_fd, 0);
	cr_assert_eq(bind(notify_fd, (struct sockaddr *)&addr, sizeof(addr)),
		     0, "bind %s: %s", addr.sun_path, strerror(errno));
	/* Inherited by the daemon the test starts. */
	setenv("NOTIFY_SOCKET", addr.sun_path, 1);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.1.0/24\n    action: deny\n");
}

static void teardown(void)
{
	unsetenv("NOTIFY_SOCKET");
	unsetenv("JOURNAL_STREAM");
	if (notify_fd >= 0)
		close(notify_fd);
	env_teardown(&env);
}

TestSuite(notify, .init = setup, .fini = teardown, .timeout = 60);

/* The next message, or "" when none came within @timeout_ms. */
static const char *next_message(int timeout_ms)
{
	static char msg[2048];
	struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };
	ssize_t n;

	msg[0] = '\0';
	if (poll(&pfd, 1, timeout_ms) != 1)
		return msg;
	n = recv(notify_fd, msg, sizeof(msg) - 1, 0);
	msg[n > 0 ? n : 0] = '\0';
	return msg;
}

Test(notify, ready_once_the_policy_is_in_force_with_a_status_line)
{
	struct policy_dump dump;
	const char *msg;

	daemon_start(&env, NULL);
	msg = next_message(5000);
	cr_assert(strstr(msg, "READY=1\n"), "got \"%s\"", msg);
	cr_assert(strstr(msg, "STATUS=2 rules on no interface"), "got \"%s\"",
		  msg);
	/* READY came after the apply: the data path's classifier holds
	 * both rules (its meta entry apart). */
	dump_policy(&env, &dump);
	cr_assert_eq(dump.n_rules, 2);
	dump_free(&dump);

	daemon_stop(&env, SIGTERM);
	msg = next_message(5000);
	cr_assert_str_eq(msg, "STOPPING=1");
}

Test(notify, reloading_then_ready_around_sighup_with_its_result)
{
	char expect[PATH_MAX + 128];
	const char *msg;
	json_t *status;

	daemon_start(&env, NULL);
	msg = next_message(5000);
	cr_assert(strstr(msg, "READY=1"), "got \"%s\"", msg);

	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.1.0/24\n    action: deny\n"
		  "  - cidr: 198.18.2.0/24\n    action: deny\n");
	kill(env.pid, SIGHUP);
	msg = next_message(5000);
	cr_assert(!strncmp(msg, "RELOADING=1\nMONOTONIC_USEC=", 27),
		  "got \"%s\"", msg);
	msg = next_message(5000);
	cr_assert(strstr(msg, "READY=1\n"), "got \"%s\"", msg);
	cr_assert(strstr(msg, "STATUS=3 rules on no interface; last reload "),
		  "got \"%s\"", msg);
	cr_assert(strstr(msg, ": ok"), "got \"%s\"", msg);

	/* A refused file: ready again (the policy in force stays), and the
	 * status line says why, as the file's own error. */
	env_write(&env, NULL, "rules:\n  - cidr: 198.18.3.0/24\n"
		  "    pps: 1.5\n    burst: 1\n");
	kill(env.pid, SIGHUP);
	msg = next_message(5000);
	cr_assert(!strncmp(msg, "RELOADING=1", 11), "got \"%s\"", msg);
	msg = next_message(5000);
	snprintf(expect, sizeof(expect), "STATUS=3 rules on no interface; "
		 "last reload ");
	cr_assert(strstr(msg, "READY=1\n"), "got \"%s\"", msg);
	cr_assert(strstr(msg, expect), "got \"%s\"", msg);
	snprintf(expect, sizeof(expect), "%s:3: rules[0].pps: not a whole "
		 "number (1.5)", env.config);
	cr_assert(strstr(msg, expect), "got \"%s\", want \"%s\"", msg, expect);

	/* The same in the daemon's status. */
	status = request_ok(&env, "{\"cmd\":\"status\"}");
	cr_assert_not(json_is_true(json_object_get(json_object_get(
		json_object_get(status, "daemon"), "last_reload"), "ok")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_object_get(status, "daemon"), "last_reload"), "error")),
		expect);
	json_decref(status);
}

Test(notify, never_ready_when_it_cannot_start)
{
	const char *msg;
	int status;

	env_write(&env, NULL, "rules: {}\n");
	status = daemon_run_to_exit(&env, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	msg = next_message(200);
	cr_assert(!strstr(msg, "READY=1"), "got \"%s\"", msg);
}

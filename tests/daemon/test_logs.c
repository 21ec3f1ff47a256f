// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the daemon tells about itself: its log lines carry a syslog
 * priority prefix when stderr is the journal (JOURNAL_STREAM names it)
 * and a timestamp otherwise, and every refused change is logged and
 * counted in status' changes_refused, whether it came from the socket or
 * from SIGHUP.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\n");
}

static void teardown(void)
{
	unsetenv("JOURNAL_STREAM");
	env_teardown(&env);
}

TestSuite(logs, .init = setup, .fini = teardown, .timeout = 120);

/* Whether every line of the log starts as @check says. */
static bool every_line(bool (*check)(const char *line))
{
	const char *line = daemon_log(&env);
	int n = 0;

	for (; *line; line = strchr(line, '\n') + 1, n++)
		if (!check(line) || !strchr(line, '\n'))
			return false;
	return n > 0;
}

static bool journal_line(const char *line)
{
	return line[0] == '<' && strchr("3467", line[1]) && line[2] == '>';
}

static bool stamped_line(const char *line)
{
	int y, mo, d, h, mi, s, ms;

	return sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ ", &y, &mo, &d, &h,
		      &mi, &s, &ms) == 7 &&
	       y >= 2020;
}

Test(logs, a_timestamp_unless_stderr_is_the_journal)
{
	char stream[64];
	struct stat st;
	int fd;

	daemon_start(&env, NULL);
	daemon_stop(&env, SIGTERM);
	cr_assert(every_line(stamped_line), "%s", daemon_log(&env));

	/* The journal: JOURNAL_STREAM names the file stderr is. */
	unlink(env.log);
	fd = open(env.log, O_WRONLY | O_CREAT, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	close(fd);
	snprintf(stream, sizeof(stream), "%llu:%llu",
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", stream, 1);
	daemon_start(&env, NULL);
	daemon_stop(&env, SIGTERM);
	cr_assert(every_line(journal_line), "%s", daemon_log(&env));
	cr_assert(strstr(daemon_log(&env), "<6>listening on"), "%s",
		  daemon_log(&env));
}

static json_int_t refused(void)
{
	json_t *status = request_ok(&env, "{\"cmd\":\"status\"}");
	json_int_t n = json_integer_value(json_object_get(
		json_object_get(status, "daemon"), "changes_refused"));

	json_decref(status);
	return n;
}

Test(logs, every_refused_change_is_counted_and_logged)
{
	int i;

	daemon_start(&env, NULL);
	cr_assert_eq(refused(), 0);
	request_fail(&env, "{\"cmd\":\"rule.add\",\"cidr\":\"198.18.1.0/24\","
			   "\"action\":\"throttle\"}");
	cr_assert_eq(refused(), 1);
	json_decref(request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
				     "\"198.18.1.0/24\",\"action\":\"deny\"}"));
	request_fail(&env, "{\"cmd\":\"rule.add\",\"cidr\":\"198.18.1.0/24\","
			   "\"action\":\"deny\"}");
	request_fail(&env, "{\"cmd\":\"rule.del\",\"rule\":\"nothing\"}");
	cr_assert_eq(refused(), 3);
	cr_assert(log_contains(&env, "change refused, the policy in force "
				     "stays: rule.add: action: unknown action"),
		  "%s", daemon_log(&env));

	env_write(&env, NULL, "default:\n  action: allowed\n");
	kill(env.pid, SIGHUP);
	for (i = 0; i < 1000 && refused() != 4; i++)
		;
	cr_assert_eq(refused(), 4);
	cr_assert(log_contains(&env, "stays: SIGHUP: "), "%s",
		  daemon_log(&env));
	/* Reads are no changes: a bad one is not counted. */
	request_fail(&env, "{\"cmd\":\"top\",\"n\":0}");
	cr_assert_eq(refused(), 4);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Many clients at once, and clients that misbehave: garbage, a line over
 * 64 KiB, half a line then gone, silence. Each is answered or dropped
 * while a well-behaved client, connected all along, keeps being served.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "control.h"
#include "daemon.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: blocked\n    cidr: 198.18.2.0/24\n"
		  "    action: deny\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(clients, .init = setup, .fini = teardown, .timeout = 120);

static void send_text(int fd, const char *text, size_t len)
{
	ssize_t sent;

	while (len) {
		sent = send(fd, text, len, MSG_NOSIGNAL);
		cr_assert_gt(sent, 0, "send: %s", strerror(errno));
		text += sent;
		len -= sent;
	}
}

static void send_str(int fd, const char *text)
{
	send_text(fd, text, strlen(text));
}

static char line[1 << 20];

/* One response line on @fd, which must be a JSON object with "ok". */
static json_t *read_response(int fd)
{
	json_error_t jerr;
	json_t *json;

	cr_assert_gt(raw_read_line(fd, line, sizeof(line), 10000), 0,
		     "no response line");
	json = json_loads(line, 0, &jerr);
	cr_assert(json_is_object(json), "not a JSON object: %s", line);
	cr_assert(json_is_boolean(json_object_get(json, "ok")));
	return json;
}

static void expect_ok(int fd)
{
	json_t *json = read_response(fd);

	cr_assert(json_is_true(json_object_get(json, "ok")), "%s", line);
	json_decref(json);
}

static void expect_error(int fd, const char *text)
{
	json_t *json = read_response(fd);

	cr_assert(json_is_false(json_object_get(json, "ok")), "%s", line);
	cr_assert(strstr(json_string_value(json_object_get(json, "error")),
			 text), "\"%s\" lacks \"%s\"", line, text);
	json_decref(json);
}

/* The daemon closed @fd: end of stream, before @timeout_ms. */
static void expect_closed(int fd, int timeout_ms)
{
	cr_assert_eq(raw_read_line(fd, line, sizeof(line), timeout_ms), 0,
		     "still open, or more to read: %s", line);
}

static void ask_version(int fd)
{
	send_str(fd, "{\"cmd\":\"version\"}\n");
	expect_ok(fd);
}

Test(clients, many_clients_connected_at_once_are_each_answered)
{
	enum { N = 40 };
	int fds[N], i;

	daemon_start(&env, NULL);
	for (i = 0; i < N; i++)
		fds[i] = raw_connect(&env);
	/* All connected and all asking before any answer is read. */
	for (i = 0; i < N; i++)
		send_str(fds[i], i % 2 ? "{\"cmd\":\"rule.list\"}\n" :
			 "{\"cmd\":\"version\"}\n");
	for (i = N - 1; i >= 0; i--) {
		json_t *json = read_response(fds[i]);

		cr_assert(json_is_true(json_object_get(json, "ok")));
		cr_assert_not_null(json_object_get(json, i % 2 ? "rules" :
						   "version"), "client %d", i);
		json_decref(json);
	}
	/* Several requests in one write: answered in order. */
	send_str(fds[0], "{\"cmd\":\"version\"}\n{\"cmd\":\"rule.list\"}\n"
		 "{\"cmd\":\"nope\"}\n");
	expect_ok(fds[0]);
	cr_assert(strstr(line, "\"version\""));
	expect_ok(fds[0]);
	cr_assert(strstr(line, "\"rules\""));
	expect_error(fds[0], "unknown command");
	for (i = 0; i < N; i++)
		close(fds[i]);
}

Test(clients, misbehaving_clients_are_answered_or_dropped_alone)
{
	static char big[XRL_CONTROL_LINE_MAX + 2];
	int good, garbage, longline, half, silent;
	const char *request = "{\"cmd\":\"version\"";
	size_t len;

	daemon_start(&env, "--idle-timeout", "1", NULL);
	good = raw_connect(&env);
	silent = raw_connect(&env);
	ask_version(good);

	/* Garbage: an error, and the connection stays usable. */
	garbage = raw_connect(&env);
	send_str(garbage, "\x01\x02\xff garbage {{{\n");
	expect_error(garbage, "not JSON");
	ask_version(good);
	ask_version(garbage);
	close(garbage);

	/* Exactly 64 KiB is a line like any other... */
	len = strlen(request);
	memset(big, ' ', sizeof(big));
	memcpy(big, request, len);
	big[XRL_CONTROL_LINE_MAX - 1] = '}';
	big[XRL_CONTROL_LINE_MAX] = '\n';
	longline = raw_connect(&env);
	send_text(longline, big, XRL_CONTROL_LINE_MAX + 1);
	expect_ok(longline);
	/* ...one byte more is refused, and the client dropped. */
	big[XRL_CONTROL_LINE_MAX - 1] = ' ';
	big[XRL_CONTROL_LINE_MAX] = '}';
	big[XRL_CONTROL_LINE_MAX + 1] = '\n';
	send_text(longline, big, XRL_CONTROL_LINE_MAX + 2);
	expect_error(longline, "request line over 65536 bytes");
	expect_closed(longline, 10000);
	close(longline);
	ask_version(good);

	/* Half a line, then gone: discarded, nothing answered or applied. */
	half = raw_connect(&env);
	send_str(half, "{\"cmd\":\"rule.del\",\"rule\":\"blocked\"");
	close(half);
	ask_version(good);
	json_t *list = request_ok(&env, "{\"cmd\":\"rule.list\"}");

	cr_assert_eq(json_array_size(json_object_get(list, "rules")), 2,
		     "the half request was not run");
	json_decref(list);

	/* Silence: dropped after the idle timeout (1 s), while the good
	 * client, active meanwhile, is not. */
	struct pollfd pfd = { .fd = silent, .events = POLLIN };
	int turns;

	for (turns = 0; turns < 100 && poll(&pfd, 1, 100) == 0; turns++)
		ask_version(good);
	expect_closed(silent, 100);
	cr_assert_gt(turns, 3, "dropped before the timeout");
	ask_version(good);
	cr_assert(log_contains(&env, "idle timeout"));
	cr_assert(log_contains(&env, "line too long"));
	close(silent);
	close(good);
}

/* Connects as uid/gid nobody (in a child) and returns the first response
 * line to a version request, or "" when the connection gave none. */
static const char *ask_as_nobody(void)
{
	static char answer[512];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* No criterion here: a failure is an exit code. */
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		const char *req = "{\"cmd\":\"version\"}\n";
		char buf[512] = "";
		int fd;

		alarm(10);
		close(fds[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		strcpy(addr.sun_path, env.socket);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr,
				      sizeof(addr)))
			_exit(3);
		/* Refused clients are closed at once: the send may fail. */
		send(fd, req, strlen(req), MSG_NOSIGNAL);
		raw_read_line(fd, buf, sizeof(buf), 5000);
		if (write(fds[1], buf, strlen(buf)) < 0)
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], answer, sizeof(answer) - 1);
	answer[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the unprivileged client failed (%d)", status);
	return answer;
}

Test(clients, only_root_or_the_socket_group_gets_in)
{
	struct stat st;

	/* The socket's directory must be reachable to try at all. */
	cr_assert_eq(chmod(env.dir, 0755), 0);
	daemon_start(&env, NULL);
	cr_assert_eq(chmod(env.socket, 0666), 0, "past the file mode...");
	cr_assert(strstr(ask_as_nobody(), "permission denied"),
		  "...SO_PEERCRED still refuses");
	cr_assert(log_contains(&env, "uid 65534: not allowed"));
	daemon_stop(&env, SIGTERM);

	daemon_start(&env, "--socket-group", "nogroup", NULL);
	cr_assert_eq(stat(env.socket, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0660);
	cr_assert_eq(st.st_gid, 65534);
	cr_assert(strstr(ask_as_nobody(), "\"ok\":true"), "%s", line);
}

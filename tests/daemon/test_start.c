// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Start and restart: every option and the config are checked before
 * anything is loaded, pinned or attached, and a start that fails after
 * loading takes its pins back; on a restart the file is the truth, so a
 * changed file is applied and an invalid one refuses the start and
 * leaves what is in force alone.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"
#include "loader.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: old\n    cidr: 198.18.190.0/24\n"
		  "    action: deny\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(start, .init = setup, .fini = teardown, .timeout = 120);

static bool pinned(void)
{
	struct stat st;

	return stat(env.pin_dir, &st) == 0;
}

/* The start failed, said why, and left no pins behind. */
static void fails_leaving_nothing(int status, const char *text)
{
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE,
		  "status %d", status);
	cr_assert(log_contains(&env, text), "no \"%s\" in: %s", text,
		  daemon_log(&env));
	cr_assert(!pinned(), "pins left in %s: %s", env.pin_dir,
		  daemon_log(&env));
}

Test(start, bad_options_and_config_are_refused_before_anything_is_pinned)
{
	char path[PATH_MAX + 16];
	int status;

	xrl_datapath_unpin(&env.dp);

	status = daemon_run_to_exit(&env, "--iface", "xrlt-none0", NULL);
	fails_leaving_nothing(status, "xrlt-none0: no such interface "
				      "(--iface)");

	status = daemon_run_to_exit(&env, "--metrics", "localhost:80", NULL);
	fails_leaving_nothing(status, "--metrics localhost:80");

	status = daemon_run_to_exit(&env, "--redis", "nowhere", NULL);
	fails_leaving_nothing(status, "--redis: \"nowhere\" is not HOST:PORT");

	env_write(&env, NULL,
		  "interfaces: [xrlt-none1]\n"
		  "default:\n  action: allow\n");
	status = daemon_run_to_exit(&env, NULL);
	fails_leaving_nothing(status, "xrlt-none1: no such interface");

	snprintf(path, sizeof(path), "%s/bad.yaml", env.dir);
	env_write(&env, path,
		  "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.191.0/24\n    action: denny\n");
	status = daemon_run_to_exit(&env, "--config", path, NULL);
	fails_leaving_nothing(status, "bad.yaml:5: rules[0].action");
}

Test(start, a_start_that_fails_after_loading_takes_its_pins_back)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	char listen_at[64];
	int fd, status;

	xrl_datapath_unpin(&env.dp);
	/* The metrics port is taken: found only when binding it, after
	 * the data path was loaded and pinned. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	cr_assert_eq(listen(fd, 1), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%u",
		 ntohs(addr.sin_port));
	status = daemon_run_to_exit(&env, "--metrics", listen_at, NULL);
	close(fd);
	fails_leaving_nothing(status, "loaded the data path");
}

static int judge(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	return fixture_run(&env.dp, &pkt);
}

Test(start, a_restart_applies_the_file_and_an_invalid_one_changes_nothing)
{
	struct policy_dump before, after;
	int status;

	daemon_start(&env, NULL);
	cr_assert_eq(judge("198.18.190.1"), XDP_DROP);
	daemon_stop(&env, SIGTERM);

	/* The file changed while the daemon was down: it wins over what
	 * is pinned. */
	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: new\n    cidr: 198.18.192.0/24\n"
		  "    action: deny\n");
	daemon_start(&env, NULL);
	cr_assert_eq(judge("198.18.190.1"), XDP_PASS);
	cr_assert_eq(judge("198.18.192.1"), XDP_DROP);
	cr_assert(log_contains(&env, "applied"), "%s", daemon_log(&env));
	daemon_stop(&env, SIGTERM);

	dump_policy(&env, &before);
	env_write(&env, NULL,
		  "default:\n  action: allow\nrules:\n"
		  "  - name: new\n    cidr: 198.18.192.0/24\n"
		  "    action: denny\n");
	status = daemon_run_to_exit(&env, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
	cr_assert(log_contains(&env, "policy.yaml:6: rules[0].action"), "%s",
		  daemon_log(&env));
	dump_policy(&env, &after);
	cr_assert(dump_equal(&before, &after), "what is in force changed");
	cr_assert_eq(judge("198.18.192.1"), XDP_DROP);
	dump_free(&before);
	dump_free(&after);
}

Test(start, a_second_daemon_on_the_same_pins_is_refused_naming_the_first)
{
	char second[PATH_MAX + 16], text[PATH_MAX + 64];
	struct stat st;
	const char *log;
	int status;
	pid_t first;

	first = daemon_start(&env, NULL);
	/* Another socket: nothing to collide on but the pins. */
	snprintf(second, sizeof(second), "%s/second.sock", env.dir);
	status = daemon_run_to_exit(&env, "--socket", second, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE,
		  "status %d: %s", status, daemon_log(&env));
	snprintf(text, sizeof(text), "is managed by xdp-ratelimitd (pid %d, "
		 "socket %s)", (int)first, env.socket);
	log = daemon_log(&env);
	cr_assert(strstr(log, text) && strstr(log, env.pin_dir), "no \"%s\" "
		  "in: %s", text, log);
	cr_assert_neq(stat(second, &st), 0, "the second made no socket");
	/* The first goes on answering, and once it is gone, a second may. */
	json_decref(request_ok(&env, "{\"cmd\":\"status\"}"));
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * capture beside a daemon: the rules' names are the daemon's, both for
 * --rule and in each frame's comment.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"

#define WAIT_MS	10000

static struct daemon_env env;
static char out[1 << 16];

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: web\n    cidr: 198.18.1.0/24\n"
		  "    action: limit\n    pps: 1\n    burst: 2\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(capture, .init = setup, .fini = teardown, .timeout = 120);

static bool armed(void)
{
	struct xrl_capture_config cfg;
	__u32 zero = 0;

	cr_assert_eq(bpf_map_lookup_elem(env.dp.capture_fd, &zero, &cfg), 0);
	return cfg.armed;
}

static char *read_all(const char *path, size_t *len)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "rb");

	cr_assert_not_null(f, "%s", path);
	*len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return buf;
}

Test(capture, names_are_the_daemons_for_rule_and_comments)
{
	char path[PATH_MAX + 16], args[PATH_MAX + 64];
	const char *comment = "rule=web id=1 verdict=limited counter=drop "
			      "xdp=drop";
	struct packet pkt;
	size_t len, n = 0;
	int status, waited;
	char *data, *at;
	pid_t pid;

	daemon_start(&env, NULL);
	snprintf(path, sizeof(path), "%s/f.pcap", env.dir);
	snprintf(args, sizeof(args), "capture --rule web --verdict limited "
		 "-c 3 -w %s", path);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid)
		_exit(env_cli(&env, out, sizeof(out), args, true));
	for (waited = 0; !armed() && waited < WAIT_MS; waited += 10)
		poll(NULL, 0, 10);
	cr_assert(armed(), "capture never armed");
	cr_assert_eq(packet_from(&pkt, "198.18.1.5"), 0);
	fixture_offer(&env.dp, &pkt, 5);	/* 2 passed, 3 limited */
	for (waited = 0; waitpid(pid, &status, WNOHANG) != pid; waited += 10) {
		if (waited >= WAIT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			cr_assert_fail("capture did not end");
		}
		poll(NULL, 0, 10);
	}
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	data = read_all(path, &len);
	for (at = data; (at = memmem(at, len - (at - data), comment,
				     strlen(comment))); at++)
		n++;
	cr_assert_eq(n, 3, "3 frames commented \"%s\"", comment);
	cr_assert_not(armed());
}

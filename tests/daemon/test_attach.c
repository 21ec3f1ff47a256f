// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon on real interfaces: it attaches to those of its config (a
 * veth in a namespace of the test's topology), leaves the program
 * attached and enforcing when it stops (fail-static), and detaches with
 * --detach-on-exit.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "topo.h"

static struct daemon_env env;
static struct topo topo;

static void setup(void)
{
	topo_create(&topo);
	env_setup(&env);
	env.netns = topo.ns_rx;
}

static void teardown(void)
{
	env_teardown(&env);
	topo_destroy(&topo);
}

TestSuite(attach, .init = setup, .fini = teardown, .timeout = 120);

static char out[1 << 14];

static bool one_line(void)
{
	char *nl = strchr(out, '\n');

	return nl && !nl[1];
}

/* The CLI in the receiving namespace (nsenter: the host's bpffs). */
static int cli_in_ns(const char *args)
{
	char command[PATH_MAX * 2];
	size_t got;
	FILE *pipe;

	snprintf(command, sizeof(command), "nsenter --net=/run/netns/%s "
		 "build/xdp-ratelimit -P %s %s 2>&1", topo.ns_rx, env.pin_dir,
		 args);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	got = fread(out, 1, sizeof(out) - 1, pipe);
	out[got] = '\0';
	return WEXITSTATUS(pclose(pipe));
}

static bool xdp_attached(void)
{
	return topo_sh("nsenter --net=/run/netns/%s ip -d link show dev %s | "
		       "grep -q 'prog/xdp'", topo.ns_rx, topo.if_rx) == 0;
}

/* Its link pinned, or (through libxdp's dispatcher) its program. */
static bool link_pinned(void)
{
	char path[PATH_MAX + 32], chained[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/link_%s", env.pin_dir, topo.if_rx);
	snprintf(chained, sizeof(chained), "%s/chain_%s", env.pin_dir,
		 topo.if_rx);
	return stat(path, &st) == 0 || stat(chained, &st) == 0;
}

Test(attach, the_daemon_attaches_its_interfaces_and_exits_fail_static)
{
	char yaml[256];
	json_t *status, *ifaces;
	struct stat st;
	int exit_status;

	snprintf(yaml, sizeof(yaml), "interfaces: [%s]\n"
		 "default:\n  action: allow\nrules:\n"
		 "  - cidr: 198.18.2.0/24\n    action: deny\n", topo.if_rx);
	env_write(&env, NULL, yaml);
	cr_assert_not(xdp_attached());
	daemon_start(&env, "--priority", "7", NULL);
	cr_assert(xdp_attached(), "%s", daemon_log(&env));
	cr_assert(link_pinned());
	/* In libxdp's dispatcher at its --priority, or (where it cannot
	 * load, as on this machine's kernel) alone, saying why. */
	cr_assert(log_contains(&env, "at priority 7 in libxdp's dispatcher") ||
		  log_contains(&env, "attached alone through a pinned bpf_link, "
			       "not libxdp's dispatcher ("),
		  "%s", daemon_log(&env));
	status = request_ok(&env, "{\"cmd\":\"status\"}");
	ifaces = json_object_get(json_object_get(status, "daemon"),
				 "interfaces");
	cr_assert_str_eq(json_string_value(json_array_get(ifaces, 0)),
			 topo.if_rx);
	json_decref(status);

	exit_status = daemon_stop(&env, SIGTERM);
	cr_assert(WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0);
	cr_assert(log_contains(&env, "the data path keeps enforcing"));
	cr_assert(xdp_attached(), "still attached after SIGTERM");
	cr_assert(link_pinned());

	/* Started again it finds its interface attached, and with
	 * --detach-on-exit leaves it clean. */
	daemon_start(&env, "--detach-on-exit", NULL);
	cr_assert(log_contains(&env, "already attached"), "%s",
		  daemon_log(&env));
	exit_status = daemon_stop(&env, SIGINT);
	cr_assert(WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0);
	cr_assert_not(xdp_attached(), "detached on exit");
	cr_assert_not(link_pinned());
	/* Nothing left attached from them: the pins go too. */
	cr_assert(log_contains(&env, "removed the pins in"), "%s",
		  daemon_log(&env));
	cr_assert_neq(stat(env.pin_dir, &st), 0, "pins left in %s",
		      env.pin_dir);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "status", false), 1);
	cr_assert(strstr(out, "is not loaded"), "%s", out);
}

Test(attach, cleanup_removes_leftover_pins_and_refuses_while_they_are_used)
{
	char args[PATH_MAX + 64], text[PATH_MAX + 64];
	struct stat st;
	pid_t pid;

	/* Pinned and attached nowhere (env_setup): what a killed start
	 * leaves. --check says so and changes nothing. */
	cr_assert_eq(env_cli(&env, out, sizeof(out), "cleanup --check",
			     false), 1, "%s", out);
	cr_assert(strstr(out, "attached nowhere") &&
		  strstr(out, "'xdp-ratelimit cleanup' removes them"), "%s",
		  out);
	cr_assert_eq(stat(env.pin_dir, &st), 0);

	/* Attached: refused, naming the interface. */
	snprintf(args, sizeof(args), "attach %s", topo.if_rx);
	cr_assert_eq(cli_in_ns(args), 0, "%s", out);
	cr_assert_eq(cli_in_ns("cleanup"), 1, "%s", out);
	snprintf(text, sizeof(text), "attached to %s: detach", topo.if_rx);
	cr_assert(strstr(out, text) && one_line(), "%s", out);
	cr_assert_eq(cli_in_ns("cleanup --check"), 1, "%s", out);
	cr_assert(strstr(out, text), "%s", out);
	cr_assert(xdp_attached());

	/* Under a daemon, even with nothing attached: refused, naming it. */
	snprintf(args, sizeof(args), "detach %s", topo.if_rx);
	cr_assert_eq(cli_in_ns(args), 0, "%s", out);
	env_write(&env, NULL, "default:\n  action: allow\n");
	pid = daemon_start(&env, NULL);
	cr_assert_eq(cli_in_ns("cleanup"), 1, "%s", out);
	snprintf(text, sizeof(text), "xdp-ratelimitd (pid %d, socket %s) runs "
		 "on these pins", (int)pid, env.socket);
	cr_assert(strstr(out, text) && one_line(), "%s", out);
	daemon_stop(&env, SIGTERM);

	cr_assert_eq(cli_in_ns("cleanup"), 0, "%s", out);
	snprintf(text, sizeof(text), "removed the pins in %s", env.pin_dir);
	cr_assert(strstr(out, text), "%s", out);
	cr_assert_neq(stat(env.pin_dir, &st), 0, "pins left");
	cr_assert_eq(cli_in_ns("cleanup"), 0, "%s", out);
	cr_assert(strstr(out, "nothing pinned in"), "%s", out);
	cr_assert_eq(cli_in_ns("cleanup --check"), 0, "%s", out);
}

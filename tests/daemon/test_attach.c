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
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit daemon: the daemon's own view, as an operator asks for
 * it through the socket: version, pid, uptime, clients, what it applied
 * and refused, the last reload and its result, and whether the global
 * budgets' Redis is reachable.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"

static struct daemon_env env;
static char out[8192];

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(view, .init = setup, .fini = teardown, .timeout = 60);

Test(view, uptime_clients_policies_and_the_last_reload)
{
	char expect[PATH_MAX * 2 + 256];

	daemon_start(&env, NULL);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "daemon", true), 0, "%s",
		     out);
	snprintf(expect, sizeof(expect), "xdp-ratelimitd 0.1.0, pid %d, up "
		 "00:00:0", (int)env.pid);
	cr_assert(!strncmp(out, expect, strlen(expect)), "%s", out);
	snprintf(expect, sizeof(expect), "\nconfig:      %s\n"
		 "socket:      %s (1 client)\n"	/* this very CLI */
		 "interfaces:  none\n"
		 /* The harness pinned the data path with this very
		  * policy: the daemon carried on, it applied none. */
		 "policies:    0 applied, 0 refused since the start\n"
		 "last reload: none since the start\n"
		 "budgets:     local only (no Redis)\n", env.config, env.socket);
	cr_assert(strstr(out, expect), "%s\nwant:%s", out, expect);

	env_write(&env, NULL, "default:\n  action: block\n");
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reload", true), 1);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "daemon", true), 0);
	snprintf(expect, sizeof(expect), ": refused: %s:2: default.action: "
		 "unknown action, expected limit, monitor, allow or deny "
		 "(block)\n", env.config);
	cr_assert(strstr(out, "\nlast reload: 20"), "%s", out);
	cr_assert(strstr(out, expect), "%s\nwant:%s", out, expect);

	env_write(&env, NULL, "default:\n  action: deny\n");
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reload", true), 0);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "daemon", true), 0);
	cr_assert(strstr(out, "\npolicies:    1 applied, 1 refused "), "%s",
		  out);
	cr_assert(strstr(out, "Z: ok\n"), "%s", out);
}

Test(view, an_unreachable_redis_shows_as_degraded)
{
	json_t *view;
	char listen[32];

	int i;

	/* A port nothing listens on: the first sync of the global rule
	 * fails; the view is asked again until it says so (5 s at most). */
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", 1);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: customer-a\n    cidr: 198.18.5.0/24\n"
		  "    pps: 1k\n    burst: 1k\n    scope: aggregate\n"
		  "    global: true\n");
	daemon_start(&env, "--redis", listen, "--node", "edge-7", NULL);
	for (i = 0; i < 50; i++) {
		cr_assert_eq(env_cli(&env, out, sizeof(out), "daemon", true),
			     0);
		if (strstr(out, "DEGRADED"))
			break;
		usleep(100 * 1000);
	}
	cr_assert(strstr(out, "\nbudgets:     through redis 127.0.0.1:1 as "
			 "node \"edge-7\": DEGRADED since 20"), "%s", out);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "daemon --json", true), 0);
	view = json_loads(out, 0, NULL);
	cr_assert_not_null(view, "%s", out);
	cr_assert(json_is_true(json_object_get(json_object_get(
		json_object_get(view, "budgets"), "global"), "degraded")));
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
		view, "daemon"), "pid")), env.pid);
	json_decref(view);
}

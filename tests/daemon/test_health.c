// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * /healthz as a load balancer or a liveness probe asks it: curl in the
 * daemon's namespace, the daemon attached to a veth of the test's
 * topology. 200 while the interface runs the program and the daemon's
 * policy is in force; 503 with the reason once the program is detached,
 * the policy map emptied, or with nothing attached at all.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "topo.h"

static struct daemon_env env;
static struct topo topo;
static char listen_at[64];
static char body[4096];

static void setup(void)
{
	topo_create(&topo);
	env_setup(&env);
	env.netns = topo.ns_rx;
	cr_assert_eq(topo_sh("ip -n %s link set lo up", topo.ns_rx), 0);
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d",
		 20000 + getpid() % 30000);
}

static void teardown(void)
{
	env_teardown(&env);
	topo_destroy(&topo);
}

TestSuite(health, .init = setup, .fini = teardown, .timeout = 120);

/* GET /healthz from the daemon's namespace: the HTTP status, the body
 * in body[]. */
static int healthz(void)
{
	char cmd[1024];
	int code = -1;
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nsenter --net=/run/netns/%s curl -sS "
		 "--max-time 10 -w '\\n%%{http_code}' http://%s/healthz",
		 topo.ns_rx, listen_at);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(body, 1, sizeof(body) - 1, p);
	body[n] = '\0';
	pclose(p);
	/* The last line is the status code. */
	if (n && strrchr(body, '\n')) {
		code = atoi(strrchr(body, '\n') + 1);
		*strrchr(body, '\n') = '\0';
	}
	return code;
}

static void start_attached(void)
{
	char yaml[256];

	snprintf(yaml, sizeof(yaml), "interfaces: [%s]\ndefault:\n"
		 "  action: allow\nrules:\n  - cidr: 198.18.2.0/24\n"
		 "    action: deny\n", topo.if_rx);
	env_write(&env, NULL, yaml);
	daemon_start(&env, "--metrics", listen_at, NULL);
}

Test(health, ok_while_attached_then_503_once_detached)
{
	char expect[128];

	start_attached();
	cr_assert_eq(healthz(), 200, "%s", body);
	cr_assert_str_eq(body, "ok\n");

	/* Detached behind the daemon's back (the operator's CLI); not the
	 * last interface, which is refused under a daemon on these pins. */
	cr_assert_eq(topo_sh("nsenter --net=/run/netns/%s build/xdp-ratelimit "
			     "--pin-dir %s attach lo >/dev/null", topo.ns_rx,
			     env.pin_dir), 0);
	cr_assert_eq(topo_sh("nsenter --net=/run/netns/%s build/xdp-ratelimit "
			     "--pin-dir %s detach %s >/dev/null", topo.ns_rx,
			     env.pin_dir, topo.if_rx), 0);
	cr_assert_eq(healthz(), 503, "%s", body);
	snprintf(expect, sizeof(expect), "unhealthy: %s: no XDP program "
		 "attached\n", topo.if_rx);
	cr_assert_str_eq(body, expect);
}

Test(health, 503_when_the_policy_map_is_emptied)
{
	start_attached();
	cr_assert_eq(healthz(), 200, "%s", body);
	/* The head names the rules and settings in force (include/xrl.h,
	 * "How a policy is installed"): without it nothing is judged. */
	cr_assert_eq(topo_sh("bpftool map delete pinned %s/xrl_settings key "
			     "0 0 0 0", env.pin_dir), 0);
	cr_assert_eq(healthz(), 503, "%s", body);
	cr_assert_str_eq(body, "unhealthy: no policy in force (xrl_settings[0]: "
			 "No such file or directory)\n");
}

Test(health, 503_when_attached_to_nothing)
{
	env_write(&env, NULL, "default:\n  action: allow\n");
	daemon_start(&env, "--metrics", listen_at, NULL);
	cr_assert_eq(healthz(), 503, "%s", body);
	cr_assert_str_eq(body, "unhealthy: attached to no interface\n");
}

Test(health, only_get_and_known_paths)
{
	start_attached();
	cr_assert_eq(topo_sh("nsenter --net=/run/netns/%s curl -s -o /dev/null "
			     "-w '%%{http_code}' -X POST http://%s/healthz | "
			     "grep -qx 405", topo.ns_rx, listen_at), 0);
	cr_assert_eq(topo_sh("nsenter --net=/run/netns/%s curl -s -o /dev/null "
			     "-w '%%{http_code}' http://%s/healthz/x | "
			     "grep -qx 404", topo.ns_rx, listen_at), 0);
}

Test(health, 503_when_a_policy_is_swapped_in_behind_the_daemon_then_ok_on_reload)
{
	char other[PATH_MAX + 16];

	start_attached();
	cr_assert_eq(healthz(), 200, "%s", body);
	snprintf(other, sizeof(other), "%s/other.yaml", env.dir);
	env_write(&env, other, "default:\n  action: deny\n");
	cr_assert_eq(topo_sh("nsenter --net=/run/netns/%s build/xdp-ratelimit "
			     "--pin-dir %s attach %s --policy %s >/dev/null",
			     topo.ns_rx, env.pin_dir, topo.if_rx, other), 0);
	cr_assert_eq(healthz(), 503, "%s", body);
	cr_assert(strstr(body, "unhealthy: the policy in force (head map "),
		  "%s", body);
	cr_assert(strstr(body, "is not the daemon's"), "%s", body);
	/* The daemon takes it over by reloading its own file. */
	json_decref(request_ok(&env, "{\"cmd\":\"reload\"}"));
	cr_assert_eq(healthz(), 200, "%s", body);
}

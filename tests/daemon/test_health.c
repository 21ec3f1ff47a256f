// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * /healthz as a load balancer or a liveness probe asks it: curl in the
 * daemon's namespace, the daemon attached to a veth of the test's
 * topology. 200 while the interface runs the program and the daemon's
 * policy is in force (interfaces a CLI attached to its pins too); 503
 * with the reason once the program is detached, the policy map emptied,
 * or with nothing attached at all; 200 "degraded: ..." while a global
 * budget's redis-server (started by the test) is stopped.
 */
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "redis_server.h"
#include "topo.h"

static struct daemon_env env;
static struct topo topo;
static char listen_at[64];
static char body[4096];
static struct redis_server redis;

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
	redis_stop(&redis);
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

/* A daemon started with no interface, and the operator's CLI attaches
 * one to the daemon's pins: the daemon's program runs there, with the
 * daemon's policy (issue 24 item 7). */
Test(health, ok_after_a_cli_attach_to_the_daemon_s_pins)
{
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - cidr: 198.18.2.0/24\n    action: deny\n");
	daemon_start(&env, "--metrics", listen_at, NULL);
	cr_assert_eq(healthz(), 503, "%s", body);
	cr_assert_str_eq(body, "unhealthy: attached to no interface\n");
	cr_assert_eq(topo_sh("nsenter --net=/run/netns/%s build/xdp-ratelimit "
			     "--pin-dir %s attach %s >/dev/null", topo.ns_rx,
			     env.pin_dir, topo.if_rx), 0);
	cr_assert_eq(healthz(), 200, "%s", body);
	cr_assert_str_eq(body, "ok\n");
}

/* GET /healthz until its body starts with @prefix, at most 15 s (the
 * breaker's cool-off is 5 s); returns the last status. */
static int healthz_until(const char *prefix)
{
	int code = -1, i;

	for (i = 0; i < 150; i++) {
		code = healthz();
		if (!strncmp(body, prefix, strlen(prefix)))
			return code;
		poll(NULL, 0, 100);
	}
	cr_assert_fail("no \"%s\" in 15 s: %d %s", prefix, code, body);
	return code;
}

/* A global budget whose Redis is gone still enforces its fallback
 * share: 200, and the body says "degraded" and why, until Redis is back
 * (issue 24 item 7). */
Test(health, degraded_while_redis_is_down_then_ok_again)
{
	char yaml[512];
	uint16_t port;

	redis.netns = topo.ns_rx;
	cr_assert_eq(redis_start(&redis, 0), 0, "redis-server did not start");
	port = redis.port;
	snprintf(yaml, sizeof(yaml), "interfaces: [%s]\nredis: 127.0.0.1:%u\n"
		 "default:\n  action: allow\nrules:\n  - name: fleet\n"
		 "    cidr: 198.18.0.0/16\n    pps: 1000\n    burst: 100\n"
		 "    scope: aggregate\n    global: true\n", topo.if_rx,
		 port);
	env_write(&env, NULL, yaml);
	daemon_start(&env, "--metrics", listen_at, "--sync-interval", "20ms",
		     "--node", "edge-1", NULL);
	cr_assert_eq(healthz_until("ok"), 200, "%s", body);
	cr_assert_str_eq(body, "ok\n");

	redis_stop(&redis);
	cr_assert_eq(healthz_until("degraded: "), 200, "%s", body);
	cr_assert(strstr(body, "degraded: global budget fleet: "), "%s", body);

	cr_assert_eq(redis_start(&redis, port), 0, "redis-server did not "
		     "start again");
	cr_assert_eq(healthz_until("ok"), 200, "%s", body);
	cr_assert_str_eq(body, "ok\n");
}

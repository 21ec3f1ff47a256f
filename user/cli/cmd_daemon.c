// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit daemon: the daemon's own view (uptime, last reload,
 * clients, budgets).
 */
#include <limits.h>
#include <stdio.h>
#include "cmd_request.h"
#include "report.h"

static const struct xrl_opt daemon_opts[] = {
	XRL_REQ_JSON_OPT,
	{}
};

static void print_uptime(long long s)
{
	if (s >= 86400)
		printf("%lldd ", s / 86400);
	printf("%02lld:%02lld:%02lld", s / 3600 % 24, s / 60 % 60, s % 60);
}

/* The global budgets' link to Redis: healthy, or degraded since when. */
static void print_global(json_t *budgets)
{
	json_t *global = json_object_get(budgets, "global");

	if (!global) {
		printf("budgets:     local only (no Redis)\n");
		return;
	}
	printf("budgets:     through redis %s as node \"%s\": ",
	       xrl_json_str(global, "redis"), xrl_json_str(global, "node"));
	if (json_is_true(json_object_get(global, "degraded")))
		printf("DEGRADED since %s (%s)\n",
		       xrl_json_str(global, "degraded_since"),
		       xrl_json_str(global, "degraded_reason"));
	else
		printf("healthy\n");
}

static void print_daemon(json_t *response)
{
	json_t *daemon = json_object_get(response, "daemon");
	json_t *ifaces = json_object_get(daemon, "interfaces");
	json_t *last = json_object_get(daemon, "last_reload"), *iface;
	size_t i;

	printf("xdp-ratelimitd %s, pid %lld, up ",
	       xrl_json_str(daemon, "version"), xrl_json_int(daemon, "pid"));
	print_uptime(xrl_json_int(daemon, "uptime_s"));
	printf("\nconfig:      %s\n", xrl_json_str(daemon, "config"));
	printf("socket:      %s (%lld client%s)\n",
	       xrl_json_str(daemon, "socket"), xrl_json_int(daemon, "clients"),
	       xrl_json_int(daemon, "clients") == 1 ? "" : "s");
	printf("interfaces: ");
	json_array_foreach(ifaces, i, iface)
		printf(" %s", json_string_value(iface));
	printf("%s\n", json_array_size(ifaces) ? "" : " none");
	printf("policies:    %lld applied, %lld refused since the start\n",
	       xrl_json_int(daemon, "policies_applied"),
	       xrl_json_int(daemon, "changes_refused"));
	if (!json_is_object(last))
		printf("last reload: none since the start\n");
	else if (json_is_true(json_object_get(last, "ok")))
		printf("last reload: %s: ok\n", xrl_json_str(last, "at"));
	else
		printf("last reload: %s: refused: %s\n",
		       xrl_json_str(last, "at"), xrl_json_str(last, "error"));
	print_global(json_object_get(response, "budgets"));
}

static int run_daemon(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct xrl_request_args args = {};
	json_t *response;
	int ret;

	ret = xrl_request_parse(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args || json_object_size(args.request)) {
		xrl_cmd_error(cli, cmd, "takes no arguments");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd", json_string("status"));
	response = xrl_request_call(cmd, cli, &args);
	if (!response)
		goto put_request;
	if (args.json) {
		/* The daemon's own view only: the data path is status'. */
		json_t *view = json_pack("{s:O, s:O?}", "daemon",
					 json_object_get(response, "daemon"),
					 "budgets",
					 json_object_get(response, "budgets"));

		ret = xrl_json_print(stdout, view, true) ? EXIT_FAILURE :
		      EXIT_SUCCESS;
	} else {
		print_daemon(response);
		ret = EXIT_SUCCESS;
	}
	json_decref(response);
put_request:
	json_decref(args.request);
	return ret;
}

const struct xrl_cmd xrl_cmd_daemon = {
	.name = "daemon",
	.synopsis = "[--json]",
	.summary = "The daemon's own view: uptime, last reload and its "
		   "result, clients, budgets.",
	.opts = daemon_opts,
	.run = run_daemon,
};

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit reload [FILE]: the daemon applies its policy file (or
 * FILE) whole.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_request.h"
#include "plan.h"

static const struct xrl_opt reload_opts[] = {
	XRL_REQ_JSON_OPT,
	{}
};

/* "reloaded FILE: 8 rules (1 runtime change kept: delete
 * 198.18.3.0/24)", then what it changed, as check shows it. */
static void print_reloaded(json_t *response)
{
	const char *runtime = xrl_json_str(response, "runtime");

	printf("reloaded %s: %lld rules", xrl_json_str(response, "path"),
	       xrl_json_int(response, "rules"));
	if (runtime && runtime[0])
		printf(" (%s)", runtime);
	printf("\n");
	if (json_object_get(response, "changes"))
		xrl_plan_print(response);
}

static int run_reload(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct xrl_request_args args = {};
	char path[PATH_MAX];
	json_t *response;
	int ret;

	ret = xrl_request_parse(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args > 1 || json_object_size(args.request)) {
		xrl_cmd_error(cli, cmd, "expected at most one FILE");
		goto put_request;
	}
	if (args.n_args == 1) {
		/* The daemon has its own working directory. */
		if (!realpath(args.args[0], path)) {
			xrl_cmd_error(cli, cmd, "%s: %s", args.args[0],
				      strerror(errno));
			goto put_request;
		}
		json_object_set_new(args.request, "path", json_string(path));
	}
	json_object_set_new(args.request, "cmd", json_string("reload"));
	response = xrl_request_call(cmd, cli, &args);
	if (response)
		ret = xrl_request_print(&args, response, print_reloaded);
put_request:
	json_decref(args.request);
	return ret;
}

const struct xrl_cmd xrl_cmd_reload = {
	.name = "reload",
	.synopsis = "[FILE] [--json]",
	.summary = "Have the daemon apply its policy file (or FILE) whole.",
	.opts = reload_opts,
	.run = run_reload,
};

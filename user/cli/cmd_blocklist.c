// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit blocklist reload NAME: the daemon reads the file of the
 * policy's list NAME again and swaps its trie in alone (docs/POLICY.md,
 * "Blocklists"); the rest of the policy stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_request.h"

static const struct xrl_opt blocklist_opts[] = {
	XRL_REQ_JSON_OPT,
	{}
};

/* "reloaded blocklist drop: 1000000 entries from /etc/.../drop.txt". */
static void print_reloaded(json_t *response)
{
	printf("reloaded blocklist %s: %lld entries from %s\n",
	       xrl_json_str(response, "name"),
	       xrl_json_int(response, "entries"),
	       xrl_json_str(response, "file"));
}

static int run_blocklist(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			 int argc, char **argv)
{
	struct xrl_request_args args = {};
	json_t *response;
	int ret;

	ret = xrl_request_parse(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args != 2 || strcmp(args.args[0], "reload")) {
		xrl_cmd_error(cli, cmd, "expected reload NAME");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd",
			    json_string("blocklist.reload"));
	json_object_set_new(args.request, "name", json_string(args.args[1]));
	response = xrl_request_call(cmd, cli, &args);
	if (response)
		ret = xrl_request_print(&args, response, print_reloaded);
put_request:
	json_decref(args.request);
	return ret;
}

const struct xrl_cmd xrl_cmd_blocklist = {
	.name = "blocklist",
	.synopsis = "reload NAME [--json]",
	.summary = "Have the daemon read a blocklist's file again and swap "
		   "it in alone.",
	.opts = blocklist_opts,
	.run = run_blocklist,
};

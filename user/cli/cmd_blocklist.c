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

/* "blocklist reload NAME": the one verb, then a request of one NAME
 * (argv[0] is the command's name; options may come anywhere after). */
static int run_blocklist(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			 int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "--help")))
		return xrl_request_run(cmd, cli, argc, argv, "", "name",
				       "NAME", print_reloaded);
	if (argc < 2 || strcmp(argv[1], "reload")) {
		xrl_cmd_error(cli, cmd, "expected reload NAME");
		return EXIT_FAILURE;
	}
	argv[1] = argv[0];
	return xrl_request_run(cmd, cli, argc - 1, argv + 1,
			       "blocklist.reload", "name", "NAME",
			       print_reloaded);
}

const struct xrl_cmd xrl_cmd_blocklist = {
	.name = "blocklist",
	.synopsis = "reload NAME [--json]",
	.summary = "Have the daemon read a blocklist's file again and swap "
		   "it in alone.",
	.opts = blocklist_opts,
	.run = run_blocklist,
};

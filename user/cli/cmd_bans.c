// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit bans: the bans by hand in force, with what each dropped.
 */
#include <stdint.h>
#include "cmd_request.h"

static const struct xrl_opt bans_opts[] = {
	XRL_REQ_JSON_OPT,
	{}
};

static void print_bans(json_t *response)
{
	uint64_t now = json_integer_value(json_object_get(response, "now_ms"));
	json_t *ban;
	size_t i;

	json_array_foreach(json_object_get(response, "bans"), i, ban)
		xrl_request_print_ban(ban, now);
}

static int run_bans(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		    char **argv)
{
	return xrl_request_run(cmd, cli, argc, argv, "bans", NULL, NULL,
			       print_bans);
}

const struct xrl_cmd xrl_cmd_bans = {
	.name = "bans",
	.synopsis = "[--json]",
	.summary = "The bans in force, with what each dropped.",
	.opts = bans_opts,
	.run = run_bans,
};

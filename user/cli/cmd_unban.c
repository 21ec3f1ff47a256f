// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit unban ADDR[/LEN]: a ban by hand lifted.
 */
#include <stdio.h>
#include "cmd_request.h"

static const struct xrl_opt unban_opts[] = {
	XRL_REQ_JSON_OPT,
	{}
};

static void print_unbanned(json_t *response)
{
	(void)response;
	printf("unbanned\n");
}

static int run_unban(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	return xrl_request_run(cmd, cli, argc, argv, "unban", "cidr",
			       "ADDR[/LEN]", print_unbanned);
}

const struct xrl_cmd xrl_cmd_unban = {
	.name = "unban",
	.synopsis = "ADDR[/LEN] [--json]",
	.summary = "Lift a ban.",
	.opts = unban_opts,
	.run = run_unban,
};

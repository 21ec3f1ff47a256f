// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit ban ADDR[/LEN] [--for D]: every packet of a prefix
 * dropped before any rule, through the daemon (kept across restarts).
 */
#include <stdio.h>
#include "clock.h"
#include "cmd_request.h"

static const struct xrl_opt ban_opts[] = {
	XRL_OPT("for", XRL_REQ_FOR, "D",
		"how long (30s, 10m, 1h, 7d; at most 30d); default: until "
		"unban"),
	XRL_REQ_JSON_OPT,
	{}
};

static void print_banned(json_t *response)
{
	printf("banned: ");
	xrl_request_print_ban(json_object_get(response, "ban"),
			      xrl_clock_ns(CLOCK_REALTIME) / XRL_NS_PER_MS);
}

static int run_ban(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		   char **argv)
{
	return xrl_request_run(cmd, cli, argc, argv, "ban", "cidr",
			       "ADDR[/LEN]", print_banned);
}

const struct xrl_cmd xrl_cmd_ban = {
	.name = "ban",
	.synopsis = "ADDR[/LEN] [--for D] [--json]",
	.summary = "Drop every packet of a prefix, before any rule, for D or "
		   "until unban (through the daemon, kept across restarts).",
	.opts = ban_opts,
	.run = run_ban,
};

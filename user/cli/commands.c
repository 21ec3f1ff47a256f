// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * commands.c - the commands of xdp-ratelimit, in the order help lists
 * them (cmd.h). A new command is one cmd_*.c file and one line here.
 */
#include <stddef.h>
#include "cmd.h"

const struct xrl_cmd *const xrl_commands[] = {
	&xrl_cmd_attach,
	&xrl_cmd_detach,
	&xrl_cmd_cleanup,
	&xrl_cmd_status,
	&xrl_cmd_stats,
	&xrl_cmd_rule,
	&xrl_cmd_reload,
	&xrl_cmd_top,
	&xrl_cmd_events,
	&xrl_cmd_capture,
	&xrl_cmd_check,
	&xrl_cmd_explain,
	&xrl_cmd_reset,
	&xrl_cmd_daemon,
	&xrl_cmd_ban,
	&xrl_cmd_unban,
	&xrl_cmd_bans,
	&xrl_cmd_blocklist,
	NULL
};

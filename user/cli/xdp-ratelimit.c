// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit - attach the per-source rate limiter to interfaces and
 * read its state. Commands live in user/cli/cmd_*.c, their table in
 * commands.c; this file reads the environment and dispatches.
 */
#include <stdlib.h>
#include "cmd.h"
#include "datapath.h"
#include "log.h"
#include "xrl.h"

/* An option wins over the environment, the environment over the default. */
static const char *from_env(const char *name, const char *fallback)
{
	const char *value = getenv(name);

	return value && value[0] ? value : fallback;
}

int main(int argc, char **argv)
{
	struct xrl_cli cli = {
		.prog = "xdp-ratelimit",
		.pin_dir = from_env(XRL_ENV_PIN_DIR, XRL_PIN_DIR),
		.socket = from_env(XRL_ENV_SOCKET, XRL_SOCKET_PATH),
	};
	int first, exit_code = -1;

	/* libbpf's own messages only with -v: errors are ours to word. */
	xrl_log_libbpf();
	xrl_log_set_level(XRL_LOG_ERROR);
	first = xrl_cmd_global_opts(xrl_commands, &cli, argc, argv, &exit_code);
	if (first < 0)
		return exit_code;
	return xrl_cmd_dispatch(xrl_commands, &cli, argc - first, argv + first);
}
